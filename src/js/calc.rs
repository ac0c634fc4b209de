//! The JavaScript arithmetic the original applied to values, reproduced exactly: the
//! clamps built on `Number(x)`, and JS StringToNumber for text read from columns.
//! (`now + x` is left to V8: the glue computes it.)

use crate::js::model::Val;
use crate::sqlite::error::SResult;

/// `clampMaxMessages` / `clampPriority` / `clampDurationMs`: `Number(v)`; non-finite
/// gives the fallback as it was given, else truncate and clamp to [min, max].
pub fn clamp(v: &Val, fallback: Val, min: f64, max: f64) -> SResult<Val> {
    let n = v.number()?;
    if !n.is_finite() {
        return Ok(fallback);
    }
    Ok(Val::Num(clamp_finite(n, 0.0, min, max)))
}

pub fn clamp_finite(n: f64, fallback: f64, min: f64, max: f64) -> f64 {
    if !n.is_finite() {
        return fallback;
    }
    n.trunc().min(max).max(min)
}

#[cfg(test)]
mod tests {
    use super::{clamp_finite, str_to_number};

    #[test]
    fn clamps_truncate_then_bound() {
        assert_eq!(clamp_finite(0.0, 20.0, 1.0, 100.0), 1.0);
        assert_eq!(clamp_finite(500.0, 20.0, 1.0, 100.0), 100.0);
        assert_eq!(clamp_finite(7.9, 5.0, 1.0, 9.0), 7.0);
        assert_eq!(clamp_finite(f64::NAN, 20.0, 1.0, 100.0), 20.0);
        assert_eq!(clamp_finite(f64::INFINITY, 600000.0, 1000.0, 86400000.0), 600000.0);
    }

    #[test]
    fn string_to_number_follows_js() {
        assert_eq!(str_to_number(""), 0.0);
        assert_eq!(str_to_number("  12 "), 12.0);
        assert_eq!(str_to_number("0x10"), 16.0);
        assert_eq!(str_to_number("1e3"), 1000.0);
        assert_eq!(str_to_number(".5"), 0.5);
        assert_eq!(str_to_number("-Infinity"), f64::NEG_INFINITY);
        assert!(str_to_number("abc").is_nan());
        assert!(str_to_number("inf").is_nan());
        assert!(str_to_number("1e").is_nan());
        assert!(str_to_number("-0x10").is_nan());
        assert_eq!(str_to_number("\u{FEFF}\u{3000}7\u{2028}"), 7.0);
        assert!(str_to_number("\u{85}7").is_nan());
    }
}

/// JS StringToNumber.
pub fn str_to_number(s: &str) -> f64 {
    // JS StrWhiteSpaceChar: Unicode White_Space without U+0085 (NEL), plus U+FEFF.
    let t = s.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}');
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let radix = |p: &str, r: u32| -> Option<f64> {
        let d = t.strip_prefix(p).or_else(|| t.strip_prefix(&p.to_uppercase()))?;
        if d.is_empty() || !d.chars().all(|c| c.is_digit(r)) {
            return Some(f64::NAN);
        }
        Some(
            d.chars()
                .fold(0f64, |acc, c| acc * r as f64 + c.to_digit(r).unwrap() as f64),
        )
    };
    for (p, r) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(v) = radix(p, r) {
            return v;
        }
    }
    // Decimal literal: [+-] (digits [. digits] | . digits) [e [+-] digits]
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return f64::NAN;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return f64::NAN;
        }
    }
    if i != b.len() {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}
