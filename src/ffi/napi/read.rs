//! Reading JS values: their types, numbers, BigInts, strings (as UTF-16 or UTF-8) and
//! the bytes of typed arrays and DataViews, each a checked Node-API call on [`Napi`].

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use napi::sys;

use super::{check, Napi, Raw, Utf8, ViewInfo};
use crate::error::{SResult, StoreError};

/// The most bytes [`Napi::utf8`] sets aside for a string without asking its exact length.
const UTF8_ROOM_MAX: usize = 1 << 20;

/// Room for a string this small costs less than V8's count of its UTF-8 bytes, however
/// fast: counted by callgrind on Node 26, binding a 100-character string cost 272
/// instructions more with its exact length, a 1,000-character one 314 fewer.
const UTF8_ROOM_SMALL: usize = 1024;

impl Napi {
    pub fn type_of(self, v: Raw) -> SResult<sys::napi_valuetype> {
        out!(0, |t| sys::napi_typeof(self.0, v, &mut t))
    }

    pub fn double(self, v: Raw) -> SResult<f64> {
        out!(0f64, |n| sys::napi_get_value_double(self.0, v, &mut n))
    }

    /// A BigInt as i64 and whether that is exact.
    pub fn bigint_i64(self, v: Raw) -> SResult<(i64, bool)> {
        let mut lossless = false;
        let value = out!(0i64, |n| sys::napi_get_value_bigint_int64(
            self.0,
            v,
            &mut n,
            &mut lossless
        ))?;
        Ok((value, lossless))
    }

    /// A string's UTF-16 units.
    pub fn utf16(self, v: Raw) -> SResult<Vec<u16>> {
        let len = out!(0usize, |n| sys::napi_get_value_string_utf16(
            self.0,
            v,
            std::ptr::null_mut(),
            0,
            &mut n
        ))?;
        let mut buf = vec![0u16; len + 1];
        let written = out!(0usize, |n| sys::napi_get_value_string_utf16(
            self.0,
            v,
            buf.as_mut_ptr(),
            len + 1,
            &mut n
        ))?;
        buf.truncate(written);
        Ok(buf)
    }

    /// A string's length in UTF-16 units (which V8 knows without reading the string).
    pub fn utf16_len(self, v: Raw) -> SResult<usize> {
        out!(0usize, |n| sys::napi_get_value_string_utf16(
            self.0,
            v,
            std::ptr::null_mut(),
            0,
            &mut n
        ))
    }

    /// A string as UTF-8 (lone surrogates replaced by U+FFFD, as V8 writes them): a
    /// short one in one call ([`Napi::utf8_short`]), a longer one written again, whole,
    /// into [`Napi::utf8_room`].
    pub fn utf8(self, v: Raw) -> SResult<Utf8> {
        if let Some(short) = self.utf8_short(v)? {
            return Ok(short);
        }
        let mut buf = Utf8::new();
        buf.reserve_exact(self.utf8_room(v, self.utf16_len(v)?)? + 1);
        let written = self.utf8_into(v, spare(&mut buf))?;
        // SAFETY: Node-API wrote `written` bytes at the start of the spare room.
        unsafe { buf.set_len(written) };
        Ok(buf)
    }

    /// A string as UTF-8 if it fits the inline buffer, which one write tells (asking its
    /// length first would be a call more for every short string, the most common).
    fn utf8_short(self, v: Raw) -> SResult<Option<Utf8>> {
        let mut buf = Utf8::new();
        let written = self.utf8_into(v, spare(&mut buf))?;
        // Fewer bytes than the room left for them: nothing was cut.
        if written + 4 >= buf.capacity() {
            return Ok(None);
        }
        // SAFETY: Node-API wrote `written` bytes at the start of the spare room.
        unsafe { buf.set_len(written) };
        Ok(Some(buf))
    }

    /// Bytes enough for the UTF-8 of a string of `units` UTF-16 units (its NUL aside):
    /// three per unit, which saves V8 a read of the whole string and lets it copy an
    /// ASCII string whole instead of checking the room after each character; but the
    /// exact length, asked of V8, past UTF8_ROOM_MAX, and past UTF8_ROOM_SMALL where
    /// asking is cheap (see [`Napi::utf8_length_is_cheap`]).
    pub fn utf8_room(self, v: Raw, units: usize) -> SResult<usize> {
        let three_per_unit = |room| room <= UTF8_ROOM_SMALL || (room <= UTF8_ROOM_MAX && !self.utf8_length_is_cheap());
        match units.checked_mul(3) {
            Some(room) if three_per_unit(room) => Ok(room),
            _ => out!(0usize, |n| sys::napi_get_value_string_utf8(
                self.0,
                v,
                std::ptr::null_mut(),
                0,
                &mut n
            )),
        }
    }

    /// Whether V8 counts a string's UTF-8 bytes for less than an allocation three times
    /// the size costs: from Node 26 it counts with SIMD (simdutf), and writes into exact
    /// room as fast as into more; Node 24's count cost a 1,000-character string more than
    /// the larger room did (callgrind, `bench/functions-loop.mjs long-text-result`).
    /// Asked once per process.
    fn utf8_length_is_cheap(self) -> bool {
        static CHEAP: OnceLock<bool> = OnceLock::new();
        *CHEAP.get_or_init(|| self.node_major().is_ok_and(|major| major >= 26))
    }

