//! The reference machine: slow, byte-at-a-time, written to be obviously correct.
//!
//! It is the oracle for the fast machine behind [`Splitter`](super::Splitter): every test,
//! property test and fuzz target runs both and compares values and errors (kind and
//! offset). It shares no code with the fast machine. Where the fast machine uses one-bit
//! container levels, lookup tables and skip loops, this one keeps a stack of grammar
//! frames, checks UTF-8 with [`std::str::from_utf8`], checks numbers by re-reading their
//! text against the RFC 8259 grammar, and checks surrogates with [`char::from_u32`].
//!
//! Not part of the supported API (hidden from the docs); kept public so that integration
//! tests and fuzz targets can use it.

use super::{ErrorKind, Limits, Mode};

/// What the grammar expects next inside one open container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    ArrayFirstOrEnd,
    ArrayValue,
    ArrayCommaOrEnd,
    ObjectFirstKeyOrEnd,
    ObjectKey,
    ObjectColon,
    ObjectValue,
    ObjectCommaOrEnd,
}

/// The token being read.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    None,
    Str {
        key: bool,
        /// Content bytes seen so far (escapes counted as written).
        len: u64,
        /// Escape in progress: the bytes after the backslash, e.g. `u00` or `uD83D\u`.
        escape: Option<Vec<u8>>,
        /// Bytes of a multi-byte UTF-8 character in progress.
        utf8: Vec<u8>,
    },
    Num(Vec<u8>),
    Lit(&'static [u8], usize),
}

/// How far a byte string gets in the RFC 8259 number grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NumberText {
    Complete,
    Prefix,
    Invalid,
}

fn number_text(t: &[u8]) -> NumberText {
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < t.len() && t[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if t.get(i) == Some(&b'-') {
        i += 1;
    }
    match t.get(i) {
        None => return NumberText::Prefix,
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        Some(_) => return NumberText::Invalid,
    }
    if t.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return if i == t.len() {
                NumberText::Prefix
            } else {
                NumberText::Invalid
            };
        }
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return if i == t.len() {
                NumberText::Prefix
            } else {
                NumberText::Invalid
            };
        }
    }
    if i == t.len() {
        NumberText::Complete
    } else {
        NumberText::Invalid
    }
}

/// A reference failure: kind and absolute offset.
pub type Failure = (ErrorKind, u64);

/// The byte-at-a-time reference splitter.
#[derive(Clone, Debug)]
pub struct Reference {
    mode: Mode,
    limits: Limits,
    pos: u64,
    frames: Vec<Frame>,
    token: Token,
    value_start: Option<u64>,
    after_scalar: bool,
    bom_seen: usize,
    failed: Option<Failure>,
}

impl Reference {
    /// A new reference machine.
    pub fn new(mode: Mode, limits: Limits) -> Self {
        Reference {
            mode,
            limits,
            pos: 0,
            frames: Vec::new(),
            token: Token::None,
            value_start: None,
            after_scalar: false,
            bom_seen: 0,
            failed: None,
        }
    }

    /// Run a whole input and the end of stream: the spans of the values, then the error.
    pub fn split(mode: Mode, limits: Limits, input: &[u8]) -> (Vec<(u64, u64)>, Option<Failure>) {
        let mut r = Reference::new(mode, limits);
        let mut spans = Vec::new();
        for &b in input {
            if let Err(f) = r.push_byte(b, &mut spans) {
                return (spans, Some(f));
            }
        }
        match r.finish() {
            Ok(Some(span)) => spans.push(span),
            Ok(None) => {}
            Err(f) => return (spans, Some(f)),
        }
        (spans, None)
    }

    fn fail(&mut self, kind: ErrorKind) -> Failure {
        let f = (kind, self.pos);
        self.failed = Some(f);
        f
    }

    /// A value (or a key) just ended with the byte before `end`.
    fn value_ended(&mut self, end: u64, scalar: bool) -> Option<(u64, u64)> {
        match self.frames.last_mut() {
            None => {
                self.after_scalar = scalar;
                self.value_start.take().map(|s| (s, end))
            }
            Some(f) => {
                *f = match *f {
                    Frame::ObjectKey | Frame::ObjectFirstKeyOrEnd => Frame::ObjectColon,
                    Frame::ObjectValue => Frame::ObjectCommaOrEnd,
                    _ => Frame::ArrayCommaOrEnd,
                };
                None
            }
        }
    }

