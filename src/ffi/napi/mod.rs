//! The one module that calls Node-API directly. Each call is a safe method on [`Napi`]
//! whose status is checked: a failure is [`StoreError::Pending`] (Node-API fails only
//! with an exception pending, or on a programming error that the checks turn into a JS
//! error instead of undefined behaviour). The rest of `js` builds on these methods.

use std::ffi::CStr;

use napi::sys;

use crate::error::{SResult, StoreError};

/// A raw JS value of the current call.
pub type Raw = sys::napi_value;

/// A string's UTF-8 bytes, kept inline when short: most bound strings (keys, ids,
/// names) then need no allocation.
pub type Utf8 = smallvec::SmallVec<[u8; 64]>;

/// A native function that takes its call's arguments as they were passed: no array is
/// built in JS and read back element by element, and none of napi-rs's per-argument
/// conversions run (the hot statement calls).
pub type Variadic = fn(Napi, &[Raw]) -> napi::Result<Raw>;

/// The environment of the current native call.
#[derive(Clone, Copy)]
pub struct Napi(sys::napi_env);

fn check(status: sys::napi_status) -> SResult<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(StoreError::Pending)
    }
}

/// Runs one Node-API call that writes its result to an out-parameter.
macro_rules! out {
    ($init:expr, |$out:ident| $call:expr) => {{
        #[allow(unused_mut)]
        let mut $out = $init;
        // SAFETY: every call passes this module's environment, values of the current
        // call and a valid out-pointer; Node-API validates the rest and reports a status.
        check(unsafe { $call })?;
        Ok::<_, StoreError>($out)
    }};
}

mod call;
mod read;
pub mod returned;
mod shared;
mod value;
pub use call::{JsRef, Scope};
pub use shared::ResultSlots;
pub use value::JsVal;

/// Element types of typed arrays, as Node-API numbers them.
pub type TypedArrayType = sys::napi_typedarray_type;

/// Where a typed array's or DataView's bytes are, and how many elements they hold.
pub struct ViewInfo {
    pub element_type: Option<TypedArrayType>,
    pub length: usize,
    data: *const u8,
}

impl Napi {
    pub fn new(env: sys::napi_env) -> Self {
        Napi(env)
    }

    pub fn env(self) -> sys::napi_env {
        self.0
    }

    /// The running Node's major version.
    pub fn node_major(self) -> SResult<u32> {
        let version = out!(std::ptr::null(), |v| sys::napi_get_node_version(self.0, &mut v))?;
        // SAFETY: Node-API returns a pointer to a static struct that lives as long as the
        // process (checked non-null here).
        unsafe { version.as_ref() }
            .map(|v| v.major)
            .ok_or_else(|| StoreError::error("napi_get_node_version returned no version"))
    }

