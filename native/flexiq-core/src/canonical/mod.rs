//! Canonical JSON (RFC 8785, the JSON Canonicalization Scheme).
//!
//! Every binding serializes payloads to canonical JSON before the key recipe runs, so that the
//! same logical value hashes the same from Java, Python, Node or Rust: object members sorted by
//! their UTF-16 code units, no insignificant whitespace, numbers in ECMAScript form.
//!
//! A payload must reach its handler as it was given, so what canonical JSON cannot hold exactly
//! is refused, never rounded: its only numbers are IEEE 754 doubles. Every refusal names the
//! JSON path of the value and says what to do instead.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

mod scan;

/// The deepest nesting of arrays and objects accepted (the outermost one counts as 1).
pub const MAX_DEPTH: usize = 128;

/// 2^53: doubles hold every integer up to this magnitude and not every one beyond it.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;
/// From this magnitude on, ECMAScript writes numbers with an exponent.
const EXPONENT_FORM_FROM: f64 = 1e21;

/// Parses `json` (any valid JSON text) and returns its RFC 8785 canonical form.
///
/// Refused, with the JSON path of the value:
/// - an integer beyond 2^53 (9007199254740992) in magnitude, however it is written, unless it
///   is at least 10^21 and written with an exponent (as every writer prints such doubles);
/// - any other number that a double does not hold to the digits given (a decimal with 25
///   significant digits, `1e-400`);
/// - NaN and infinities, which JSON does not have;
/// - nesting deeper than [`MAX_DEPTH`];
/// - a string or member name that is not valid Unicode (an unpaired surrogate escape);
/// - an object that repeats a member name: RFC 8785 takes I-JSON input, and silently keeping
///   one of the values would let two different texts share a key.
pub fn canonicalize(json: &[u8]) -> Result<Vec<u8>> {
    // Most payloads come from a serializer that wrote them in this form already.
    if scan::is_canonical(json) {
        return Ok(json.to_vec());
    }
    rewrite(json)
}

/// Parses `json` and writes it anew in canonical form, refusing as [`canonicalize`] says.
pub(crate) fn rewrite(json: &[u8]) -> Result<Vec<u8>> {
    let mut reading = Reading {
        json,
        numbers: NumberLiterals { json, at: 0 },
        path: Vec::new(),
        refusal: None,
        in_member_name: false,
    };
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    // MAX_DEPTH, checked below, bounds the recursion instead.
    deserializer.disable_recursion_limit();
    let parsed = Node(&mut reading)
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    let value = parsed.map_err(|e| not_canonical(reading.explain(&e)))?;
    serde_json_canonicalizer::to_vec(&value).map_err(|e| not_canonical(e.to_string()))
}

fn not_canonical(why: String) -> Error {
    Error::InvalidPayload(format!(
        "payload is not serializable as canonical JSON: {why}"
    ))
}

/// One step of a JSON path.
enum Step {
    Member(String),
    Index(usize),
}

/// The state of one parse: where it is, for messages, and the number literals still ahead.
struct Reading<'a> {
    json: &'a [u8],
    numbers: NumberLiterals<'a>,
    /// The path of the value being read. A failed parse leaves it at the value that failed.
    path: Vec<Step>,
    /// Set when the parse stopped on a check of ours rather than on a syntax error.
    refusal: Option<String>,
    in_member_name: bool,
}