    /// Examine one byte. The span of a top-level value that ended with it (or, for a
    /// number, just before it) is appended to `out`, even when the byte itself fails.
    pub fn push_byte(&mut self, b: u8, out: &mut Vec<(u64, u64)>) -> Result<(), Failure> {
        if let Some(f) = self.failed {
            return Err(f);
        }
        let r = self.step(b, out);
        self.pos += 1;
        r.map(|span| out.extend(span))
    }

    fn step(&mut self, b: u8, out: &mut Vec<(u64, u64)>) -> Result<Option<(u64, u64)>, Failure> {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        // Limits come first, in a fixed order.
        if let Some(start) = self.value_start {
            let top_number = self.frames.is_empty() && matches!(self.token, Token::Num(_));
            if !top_number && self.pos - start >= self.limits.max_value_bytes {
                return Err(self.fail(ErrorKind::ValueTooLarge));
            }
        }
        if let Token::Str {
            len, escape, utf8, ..
        } = &self.token
        {
            let closing = escape.is_none() && utf8.is_empty() && b == b'"';
            if !closing && *len >= self.limits.max_string_bytes {
                return Err(self.fail(ErrorKind::StringTooLong));
            }
        }
        match std::mem::replace(&mut self.token, Token::None) {
            Token::Str {
                key,
                len,
                escape,
                utf8,
            } => self.string(b, key, len + 1, escape, utf8),
            Token::Num(mut text) => {
                text.push(b);
                if number_text(&text) != NumberText::Invalid {
                    let start = self.value_start.unwrap_or(self.pos);
                    if self.pos - start >= self.limits.max_value_bytes {
                        return Err(self.fail(ErrorKind::ValueTooLarge));
                    }
                    if text.len() as u64 > self.limits.max_number_bytes {
                        return Err(self.fail(ErrorKind::NumberTooLong));
                    }
                    self.token = Token::Num(text);
                    return Ok(None);
                }
                text.pop();
                let leading_zero = (text == b"0" || text == b"-0") && b.is_ascii_digit();
                if leading_zero || number_text(&text) != NumberText::Complete {
                    return Err(self.fail(ErrorKind::InvalidNumber));
                }
                // The number ended before this byte; examine the byte afresh.
                out.extend(self.value_ended(self.pos, true));
                self.step(b, out)
            }
            Token::Lit(word, got) => {
                if word[got] != b {
                    return Err(self.fail(ErrorKind::Syntax));
                }
                if got + 1 == word.len() {
                    Ok(self.value_ended(self.pos + 1, true))
                } else {
                    self.token = Token::Lit(word, got + 1);
                    Ok(None)
                }
            }
            Token::None => self.structural(b, ws),
        }
    }

    fn string(
        &mut self,
        b: u8,
        key: bool,
        len: u64,
        escape: Option<Vec<u8>>,
        mut utf8: Vec<u8>,
    ) -> Result<Option<(u64, u64)>, Failure> {
        if let Some(mut esc) = escape {
            esc.push(b);
            let done = self.escape(&esc)?;
            self.token = Token::Str {
                key,
                len,
                escape: if done { None } else { Some(esc) },
                utf8,
            };
            return Ok(None);
        }
        if !utf8.is_empty() || b >= 0x80 {
            utf8.push(b);
            match std::str::from_utf8(&utf8) {
                Ok(_) => utf8.clear(),
                Err(e) if e.error_len().is_none() => {}
                Err(_) => return Err(self.fail(ErrorKind::InvalidUtf8)),
            }
            self.token = Token::Str {
                key,
                len,
                escape,
                utf8,
            };
            return Ok(None);
        }
        match b {
            b'"' => Ok(self.value_ended(self.pos + 1, false)),
            b'\\' => {
                self.token = Token::Str {
                    key,
                    len,
                    escape: Some(Vec::new()),
                    utf8,
                };
                Ok(None)
            }
            0x00..=0x1F => Err(self.fail(ErrorKind::ControlCharacter)),
            _ => {
                self.token = Token::Str {
                    key,
                    len,
                    escape: None,
                    utf8,
                };
                Ok(None)
            }
        }
    }

