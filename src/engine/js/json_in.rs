//! Reading stored JSON: whether `JSON.parse` would accept a text. serde_json checks
//! the grammar; deserializing into `IgnoredAny` walks the text without building values,
//! without a nesting limit (its ignore loop keeps its own stack) and without judging
//! what JSON.parse accepts too: lone-surrogate escapes (`"\ud800"`) and numbers out of
//! f64 range (`1e999`).

use serde::de::IgnoredAny;

/// Whether `JSON.parse(s)` succeeds.
pub fn is_valid_json(s: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(s);
    serde::Deserialize::deserialize(&mut de).map(|_: IgnoredAny| ()).is_ok() && de.end().is_ok()
}

#[cfg(test)]
mod tests {
    use super::is_valid_json;

    #[test]
    fn agrees_with_json_parse() {
        for ok in [
            "{}",
            "[]",
            " [1, 2.5e-3, -0, \"a\\u00e9\"] ",
            "null",
            "true",
            "\"\\ud800\"",
            "{\"a\":{\"b\":[{}]}}",
            "1e999",
            "{\"\\udc00\":1}",
        ] {
            assert!(is_valid_json(ok), "{ok}");
        }
        for bad in [
            "",
            "{bad json",
            "[1,",
            "nope",
            "{\"truncated\":",
            "01",
            "1.",
            "[1,]",
            "{\"a\" 1}",
            "\"\t\"",
            "'a'",
            "[] x",
            "\u{feff}{}",
            "{\"a\":1,}",
        ] {
            assert!(!is_valid_json(bad), "{bad}");
        }
    }

    #[test]
    fn deep_nesting_is_fine() {
        let s = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(is_valid_json(&s));
    }
}