impl Reading<'_> {
    /// Stops the parse with a message of ours.
    fn refuse<E: de::Error>(&mut self, message: String) -> E {
        self.refusal = Some(message);
        E::custom("refused")
    }

    fn path_text(&self) -> String {
        path_text(&self.path)
    }

    /// Checks an integer that serde_json parsed exactly (it fitted 64 bits). The literal is
    /// the next one in the text, since serde_json reads values in document order.
    fn check_integer(&mut self, magnitude: u64, as_double: f64) -> std::result::Result<(), String> {
        let literal = self.numbers.next();
        if magnitude <= 1 << 53 {
            return Ok(());
        }
        Err(self.beyond_max_exact_integer(literal, as_double))
    }

    /// Checks that the number parsed as `value` comes back as written.
    fn check_double(&mut self, value: f64) -> std::result::Result<(), String> {
        let literal = self.numbers.next();
        let magnitude = value.abs();
        let integer_literal = !literal.contains(['.', 'e', 'E']);
        if (integer_literal && Decimal::parse(literal).exceeds_max_exact_integer())
            || (magnitude > MAX_EXACT_INTEGER && magnitude < EXPONENT_FORM_FROM)
        {
            return Err(self.beyond_max_exact_integer(literal, value));
        }
        // Up to 15 significant digits, any decimal in the normal range comes back unchanged
        // from the double nearest to it (DBL_DIG): no need to format the double.
        if value.is_normal() && significant_digits(literal) <= 15 {
            return Ok(());
        }
        let mut buffer = ryu_js::Buffer::new();
        let canonical = buffer.format_finite(value);
        if Decimal::parse(literal) != Decimal::parse(canonical) {
            return Err(format!(
                "the number {literal} at {} is not exactly an IEEE 754 double, the only kind of \
                 number canonical JSON has: it would become {canonical}; carry such numbers as \
                 strings",
                self.path_text()
            ));
        }
        Ok(())
    }

    fn beyond_max_exact_integer(&self, literal: &str, value: f64) -> String {
        let mut buffer = ryu_js::Buffer::new();
        let canonical = buffer.format_finite(value);
        let rounded = if Decimal::parse(literal) == Decimal::parse(canonical) {
            String::new()
        } else {
            format!(" (this one would become {canonical})")
        };
        format!(
            "the integer {literal} at {} is beyond 2^53 (9007199254740992), past which the IEEE \
             754 doubles of canonical JSON do not hold every integer{rounded}; carry such numbers \
             as strings",
            self.path_text()
        )
    }

    /// The message for a parse that failed with `e`.
    fn explain(&mut self, e: &serde_json::Error) -> String {
        if let Some(refusal) = self.refusal.take() {
            return refusal;
        }
        let at = self.path_text();
        if let Some(word) = non_finite_word_near(self.json, e.line(), e.column()) {
            return format!(
                "{word} at {at} is not JSON, which has no NaN or Infinity; send null or a \
                 string instead"
            );
        }
        let what = if self.in_member_name {
            format!("a member name in the object at {at}")
        } else {
            format!("the string at {at}")
        };
        let message = e.to_string();
        if ["surrogate", "hex escape", "unicode code point"]
            .iter()
            .any(|m| message.contains(m))
        {
            return format!(
                "{what} is not valid Unicode ({message}); strings must hold whole characters, \
                 without unpaired UTF-16 surrogates"
            );
        }
        format!("{message} (reading {at})")
    }
}

/// A JSON path as people write them: `$.order.lines[2]["unit price"]`.
fn path_text(path: &[Step]) -> String {
    let mut text = String::from("$");
    for step in path {
        match step {
            Step::Index(n) => {
                let _ = write!(text, "[{n}]");
            }
            Step::Member(name) if is_plain_name(name) => {
                text.push('.');
                text.push_str(name);
            }
            Step::Member(name) => {
                let quoted = serde_json::to_string(name).unwrap_or_default();
                let _ = write!(text, "[{quoted}]");
            }
        }
    }
    text
}

fn is_plain_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `NaN`, `Infinity` or `-Infinity` (as some writers emit them) where a parse error points,
/// given serde_json's line and column (the column counts bytes, up to the offending one).
fn non_finite_word_near(json: &[u8], line: usize, column: usize) -> Option<&str> {
    let line_start: usize = json
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let is_word = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.');
    let at = (line_start + column).saturating_sub(1).min(json.len());
    let start = json[..at]
        .iter()
        .rposition(|b| !is_word(b))
        .map_or(0, |p| p + 1);
    let end = json[start..]
        .iter()
        .position(|b| !is_word(b))
        .map_or(json.len(), |p| start + p);
    let word = std::str::from_utf8(&json[start..end]).ok()?;
    let bare = word.trim_start_matches(['-', '+']);
    ["nan", "infinity", "inf"]
        .iter()
        .any(|w| bare.eq_ignore_ascii_case(w))
        .then_some(word)
}