    /// Check an escape in progress (the bytes after the first backslash, e.g. `u00` or
    /// `uD83D\\u`). `Ok(true)` when it is complete.
    fn escape(&mut self, esc: &[u8]) -> Result<bool, Failure> {
        let n = esc.len();
        if n == 1 {
            return match esc[0] {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(true),
                b'u' => Ok(false),
                _ => Err(self.fail(ErrorKind::InvalidEscape)),
            };
        }
        let last = esc[n - 1];
        let fits = match n {
            2..=5 | 8..=11 => last.is_ascii_hexdigit(),
            6 => last == b'\\',
            7 => last == b'u',
            _ => false,
        };
        if !fits {
            return Err(self.fail(ErrorKind::InvalidEscape));
        }
        let hex = |s: &[u8]| {
            std::str::from_utf8(s)
                .ok()
                .and_then(|s| u16::from_str_radix(s, 16).ok())
                .unwrap_or(0)
        };
        let units: &[u16] = match n {
            5 => &[hex(&esc[1..5])],
            11 => &[hex(&esc[1..5]), hex(&esc[7..11])],
            _ => return Ok(false),
        };
        let mut decoded = char::decode_utf16(units.iter().copied());
        match decoded.next() {
            Some(Ok(_)) => Ok(true),
            // A lone high surrogate so far: its low half must follow.
            Some(Err(_)) if n == 5 && (0xD800..0xDC00).contains(&units[0]) => Ok(false),
            _ => Err(self.fail(ErrorKind::InvalidEscape)),
        }
    }

    /// Start a value with byte `b`.
    fn begin(&mut self, b: u8) -> Result<Option<(u64, u64)>, Failure> {
        let frame = match b {
            b'{' => Some(Frame::ObjectFirstKeyOrEnd),
            b'[' => Some(Frame::ArrayFirstOrEnd),
            _ => None,
        };
        if let Some(f) = frame {
            if self.frames.len() as u64 >= u64::from(self.limits.max_depth) {
                return Err(self.fail(ErrorKind::DepthLimit));
            }
            self.frames.push(f);
            return Ok(None);
        }
        self.token = match b {
            b'"' => Token::Str {
                key: false,
                len: 0,
                escape: None,
                utf8: Vec::new(),
            },
            b'-' | b'0'..=b'9' => Token::Num(vec![b]),
            b't' => Token::Lit(b"true", 1),
            b'f' => Token::Lit(b"false", 1),
            b'n' => Token::Lit(b"null", 1),
            _ => return Err(self.fail(ErrorKind::Syntax)),
        };
        Ok(None)
    }

    fn close(&mut self, b: u8) -> Result<Option<(u64, u64)>, Failure> {
        let frame = self.frames.pop();
        let ok = matches!(
            (frame, b),
            (Some(Frame::ArrayFirstOrEnd | Frame::ArrayCommaOrEnd), b']')
                | (
                    Some(Frame::ObjectFirstKeyOrEnd | Frame::ObjectCommaOrEnd),
                    b'}'
                )
        );
        if !ok {
            return Err(self.fail(ErrorKind::Syntax));
        }
        Ok(self.value_ended(self.pos + 1, false))
    }

    fn structural(&mut self, b: u8, ws: bool) -> Result<Option<(u64, u64)>, Failure> {
        // The BOM: only at the very start.
        const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
        if self.pos < 3 && self.pos == self.bom_seen as u64 && (b == 0xEF || self.bom_seen > 0) {
            if b != BOM[self.bom_seen] {
                return Err(self.fail(ErrorKind::Syntax));
            }
            self.bom_seen += 1;
            if self.bom_seen == 3 {
                self.bom_seen = 4; // done; never again
            }
            return Ok(None);
        }
        let Some(&frame) = self.frames.last() else {
            // Top level.
            if ws {
                self.after_scalar = false;
                return Ok(None);
            }
            if self.after_scalar && !matches!(b, b'{' | b'[' | b'"') {
                return Err(self.fail(ErrorKind::Syntax));
            }
            self.after_scalar = false;
            let value_start = matches!(
                b,
                b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            );
            if self.mode == Mode::Objects && b != b'{' {
                return Err(self.fail(if value_start {
                    ErrorKind::NotAnObject
                } else {
                    ErrorKind::Syntax
                }));
            }
            self.value_start = Some(self.pos);
            return self.begin(b);
        };
        if ws {
            return Ok(None);
        }
        match (frame, b) {
            (Frame::ArrayFirstOrEnd, b']') | (Frame::ObjectFirstKeyOrEnd, b'}') => self.close(b),
            (Frame::ArrayCommaOrEnd, b']') | (Frame::ObjectCommaOrEnd, b'}') => self.close(b),
            (Frame::ArrayCommaOrEnd, b',') => {
                *self.frames.last_mut().expect("frame") = Frame::ArrayValue;
                Ok(None)
            }
            (Frame::ObjectCommaOrEnd, b',') => {
                *self.frames.last_mut().expect("frame") = Frame::ObjectKey;
                Ok(None)
            }
            (Frame::ObjectColon, b':') => {
                *self.frames.last_mut().expect("frame") = Frame::ObjectValue;
                Ok(None)
            }
            (Frame::ObjectFirstKeyOrEnd | Frame::ObjectKey, b'"') => {
                self.token = Token::Str {
                    key: true,
                    len: 0,
                    escape: None,
                    utf8: Vec::new(),
                };
                Ok(None)
            }
            (Frame::ArrayFirstOrEnd | Frame::ArrayValue | Frame::ObjectValue, _) => {
                if frame == Frame::ArrayFirstOrEnd {
                    *self.frames.last_mut().expect("frame") = Frame::ArrayValue;
                }
                self.begin(b)
            }
            _ => Err(self.fail(ErrorKind::Syntax)),
        }
    }

