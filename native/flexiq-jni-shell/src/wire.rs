//! The wire format of native calls; its Java twin is `io.flexiq.internal.Wire`.
//!
//! A message is a sequence of fields, each call's layout fixed by the call (documented where the
//! call is implemented, on both sides). Numbers are little-endian: `bool` one byte (0 or 1),
//! `i32`, `i64`, `f64` (IEEE 754 bits). A byte string or text is an `i32` length and then its
//! bytes; length -1 is Java's `null`. Text is UTF-8, except that Java writes an unpaired
//! surrogate as its three-byte form, which is not UTF-8: such text is refused where it must be
//! exact (keys, names) and replaced where it is free text (error messages). An optional number
//! is a `bool` and then, if true, the number. A list is an `i32` count and its entries.

use crate::errors::{BridgeError, BridgeResult};

/// Reads one request.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    fn take(&mut self, n: usize, what: &str) -> BridgeResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.buf.len())
            .ok_or_else(|| {
                BridgeError::Malformed(format!(
                    "{what} needs {n} bytes at offset {}, the request has {}",
                    self.pos,
                    self.buf.len()
                ))
            })?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, what: &str) -> BridgeResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn bool(&mut self, what: &str) -> BridgeResult<bool> {
        match self.array::<1>(what)? {
            [0] => Ok(false),
            [1] => Ok(true),
            [other] => Err(BridgeError::Malformed(format!(
                "{what} is {other}, not a boolean"
            ))),
        }
    }

    pub fn i32(&mut self, what: &str) -> BridgeResult<i32> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    pub fn i64(&mut self, what: &str) -> BridgeResult<i64> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    pub fn f64(&mut self, what: &str) -> BridgeResult<f64> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    pub fn opt_i64(&mut self, what: &str) -> BridgeResult<Option<i64>> {
        Ok(if self.bool(what)? {
            Some(self.i64(what)?)
        } else {
            None
        })
    }

    /// A list's entry count; every entry takes at least one byte, so a count beyond the bytes
    /// left is refused before anything is allocated for it.
    pub fn count(&mut self, what: &str) -> BridgeResult<usize> {
        let n = self.i32(what)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.buf.len() - self.pos)
            .ok_or_else(|| BridgeError::Malformed(format!("{what} has {n} entries")))
    }

    /// A byte string, or `None` for Java's `null`.
    pub fn opt_bytes(&mut self, what: &str) -> BridgeResult<Option<&'a [u8]>> {
        match self.i32(what)? {
            -1 => Ok(None),
            n => match usize::try_from(n) {
                Ok(len) => Ok(Some(self.take(len, what)?)),
                Err(_) => Err(BridgeError::Malformed(format!("{what} has length {n}"))),
            },
        }
    }

    /// A byte string that must not be null.
    pub fn bytes(&mut self, name: &'static str) -> BridgeResult<&'a [u8]> {
        self.opt_bytes(name)?.ok_or(BridgeError::NullArgument(name))
    }

    /// Exact text: null and unpaired surrogates are refused, so that different keys or names
    /// never become one.
    pub fn opt_string(&mut self, name: &'static str) -> BridgeResult<Option<String>> {
        match self.opt_bytes(name)? {
            None => Ok(None),
            Some(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Ok(Some(text.to_owned())),
                Err(_) => Err(BridgeError::BadArgument(format!(
                    "{name} is not valid UTF-16: it holds an unpaired surrogate"
                ))),
            },
        }
    }

    pub fn string(&mut self, name: &'static str) -> BridgeResult<String> {
        self.opt_string(name)?
            .ok_or(BridgeError::NullArgument(name))
    }

    /// A list of non-null exact texts.
    pub fn strings(&mut self, name: &'static str) -> BridgeResult<Vec<String>> {
        let n = self.count(name)?;
        (0..n).map(|_| self.string(name)).collect()
    }

    /// Free text (a message to store), which nothing is keyed or looked up by: invalid UTF-8
    /// is replaced.
    pub fn text(&mut self, name: &'static str) -> BridgeResult<String> {
        let bytes = self
            .opt_bytes(name)?
            .ok_or(BridgeError::NullArgument(name))?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    /// Refuses bytes left over: the two sides disagree on the layout.
    pub fn finish(&self) -> BridgeResult<()> {
        match self.buf.len() - self.pos {
            0 => Ok(()),
            left => Err(BridgeError::Malformed(format!(
                "{left} bytes left over after the last field"
            ))),
        }
    }
}

/// Writes one response.
#[derive(Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Writer {
        Writer::default()
    }

    pub fn with_capacity(bytes: usize) -> Writer {
        Writer {
            buf: Vec::with_capacity(bytes),
        }
    }

    pub fn bool(&mut self, value: bool) {
        self.buf.push(u8::from(value));
    }

    pub fn i32(&mut self, value: i32) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    pub fn i64(&mut self, value: i64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    pub fn opt_i64(&mut self, value: Option<i64>) {
        self.bool(value.is_some());
        if let Some(v) = value {
            self.i64(v);
        }
    }

    pub fn f64(&mut self, value: f64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// A list's entry count. Java arrays hold at most `i32::MAX` entries.
    pub fn count(&mut self, n: usize) -> BridgeResult<()> {
        let n = i32::try_from(n).map_err(|_| {
            BridgeError::BadArgument(format!("{n} entries do not fit a Java array"))
        })?;
        self.i32(n);
        Ok(())
    }

    pub fn bytes(&mut self, value: &[u8]) -> BridgeResult<()> {
        self.count(value.len())?;
        self.buf.extend_from_slice(value);
        Ok(())
    }

    /// Bytes, or a length of -1 for none.
    pub fn opt_bytes(&mut self, value: Option<&[u8]>) -> BridgeResult<()> {
        match value {
            Some(v) => self.bytes(v),
            None => {
                self.i32(-1);
                Ok(())
            }
        }
    }

    pub fn string(&mut self, value: &str) -> BridgeResult<()> {
        self.bytes(value.as_bytes())
    }

    pub fn opt_string(&mut self, value: Option<&str>) -> BridgeResult<()> {
        self.opt_bytes(value.map(str::as_bytes))
    }

    /// Appends bytes as they are: a call whose whole response is one byte string.
    pub fn raw(&mut self, value: &[u8]) {
        self.buf.extend_from_slice(value);
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_as_written() -> BridgeResult<()> {
        let mut w = Writer::new();
        w.bool(true);
        w.i32(-7);
        w.i64(i64::MIN);
        w.opt_i64(None);
        w.opt_i64(Some(5));
        w.string("grüße")?;
        w.opt_string(None)?;
        w.bytes(&[1, 2, 3])?;
        w.raw(&1.5f64.to_le_bytes());
        let mut r = Reader::new(w.as_bytes());
        assert!(r.bool("b")?);
        assert_eq!(r.i32("i")?, -7);
        assert_eq!(r.i64("l")?, i64::MIN);
        assert_eq!(r.opt_i64("none")?, None);
        assert_eq!(r.opt_i64("some")?, Some(5));
        assert_eq!(r.string("s")?, "grüße");
        assert_eq!(r.opt_string("null")?, None);
        assert_eq!(r.bytes("bytes")?, &[1, 2, 3]);
        assert_eq!(r.f64("f")?, 1.5);
        r.finish()
    }

    #[test]
    fn null_text_is_a_null_argument() {
        let mut w = Writer::new();
        w.opt_string(None).ok();
        let err = Reader::new(w.as_bytes()).string("taskName").err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some("taskName must not be null".into())
        );
    }

    #[test]
    fn an_unpaired_surrogate_is_refused_as_a_name_and_replaced_in_text() {
        // What Java's writer emits for "t\uDC00": the surrogate's three-byte form.
        let bytes = [4, 0, 0, 0, b't', 0xED, 0xB0, 0x80];
        let err = Reader::new(&bytes[..]).string("taskName").err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some("taskName is not valid UTF-16: it holds an unpaired surrogate".into())
        );
        let bytes = [4, 0, 0, 0, b't', 0xED, 0xB0, 0x80];
        assert!(Reader::new(&bytes[..])
            .text("error")
            .is_ok_and(|t| t.starts_with('t')));
    }

    #[test]
    fn a_short_request_or_bytes_left_over_are_malformed() {
        let mut r = Reader::new(&[1, 0]);
        assert!(matches!(r.i32("limit"), Err(BridgeError::Malformed(_))));
        let r = Reader::new(&[1]);
        assert!(matches!(r.finish(), Err(BridgeError::Malformed(_))));
        // A count larger than the bytes that could hold its entries.
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0x7f]);
        assert!(matches!(r.count("jobs"), Err(BridgeError::Malformed(_))));
    }
}
