//! Memory shared with JS (part of [`super`], the one module that calls Node-API): the
//! result slots every statement call may write.

use napi::sys;

use super::{check, Napi, Raw};
use crate::error::{SResult, StoreError};

/// Small results a native call leaves beside its return value (a row's shape, a
/// `lastInsertRowid`), shown to JS as one Float64Array that JS reads right after the
/// call; also the call frame of user callbacks, which JS writes (a result) before it
/// returns to the native side that reads it. The memory is Rust's, handed to V8 as an external ArrayBuffer, so a write is a
/// plain store (no Node-API call) and stays sound whatever JS does with the buffer. A
/// runtime that refuses external buffers gets a V8-owned array, written through
/// Node-API on each call instead.
pub struct ResultSlots {
    memory: Option<std::ptr::NonNull<f64>>,
    len: usize,
    array: sys::napi_ref,
}

impl ResultSlots {
    /// `len` slots holding 0.
    pub fn new(js: Napi, len: usize) -> SResult<Self> {
        let memory = Box::into_raw(vec![0f64; len].into_boxed_slice()).cast::<f64>();
        let mut buffer = std::ptr::null_mut();
        // SAFETY: `memory` holds `len` f64s and lives until this struct is dropped, which
        // happens when the thread (and so its JS environment) ends; no finalizer runs.
        let status = unsafe {
            sys::napi_create_external_arraybuffer(
                js.0,
                memory.cast(),
                len * size_of::<f64>(),
                None,
                std::ptr::null_mut(),
                &mut buffer,
            )
        };
        let (memory, buffer) = if status == sys::Status::napi_ok {
            (std::ptr::NonNull::new(memory), buffer)
        } else {
            // SAFETY: V8 did not take the memory: it is still only this Box's.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(memory, len)) });
            let mut data = std::ptr::null_mut();
            let buffer = out!(std::ptr::null_mut(), |b| sys::napi_create_arraybuffer(
                js.0,
                len * size_of::<f64>(),
                &mut data,
                &mut b
            ))?;
            (None, buffer)
        };
        // From here V8's buffer may point at `memory`: only a finished ResultSlots frees it
        // (on a failure below it is left allocated).
        let array = out!(std::ptr::null_mut(), |a| sys::napi_create_typedarray(
            js.0,
            sys::TypedarrayType::float64_array,
            len,
            buffer,
            0,
            &mut a
        ))?;
        Ok(ResultSlots {
            memory,
            len,
            array: js.reference(array)?,
        })
    }

    /// The Float64Array JS reads.
    pub fn array(&self, js: Napi) -> SResult<Raw> {
        js.reference_value(self.array)
    }

    /// Reads slot `index` (0 where the slots are V8's own or out of range).
    pub fn get(&self, index: usize) -> f64 {
        match self.memory {
            // SAFETY: as in `set`: `len` f64s owned by this struct, read on this thread.
            Some(memory) if index < self.len => unsafe { memory.as_ptr().add(index).read() },
            _ => 0.0,
        }
    }

    /// The first four bytes of slot `index` as JS's Int32Array wrote them (element
    /// `2 * index`); 0 as for [`Self::get`].
    pub fn get_i32(&self, index: usize) -> i32 {
        match self.memory {
            // SAFETY: as in `get`; four bytes at the start of an owned, aligned slot.
            Some(memory) if index < self.len => unsafe { memory.as_ptr().add(index).cast::<i32>().read() },
            _ => 0,
        }
    }

    /// Writes slot `index`.
    #[inline]
    pub fn set(&self, js: Napi, index: usize, value: f64) -> SResult<()> {
        match self.memory {
            Some(memory) if index < self.len => {
                // SAFETY: `memory` holds `len` f64s that this struct owns (see `new`); JS
                // reads them only between calls, on this thread.
                unsafe { memory.as_ptr().add(index).write(value) };
                Ok(())
            }
            Some(_) => Err(StoreError::error("result slot out of range")),
            None => js.set_float64(self.array(js)?, index, value),
        }
    }

    /// Writes slot `index` as plain memory only: false (nothing written) where the slots
    /// are V8's own or `index` is out of range. For the callback frame, whose writer
    /// passes the value as a JS argument instead then.
    #[inline]
    pub fn put(&self, index: usize, value: f64) -> bool {
        self.put_bits(index, value.to_bits())
    }

    /// Writes the bits of `value` to slot `index`, for JS to read through a
    /// BigInt64Array over the same buffer; false as for [`Self::put`].
    #[inline]
    pub fn put_i64(&self, index: usize, value: i64) -> bool {
        self.put_bits(index, value as u64)
    }

    /// Writes `value` to the first four bytes of slot `index`, for JS to read through an
    /// Int32Array over the same buffer (at element `2 * index`); false as for [`Self::put`].
    #[inline]
    pub fn put_i32(&self, index: usize, value: i32) -> bool {
        match self.memory {
            Some(memory) if index < self.len => {
                // SAFETY: as in `set`; four bytes at the start of an owned, aligned slot.
                unsafe { memory.as_ptr().add(index).cast::<i32>().write(value) };
                true
            }
            _ => false,
        }
    }

    /// Writes `first` and `second` to the two halves of slot `index`, for JS to read at
    /// elements `2 * index` and `2 * index + 1` of an Int32Array; false as for [`Self::put`].
    #[inline]
    pub fn put_i32_pair(&self, index: usize, first: i32, second: i32) -> bool {
        match self.memory {
            Some(memory) if index < self.len => {
                // SAFETY: as in `set`; the two halves of an owned, aligned 8-byte slot.
                unsafe { memory.as_ptr().add(index).cast::<[i32; 2]>().write([first, second]) };
                true
            }
            _ => false,
        }
    }

    fn put_bits(&self, index: usize, bits: u64) -> bool {
        match self.memory {
            Some(memory) if index < self.len => {
                // SAFETY: as in `set`; the slot is written whole as 8 bytes (any bit
                // pattern is a valid f64 for JS to read).
                unsafe { memory.as_ptr().add(index).cast::<u64>().write(bits) };
                true
            }
            _ => false,
        }
    }

    /// Whether the slots are plain memory shared with JS (see [`Self::put`]).
    pub fn shared(&self) -> bool {
        self.memory.is_some()
    }
}

impl Drop for ResultSlots {
    fn drop(&mut self) {
        if let Some(memory) = self.memory {
            // SAFETY: the Box made in `new`; dropped once, when its JS environment is gone.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(memory.as_ptr(), self.len)) });
        }
    }
}
