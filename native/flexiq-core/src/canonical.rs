//! Canonical JSON (RFC 8785, the JSON Canonicalization Scheme).
//!
//! Every binding serializes payloads to canonical JSON before the key recipe runs, so that the
//! same logical value hashes the same from Java, Python, Node or Rust: object members sorted by
//! their UTF-16 code units, no insignificant whitespace, numbers in ECMAScript form.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Parses `json` (any valid JSON text) and returns its RFC 8785 canonical form.
///
/// Numbers are IEEE 754 doubles in RFC 8785, so integers beyond 2^53 lose precision exactly as
/// they would in JavaScript; NaN and infinities cannot appear in JSON at all. An object that
/// repeats a member name is refused: RFC 8785 takes I-JSON input, and silently keeping one of
/// the values would let two different texts share a key.
pub fn canonicalize(json: &[u8]) -> Result<Vec<u8>> {
    let IJson(value) =
        serde_json::from_slice(json).map_err(|e| Error::InvalidPayload(e.to_string()))?;
    serde_json_canonicalizer::to_vec(&value).map_err(|e| Error::InvalidPayload(e.to_string()))
}

/// A JSON value parsed under I-JSON's rule that member names are unique within an object.
struct IJson(Value);

impl<'de> Deserialize<'de> for IJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_any(IJsonVisitor).map(IJson)
    }
}

struct IJsonVisitor;

impl<'de> Visitor<'de> for IJsonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("NaN and infinities are not JSON"))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(IJson(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let IJson(value) = map.next_value()?;
            if members.contains_key(&name) {
                return Err(de::Error::custom(format!(
                    "member name {name:?} appears twice in one object"
                )));
            }
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        String::from_utf8(canonicalize(s.as_bytes()).expect("valid JSON")).expect("UTF-8")
    }

    #[test]
    fn sorts_members_and_drops_whitespace() {
        assert_eq!(
            canon(r#"{ "b": 1, "a": [ true, null ] }"#),
            r#"{"a":[true,null],"b":1}"#
        );
    }

    #[test]
    fn numbers_take_ecmascript_form() {
        assert_eq!(
            canon("[1.0, 0.1, 1e21, -0.0, 1E-7, 100]"),
            "[1,0.1,1e+21,0,1e-7,100]"
        );
    }

    #[test]
    fn refuses_repeated_member_names() {
        let err = canonicalize(br#"{"a":1,"b":{"c":1,"c":2}}"#).expect_err("duplicate");
        assert!(
            err.to_string()
                .contains(r#"member name "c" appears twice in one object"#),
            "{err}"
        );
        assert_eq!(canon(r#"[{"a":1},{"a":2}]"#), r#"[{"a":1},{"a":2}]"#);
    }

    #[test]
    fn refuses_text_that_is_not_json() {
        let err = canonicalize(b"{\"a\": }").expect_err("not JSON");
        assert!(err
            .to_string()
            .starts_with("payload is not serializable as canonical JSON"));
        assert!(canonicalize(b"NaN").is_err());
        assert!(canonicalize(b"").is_err());
    }
}