    /// End of stream: a complete top-level number is a value; anything open is truncated.
    pub fn finish(&mut self) -> Result<Option<(u64, u64)>, Failure> {
        if let Some(f) = self.failed {
            return Err(f);
        }
        if self.bom_seen > 0 && self.bom_seen < 3 {
            return Err(self.fail(ErrorKind::Truncated));
        }
        if let Token::Num(text) = &self.token {
            if self.frames.is_empty() && number_text(text) == NumberText::Complete {
                self.token = Token::None;
                return Ok(self.value_ended(self.pos, true));
            }
        }
        if self.frames.is_empty() && self.token == Token::None {
            return Ok(None);
        }
        Err(self.fail(ErrorKind::Truncated))
    }
}

/// The reference for [`Preview`](super::Preview): what its view shows after `prefix`, the
/// start of one JSON value (valid so far), read again from its first byte by recursive
/// descent. Quadratic when called after every chunk, which is the point: it shares nothing
/// with the incremental builder but the rules it documents.
pub fn preview(prefix: &[u8]) -> Option<serde_json::Value> {
    let mut i = 0;
    match partial_value(prefix, &mut i) {
        Shown::Nothing => None,
        Shown::Partial(v) | Shown::Complete(v) => Some(v),
    }
}

/// How much of a value a prefix shows.
enum Shown {
    /// Not begun, or a number or literal not known to be complete.
    Nothing,
    /// Begun and not ended.
    Partial(serde_json::Value),
    Complete(serde_json::Value),
}

fn skip_ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
}

fn partial_value(b: &[u8], i: &mut usize) -> Shown {
    use serde_json::Value as J;
    // A byte order mark may start the stream (all of it, or as much as has arrived).
    const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
    let n = b.len().min(3);
    if *i == 0 && n > 0 && b[..n] == BOM[..n] {
        *i = n;
    }
    skip_ws(b, i);
    let Some(&first) = b.get(*i) else {
        return Shown::Nothing;
    };
    match first {
        b'{' => partial_object(b, i),
        b'[' => partial_array(b, i),
        b'"' => {
            let (s, closed) = partial_string(b, i);
            if closed {
                Shown::Complete(J::String(s))
            } else {
                Shown::Partial(J::String(s))
            }
        }
        b't' | b'f' | b'n' => partial_literal(b, i, first),
        b'-' | b'0'..=b'9' => partial_number(b, i),
        // Not a value's first byte: nothing shown (the splitter refuses what follows).
        _ => Shown::Nothing,
    }
}

/// The object whose `{` is at `b[*i]`: its members so far.
fn partial_object(b: &[u8], i: &mut usize) -> Shown {
    use serde_json::Value as J;
    *i += 1;
    let mut map = serde_json::Map::new();
    loop {
        skip_ws(b, i);
        match b.get(*i) {
            None => return Shown::Partial(J::Object(map)),
            Some(b'}') => {
                *i += 1;
                return Shown::Complete(J::Object(map));
            }
            Some(b',') => *i += 1,
            Some(_) => {
                let (key, closed) = partial_string(b, i);
                skip_ws(b, i);
                if !closed || *i >= b.len() {
                    return Shown::Partial(J::Object(map));
                }
                *i += 1; // the colon
                match partial_value(b, i) {
                    Shown::Nothing => return Shown::Partial(J::Object(map)),
                    Shown::Partial(v) => {
                        map.insert(key, v);
                        return Shown::Partial(J::Object(map));
                    }
                    Shown::Complete(v) => {
                        map.insert(key, v);
                    }
                }
            }
        }
    }
}

