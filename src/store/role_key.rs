//! Role keys: decoding and validating `rk2.` wires (issue 4).
//!
//! A wire is `rk2.` + unpadded base64url of the canonical JSON
//! `{"project_id":"prj_…","role_kind":"cto"}` or
//! `{"project_id":"prj_…","role_kind":"lead","scope_id":"scp_…"}`, at most 512 bytes.
//! The checks run in the role contract's order, so the first failing rule decides the
//! error code (the message equals the code).

use std::ffi::CStr;

use base64::Engine;

use crate::js::json_in::is_valid_json;
use crate::js::value::JsVal;
use crate::sqlite::error::{SResult, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleKey {
    pub project_id: String,
    /// "cto" or "lead".
    pub role_kind: &'static str,
    /// `None` for a CTO key.
    pub scope_id: Option<String>,
}

pub const WIRE_INVALID: &str = "ROLE_KEY_WIRE_INVALID";
pub const WIRE_PREFIX: &str = "ROLE_KEY_WIRE_PREFIX";
pub const NON_CANONICAL: &str = "ROLE_KEY_NON_CANONICAL";
pub const KEY_INVALID: &str = "ROLE_KEY_INVALID";
pub const FIELD_UNSUPPORTED: &str = "ROLE_KEY_FIELD_UNSUPPORTED";
pub const PROJECT_ID_INVALID: &str = "PROJECT_ID_INVALID";
pub const KIND_UNSUPPORTED: &str = "ROLE_KIND_UNSUPPORTED";
pub const SCOPE_FORBIDDEN: &str = "ROLE_SCOPE_FORBIDDEN";
pub const SCOPE_REQUIRED: &str = "SCOPE_REQUIRED";
pub const SCOPE_ID_INVALID: &str = "SCOPE_ID_INVALID";

const MAX_WIRE_BYTES: usize = 512;

fn is_b64url(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// `^<prefix>[A-Za-z0-9_-]{22}$`
fn matches_id(s: &str, prefix: &str) -> bool {
    s.len() == prefix.len() + 22 && s.starts_with(prefix) && s.as_bytes()[prefix.len()..].iter().all(|&c| is_b64url(c))
}

/// Node's lenient base64url decoding of an already alphabet-checked string: trailing
/// bits that do not fill a byte are dropped.
fn b64url_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4 + 1);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            _ => 63,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// The canonical wire of a normalized key.
pub fn encode(key: &RoleKey) -> String {
    let json = match &key.scope_id {
        Some(scope) => format!(
            "{{\"project_id\":\"{}\",\"role_kind\":\"lead\",\"scope_id\":\"{}\"}}",
            key.project_id, scope
        ),
        None => format!("{{\"project_id\":\"{}\",\"role_kind\":\"cto\"}}", key.project_id),
    };
    let mut wire = String::from("rk2.");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_string(json.as_bytes(), &mut wire);
    wire
}

/// A top-level member value: only strings matter to the contract.
enum Member {
    Str(String),
    Other,
}

/// Decodes a JSON string literal starting at `b[*i] == '"'` (already known valid).
/// Lone surrogates become U+FFFD, which never equals any of the ASCII names or ids.
fn read_string(b: &[u8], i: &mut usize) -> String {
    *i += 1;
    let mut units: Vec<u16> = Vec::new();
    let mut plain = *i;
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                units.extend(String::from_utf8_lossy(&b[plain..*i]).encode_utf16());
                *i += 1;
                break;
            }
            b'\\' => {
                units.extend(String::from_utf8_lossy(&b[plain..*i]).encode_utf16());
                let c = b[*i + 1];
                *i += 2;
                let unit: u16 = match c {
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => 10,
                    b'r' => 13,
                    b't' => 9,
                    b'u' => {
                        let hex = std::str::from_utf8(&b[*i..*i + 4]).unwrap_or("fffd");
                        *i += 4;
                        u16::from_str_radix(hex, 16).unwrap_or(0xfffd)
                    }
                    other => other as u16,
                };
                units.push(unit);
                plain = *i;
            }
            _ => *i += 1,
        }
    }
    String::from_utf16_lossy(&units)
}