/// The number literals of a JSON text in document order, found by skipping strings. Read only
/// after serde_json has parsed each one, so the text up to it is valid JSON.
struct NumberLiterals<'a> {
    json: &'a [u8],
    at: usize,
}

impl<'a> NumberLiterals<'a> {
    fn next(&mut self) -> &'a str {
        let json = self.json;
        let mut i = self.at;
        while i < json.len() {
            match json[i] {
                b'"' => {
                    i += 1;
                    while i < json.len() && json[i] != b'"' {
                        i += if json[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                b'-' | b'0'..=b'9' => break,
                _ => i += 1,
            }
        }
        let start = i.min(json.len());
        let end = json[start..]
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .map_or(json.len(), |p| start + p);
        self.at = end;
        std::str::from_utf8(&json[start..end]).unwrap_or_default()
    }
}

/// How many significant digits a number literal has (`0.0120e5` has 3).
fn significant_digits(literal: &str) -> usize {
    Decimal::parse(literal).digits().count()
}

/// A decimal number as written: sign, significant digits (no leading or trailing zeros, none
/// for zero) and the power of ten they are multiplied by. Two texts of the same value compare
/// equal, whatever their notation. Borrows the text: numbers are checked on every enqueue.
#[derive(Debug)]
struct Decimal<'a> {
    negative: bool,
    int: &'a str,
    frac: &'a str,
    /// The significant digits' range within `int` followed by `frac`.
    first: usize,
    end: usize,
    exponent: i64,
}

impl<'a> Decimal<'a> {
    /// Reads a JSON number literal, or an ECMAScript-formatted one (`1e+21`).
    fn parse(text: &'a str) -> Decimal<'a> {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(e) => (&unsigned[..e], exponent_value(&unsigned[e + 1..])),
            None => (unsigned, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all = || int.bytes().chain(frac.bytes());
        let len = int.len() + frac.len();
        let first = all().position(|d| d != b'0').unwrap_or(len);
        let zeros_after = all().rev().position(|d| d != b'0').unwrap_or(len);
        let end = (len - zeros_after).max(first);
        Decimal {
            // Zero, of either sign, is one value.
            negative: negative && first < end,
            int,
            frac,
            first,
            end,
            exponent: if first < end {
                exponent - frac.len() as i64 + zeros_after as i64
            } else {
                0
            },
        }
    }

    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.int
            .bytes()
            .chain(self.frac.bytes())
            .skip(self.first)
            .take(self.end - self.first)
    }

    /// Whether this integer's magnitude is beyond 2^53.
    fn exceeds_max_exact_integer(&self) -> bool {
        const LIMIT: &[u8] = b"9007199254740992";
        let count = self.end - self.first;
        let integer_digits = count as i64 + self.exponent;
        match integer_digits.cmp(&(LIMIT.len() as i64)) {
            Ordering::Less => false,
            Ordering::Greater => true,
            Ordering::Equal => {
                let zeros = std::iter::repeat_n(b'0', LIMIT.len().saturating_sub(count));
                self.digits().chain(zeros).cmp(LIMIT.iter().copied()) == Ordering::Greater
            }
        }
    }
}

impl PartialEq for Decimal<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.negative == other.negative
            && self.exponent == other.exponent
            && self.end - self.first == other.end - other.first
            && self.digits().eq(other.digits())
    }
}

/// An exponent as written; one too large for an i64 is clamped (such a number is zero or
/// refused either way, and clamping keeps the arithmetic from overflowing).
fn exponent_value(text: &str) -> i64 {
    const CLAMP: i64 = i64::MAX / 4;
    text.parse::<i64>()
        .unwrap_or(if text.starts_with('-') { -CLAMP } else { CLAMP })
        .clamp(-CLAMP, CLAMP)
}

