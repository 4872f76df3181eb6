//! Recognizes JSON that is in canonical form already, in one pass and without building a value,
//! so that the common payload (a serializer's output with its members in order, strings without
//! escapes, whole numbers) skips [`super::rewrite`], which costs
//! a parse, a tree and a sort for every enqueue. Only what is certainly canonical passes;
//! anything else (whitespace, escapes, non-ASCII member names, fractions, exponents, integers
//! of more than 15 digits, `-0`) is left to the full rewrite, which also gives the refusals
//! their messages.

use super::MAX_DEPTH;

/// Whether `json` is, byte for byte, the canonical form that `rewrite` would return for it.
pub(crate) fn is_canonical(json: &[u8]) -> bool {
    let mut scan = Scan { json, at: 0 };
    scan.value(1) && scan.at == json.len()
}

struct Scan<'a> {
    json: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.json.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    /// A value whose arrays and objects, counting its own, nest at most [`MAX_DEPTH`] - `depth`
    /// + 1 deep.
    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => depth <= MAX_DEPTH && self.object(depth),
            Some(b'[') => depth <= MAX_DEPTH && self.array(depth),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.word(b"true"),
            Some(b'f') => self.word(b"false"),
            Some(b'n') => self.word(b"null"),
            Some(b'-' | b'0'..=b'9') => self.integer(),
            _ => false,
        }
    }

    /// Members whose names are ASCII (where byte order is UTF-16 order) and strictly
    /// increasing, which also rules out a name given twice.
    fn object(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b'}') {
            return true;
        }
        let mut previous: Option<&[u8]> = None;
        loop {
            let Some(name) = self.string() else {
                return false;
            };
            if !name.is_ascii() || previous.is_some_and(|p| p >= name) {
                return false;
            }
            previous = Some(name);
            if !self.eat(b':') || !self.value(depth + 1) {
                return false;
            }
            if self.eat(b'}') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth + 1) {
                return false;
            }
            if self.eat(b']') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    /// The content of a string with no escape and no control character (canonical form
    /// escapes only those), if it is valid UTF-8.
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' | 0..=0x1f => return None,
                _ => self.at += 1,
            }
        }
        let content = &self.json[start..self.at];
        self.at += 1;
        std::str::from_utf8(content).ok()?;
        Some(content)
    }

    fn word(&mut self, word: &[u8]) -> bool {
        let found = self.json[self.at..].starts_with(word);
        self.at += if found { word.len() } else { 0 };
        found
    }

    /// An integer as ECMAScript writes it, of at most 15 digits so that a double holds it
    /// (2^53 has 16): no leading zero, no `-0`, no fraction or exponent.
    fn integer(&mut self) -> bool {
        let negative = self.eat(b'-');
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let whole = match &self.json[start..self.at] {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            digits => digits.len() <= 15,
        };
        whole && !matches!(self.peek(), Some(b'.' | b'e' | b'E'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::rewrite;

    #[test]
    fn passes_serializer_output_in_canonical_form() {
        for json in [
            r#"{"amountCents":12,"customerId":42}"#,
            "{\"a\":[true,false,null,-7,0,\"x y é 😀 \u{7f}\"],\"b\":{},\"c\":[]}",
            "123456789012345",
            r#""""#,
        ] {
            assert!(is_canonical(json.as_bytes()), "{json}");
            assert_eq!(rewrite(json.as_bytes()).expect("valid"), json.as_bytes());
        }
    }

    #[test]
    fn leaves_anything_else_to_the_rewrite() {
        for json in [
            r#"{"customerId":42,"amountCents":12}"#,
            r#"{"a":1,"a":1}"#,
            r#"{"a": 1}"#,
            r#"{"é":1}"#,
            r#"["a\"b"]"#,
            "[1.0]",
            "[1e3]",
            "-0",
            "01",
            "1234567890123456",
            "[1,]",
            "[1] ",
            "",
            "nul",
            "{\"a\":\"\u{1}\"}",
        ] {
            assert!(!is_canonical(json.as_bytes()), "{json}");
        }
        assert!(!is_canonical(b"[\"\xff\"]"));
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(is_canonical(nested(MAX_DEPTH).as_bytes()));
        assert!(!is_canonical(nested(MAX_DEPTH + 1).as_bytes()));
    }

    /// A small generator of JSON texts, written canonically or not, from a fixed seed.
    struct Texts(u64);

    impl Texts {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn spaced(&mut self, out: &mut String, text: &str) {
            if self.next(4) == 0 {
                out.push(' ');
            }
            out.push_str(text);
        }

        fn string(&mut self) -> String {
            const PIECES: [&str; 12] = [
                "a", "b", "Z", "0", " ", "é", "😀", "\\\"", "\\\\", "\\n", "\\u0041", "\u{7f}",
            ];
            let n = self.next(4);
            let body: String = (0..n).map(|_| PIECES[self.next(12) as usize]).collect();
            format!("\"{body}\"")
        }

        fn value(&mut self, out: &mut String, depth: usize) {
            const NUMBERS: [&str; 9] = [
                "0",
                "-0",
                "7",
                "-42",
                "123456789012345",
                "1234567890123456",
                "1.5",
                "1e3",
                "10",
            ];
            match self.next(if depth > 3 { 4 } else { 6 }) {
                0 => {
                    let n = NUMBERS[self.next(9) as usize];
                    self.spaced(out, n);
                }
                1 => {
                    let s = self.string();
                    self.spaced(out, &s);
                }
                2 => {
                    let word = ["true", "false", "null"][self.next(3) as usize];
                    self.spaced(out, word);
                }
                3 => self.spaced(out, "\"plain\""),
                4 => {
                    self.spaced(out, "[");
                    for i in 0..self.next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        self.value(out, depth + 1);
                    }
                    self.spaced(out, "]");
                }
                _ => {
                    self.spaced(out, "{");
                    let mut names: Vec<String> = (0..self.next(4)).map(|_| self.string()).collect();
                    if self.next(2) == 0 {
                        names.sort();
                    }
                    for (i, name) in names.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        self.spaced(out, name);
                        out.push(':');
                        self.value(out, depth + 1);
                    }
                    self.spaced(out, "}");
                }
            }
        }
    }

    /// Whatever passes the scan is what the full rewrite returns, and the canonical form of
    /// most texts passes it.
    #[test]
    fn agrees_with_the_full_rewrite_on_generated_texts() {
        let mut texts = Texts(0x9e37_79b9_7f4a_7c15);
        let mut passed = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            texts.value(&mut text, 0);
            let rewritten = rewrite(text.as_bytes());
            for json in [Some(text.as_bytes()), rewritten.as_deref().ok()]
                .into_iter()
                .flatten()
            {
                if is_canonical(json) {
                    passed += 1;
                    assert_eq!(
                        rewrite(json).expect("canonical JSON is valid"),
                        json,
                        "{}",
                        String::from_utf8_lossy(json)
                    );
                }
            }
        }
        assert!(passed > 10_000, "only {passed} texts passed the scan");
    }
}
