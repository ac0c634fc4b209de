//! The backups in progress from a connection, by id: kept with it and finished before it
//! closes, as better-sqlite3 does (started and stepped by `engine::backup`).

use crate::engine::handles::Handles;
use crate::ffi::sqlite::RawBackup;

/// One backup in progress.
pub struct BackupJob {
    pub backup: Option<RawBackup>,
    pub path: String,
    /// Remove the destination file when the job ends unfinished (it did not exist).
    pub unlink: bool,
}

impl Drop for BackupJob {
    fn drop(&mut self) {
        // Finish and close the destination first, then remove an unfinished new file.
        drop(self.backup.take());
        if self.unlink {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The backups of one connection, addressed by id.
#[derive(Default)]
pub struct Backups {
    jobs: Handles<BackupJob>,
}

impl Backups {
    pub fn insert(&mut self, job: BackupJob) -> u32 {
        self.jobs.insert(job)
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut BackupJob> {
        self.jobs.get_mut(id)
    }

    /// Ends one backup (finishing it; an unfinished new file is removed).
    pub fn close(&mut self, id: u32) {
        self.jobs.remove(id);
    }

    /// Ends every backup; called before the connection closes.
    pub fn clear(&mut self) {
        self.jobs.clear();
    }
}
