//! A borrowed JS value with the JavaScript semantics the original store relied on:
//! `== null`, truthiness, `Number(x)`, `Object.hasOwn`, property reads, and the exact
//! UTF-16 content of strings (lone surrogates included, as WTF-8 bytes like V8 writes).
//! The value itself and what its type tells are `ffi::napi::value`'s; every Node-API call
//! goes through `ffi::napi`.

use std::cell::RefCell;
use std::sync::OnceLock;

use napi::sys;

use crate::error::{SResult, StoreError};
pub use crate::ffi::napi::JsVal;
use crate::ffi::napi::{JsRef, Napi, Raw, Utf8, ViewInfo};
use crate::ffi::sqlite::sqlite_bytes::SqliteBytes;

/// Strings of fewer UTF-16 units are short: a [`Utf8`]'s inline bytes hold nearly all of
/// them whole (three bytes a unit at most).
const SURELY_INLINE: usize = 21;

impl JsVal {
    /// The string's UTF-16 units.
    pub fn utf16(&self) -> SResult<Vec<u16>> {
        self.napi.utf16(self.raw)
    }

    /// The string's bytes as better-sqlite3 on the running Node hands them to SQLite
    /// (bound values, SQL text): see [`lone_surrogates_replaced`].
    pub fn sqlite_text(&self) -> SResult<Utf8> {
        self.with_lone_surrogates(self.napi.utf8(self.raw)?)
    }

    /// The string's UTF-8 as Node-API wrote it, `utf8`, with its lone surrogates as the
    /// running Node's better-sqlite3 writes them. Node-API replaces each by U+FFFD, as V8
    /// 13 does; for the Nodes before it, a string where a U+FFFD came out is read again as
    /// UTF-16 and written as WTF-8.
    fn with_lone_surrogates(&self, utf8: Utf8) -> SResult<Utf8> {
        if lone_surrogates_replaced(self.napi) || !has_replacement_character(&utf8) {
            return Ok(utf8);
        }
        Ok(Utf8::from_vec(wtf8_from_utf16(&self.utf16()?)))
    }

    /// [`JsVal::sqlite_text`] for SQLite to keep (a callback's TEXT result), `units`
    /// UTF-16 units long when the caller knows (else asked here): written once, into
    /// memory from SQLite's allocator, which SQLite then owns as it is. None where the
    /// string is to be read as usual and copied by SQLite: a short one, which the inline
    /// buffer takes and SQLite copies into memory its result already has; one whose lone
    /// surrogates the running Node's better-sqlite3 writes as WTF-8; or when SQLite has
    /// no memory to give (its own copy then reports it). The length comes first: a first
    /// write to the inline buffer, as [`JsVal::sqlite_text`] makes, costs a long string
    /// more than it saves a short one.
    #[inline]
    pub fn sqlite_text_to_keep(&self, units: Option<usize>) -> SResult<Option<SqliteBytes>> {
        let units = match units {
            Some(units) => units,
            None => self.napi.utf16_len(self.raw)?,
        };
        if units < SURELY_INLINE {
            return Ok(None);
        }
        // A byte more than the string can take: a write that fills the room was cut,
        // which a wrong length would do.
        let room = self.napi.utf8_room(self.raw, units)? + 2;
        let Some(mut bytes) = SqliteBytes::with_capacity(room) else {
            return Ok(None);
        };
        bytes.fill(|room| self.napi.utf8_into(self.raw, room))?;
        if bytes.as_bytes().len() + 1 >= room
            || (!lone_surrogates_replaced(self.napi) && has_replacement_character(bytes.as_bytes()))
        {
            return Ok(None);
        }
        bytes.shrink();
        Ok(Some(bytes))
    }

    pub fn is_array(&self) -> SResult<bool> {
        Ok(self.is_object() && self.napi.is_array(self.raw)?)
    }

    /// Buffer, any typed array or DataView (what better-sqlite3 binds as a BLOB: an
    /// ArrayBuffer view; a Buffer is a Uint8Array).
    pub fn is_buffer(&self) -> SResult<bool> {
        if !self.is_object() {
            return Ok(false);
        }
        Ok(self.napi.is_typedarray(self.raw)? || self.napi.is_dataview(self.raw)?)
    }