/// Reads one value at the reading's current path.
struct Node<'r, 'a>(&'r mut Reading<'a>);

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_, '_> {
    fn checked<E: de::Error>(
        self,
        check: std::result::Result<(), String>,
        value: Value,
    ) -> std::result::Result<Value, E> {
        match check {
            Ok(()) => Ok(value),
            Err(message) => Err(self.0.refuse(message)),
        }
    }

    fn enter<E: de::Error>(&mut self) -> std::result::Result<(), E> {
        if self.0.path.len() >= MAX_DEPTH {
            let message = format!(
                "the payload nests arrays and objects deeper than {MAX_DEPTH} levels, at {}; \
                 flatten it, or carry the deep part as a string",
                self.0.path_text()
            );
            return Err(self.0.refuse(message));
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
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

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Value, E> {
        let check = self.0.check_integer(v.unsigned_abs(), v as f64);
        self.checked(check, v.into())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Value, E> {
        let check = self.0.check_integer(v, v as f64);
        self.checked(check, v.into())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        match serde_json::Number::from_f64(v) {
            Some(n) => {
                let check = self.0.check_double(v);
                self.checked(check, Value::Number(n))
            }
            None => {
                let message = format!("{v} at {} is not JSON", self.0.path_text());
                Err(self.0.refuse(message))
            }
        }
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> std::result::Result<Value, A::Error> {
        self.enter()?;
        let mut items = Vec::new();
        loop {
            self.0.path.push(Step::Index(items.len()));
            // On an error the path stays where it failed.
            let item = seq.next_element_seed(Node(&mut *self.0))?;
            self.0.path.pop();
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> std::result::Result<Value, A::Error> {
        self.enter()?;
        let mut members = Map::new();
        loop {
            self.0.in_member_name = true;
            let name = map.next_key::<String>()?;
            self.0.in_member_name = false;
            let Some(name) = name else {
                return Ok(Value::Object(members));
            };
            if members.contains_key(&name) {
                let message = format!(
                    "member name {name:?} appears twice in the object at {}; an object may hold \
                     each name once",
                    self.0.path_text()
                );
                return Err(self.0.refuse(message));
            }
            self.0.path.push(Step::Member(name));
            let value = map.next_value_seed(Node(&mut *self.0))?;
            if let Some(Step::Member(name)) = self.0.path.pop() {
                members.insert(name, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        String::from_utf8(canonicalize(s.as_bytes()).expect("valid JSON")).expect("UTF-8")
    }

    fn refusal(s: &str) -> String {
        canonicalize(s.as_bytes()).expect_err("refused").to_string()
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
        let err = refusal(r#"{"a":1,"b":{"c":1,"c":2}}"#);
        assert!(
            err.contains(r#"member name "c" appears twice in the object at $.b"#),
            "{err}"
        );
        assert_eq!(canon(r#"[{"a":1},{"a":2}]"#), r#"[{"a":1},{"a":2}]"#);
    }

    #[test]
    fn refuses_text_that_is_not_json() {
        let err = refusal("{\"a\": }");
        assert!(err.starts_with("payload is not serializable as canonical JSON"));
        assert!(err.contains("(reading $.a)"), "{err}");
        assert!(canonicalize(b"").is_err());
        assert!(canonicalize(b"[1] x").is_err());
    }

    #[test]
    fn integers_up_to_2_to_the_53_pass_and_beyond_are_refused_with_their_path() {
        assert_eq!(
            canon("[9007199254740992, -9007199254740992, 9007199254740991]"),
            "[9007199254740992,-9007199254740992,9007199254740991]"
        );
        let err = refusal(r#"{"order": {"amount": 1234567890123456789}}"#);
        assert_eq!(
            err,
            "payload is not serializable as canonical JSON: the integer 1234567890123456789 at \
             $.order.amount is beyond 2^53 (9007199254740992), past which the IEEE 754 doubles \
             of canonical JSON do not hold every integer (this one would become \
             1234567890123456800); carry such numbers as strings"
        );
        // Beyond 2^53 is refused even when a double happens to hold the integer.
        let err = refusal("[1, 9007199254740994]");
        assert!(
            err.contains("the integer 9007199254740994 at $[1] is beyond 2^53"),
            "{err}"
        );
        assert!(!err.contains("would become"), "{err}");
        assert!(refusal("-9007199254740993").contains("at $ is beyond 2^53"));
        assert!(refusal("123456789012345678901234567890").contains("beyond 2^53"));
        // An integer below 10^21 written with an exponent is still an integer beyond 2^53.
        assert!(refusal("1E20").contains("the integer 1E20 at $ is beyond 2^53"));
        assert!(refusal("9.007199254740993e15").contains("it would become 9007199254740992"));
    }

    #[test]
    fn decimals_must_be_exactly_a_double() {
        assert_eq!(
            canon("[0.1, 1.5e300, 1e21, 5e-324, 0.30000000000000004, 1.7976931348623157e308]"),
            "[0.1,1.5e+300,1e+21,5e-324,0.30000000000000004,1.7976931348623157e+308]"
        );
        // Notation does not matter, only the value.
        assert_eq!(
            canon("[1.50, 15e-1, 0.00015E4, -0.0, 0e99]"),
            "[1.5,1.5,1.5,0,0]"
        );
        let err = refusal(r#"{"price": 1.234567890123456789012345}"#);
        assert_eq!(
            err,
            "payload is not serializable as canonical JSON: the number \
             1.234567890123456789012345 at $.price is not exactly an IEEE 754 double, the only \
             kind of number canonical JSON has: it would become 1.2345678901234567; carry such \
             numbers as strings"
        );
        assert!(refusal("[1e-400]").contains("at $[0] is not exactly an IEEE 754 double"));
        assert!(refusal("0.30000000000000001").contains("it would become 0.3"));
        assert!(refusal("1e400").contains("(reading $)"));
    }

    #[test]
    fn nan_and_infinity_are_named_with_their_path() {
        assert_eq!(
            refusal(r#"{"reading": {"value": NaN}}"#),
            "payload is not serializable as canonical JSON: NaN at $.reading.value is not JSON, \
             which has no NaN or Infinity; send null or a string instead"
        );
        assert!(refusal("[1, -Infinity]").contains("-Infinity at $[1] is not JSON"));
        assert!(refusal("Infinity").contains("Infinity at $ is not JSON"));
        assert!(refusal("{\n \"a\":\n  [NaN]}").contains("NaN at $.a[0]"));
    }

    #[test]
    fn nesting_is_limited_to_128_levels() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(canon(&nested(MAX_DEPTH)), nested(MAX_DEPTH));
        let err = refusal(&nested(MAX_DEPTH + 1));
        assert!(
            err.contains(&format!(
                "the payload nests arrays and objects deeper than 128 levels, at ${}; flatten it",
                "[0]".repeat(MAX_DEPTH)
            )),
            "{err}"
        );
        let objects = format!(
            "{}1{}",
            r#"{"a":"#.repeat(MAX_DEPTH + 1),
            "}".repeat(MAX_DEPTH + 1)
        );
        assert!(refusal(&objects).contains("deeper than 128 levels, at $.a.a"));
    }

    #[test]
    fn unpaired_surrogates_are_refused_with_their_path() {
        let err = refusal(r#"{"name": "u-\uDC00"}"#);
        assert!(
            err.contains("the string at $.name is not valid Unicode ("),
            "{err}"
        );
        assert!(err.ends_with("without unpaired UTF-16 surrogates"), "{err}");
        let err = refusal(r#"["\uD800x"]"#);
        assert!(
            err.contains("the string at $[0] is not valid Unicode"),
            "{err}"
        );
        let err = refusal(r#"{"m": {"sq\uD800": 1}}"#);
        assert!(
            err.contains("a member name in the object at $.m is not valid Unicode"),
            "{err}"
        );
        assert_eq!(canon(r#""\uD83D\uDE00""#), "\"\u{1F600}\"");
    }

    #[test]
    fn paths_quote_names_that_are_not_plain() {
        let err = refusal(r#"{"unit price": [0, {"x-y": 12345678901234567890}]}"#);
        assert!(
            err.contains(r#"at $["unit price"][1]["x-y"] is beyond"#),
            "{err}"
        );
    }

    #[test]
    fn number_literals_are_found_past_strings_that_look_like_numbers() {
        assert_eq!(
            canon(r#"{"a": "1e999 \" -5", "b\"2": 3, "c": [true, -0.5e1]}"#),
            r#"{"a":"1e999 \" -5","b\"2":3,"c":[true,-5]}"#
        );
    }
}