    /// Writes the string's UTF-8 into `room` (NUL-terminated by Node-API, the NUL not
    /// counted), cut where the room ends; returns the bytes written, at most
    /// `room.len() - 1`.
    pub fn utf8_into(self, v: Raw, room: &mut [MaybeUninit<u8>]) -> SResult<usize> {
        let written = out!(0usize, |n| sys::napi_get_value_string_utf8(
            self.0,
            v,
            room.as_mut_ptr().cast(),
            room.len(),
            &mut n
        ))?;
        Ok(written.min(room.len().saturating_sub(1)))
    }

    pub fn is_array(self, v: Raw) -> SResult<bool> {
        out!(false, |b| sys::napi_is_array(self.0, v, &mut b))
    }

    pub fn is_typedarray(self, v: Raw) -> SResult<bool> {
        out!(false, |b| sys::napi_is_typedarray(self.0, v, &mut b))
    }

    pub fn is_dataview(self, v: Raw) -> SResult<bool> {
        out!(false, |b| sys::napi_is_dataview(self.0, v, &mut b))
    }

    /// A typed array's element type, element count and data.
    pub fn typedarray_info(self, v: Raw) -> SResult<ViewInfo> {
        let (mut ty, mut length, mut data, mut buffer, mut offset) =
            (0, 0usize, std::ptr::null_mut(), std::ptr::null_mut(), 0usize);
        out!((), |_u| sys::napi_get_typedarray_info(
            self.0,
            v,
            &mut ty,
            &mut length,
            &mut data,
            &mut buffer,
            &mut offset
        ))?;
        Ok(ViewInfo {
            element_type: Some(ty),
            length,
            data: data as *const u8,
        })
    }

    /// Writes `value` into element `index` of a Float64Array (a result slot JS reads
    /// right after the call).
    pub fn set_float64(self, array: Raw, index: usize, value: f64) -> SResult<()> {
        let info = self.typedarray_info(array)?;
        if info.element_type != Some(sys::TypedarrayType::float64_array) || index >= info.length || info.data.is_null()
        {
            return Err(StoreError::type_error("Expected a Float64Array result slot"));
        }
        // SAFETY: the array holds `length` f64 elements at `data` (checked above), and
        // nothing else touches it during this synchronous call.
        unsafe { info.data.cast_mut().cast::<f64>().add(index).write_unaligned(value) };
        Ok(())
    }

    /// A DataView's byte length and data.
    pub fn dataview_info(self, v: Raw) -> SResult<ViewInfo> {
        let (mut length, mut data, mut buffer, mut offset) =
            (0usize, std::ptr::null_mut(), std::ptr::null_mut(), 0usize);
        out!((), |_u| sys::napi_get_dataview_info(
            self.0,
            v,
            &mut length,
            &mut data,
            &mut buffer,
            &mut offset
        ))?;
        Ok(ViewInfo {
            element_type: None,
            length,
            data: data as *const u8,
        })
    }

    /// Runs `f` on `byte_len` bytes of a view described by [`Napi::typedarray_info`] and
    /// friends, in place. The caller computes `byte_len` from Node-API's own figures (never
    /// more than the view); `f` runs no JS, so the bytes cannot move or go meanwhile.
    pub fn with_view_bytes<R>(self, info: &ViewInfo, byte_len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        if info.data.is_null() || byte_len == 0 {
            return f(&[]);
        }
        // SAFETY: Node-API reported the view's data pointer; `byte_len` is at most its size,
        // and the bytes stay put while `f`, which cannot reach JS, runs.
        f(unsafe { std::slice::from_raw_parts(info.data, byte_len) })
    }

    /// Copies `byte_len` bytes of a view described by [`Napi::typedarray_info`] and friends.
    /// The caller computes `byte_len` from Node-API's own figures (never more than the view).
    pub fn view_bytes(self, info: &ViewInfo, byte_len: usize) -> Vec<u8> {
        if info.data.is_null() || byte_len == 0 {
            return Vec::new();
        }
        // SAFETY: Node-API reported the view's data pointer; `byte_len` is at most its size
        // (element count times the size of a known element type, or its byte length).
        unsafe { std::slice::from_raw_parts(info.data, byte_len) }.to_vec()
    }

    pub fn prototype(self, v: Raw) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_prototype(self.0, v, &mut o))
    }

    pub fn strict_equals(self, a: Raw, b: Raw) -> SResult<bool> {
        out!(false, |b2| sys::napi_strict_equals(self.0, a, b, &mut b2))
    }
}

/// The room past `buf`'s length, for Node-API to write into.
fn spare(buf: &mut Utf8) -> &mut [MaybeUninit<u8>] {
    let (len, capacity) = (buf.len(), buf.capacity());
    // SAFETY: the `capacity - len` bytes past the length are the buffer's own, borrowed
    // with it; as MaybeUninit they may be written before they are initialised.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().add(len).cast(), capacity - len) }
}
