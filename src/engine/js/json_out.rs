//! JSON text for what is not a row: `stmt.columns()`, and the stored `*_json` columns of
//! the store's rows, which are checked and spliced in verbatim (the original's
//! `parseJson` with its fallbacks) so that JSON is never parsed into a tree here.

use rusqlite::types::ValueRef;

use super::json_in::is_valid_json;

pub struct JsonOut {
    pub buf: String,
}

impl Default for JsonOut {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonOut {
    pub fn new() -> Self {
        JsonOut {
            buf: String::with_capacity(512),
        }
    }

    pub fn finish(self) -> String {
        self.buf
    }

    pub fn raw(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    pub fn null(&mut self) {
        self.buf.push_str("null");
    }

    pub fn int(&mut self, v: i64) {
        let mut b = itoa::Buffer::new();
        self.buf.push_str(b.format(v));
    }

    /// A JS number (the infinities and -0 included: `JSON.parse` gives each back).
    /// Written with ryu/itoa rather than serde_json, which refuses non-finite numbers.
    pub fn num(&mut self, v: f64) {
        if v.is_infinite() {
            self.buf.push_str(if v > 0.0 { "1e999" } else { "-1e999" });
        } else if v == 0.0 && v.is_sign_negative() {
            self.buf.push_str("-0");
        } else if v == v.trunc() && v.abs() < 1e15 {
            self.int(v as i64);
        } else {
            let mut b = ryu::Buffer::new();
            self.buf.push_str(b.format_finite(v));
        }
    }

    pub fn str(&mut self, s: &str) {
        escape_into(&mut self.buf, s);
    }

    pub fn key(&mut self, first: &mut bool, name: &str) {
        if !*first {
            self.buf.push(',');
        }
        *first = false;
        escape_into(&mut self.buf, name);
        self.buf.push(':');
    }

    /// `parseJson(value, fallback)` of the original, spliced in place.
    pub fn parsed_json(&mut self, v: ValueRef<'_>, fallback: &str) {
        match v {
            ValueRef::Null => self.raw(fallback),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                let s = std::str::from_utf8(t).map_or_else(|_| String::from_utf8_lossy(t), std::borrow::Cow::Borrowed);
                if is_valid_json(&s) {
                    self.raw(s.trim_matches(JSON_WS));
                } else {
                    self.raw(fallback);
                }
            }
            // JSON.parse(String(n)): finite numbers read back as themselves, except
            // that String(-0) is "0"; an INTEGER past 2^53 reads back as its nearest double.
            ValueRef::Integer(i) if i.unsigned_abs() <= (1u64 << 53) => self.int(i),
            ValueRef::Integer(i) => self.num(i as f64),
            ValueRef::Real(f) => {
                if f.is_finite() {
                    self.num(if f == 0.0 { 0.0 } else { f })
                } else {
                    self.raw(fallback)
                }
            }
        }
    }
}

const JSON_WS: &[char] = &[' ', '\t', '\n', '\r'];

/// Whether any of the eight bytes in `word` needs escaping in a JSON string (`"`, `\\` or
/// a control character below 0x20): the usual word-at-a-time zero-byte test, so that
/// long runs of plain text are skipped eight bytes at a time.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    zero_byte(word ^ (ONES * u64::from(b'"')))
        || zero_byte(word ^ (ONES * u64::from(b'\\')))
        || word.wrapping_sub(ONES * 0x20) & !word & HIGH != 0
}

pub fn escape_into(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            if !word_needs_escape(word) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0..=0x1f => None,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                out.push_str("\\u00");
                out.push(char::from(b"0123456789abcdef"[(b >> 4) as usize]));
                out.push(char::from(b"0123456789abcdef"[(b & 0xf) as usize]));
            }
        }
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes a JSON array item by item: `open`, `item` before each element, `close`.
pub struct JsonArray {
    first: bool,
}

impl JsonArray {
    pub fn open(out: &mut JsonOut) -> JsonArray {
        out.buf.push('[');
        JsonArray { first: true }
    }

    pub fn item(&mut self, out: &mut JsonOut) {
        if !self.first {
            out.buf.push(',');
        }
        self.first = false;
    }

    pub fn close(self, out: &mut JsonOut) {
        out.buf.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_js_would_parse_them() {
        let mut o = JsonOut::new();
        o.num(0.7);
        o.raw(",");
        o.num(1e21);
        o.raw(",");
        o.num(5e-7);
        o.raw(",");
        o.num(f64::INFINITY);
        assert_eq!(o.buf, "0.7,1e21,5e-7,1e999");
    }

    #[test]
    fn escapes_in_long_text_at_every_position() {
        for at in 0..20 {
            for special in ["\"", "\\", "\n", "\u{1f}", "\u{7f}", "é"] {
                let text = format!("{}{special}{}", "a".repeat(at), "b".repeat(19 - at));
                let mut ours = String::new();
                escape_into(&mut ours, &text);
                assert_eq!(ours, serde_json::to_string(&text).unwrap(), "{text:?}");
            }
        }
    }

    #[test]
    fn escapes_control_characters() {
        let mut s = String::new();
        escape_into(&mut s, "a\"b\\c\n\u{1}\u{2028}");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001\u{2028}\"");
    }
}