/// Skips one (valid) JSON value that is not a string.
fn skip_value(b: &[u8], i: &mut usize) {
    let mut depth = 0i32;
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                read_string(b, i);
                if depth == 0 {
                    return;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return;
                }
                depth -= 1;
                if depth == 0 {
                    *i += 1;
                    return;
                }
            }
            b',' if depth == 0 => return,
            _ => {}
        }
        *i += 1;
    }
}

fn ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
}

/// The own members of a parsed JSON object in key order (a repeated key keeps its
/// first position and its last value, as JSON.parse does). `None` if the text is
/// not an object.
fn object_members(text: &str) -> Option<Vec<(String, Member)>> {
    let b = text.as_bytes();
    let mut i = 0;
    ws(b, &mut i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut members: Vec<(String, Member)> = Vec::new();
    loop {
        ws(b, &mut i);
        if i >= b.len() || b[i] == b'}' {
            break;
        }
        if b[i] == b',' {
            i += 1;
            continue;
        }
        let key = read_string(b, &mut i);
        ws(b, &mut i);
        i += 1; // ':'
        ws(b, &mut i);
        let value = if b.get(i) == Some(&b'"') {
            Member::Str(read_string(b, &mut i))
        } else {
            skip_value(b, &mut i);
            Member::Other
        };
        match members.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => members.push((key, value)),
        }
    }
    Some(members)
}

/// `decodeRoleKey` on the wire's bytes (WTF-8 of the JS string). Err is the code.
pub fn decode_bytes(wire: &[u8]) -> Result<RoleKey, &'static str> {
    if wire.len() > MAX_WIRE_BYTES {
        return Err(WIRE_INVALID);
    }
    if !wire.starts_with(b"rk2.") {
        return Err(WIRE_PREFIX);
    }
    let encoded = &wire[4..];
    if encoded.is_empty() || !encoded.iter().all(|&c| is_b64url(c)) {
        return Err(NON_CANONICAL);
    }
    let bytes = b64url_decode(encoded);
    let text = String::from_utf8_lossy(&bytes);
    if !is_valid_json(&text) {
        return Err(NON_CANONICAL);
    }
    let members = object_members(&text).ok_or(KEY_INVALID)?;
    if members
        .iter()
        .any(|(k, _)| !matches!(k.as_str(), "project_id" | "role_kind" | "scope_id"))
    {
        return Err(FIELD_UNSUPPORTED);
    }
    let field = |name: &str| members.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let project_id = match field("project_id") {
        Some(Member::Str(s)) if matches_id(s, "prj_") => s.clone(),
        _ => return Err(PROJECT_ID_INVALID),
    };
    let role_kind: &'static str = match field("role_kind") {
        Some(Member::Str(s)) if s == "cto" => "cto",
        Some(Member::Str(s)) if s == "lead" => "lead",
        _ => return Err(KIND_UNSUPPORTED),
    };
    let scope = field("scope_id");
    let key = if role_kind == "cto" {
        if scope.is_some() {
            return Err(SCOPE_FORBIDDEN);
        }
        RoleKey {
            project_id,
            role_kind,
            scope_id: None,
        }
    } else {
        let scope_id = match scope {
            Some(Member::Str(s)) => s.clone(),
            _ => return Err(SCOPE_REQUIRED),
        };
        if !matches_id(&scope_id, "scp_") {
            return Err(SCOPE_ID_INVALID);
        }
        RoleKey {
            project_id,
            role_kind,
            scope_id: Some(scope_id),
        }
    };
    if encode(&key).as_bytes() != wire {
        return Err(NON_CANONICAL);
    }
    Ok(key)
}

/// `decodeRoleKey(wire)` on a JS value, throwing the contract's coded Error.
pub fn decode(wire: &JsVal) -> SResult<RoleKey> {
    if !wire.is_string() {
        return Err(StoreError::coded(WIRE_INVALID, WIRE_INVALID));
    }
    decode_bytes(&wire.wtf8()?).map_err(|code| StoreError::coded(code, code))
}

