//! JSON parsing with the limits enforced while parsing, not after: a frame
//! may hold at most one value per [`BYTES_PER_VALUE`] bytes of its text
//! (with a floor for small frames) and no array longer than
//! [`MAX_ARRAY_ITEMS`]. A hostile frame of millions of tiny elements stops
//! at the first limit instead of growing a tree many times its own size.
//!
//! Every cap on observation lists (`laika_protocol::observation::MAX_ELEMENTS` …) is
//! below [`MAX_ARRAY_ITEMS`], so those lists still get their own, more
//! precise error after parsing.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// The longest array any message may hold.
pub const MAX_ARRAY_ITEMS: usize = 10_000;
/// One JSON value per this many bytes of text: a `serde_json::Value` is 32
/// bytes, so the tree stays within about twice the frame.
pub const BYTES_PER_VALUE: usize = 16;
/// Values always allowed, so small messages are never refused.
pub const MIN_VALUES: usize = 100_000;

/// Why parsing stopped.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON.
    Syntax(serde_json::Error),
    /// JSON, but beyond a limit; the sentence says which.
    Limit(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Syntax(e) => write!(f, "{e}"),
            ParseError::Limit(why) => f.write_str(why),
        }
    }
}

struct Budget {
    values: Cell<usize>,
    /// The limit that stopped parsing, if one did.
    hit: Cell<Option<&'static str>>,
}

/// Parses `text` as one JSON value within the limits.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let budget = Budget {
        values: Cell::new((text.len() / BYTES_PER_VALUE).max(MIN_VALUES)),
        hit: Cell::new(None),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = BoundedValue { budget: &budget }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    match (parsed, budget.hit.get()) {
        (_, Some(why)) => Err(ParseError::Limit(why.to_string())),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(ParseError::Syntax(e)),
    }
}

const TOO_MANY_VALUES: &str =
    "the message holds more JSON values than its size allows (one per 16 bytes)";
const ARRAY_TOO_LONG: &str = "the message has an array of more than 10000 items";

#[derive(Clone, Copy)]
struct BoundedValue<'a> {
    budget: &'a Budget,
}

impl BoundedValue<'_> {
    fn take<E: serde::de::Error>(self) -> Result<(), E> {
        let left = self.budget.values.get();
        if left == 0 {
            self.budget.hit.set(Some(TOO_MANY_VALUES));
            return Err(E::custom(TOO_MANY_VALUES));
        }
        self.budget.values.set(left - 1);
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for BoundedValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.take()?;
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.take()?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.take()?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.take()?;
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            if items.len() >= MAX_ARRAY_ITEMS {
                self.budget.hit.set(Some(ARRAY_TOO_LONG));
                return Err(A::Error::custom(ARRAY_TOO_LONG));
            }
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ordinary_json_parses_as_serde_json_does() {
        for text in [
            r#"{"a":[1,-2,3.5,true,null,"x"],"b":{"c":{}}}"#,
            "[]",
            "\"\\u00e9\"",
            "18446744073709551615",
        ] {
            let want: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parse(text).unwrap(), want, "{text}");
        }
        assert!(matches!(parse("{\"a\":}"), Err(ParseError::Syntax(_))));
        assert!(matches!(parse("[1] x"), Err(ParseError::Syntax(_))));
    }

    #[test]
    fn long_arrays_stop_while_parsing() {
        let ok = serde_json::to_string(&vec![0; MAX_ARRAY_ITEMS]).unwrap();
        assert_eq!(
            parse(&ok).unwrap().as_array().map(Vec::len),
            Some(MAX_ARRAY_ITEMS)
        );
        let long =
            serde_json::to_string(&json!({"e": vec![json!({}); MAX_ARRAY_ITEMS + 1]})).unwrap();
        let err = parse(&long).unwrap_err();
        assert!(
            matches!(&err, ParseError::Limit(w) if w.contains("10000")),
            "{err}"
        );
    }

    #[test]
    fn a_limit_stops_parsing_where_it_is_reached() {
        // Bytes after the limit are never read: text that is not JSON there
        // still gets the limit's error, not a syntax error, and so does a
        // tree that would have been far larger than the text read.
        let items = vec!["{}"; MAX_ARRAY_ITEMS + 1].join(",");
        let text = format!(r#"{{"elements":[{items},"#) + &"} not json ".repeat(1000);
        let err = parse(&text).unwrap_err();
        assert!(
            matches!(&err, ParseError::Limit(w) if w.contains("10000")),
            "{err}"
        );
        let row = serde_json::to_string(&vec![0; MAX_ARRAY_ITEMS]).unwrap();
        let text = format!("[{}", vec![row; 120].join(",")) + " garbage";
        let err = parse(&text).unwrap_err();
        assert!(
            matches!(&err, ParseError::Limit(w) if w.contains("16 bytes")),
            "{err}"
        );
    }

    #[test]
    fn dense_values_beyond_the_budget_stop() {
        // 120 arrays of 10000 zeros: 1.2 million values in 2.4 MB of text.
        let row = serde_json::to_string(&vec![0; MAX_ARRAY_ITEMS]).unwrap();
        let text = format!("[{}]", vec![row; 120].join(","));
        let err = parse(&text).unwrap_err();
        assert!(
            matches!(&err, ParseError::Limit(w) if w.contains("16 bytes")),
            "{err}"
        );
    }
}