    /// The bytes of a Buffer, typed array or DataView (see [`JsVal::is_buffer`]).
    pub fn buffer_bytes(&self) -> SResult<Vec<u8>> {
        let (info, byte_len) = self.view()?;
        Ok(self.napi.view_bytes(&info, byte_len))
    }

    /// Runs `f` (which must not reach JS) on the bytes of a Buffer, typed array or
    /// DataView in place.
    pub fn with_buffer_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> SResult<R> {
        let (info, byte_len) = self.view()?;
        Ok(self.napi.with_view_bytes(&info, byte_len, f))
    }

    /// Where a Buffer's, typed array's or DataView's bytes are, and how many (for a value
    /// [`JsVal::is_buffer`] accepted).
    fn view(&self) -> SResult<(ViewInfo, usize)> {
        if self.napi.is_typedarray(self.raw)? {
            let info = self.napi.typedarray_info(self.raw)?;
            // Node-API gives the length in elements: an element type this build does not
            // know (a newer Node's Float16Array) has no size we could trust.
            let size = info.element_type.and_then(typed_array_element_size).ok_or_else(|| {
                StoreError::type_error("SQLite3 can only bind numbers, strings, bigints, buffers, and null")
            })?;
            let bytes = info
                .length
                .checked_mul(size)
                .ok_or_else(|| StoreError::range_error("The bound string, buffer, or bigint is too big"))?;
            Ok((info, bytes))
        } else {
            let info = self.napi.dataview_info(self.raw)?;
            let bytes = info.length;
            Ok((info, bytes))
        }
    }

    /// better-sqlite3's "plain object", for an object already known to be neither an
    /// array nor a buffer: its prototype is Object.prototype or null.
    pub fn has_plain_prototype(&self) -> SResult<bool> {
        let proto = JsVal::wrap(self.napi, self.napi.prototype(self.raw)?)?;
        if proto.is_null() {
            return Ok(true);
        }
        self.napi.strict_equals(proto.raw, object_prototype(self.napi)?)
    }

    pub fn array_len(&self) -> SResult<u32> {
        self.napi.array_length(self.raw)
    }

    pub fn element(&self, index: u32) -> SResult<JsVal> {
        JsVal::wrap(self.napi, self.napi.element(self.raw, index)?)
    }
}

thread_local! {
    /// This thread's `Object.prototype` (one JS environment per thread), kept once read.
    static OBJECT_PROTOTYPE: RefCell<Option<JsRef>> = const { RefCell::new(None) };
}

/// `Object.prototype` of this thread's environment.
fn object_prototype(napi: Napi) -> SResult<Raw> {
    OBJECT_PROTOTYPE.with(|kept| {
        if let Some(kept) = kept.borrow().as_ref() {
            return kept.get(napi);
        }
        let object_ctor = napi.named_property(napi.global()?, c"Object")?;
        let proto = napi.named_property(object_ctor, c"prototype")?;
        *kept.borrow_mut() = Some(napi.keep(proto)?);
        Ok(proto)
    })
}

/// Bytes per element of the typed arrays Node-API knows; None for any other type.
fn typed_array_element_size(ty: sys::napi_typedarray_type) -> Option<usize> {
    use sys::TypedarrayType as T;
    match ty {
        T::int8_array | T::uint8_array | T::uint8_clamped_array => Some(1),
        T::int16_array | T::uint16_array => Some(2),
        T::int32_array | T::uint32_array | T::float32_array => Some(4),
        T::float64_array | T::bigint64_array | T::biguint64_array => Some(8),
        _ => None,
    }
}

/// Whether `utf8` holds U+FFFD (`EF BF BD`). Found by its first byte, which memchr scans
/// for many bytes at a time: a substring search pays a set-up per string, which short
/// strings, the most common, cannot recoup. A short ASCII string (the usual key or name),
/// which cannot hold it, is told by a word-wise check that has no set-up at all.
fn has_replacement_character(utf8: &[u8]) -> bool {
    const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();
    const SHORT: usize = 64;
    if utf8.len() <= SHORT && utf8.is_ascii() {
        return false;
    }
    memchr::memchr_iter(REPLACEMENT[0], utf8).any(|at| utf8[at..].starts_with(REPLACEMENT))
}