/// `roleIdentity(input)`: the wire (`role_key_wire ?? roleKeyWire`), its decoded key,
/// and the mismatch checks for identity fields given beside it.
pub struct Identity {
    pub wire: JsVal,
    pub key: RoleKey,
}

impl Identity {
    pub fn scope(&self) -> &str {
        self.key.scope_id.as_deref().unwrap_or("")
    }
}

pub fn role_identity(input: &JsVal) -> SResult<Identity> {
    // `input?.role_key_wire ?? input?.roleKeyWire`
    let wire = if input.is_nullish() {
        *input
    } else {
        let w = input.get(c"role_key_wire")?;
        if w.is_nullish() {
            input.get(c"roleKeyWire")?
        } else {
            w
        }
    };
    let key = decode(&wire)?;
    let identity = Identity { wire, key };
    let fields: [(&CStr, &str, &str); 3] = [
        (c"project_id", "project_id", identity.key.project_id.as_str()),
        (c"role_kind", "role_kind", identity.key.role_kind),
        (c"scope_id", "scope_id", identity.scope()),
    ];
    for (ckey, name, expected) in fields {
        if input.has_own(ckey)? {
            let v = input.get(ckey)?;
            if !(v.is_string() && v.wtf8()? == expected.as_bytes()) {
                return Err(StoreError::error(format!("role key identity mismatch: {name}")));
            }
        }
    }
    Ok(identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRJ: &str = "prj_AAAAAAAAAAAAAAAAAAAAAA";
    const SCP: &str = "scp_BBBBBBBBBBBBBBBBBBBBBB";

    fn wire_of(json: &str) -> String {
        format!("rk2.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json))
    }

    #[test]
    fn valid_keys_roundtrip() {
        let cto = RoleKey {
            project_id: PRJ.into(),
            role_kind: "cto",
            scope_id: None,
        };
        let lead = RoleKey {
            project_id: PRJ.into(),
            role_kind: "lead",
            scope_id: Some(SCP.into()),
        };
        assert_eq!(decode_bytes(encode(&cto).as_bytes()), Ok(cto.clone()));
        assert_eq!(decode_bytes(encode(&lead).as_bytes()), Ok(lead));
        assert_eq!(
            encode(&cto),
            wire_of(&format!("{{\"project_id\":\"{PRJ}\",\"role_kind\":\"cto\"}}"))
        );
    }

    #[test]
    fn each_code() {
        let d = |json: &str| decode_bytes(wire_of(json).as_bytes());
        assert_eq!(decode_bytes(b"rk1.abc"), Err(WIRE_PREFIX));
        assert_eq!(decode_bytes(b"rk2."), Err(NON_CANONICAL));
        assert_eq!(decode_bytes(b"rk2.a+b"), Err(NON_CANONICAL));
        assert_eq!(decode_bytes(b"rk2.abc="), Err(NON_CANONICAL));
        assert_eq!(d("{bad"), Err(NON_CANONICAL));
        assert_eq!(d("[]"), Err(KEY_INVALID));
        assert_eq!(d("null"), Err(KEY_INVALID));
        assert_eq!(d("\"x\""), Err(KEY_INVALID));
        assert_eq!(
            d(&format!("{{\"project_id\":\"{PRJ}\",\"role_kind\":\"cto\",\"x\":1}}")),
            Err(FIELD_UNSUPPORTED)
        );
        assert_eq!(
            d("{\"project_id\":\"prj_short\",\"role_kind\":\"cto\"}"),
            Err(PROJECT_ID_INVALID)
        );
        assert_eq!(d("{\"project_id\":5,\"role_kind\":\"cto\"}"), Err(PROJECT_ID_INVALID));
        assert_eq!(d("{\"role_kind\":\"cto\"}"), Err(PROJECT_ID_INVALID));
        assert_eq!(
            d(&format!("{{\"project_id\":\"{PRJ}\",\"role_kind\":\"ceo\"}}")),
            Err(KIND_UNSUPPORTED)
        );
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"role_kind\":\"cto\",\"scope_id\":null}}"
            )),
            Err(SCOPE_FORBIDDEN)
        );
        assert_eq!(
            d(&format!("{{\"project_id\":\"{PRJ}\",\"role_kind\":\"lead\"}}")),
            Err(SCOPE_REQUIRED)
        );
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"role_kind\":\"lead\",\"scope_id\":7}}"
            )),
            Err(SCOPE_REQUIRED)
        );
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"role_kind\":\"lead\",\"scope_id\":\"scp_x\"}}"
            )),
            Err(SCOPE_ID_INVALID)
        );
    }

    #[test]
    fn non_canonical_orders_and_spacing() {
        let d = |json: &str| decode_bytes(wire_of(json).as_bytes());
        assert_eq!(
            d(&format!("{{\"role_kind\":\"cto\",\"project_id\":\"{PRJ}\"}}")),
            Err(NON_CANONICAL)
        );
        assert_eq!(
            d(&format!("{{ \"project_id\":\"{PRJ}\",\"role_kind\":\"cto\"}}")),
            Err(NON_CANONICAL)
        );
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"scope_id\":\"{SCP}\",\"role_kind\":\"lead\"}}"
            )),
            Err(NON_CANONICAL)
        );
        assert_eq!(
            d(&format!("{{\"project\\u005fid\":\"{PRJ}\",\"role_kind\":\"cto\"}}")),
            Err(NON_CANONICAL)
        );
        // Duplicate key: the last value wins, then the canonical check fails.
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"x\",\"project_id\":\"{PRJ}\",\"role_kind\":\"cto\"}}"
            )),
            Err(NON_CANONICAL)
        );
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"project_id\":\"x\",\"role_kind\":\"cto\"}}"
            )),
            Err(PROJECT_ID_INVALID)
        );
        // Extra trailing base64 character: same bytes decode, the wire differs.
        let cto = RoleKey {
            project_id: PRJ.into(),
            role_kind: "cto",
            scope_id: None,
        };
        let w = encode(&cto) + "A";
        assert_eq!(decode_bytes(w.as_bytes()), Err(NON_CANONICAL));
    }

    #[test]
    fn json_parse_corner_cases() {
        let d = |json: &str| decode_bytes(wire_of(json).as_bytes());
        // JSON.parse keeps "__proto__" as an own key; numbers out of range parse as Infinity.
        assert_eq!(
            d(&format!(
                "{{\"__proto__\":1,\"project_id\":\"{PRJ}\",\"role_kind\":\"cto\"}}"
            )),
            Err(FIELD_UNSUPPORTED)
        );
        assert_eq!(
            d("{\"project_id\":1e999,\"role_kind\":\"cto\"}"),
            Err(PROJECT_ID_INVALID)
        );
        assert_eq!(d(&format!("{}{}", "[".repeat(150), "]".repeat(150))), Err(KEY_INVALID));
        // Lone surrogate escapes are valid JSON but never a valid id.
        assert_eq!(
            d("{\"project_id\":\"\\ud800\",\"role_kind\":\"cto\"}"),
            Err(PROJECT_ID_INVALID)
        );
        // Nested values are skipped correctly before later members.
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"scope_id\":{{\"a\":[1,\"}}\"]}},\"role_kind\":\"cto\"}}"
            )),
            Err(SCOPE_FORBIDDEN)
        );
        assert_eq!(
            d(&format!(
                "{{\"project_id\":\"{PRJ}\",\"role_kind\":\"lead\",\"scope_id\":[\"{SCP}\"]}}"
            )),
            Err(SCOPE_REQUIRED)
        );
        // A BOM is not JSON whitespace.
        assert_eq!(
            d(&format!("\u{feff}{{\"project_id\":\"{PRJ}\",\"role_kind\":\"cto\"}}")),
            Err(NON_CANONICAL)
        );
    }

    #[test]
    fn oversize_is_invalid_before_prefix() {
        let long = "x".repeat(513);
        assert_eq!(decode_bytes(long.as_bytes()), Err(WIRE_INVALID));
        let ok512 = format!("rk2.{}", "A".repeat(508));
        assert_eq!(decode_bytes(ok512.as_bytes()), Err(NON_CANONICAL));
    }
}
