//! Bytes in memory from SQLite's own allocator, which a function's result can hand to
//! SQLite whole instead of having it copy them (part of `ffi::sqlite`).

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use rusqlite::ffi;

/// At least this much unused room is worth giving back once the bytes are written.
const SLACK_RETURNED: usize = 64 * 1024;

/// Bytes allocated with `sqlite3_malloc64`: freed with `sqlite3_free` when dropped, or
/// owned by SQLite once handed over (see `ResultSink::set_text_owned`).
pub struct SqliteBytes {
    ptr: NonNull<u8>,
    len: usize,
    capacity: usize,
}

impl SqliteBytes {
    /// Room for `capacity` bytes (at least one), none written; None when SQLite's
    /// allocator has none to give.
    pub fn with_capacity(capacity: usize) -> Option<Self> {
        let capacity = capacity.max(1);
        // SAFETY: any size may be asked; SQLite answers null when it cannot allocate.
        let ptr = unsafe { ffi::sqlite3_malloc64(capacity as u64) };
        Some(SqliteBytes {
            ptr: NonNull::new(ptr.cast())?,
            len: 0,
            capacity,
        })
    }

    /// Lets `write` fill the room from the start; it returns how many bytes it wrote
    /// (counted up to the room's size), which become the length.
    pub fn fill<E>(&mut self, write: impl FnOnce(&mut [MaybeUninit<u8>]) -> Result<usize, E>) -> Result<(), E> {
        // SAFETY: the allocation holds `capacity` bytes and is borrowed mutably with
        // `self`; as MaybeUninit they may be written before they are initialised.
        let room = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.capacity) };
        self.len = write(room)?.min(self.capacity);
        Ok(())
    }

    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written by `fill`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Gives back the room past the bytes and the byte after them, when it is large (a
    /// string's room is set for its worst case, three bytes a unit).
    pub fn shrink(&mut self) {
        let keep = self.len + 1;
        if self.capacity.saturating_sub(keep) < SLACK_RETURNED {
            return;
        }
        // SAFETY: `ptr` came from SQLite's allocator; `keep` is smaller than what it
        // holds, so the bytes stay; on failure (null) the old block is untouched.
        let smaller = unsafe { ffi::sqlite3_realloc64(self.ptr.as_ptr().cast(), keep as u64) };
        if let Some(smaller) = NonNull::new(smaller.cast()) {
            self.ptr = smaller;
            self.capacity = keep;
        }
    }

    /// The allocation and the bytes' length, for SQLite to own from now on.
    pub(super) fn into_raw(self) -> (*mut u8, usize) {
        let raw = (self.ptr.as_ptr(), self.len);
        std::mem::forget(self);
        raw
    }
}

impl Drop for SqliteBytes {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from SQLite's allocator and was not handed over.
        unsafe { ffi::sqlite3_free(self.ptr.as_ptr().cast()) };
    }
}

#[cfg(test)]
mod tests {
    use super::SqliteBytes;

    fn written(bytes: &[u8], capacity: usize) -> SqliteBytes {
        let mut owned = SqliteBytes::with_capacity(capacity).unwrap();
        owned
            .fill(|room| {
                for (slot, byte) in room.iter_mut().zip(bytes) {
                    slot.write(*byte);
                }
                Ok::<_, ()>(bytes.len())
            })
            .unwrap();
        owned
    }

    #[test]
    fn keeps_what_was_written() {
        assert_eq!(written(b"hello", 16).as_bytes(), b"hello");
        assert_eq!(written(b"", 0).as_bytes(), b"");
    }

    #[test]
    fn a_length_past_the_room_is_cut_to_it() {
        let mut owned = SqliteBytes::with_capacity(4).unwrap();
        owned.fill(|_| Ok::<_, ()>(10)).unwrap();
        assert_eq!(owned.len, 4);
    }

    #[test]
    fn shrinking_keeps_the_bytes_and_frees_large_slack_only() {
        let text = vec![b'x'; 1000];
        let mut small_slack = written(&text, 2000);
        small_slack.shrink();
        assert_eq!(small_slack.capacity, 2000);
        let mut large_slack = written(&text, 300_000);
        large_slack.shrink();
        assert_eq!(large_slack.capacity, 1001);
        assert_eq!(large_slack.as_bytes(), &text[..]);
    }
}
