//! RFC 9562 version-7 UUIDs from the `uuid` crate's shared v7 context: 48 bits of Unix
//! milliseconds and a counter reseeded every millisecond, so every id made in this
//! process sorts after the previous one (the original's uuidv7 gave the same guarantee).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::js::bind::{bound_from_js, Bound};
use crate::js::value::JsVal;
use crate::sqlite::error::SResult;

/// The clock of the store's timestamps, in Unix milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The next id as a lowercase hyphenated string.
pub fn next() -> String {
    uuid::Uuid::now_v7().hyphenated().to_string()
}

/// `x || uuidv7()` for trace and correlation ids: the caller's value when truthy, else a
/// fresh id (also returned, so callers can report it).
pub fn or_new_id(v: &JsVal) -> SResult<(Bound, Option<String>)> {
    if v.truthy() {
        Ok((bound_from_js(v)?, None))
    } else {
        let id = next();
        Ok((Bound::text(&id), Some(id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_and_strictly_increasing() {
        let mut prev = String::new();
        for _ in 0..10_000 {
            let id = next();
            assert_eq!(id.len(), 36);
            assert_eq!(&id[14..15], "7");
            assert!("89ab".contains(&id[19..20]));
            assert!(id > prev, "{id} <= {prev}");
            prev = id;
        }
    }

    #[test]
    fn embedded_time_is_now() {
        let id = next();
        let hex: String = id.chars().filter(|c| *c != '-').take(12).collect();
        let ms = i64::from_str_radix(&hex, 16).unwrap();
        assert!((ms - now_ms()).abs() < 5_000);
    }
}
