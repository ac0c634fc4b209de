//! A JS value kept alive across native calls (a strong Node-API reference), released
//! when its Rust owner is dropped: the `verbose` logger of a connection.

use napi::sys;

use crate::error::SResult;
use crate::ffi::napi::{Napi, Raw};

pub struct Persistent {
    env: sys::napi_env,
    reference: sys::napi_ref,
}

impl Persistent {
    pub fn new(js: Napi, value: Raw) -> SResult<Self> {
        Ok(Persistent {
            env: js.env(),
            reference: js.reference(value)?,
        })
    }

    /// The value as a handle of the current call, in the environment it was made in.
    pub fn local(&self, js: Napi) -> SResult<Raw> {
        js.reference_value(self.reference)
    }
}

impl Drop for Persistent {
    fn drop(&mut self) {
        // Dropped with its connection (closed from JS, or collected with its NativeDb):
        // both happen on the environment's own thread while it is alive.
        let _ = Napi::new(self.env).delete_reference(self.reference);
    }
}