/// Whether the running Node's better-sqlite3 turns a lone UTF-16 surrogate into U+FFFD
/// (`EF BF BD`) when it converts a string for SQLite. It converts with V8's
/// `String::Utf8Value`: up to V8 12 (Node 23) that wrote a lone surrogate as its own three
/// bytes (`ED A0 80` for U+D800); V8 13 (Node 24) replaces it. Asked once per process.
fn lone_surrogates_replaced(napi: Napi) -> bool {
    static REPLACED: OnceLock<bool> = OnceLock::new();
    *REPLACED.get_or_init(|| napi.node_major().is_ok_and(|major| major >= 24))
}

/// UTF-16 units as better-sqlite3 on the running Node would write them for SQLite.
pub fn sqlite_text_from_utf16(napi: Napi, units: &[u16]) -> Vec<u8> {
    if lone_surrogates_replaced(napi) {
        String::from_utf16_lossy(units).into_bytes()
    } else {
        wtf8_from_utf16(units)
    }
}

/// Encodes UTF-16 units as WTF-8 (surrogate pairs become 4-byte UTF-8; lone surrogates
/// their own 3-byte form).
pub fn wtf8_from_utf16(units: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(units.len() + units.len() / 2);
    let mut i = 0;
    while i < units.len() {
        let u = units[i] as u32;
        if u < 0x80 {
            out.push(u as u8);
            i += 1;
            continue;
        }
        let cp = if (0xD800..0xDC00).contains(&u)
            && i + 1 < units.len()
            && (0xDC00..0xE000).contains(&(units[i + 1] as u32))
        {
            let lo = units[i + 1] as u32;
            i += 2;
            0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            i += 1;
            u
        };
        if cp < 0x800 {
            out.push(0xC0 | (cp >> 6) as u8);
            out.push(0x80 | (cp & 0x3F) as u8);
        } else if cp < 0x10000 {
            out.push(0xE0 | (cp >> 12) as u8);
            out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
            out.push(0x80 | (cp & 0x3F) as u8);
        } else {
            out.push(0xF0 | (cp >> 18) as u8);
            out.push(0x80 | ((cp >> 12) & 0x3F) as u8);
            out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
            out.push(0x80 | (cp & 0x3F) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{has_replacement_character, wtf8_from_utf16};

    #[test]
    fn replacement_character_found_anywhere_and_only_whole() {
        assert!(!has_replacement_character(b""));
        assert!(!has_replacement_character("plain text \u{00E9}\u{6F22}".as_bytes()));
        assert!(has_replacement_character("\u{FFFD}".as_bytes()));
        assert!(has_replacement_character(
            format!("{}\u{FFFD}", "a".repeat(100)).as_bytes()
        ));
        // Its first byte alone, or with a different continuation, is not it.
        assert!(!has_replacement_character(&[0x61, 0xEF, 0xBF]));
        assert!(!has_replacement_character("\u{FFFC}\u{FEFF}".as_bytes()));
        assert!(has_replacement_character("\u{FFFC}\u{FFFD}".as_bytes()));
        // Short and long ASCII strings have none; a short or long one with it, at either end.
        for len in [1, 7, 8, 61, 62, 63, 64, 65, 200] {
            let ascii = "k".repeat(len);
            assert!(!has_replacement_character(ascii.as_bytes()), "{len} ASCII bytes");
            assert!(
                has_replacement_character(format!("{ascii}\u{FFFD}").as_bytes()),
                "{len} then U+FFFD"
            );
            assert!(
                has_replacement_character(format!("\u{FFFD}{ascii}").as_bytes()),
                "U+FFFD then {len}"
            );
        }
    }

    #[test]
    fn wtf8_matches_utf8_for_valid_text() {
        let s = "aé漢😀";
        let units: Vec<u16> = s.encode_utf16().collect();
        assert_eq!(wtf8_from_utf16(&units), s.as_bytes());
    }

    #[test]
    fn wtf8_keeps_a_lone_surrogate_as_three_bytes() {
        assert_eq!(
            wtf8_from_utf16(&[0x61, 0xD800, 0x62]),
            vec![0x61, 0xED, 0xA0, 0x80, 0x62]
        );
        assert_eq!(wtf8_from_utf16(&[0xDC00]), vec![0xED, 0xB0, 0x80]);
    }
}
