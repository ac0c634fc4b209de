//! Values a connection keeps for this package under a name (`sqlite3_set_clientdata`):
//! part of [`super`]. SQLite owns each from then on and drops it when the connection
//! closes (or when another value takes its name), so a value found through a statement
//! of the connection is alive; a reader gets its own reference, checked for its type.

use std::any::Any;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

use rusqlite::ffi;
use rusqlite::Connection;

use super::{db, errstr, Db};
use crate::error::StoreError;

/// What SQLite holds: a thin pointer to a reference of any type.
type Kept = Arc<dyn Any + Send + Sync>;

unsafe extern "C" fn drop_kept(p: *mut c_void) {
    // SAFETY: `p` is the `Box<Kept>` of `set`, given back once by SQLite when the
    // connection closes or the name is given another value.
    drop(unsafe { Box::from_raw(p.cast::<Kept>()) });
}

/// Keeps `value` with `conn` under `name` until the connection closes.
pub fn set<T: Any + Send + Sync>(conn: &Connection, name: &'static CStr, value: Arc<T>) -> Result<(), StoreError> {
    let kept: Kept = value;
    let p = Box::into_raw(Box::new(kept)).cast::<c_void>();
    // SAFETY: `conn` is open and `name` NUL-terminated; on failure SQLite calls the
    // destructor on `p` itself.
    let rc = unsafe { ffi::sqlite3_set_clientdata(db(conn), name.as_ptr(), p, Some(drop_kept)) };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(StoreError::sqlite(rc, errstr(rc)))
    }
}

/// The value kept under `name`, if there is one of type `T`.
pub fn get<T: Any + Send + Sync>(db: Db<'_>, name: &CStr) -> Option<Arc<T>> {
    // SAFETY: `db` is open while it is borrowed; the pointer is NULL or a `Box<Kept>` of
    // `set`, which stays alive until the connection closes or `set` replaces it, neither
    // of which can happen before the clone below is made.
    let p = unsafe { ffi::sqlite3_get_clientdata(db.handle, name.as_ptr()) }.cast::<Kept>();
    // SAFETY: as above.
    let kept = unsafe { p.as_ref() }?;
    kept.clone().downcast::<T>().ok()
}