    /// A JS function named `name` that runs `f` with the arguments of each call.
    pub fn variadic_function(self, name: &CStr, f: Variadic) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |r| sys::napi_create_function(
            self.0,
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(variadic_trampoline),
            f as *mut std::ffi::c_void,
            &mut r
        ))
    }

    /// An unsigned 32-bit integer argument (a handle, an id, a mode).
    pub fn uint32(self, v: Raw) -> SResult<u32> {
        out!(0u32, |n| sys::napi_get_value_uint32(self.0, v, &mut n))
    }

    // --- objects and properties ---

    pub fn global(self) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_global(self.0, &mut o))
    }

    pub fn named_property(self, obj: Raw, key: &CStr) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_named_property(
            self.0,
            obj,
            key.as_ptr(),
            &mut o
        ))
    }

    /// Defines `props` on `obj` in order as enumerable data properties that are neither
    /// writable nor configurable (V8's `DontDelete | ReadOnly`, what better-sqlite3's
    /// objects carry), leaving `obj` extensible: one call for what JS's
    /// `Object.defineProperty` does far more slowly one property at a time.
    pub fn define_frozen<const N: usize>(self, obj: Raw, props: [(&CStr, Raw); N]) -> SResult<()> {
        let descriptors = props.map(|(name, value)| sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: std::ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value,
            attributes: sys::PropertyAttributes::enumerable,
            data: std::ptr::null_mut(),
        });
        out!((), |_u| sys::napi_define_properties(
            self.0,
            obj,
            N,
            descriptors.as_ptr()
        ))
    }

    /// `obj[key]` (a getter or a proxy's trap runs; a throw stays pending).
    pub fn property(self, obj: Raw, key: Raw) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_property(
            self.0, obj, key, &mut o
        ))
    }

    pub fn has_own_property(self, obj: Raw, key: Raw) -> SResult<bool> {
        out!(false, |b| sys::napi_has_own_property(self.0, obj, key, &mut b))
    }

    pub fn object(self) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_object(self.0, &mut o))
    }

    pub fn set_named_property(self, obj: Raw, key: &CStr, value: Raw) -> SResult<()> {
        out!((), |_u| sys::napi_set_named_property(self.0, obj, key.as_ptr(), value))
    }

    pub fn array_length(self, v: Raw) -> SResult<u32> {
        out!(0u32, |n| sys::napi_get_array_length(self.0, v, &mut n))
    }

    pub fn element(self, v: Raw, index: u32) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_element(
            self.0, v, index, &mut o
        ))
    }

    pub fn set_element(self, array: Raw, index: u32, value: Raw) -> SResult<()> {
        out!((), |_u| sys::napi_set_element(self.0, array, index, value))
    }

    // --- creating values ---

    pub fn undefined(self) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_undefined(self.0, &mut o))
    }

    pub fn null(self) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_null(self.0, &mut o))
    }

    pub fn number(self, n: f64) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_double(self.0, n, &mut o))
    }

    /// A BigInt holding `n` (an INTEGER read with safe integers on).
    pub fn bigint(self, n: i64) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_bigint_int64(
            self.0, n, &mut o
        ))
    }

    /// A string from UTF-8 bytes, decoded by V8 (invalid sequences become U+FFFD).
    pub fn string_utf8(self, bytes: &[u8]) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_string_utf8(
            self.0,
            crate::ffi::bytes_ptr(bytes).cast(),
            bytes.len() as isize,
            &mut o
        ))
    }

    /// A string from SQLite's text bytes, decoded as V8 decodes UTF-8 (invalid sequences
    /// become U+FFFD). ASCII text is handed over as Latin-1, which V8 copies without
    /// decoding. Text longer than a JS string can be is a RangeError, as in JS.
    #[inline]
    pub fn text(self, bytes: &[u8]) -> SResult<Raw> {
        let ptr = crate::ffi::bytes_ptr(bytes).cast();
        let made = if bytes.is_ascii() {
            out!(std::ptr::null_mut(), |o| sys::napi_create_string_latin1(
                self.0,
                ptr,
                bytes.len() as isize,
                &mut o
            ))
        } else {
            out!(std::ptr::null_mut(), |o| sys::napi_create_string_utf8(
                self.0,
                ptr,
                bytes.len() as isize,
                &mut o
            ))
        };
        self.or_too_big(made, "Invalid string length")
    }

    /// A failed creation that left no exception pending (V8 refused the size) as a
    /// RangeError with JS's own message.
    fn or_too_big(self, made: SResult<Raw>, message: &str) -> SResult<Raw> {
        match made {
            Err(StoreError::Pending) if !self.exception_pending()? => Err(StoreError::range_error(message)),
            other => other,
        }
    }

    /// An ArrayBuffer holding a copy of `bytes` (JS wraps it as a Buffer itself).
    pub fn arraybuffer_copy(self, bytes: &[u8]) -> SResult<Raw> {
        let mut data = std::ptr::null_mut();
        let made = out!(std::ptr::null_mut(), |o| sys::napi_create_arraybuffer(
            self.0,
            bytes.len(),
            &mut data,
            &mut o
        ));
        let buffer = self.or_too_big(made, "Array buffer allocation failed")?;
        if !bytes.is_empty() {
            if data.is_null() {
                return Err(StoreError::error("Node-API made an ArrayBuffer without memory"));
            }
            // SAFETY: Node-API allocated `bytes.len()` writable bytes at `data` for the new
            // buffer, which no JS has seen yet.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
        }
        Ok(buffer)
    }

    /// A Buffer holding a copy of `bytes`.
    pub fn buffer_copy(self, bytes: &[u8]) -> SResult<Raw> {
        // No pointer to the copy is asked for: finding it costs Node a look at the new
        // Buffer's ArrayBuffer, and nothing here writes to it.
        let made = out!(std::ptr::null_mut(), |o| sys::napi_create_buffer_copy(
            self.0,
            bytes.len(),
            crate::ffi::bytes_ptr(bytes).cast(),
            std::ptr::null_mut(),
            &mut o
        ));
        self.or_too_big(made, "Array buffer allocation failed")
    }

    pub fn array(self, len: usize) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_array_with_length(
            self.0, len, &mut o
        ))
    }

    // --- functions, scripts and references ---

    pub fn new_instance(self, ctor: Raw, args: &[Raw]) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_new_instance(
            self.0,
            ctor,
            args.len(),
            args.as_ptr(),
            &mut o
        ))
    }

    /// Calls `f` with `this` = `recv`; a throw leaves its exception pending (`Pending`).
    pub fn call_function(self, recv: Raw, f: Raw, args: &[Raw]) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_call_function(
            self.0,
            recv,
            f,
            args.len(),
            args.as_ptr(),
            &mut o
        ))
    }

    /// A strong reference that keeps `v` alive until [`Napi::delete_reference`].
    pub fn reference(self, v: Raw) -> SResult<sys::napi_ref> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_reference(
            self.0, v, 1, &mut o
        ))
    }

    pub fn reference_value(self, r: sys::napi_ref) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_get_reference_value(
            self.0, r, &mut o
        ))
    }

    pub fn delete_reference(self, r: sys::napi_ref) -> SResult<()> {
        out!((), |_u| sys::napi_delete_reference(self.0, r))
    }

    // --- exceptions ---

    pub fn exception_pending(self) -> SResult<bool> {
        out!(false, |b| sys::napi_is_exception_pending(self.0, &mut b))
    }

    /// The pending exception, cleared (None when there is none).
    pub fn take_exception(self) -> SResult<Option<Raw>> {
        if !self.exception_pending()? {
            return Ok(None);
        }
        out!(std::ptr::null_mut(), |e| sys::napi_get_and_clear_last_exception(
            self.0, &mut e
        ))
        .map(Some)
    }

    pub fn throw(self, error: Raw) -> SResult<()> {
        out!((), |_u| sys::napi_throw(self.0, error))
    }

    pub fn error(self, message: Raw) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_error(
            self.0,
            std::ptr::null_mut(),
            message,
            &mut o
        ))
    }

    pub fn type_error(self, message: Raw) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_type_error(
            self.0,
            std::ptr::null_mut(),
            message,
            &mut o
        ))
    }

    pub fn range_error(self, message: Raw) -> SResult<Raw> {
        out!(std::ptr::null_mut(), |o| sys::napi_create_range_error(
            self.0,
            std::ptr::null_mut(),
            message,
            &mut o
        ))
    }
}

