//! A small JSON parser that keeps number text verbatim (so big and decimal
//! numbers lose no precision) and bounds nesting depth.

use super::MAX_DEPTH;

/// Nesting allowed in a JSON document: values, dynamic wrappers and the
/// type descriptions inside them all add levels.
const MAX_JSON_DEPTH: usize = 4 * MAX_DEPTH;

/// A parsed JSON document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// The number exactly as written (valid JSON number grammar).
    Number(String),
    String(String),
    Array(Vec<Json>),
    /// Members in document order (duplicates kept).
    Object(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// Converts to a `serde_json::Value` (later duplicate keys win).
    pub(crate) fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Json::Null => J::Null,
            Json::Bool(b) => J::Bool(*b),
            Json::Number(n) => n.parse::<serde_json::Number>().map_or(J::Null, J::Number),
            Json::String(s) => J::String(s.clone()),
            Json::Array(vs) => J::Array(vs.iter().map(Json::to_serde).collect()),
            Json::Object(ms) => {
                J::Object(ms.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect())
            }
        }
    }
}

/// Parses one complete JSON document (surrounding whitespace allowed).
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "JSON is not valid UTF-8".to_string())?;
    let mut p = Parser {
        s: text,
        b: text.as_bytes(),
        pos: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.pos != p.b.len() {
        return Err(p.fail("unexpected data after JSON value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn fail(&self, msg: &str) -> String {
        format!("invalid JSON at byte {}: {msg}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.b[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.fail("unexpected character"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_JSON_DEPTH {
            return Err(self.fail("JSON is nested too deeply"));
        }
        match self.peek() {
            None => Err(self.fail("unexpected end of JSON")),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                self.pos += 1;
                let mut vs = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Json::Array(vs));
                }
                loop {
                    self.ws();
                    vs.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Json::Array(vs));
                        }
                        _ => return Err(self.fail("expected ',' or ']'")),
                    }
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut ms = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Json::Object(ms));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.fail("expected a string key"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return Err(self.fail("expected ':'"));
                    }
                    self.pos += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    ms.push((k, v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Json::Object(ms));
                        }
                        _ => return Err(self.fail("expected ',' or '}'")),
                    }
                }
            }
            Some(_) => Err(self.fail("unexpected character")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[int_start] == b'0') {
            return Err(self.fail("invalid number"));
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.fail("invalid number"));
            }
        }
        Ok(Json::Number(self.s[start..self.pos].to_string()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .b
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.fail("truncated \\u escape"))?;
        if !h.iter().all(u8::is_ascii_hexdigit) {
            return Err(self.fail("invalid \\u escape"));
        }
        let h = std::str::from_utf8(h).map_err(|_| self.fail("invalid \\u escape"))?;
        let v = u32::from_str_radix(h, 16).map_err(|_| self.fail("invalid \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let run = self.pos;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // Stops only at ASCII bytes, so this is a char boundary.
            out.push_str(&self.s[run..self.pos]);
            match self.peek() {
                None => return Err(self.fail("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let e = self
                        .peek()
                        .ok_or_else(|| self.fail("unterminated string"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xd800..0xdc00).contains(&cp) {
                                if !self.b[self.pos..].starts_with(b"\\u") {
                                    return Err(self.fail("unpaired surrogate"));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(self.fail("unpaired surrogate"));
                                }
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                            }
                            let c = char::from_u32(cp)
                                .ok_or_else(|| self.fail("unpaired surrogate"))?;
                            out.push(c);
                        }
                        _ => return Err(self.fail("invalid escape")),
                    }
                }
                Some(_) => return Err(self.fail("control character in string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let j = parse(br#" {"a": [1, -2.5e3, "x\u00e9\ud83d\ude00\n"], "b": null, "c": true} "#)
            .unwrap();
        assert_eq!(
            j,
            Json::Object(vec![
                (
                    "a".into(),
                    Json::Array(vec![
                        Json::Number("1".into()),
                        Json::Number("-2.5e3".into()),
                        Json::String("xé😀\n".into()),
                    ])
                ),
                ("b".into(), Json::Null),
                ("c".into(), Json::Bool(true)),
            ])
        );
        assert_eq!(
            parse(b"123456789012345678901234567890.5").unwrap(),
            Json::Number("123456789012345678901234567890.5".into())
        );
    }

    #[test]
    fn rejects() {
        for bad in [
            &b""[..],
            b"{",
            b"[1,]",
            b"01",
            b"1.",
            b"\"\\ud800\"",
            b"\"\\u12\"",
            b"\"\x01\"",
            b"nul",
            b"1 2",
            b"{\"a\" 1}",
            b"\xff",
            b"+1",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "[".repeat(10_000);
        assert!(parse(deep.as_bytes()).is_err());
    }
}