/// The array whose `[` is at `b[*i]`: its items so far.
fn partial_array(b: &[u8], i: &mut usize) -> Shown {
    use serde_json::Value as J;
    *i += 1;
    let mut items = Vec::new();
    loop {
        skip_ws(b, i);
        match b.get(*i) {
            None => return Shown::Partial(J::Array(items)),
            Some(b']') => {
                *i += 1;
                return Shown::Complete(J::Array(items));
            }
            Some(b',') => *i += 1,
            Some(_) => match partial_value(b, i) {
                Shown::Nothing => return Shown::Partial(J::Array(items)),
                Shown::Partial(v) => {
                    items.push(v);
                    return Shown::Partial(J::Array(items));
                }
                Shown::Complete(v) => items.push(v),
            },
        }
    }
}

/// The literal whose first byte `first` is at `b[*i]`: shown once whole.
fn partial_literal(b: &[u8], i: &mut usize, first: u8) -> Shown {
    use serde_json::Value as J;
    let lit: &[u8] = match first {
        b't' => b"true",
        b'f' => b"false",
        _ => b"null",
    };
    if b.len() - *i < lit.len() {
        *i = b.len();
        return Shown::Nothing;
    }
    *i += lit.len();
    Shown::Complete(match first {
        b't' => J::Bool(true),
        b'f' => J::Bool(false),
        _ => J::Null,
    })
}

/// The number at `b[*i]`: shown once a byte after it has come (more digits may).
fn partial_number(b: &[u8], i: &mut usize) -> Shown {
    let start = *i;
    while *i < b.len() && matches!(b[*i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
        *i += 1;
    }
    if *i == b.len() {
        return Shown::Nothing; // more digits may come
    }
    // A number serde_json cannot hold (beyond f64's range) is null.
    Shown::Complete(
        std::str::from_utf8(&b[start..*i])
            .ok()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(serde_json::Value::Null),
    )
}

/// The string at `b[*i]` (its opening quote): its text so far and whether it closed. An
/// escape or a UTF-8 sequence cut by the end of `b` is left out.
fn partial_string(b: &[u8], i: &mut usize) -> (String, bool) {
    *i += 1;
    let mut out: Vec<u8> = Vec::new();
    let mut closed = false;
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                *i += 1;
                closed = true;
                break;
            }
            b'\\' => {
                // The escape as written, read only when all of it is here.
                let esc = &b[*i..];
                let hex = |at: usize| {
                    std::str::from_utf8(&esc[at..at + 4])
                        .ok()
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                };
                if esc.len() < 2 {
                    *i = b.len();
                    break;
                }
                let (c, n) = match esc[1] {
                    b'u' => {
                        if esc.len() < 6 {
                            *i = b.len();
                            break;
                        }
                        let unit = hex(2).unwrap_or(0xFFFD);
                        if (0xD800..0xDC00).contains(&unit) {
                            if esc.len() < 12 {
                                *i = b.len();
                                break;
                            }
                            let low = hex(8).unwrap_or(0xDC00);
                            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            (char::from_u32(c).unwrap_or('\u{FFFD}'), 12)
                        } else {
                            (char::from_u32(unit).unwrap_or('\u{FFFD}'), 6)
                        }
                    }
                    b'n' => ('\n', 2),
                    b't' => ('\t', 2),
                    b'r' => ('\r', 2),
                    b'b' => ('\u{8}', 2),
                    b'f' => ('\u{c}', 2),
                    other => (char::from(other), 2),
                };
                out.extend_from_slice(c.to_string().as_bytes());
                *i += n;
            }
            other => {
                out.push(other);
                *i += 1;
            }
        }
    }
    let text = match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => {
            let good = e.utf8_error().valid_up_to();
            String::from_utf8_lossy(&e.as_bytes()[..good]).into_owned()
        }
    };
    (text, closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_grammar() {
        for (t, want) in [
            ("-", NumberText::Prefix),
            ("0", NumberText::Complete),
            ("-0", NumberText::Complete),
            ("01", NumberText::Invalid),
            ("1.", NumberText::Prefix),
            ("1.5", NumberText::Complete),
            ("1e", NumberText::Prefix),
            ("1e+", NumberText::Prefix),
            ("1e+5", NumberText::Complete),
            ("1.e5", NumberText::Invalid),
            (".5", NumberText::Invalid),
            ("1x", NumberText::Invalid),
        ] {
            assert_eq!(number_text(t.as_bytes()), want, "{t}");
        }
    }
}