/// Arguments read onto the stack; a call with more reads them again into a vector.
/// Node-API fills the room a call leaves unused with `undefined`, one store a place, on
/// every call: the room is what most calls pass (a key and a few parameters).
const INLINE_ARGS: usize = 8;

/// Node-API's entry for every [`Variadic`] function: reads the arguments (and the Rust
/// function, kept as the callback's data), runs it, and throws its error if it failed. A
/// panic becomes a JS error: none may unwind into Node.
unsafe extern "C" fn variadic_trampoline(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let napi = Napi(env);
    let mut inline = [std::ptr::null_mut(); INLINE_ARGS];
    let mut argc = INLINE_ARGS;
    let mut data = std::ptr::null_mut();
    // SAFETY: `info` is this call's callback info; the buffers are valid for `argc` values.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            inline.as_mut_ptr(),
            std::ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        return throw_reason(env, "could not read the arguments of a native call");
    }
    let mut spilled = Vec::new();
    let args: &[Raw] = if argc <= INLINE_ARGS {
        &inline[..argc]
    } else {
        spilled.resize(argc, std::ptr::null_mut());
        let mut again = argc;
        // SAFETY: as above, with a buffer of `argc` values.
        let status = unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut again,
                spilled.as_mut_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if status != sys::Status::napi_ok {
            return throw_reason(env, "could not read the arguments of a native call");
        }
        &spilled[..argc.min(again)]
    };
    // SAFETY: `data` is the `Variadic` this function was created with (variadic_function).
    let f: Variadic = unsafe { std::mem::transmute::<*mut std::ffi::c_void, Variadic>(data) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(napi, args))) {
        Ok(Ok(value)) => value,
        // The error is thrown already (with_handle throws the store's errors itself).
        Ok(Err(e)) if e.status == napi::Status::PendingException => std::ptr::null_mut(),
        Ok(Err(e)) => {
            // SAFETY: a plain napi-rs error thrown on this call's environment.
            unsafe { napi::JsError::from(e).throw_into(env) };
            std::ptr::null_mut()
        }
        Err(_) => throw_reason(env, "triflux-native-store internal error: a native call panicked"),
    }
}

/// Throws a plain `Error(message)` and returns the null value a failed call gives back.
fn throw_reason(env: sys::napi_env, message: &str) -> sys::napi_value {
    // SAFETY: a plain napi-rs error thrown on this call's environment.
    unsafe { napi::JsError::from(napi::Error::from_reason(message)).throw_into(env) };
    std::ptr::null_mut()
}
