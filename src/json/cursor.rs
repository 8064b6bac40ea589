//! A strict pull reader over one complete JSON text: what the provider decoders read their
//! envelopes with.
//!
//! The decoders know the shape they want (`choices[].delta.tool_calls[].function`), so
//! instead of building serde state for every field they walk the text once with a
//! [`Cursor`]: keys are compared as raw bytes, wanted strings are borrowed (unescaped only
//! when they hold an escape), and everything else is skipped — validated, never trusted.
//! Strings and numbers are read with the splitter's token scanners (`scan_string`,
//! `scan_number`); a nested container that is skipped is run through the splitter's own
//! [`Machine`], so its limits and its strictness are the splitter's. Nothing recurses.
//!
//! The text is `&str` (the caller checked UTF-8 once, up front); every slice handed out is
//! cut at a byte that starts a character (a quote, or a structural byte), so it is a valid
//! `&str` too.

use std::borrow::Cow;

use super::machine::{scan_number, scan_string, Machine, Step, StrEnd};
use super::{Limits, Mode};

/// Why the text is not what the reader expected: a byte offset into it and a short reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CursorError {
    /// Offset of the offending byte (the text's length when it ended too soon).
    pub(crate) offset: usize,
    /// What was expected or wrong.
    pub(crate) what: &'static str,
}

/// A string value as it stands between its quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Str<'a> {
    /// The raw content (escapes not yet decoded).
    pub(crate) raw: &'a str,
    /// Whether the content holds a backslash escape.
    pub(crate) escaped: bool,
}

impl<'a> Str<'a> {
    /// The decoded string: borrowed when there was no escape.
    #[inline]
    pub(crate) fn cow(self) -> Cow<'a, str> {
        if self.escaped {
            Cow::Owned(unescape(self.raw))
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    /// The decoded string, into `out` (cleared first).
    #[inline]
    pub(crate) fn decode_into(self, out: &mut String) {
        out.clear();
        self.decode_onto(out);
    }

    /// The decoded string, appended to `out`.
    #[inline]
    pub(crate) fn decode_onto(self, out: &mut String) {
        if self.escaped {
            unescape_into(self.raw, out);
        } else {
            out.push_str(self.raw);
        }
    }

    /// Whether the decoded string equals `want`.
    #[inline]
    pub(crate) fn is(self, want: &str) -> bool {
        if self.escaped {
            decodes_to(self.raw, want)
        } else {
            self.raw == want
        }
    }
}

/// The state of an object being read: whether a member has been read yet.
pub(crate) struct Members {
    first: bool,
}

/// The state of an array being read.
pub(crate) struct Elements {
    first: bool,
}

/// The JSON string token whose opening quote is `bytes[at]`, checked as [`Cursor::string`]
/// checks strings (escapes, control bytes) and its content as UTF-8: the offset just past
/// its closing quote, and its content. `None` if there is no such token there.
pub(crate) fn string_token(bytes: &[u8], at: usize) -> Option<(usize, Str<'_>)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    match scan_string::<false>(bytes, at + 1, bytes.len()) {
        StrEnd::Closed(q, escaped) => {
            let raw = crate::scan::text(&bytes[at + 1..q])?;
            Some((q + 1, Str { raw, escaped }))
        }
        StrEnd::Stop(_) => None,
    }
}

/// The JSON string token whose opening quote is `bytes[at]`, decoded and appended to `out`,
/// when it is of the simple kind most argument fragments are: ASCII, no control byte, and
/// only the escapes of one character that an escaper writes (`\" \\ \b \f \n \r \t`;
/// not `\/`), so that the token's text is the one [`crate::json::escape::write_str`]
/// writes for its value (the rewriters keep it for the call they write whole). The offset just past its
/// closing quote, and whether it held an escape. `None` for any other token or none (and
/// `out` may then hold part of it after what it held: the caller truncates):
/// [`string_token`] reads those, and decides whether they are tokens at all. One pass where
/// `string_token` and [`Str::decode_onto`] take two, on the fragments the decoders'
/// templates read most.
#[inline]
pub(crate) fn simple_string_onto(
    bytes: &[u8],
    at: usize,
    out: &mut String,
) -> Option<(usize, bool)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    // The decoded bytes gather on the stack, in `out` a buffer at a time; a run of plain
    // bytes goes there as the whole 16 bytes it was found in (one copy of a fixed size),
    // the next escape's character written over what followed the run.
    let mut buf = [0u8; 128];
    let mut n = 0;
    let mut escaped = false;
    let mut i = at + 1;
    loop {
        if n > buf.len() - 17 {
            // ASCII: every byte kept was checked.
            out.push_str(crate::scan::text(&buf[..n])?);
            n = 0;
        }
        match bytes
            .get(i..i + 16)
            .and_then(|b| <&[u8; 16]>::try_from(b).ok())
        {
            Some(block) => {
                // Quotes, backslashes, control bytes; non-ASCII bytes.
                let (stops, high) = crate::scan::probe16(block);
                let k = stops.trailing_zeros().min(16);
                if high & ((1u32 << k) - 1) != 0 {
                    return None;
                }
                buf[n..n + 16].copy_from_slice(block);
                n += k as usize;
                i += k as usize;
                if stops == 0 {
                    continue;
                }
            }
            // The last bytes, one at a time.
            None => match *bytes.get(i)? {
                b'"' | b'\\' | 0..=0x1F => {}
                0x80.. => return None,
                c => {
                    buf[n] = c;
                    n += 1;
                    i += 1;
                    continue;
                }
            },
        }
        match bytes[i] {
            b'"' => {
                out.push_str(crate::scan::text(&buf[..n])?);
                return Some((i + 1, escaped));
            }
            b'\\' => {
                buf[n] = match *bytes.get(i + 1)? {
                    c @ (b'"' | b'\\') => c,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    _ => return None,
                };
                n += 1;
                i += 2;
                escaped = true;
            }
            _ => return None,
        }
    }
}

/// The reader. See the module comment.
pub(crate) struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Cursor<'a> {
    /// A reader at the start of `s`.
    pub(crate) fn new(s: &'a str) -> Self {
        Cursor { s, i: 0 }
    }

    #[cold]
    fn bad<T>(&self, what: &'static str) -> Result<T, CursorError> {
        Err(CursorError {
            offset: self.i,
            what,
        })
    }

    /// The next byte that is not whitespace (not consumed).
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        let b = self.s.as_bytes();
        match b.get(self.i) {
            // Envelopes are mostly compact: no whitespace to skip.
            Some(&c) if c > b' ' => Some(c),
            _ => self.peek_after_ws(),
        }
    }

    #[cold]
    fn peek_after_ws(&mut self) -> Option<u8> {
        let b = self.s.as_bytes();
        let mut i = self.i;
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        self.i = i;
        b.get(i).copied()
    }

    #[inline]
    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), CursorError> {
        if self.peek() == Some(byte) {
            self.i += 1;
            Ok(())
        } else {
            self.bad(what)
        }
    }

    /// Consume `null` if it comes next.
    #[inline]
    pub(crate) fn null(&mut self) -> Result<bool, CursorError> {
        if self.peek() != Some(b'n') {
            return Ok(false);
        }
        if self.s.as_bytes()[self.i..].starts_with(b"null") {
            self.i += 4;
            Ok(true)
        } else {
            self.bad("invalid literal")
        }
    }

    /// The whole text the cursor reads.
    pub(crate) fn text(&self) -> &'a str {
        self.s
    }

    /// Where the cursor is (a byte offset into the text).
    #[inline]
    pub(crate) fn offset(&self) -> usize {
        self.i
    }

    /// The state of an object whose opening and at least one member were read before the
    /// start of this text (for a reader that resumes after a known prefix).
    pub(crate) fn members_after_first() -> Members {
        Members { first: false }
    }

    /// Open an object.
    #[inline]
    pub(crate) fn object(&mut self) -> Result<Members, CursorError> {
        self.expect(b'{', "expected an object")?;
        Ok(Members { first: true })
    }

    /// The next member's key (the cursor is then at its value), or `None` after the
    /// closing `}`.
    #[inline(always)]
    pub(crate) fn key(&mut self, m: &mut Members) -> Result<Option<Str<'a>>, CursorError> {
        let mut c = self.peek();
        if c == Some(b'}') {
            self.i += 1;
            return Ok(None);
        }
        if !m.first {
            if c != Some(b',') {
                return self.bad("expected ',' or '}'");
            }
            self.i += 1;
            c = self.peek();
        }
        m.first = false;
        if c != Some(b'"') {
            return self.bad("expected a string key");
        }
        let k = self.string_here()?;
        // Usually no whitespace before the colon.
        if self.s.as_bytes().get(self.i) == Some(&b':') {
            self.i += 1;
        } else {
            self.expect(b':', "expected ':' after an object key")?;
        }
        Ok(Some(k))
    }

    /// Open an array.
    #[inline]
    pub(crate) fn array(&mut self) -> Result<Elements, CursorError> {
        self.expect(b'[', "expected an array")?;
        Ok(Elements { first: true })
    }

    /// Whether another element follows (the cursor is then at it); false after the
    /// closing `]`.
    #[inline]
    pub(crate) fn element(&mut self, e: &mut Elements) -> Result<bool, CursorError> {
        match self.peek() {
            Some(b']') => {
                self.i += 1;
                return Ok(false);
            }
            Some(b',') if !e.first => self.i += 1,
            _ if !e.first => return self.bad("expected ',' or ']'"),
            _ => {}
        }
        e.first = false;
        Ok(true)
    }

    /// A string value.
    #[inline]
    pub(crate) fn string(&mut self) -> Result<Str<'a>, CursorError> {
        if self.peek() != Some(b'"') {
            return self.bad("expected a string");
        }
        self.string_here()
    }

    /// The string whose opening quote is at the cursor. Always inlined: returned through
    /// memory, the result was a store-forwarding stall in every key (perf annotate).
    #[inline(always)]
    fn string_here(&mut self) -> Result<Str<'a>, CursorError> {
        let b = self.s.as_bytes();
        let start = self.i + 1;
        // The text is a `&str`: UTF-8 was checked once, for all of it.
        match scan_string::<false>(b, start, b.len()) {
            StrEnd::Closed(q, escaped) => {
                self.i = q + 1;
                Ok(Str {
                    raw: &self.s[start..q],
                    escaped,
                })
            }
            StrEnd::Stop(j) => {
                self.i = j;
                if j == b.len() {
                    self.bad("unterminated string")
                } else {
                    self.bad("invalid string content")
                }
            }
        }
    }

    /// A string, or `None` for `null`.
    #[inline]
    pub(crate) fn opt_string(&mut self) -> Result<Option<Str<'a>>, CursorError> {
        if self.null()? {
            Ok(None)
        } else {
            self.string().map(Some)
        }
    }

    /// A non-negative integer that fits a `u32` (no fraction, no exponent), or `None` for
    /// `null`.
    #[inline]
    pub(crate) fn opt_u32(&mut self) -> Result<Option<u32>, CursorError> {
        if self.null()? {
            return Ok(None);
        }
        let b = self.s.as_bytes();
        let start = self.i;
        let mut j = start;
        let mut v = 0u64;
        while j < b.len() && b[j].is_ascii_digit() && j - start < 11 {
            v = v * 10 + (b[j] - b'0') as u64;
            j += 1;
        }
        let leading_zero = b.get(start) == Some(&b'0') && j - start > 1;
        let more = matches!(b.get(j), Some(b'0'..=b'9' | b'.' | b'e' | b'E'));
        if j == start || leading_zero || more || v > u32::MAX as u64 {
            return self.bad("expected a non-negative integer");
        }
        self.i = j;
        Ok(Some(v as u32))
    }

    /// Skip one value of any kind, validated; returns its raw text.
    #[inline]
    pub(crate) fn skip(&mut self) -> Result<&'a str, CursorError> {
        let Some(first) = self.peek() else {
            return self.bad("expected a value");
        };
        let b = self.s.as_bytes();
        let start = self.i;
        match first {
            b'"' => {
                self.string_here()?;
            }
            b'-' | b'0'..=b'9' => match scan_number(b, start, b.len()) {
                Some(j) => self.i = j,
                None => return self.bad("invalid number"),
            },
            b't' | b'f' | b'n' => {
                let lit: &[u8] = match first {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !b[start..].starts_with(lit) {
                    return self.bad("invalid literal");
                }
                self.i += lit.len();
            }
            b'{' | b'[' => self.skip_container()?,
            _ => return self.bad("expected a value"),
        }
        Ok(&self.s[start..self.i])
    }

    /// Skip one value, reading only as much as finds where it ends: a string ends at its
    /// first unescaped quote (any escape, a lone surrogate among them, is let through),
    /// a container where its brackets balance; a number or literal is read strictly. For
    /// a reader that must find its way through a document another party validates (a
    /// request's history, sent on to a provider) without refusing what RFC 8259's grammar
    /// allows and this crate's strict reader does not (lone surrogates, any depth). Its
    /// raw text.
    pub(crate) fn skip_lenient(&mut self) -> Result<&'a str, CursorError> {
        let Some(first) = self.peek() else {
            return self.bad("expected a value");
        };
        let b = self.s.as_bytes();
        let start = self.i;
        match first {
            b'"' => {
                self.i = lenient_string_end(b, start + 1).ok_or(CursorError {
                    offset: b.len(),
                    what: "unterminated string",
                })?
            }
            b'{' | b'[' => {
                let mut depth = 0u64;
                let mut j = start;
                loop {
                    let Some(&c) = b.get(j) else {
                        self.i = b.len();
                        return self.bad("unterminated container");
                    };
                    j += 1;
                    match c {
                        b'"' => {
                            j = lenient_string_end(b, j).ok_or(CursorError {
                                offset: b.len(),
                                what: "unterminated string",
                            })?;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                self.i = j;
            }
            _ => return self.skip(),
        }
        Ok(&self.s[start..self.i])
    }

    /// Skip the object or array at the cursor with the splitter's machine.
    #[inline(never)]
    fn skip_container(&mut self) -> Result<(), CursorError> {
        let b = self.s.as_bytes();
        let start = self.i;
        let mut m = Machine::new(Mode::Any, Limits::default());
        match m.feed(&b[start..]).0 {
            Step::Value { end, .. } => {
                self.i = start + end as usize;
                Ok(())
            }
            Step::Fail(f) => {
                self.i = start + f.offset as usize;
                self.bad(f.detail)
            }
            Step::NeedMore => {
                self.i = b.len();
                self.bad("unterminated container")
            }
        }
    }

    /// Only whitespace may remain.
    pub(crate) fn end(&mut self) -> Result<(), CursorError> {
        if self.peek().is_some() {
            return self.bad("trailing bytes after the value");
        }
        Ok(())
    }
}

/// Past the closing quote of the string whose content starts at `from` (any escape let
/// through), or `None` when it does not close.
fn lenient_string_end(b: &[u8], from: usize) -> Option<usize> {
    let mut j = from;
    loop {
        let k = j + memchr::memchr2(b'"', b'\\', &b[j..])?;
        if b[k] == b'"' {
            return Some(k + 1);
        }
        j = k + 2;
        if j > b.len() {
            return None;
        }
    }
}

/// Decode the escapes of string content that [`Cursor::string`] accepted (so every escape
/// is complete and every `\u` high surrogate has its low half).
pub(crate) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    unescape_into(raw, &mut out);
    out
}

/// [`unescape`], appended to `out`.
///
/// The decoded bytes are built in `out`'s own buffer: each run between escapes copied
/// eight bytes a step ([`next_backslash`]; a backslash is ASCII, so a run is whole
/// characters) and each escape pushed as its character's bytes, then the whole checked as
/// UTF-8 once (a word at a time for ASCII). The reference, a character at a time, is
/// `tests::unescape_reference`, and the two agree on every input, valid or not (a test
/// says so): an escape that is not one JSON allows (only possible on content no
/// reader checked) gives U+FFFD, as does a lone surrogate.
pub(crate) fn unescape_into(raw: &str, out: &mut String) {
    let b = raw.as_bytes();
    let mut v = std::mem::take(out).into_bytes();
    v.reserve(b.len());
    let mut i = 0;
    while let Some(at) = next_backslash(b, i, &mut v) {
        // The escapes of one ASCII character first: nearly all of them.
        if let Some(c) = b.get(at + 1).and_then(|&e| simple_escape(e)) {
            v.push(c);
            i = at + 2;
            continue;
        }
        let (c, len) = escape_at(b, at);
        v.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        i = at + len;
    }
    // Whole characters only were appended to text: the check cannot fail (and were it to,
    // the text is kept, its bad bytes replaced, rather than a panic).
    *out = match String::from_utf8(v) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
}

/// Whether string content `raw` (escapes not decoded) decodes to `want`, as
/// [`unescape`] decodes it, compared in place (nothing decoded into a buffer): eight
/// bytes a step up to each backslash, as [`next_backslash`] copies them.
pub(crate) fn decodes_to(raw: &str, want: &str) -> bool {
    let (b, w) = (raw.as_bytes(), want.as_bytes());
    let (mut i, mut j) = (0, 0);
    loop {
        // The run up to the next backslash (`at`), compared as it goes.
        let at = loop {
            let (Some(rb), Some(wb)) = (b.get(i..i + 8), w.get(j..j + 8)) else {
                // Fewer than eight bytes left on a side: the rest of the run at once.
                let Some(k) = b[i..].iter().position(|&c| c == b'\\') else {
                    return b[i..] == w[j..];
                };
                if w.get(j..j + k) != Some(&b[i..i + k]) {
                    return false;
                }
                j += k;
                break i + k;
            };
            let r = u64::from_le_bytes(rb.try_into().expect("eight bytes"));
            let k = before_backslash(r);
            let mask = if k == 8 { !0 } else { (1u64 << (8 * k)) - 1 };
            if (r ^ u64::from_le_bytes(wb.try_into().expect("eight bytes"))) & mask != 0 {
                return false;
            }
            j += k;
            if k < 8 {
                break i + k;
            }
            i += 8;
        };
        if let Some(c) = b.get(at + 1).and_then(|&e| simple_escape(e)) {
            if w.get(j) != Some(&c) {
                return false;
            }
            j += 1;
            i = at + 2;
            continue;
        }
        let (c, len) = escape_at(b, at);
        let mut buf = [0; 4];
        let c = c.encode_utf8(&mut buf).as_bytes();
        if w.get(j..j + c.len()) != Some(c) {
            return false;
        }
        j += c.len();
        i = at + len;
    }
}

/// The byte a two-byte escape `\e` stands for, for every `e` but `u`.
#[inline]
fn simple_escape(e: u8) -> Option<u8> {
    Some(match e {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// The character the escape at `b[at]` (a backslash) stands for, and how many bytes it
/// takes: U+FFFD for an escape JSON does not allow or a lone surrogate.
#[inline]
fn escape_at(b: &[u8], at: usize) -> (char, usize) {
    let hex = |at: usize| -> Option<u32> {
        let h = b.get(at..at + 4)?;
        h.iter().try_fold(0u32, |n, &c| {
            let d = char::from(c).to_digit(16)?;
            Some(n << 4 | d)
        })
    };
    match b.get(at + 1) {
        Some(b'u') => match hex(at + 2) {
            Some(hi @ 0xD800..=0xDBFF) => {
                match hex(at + 8).filter(|_| b.get(at + 6..at + 8) == Some(b"\\u")) {
                    Some(lo @ 0xDC00..=0xDFFF) => (
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            .unwrap_or('\u{FFFD}'),
                        12,
                    ),
                    _ => ('\u{FFFD}', 6),
                }
            }
            Some(cp) => (char::from_u32(cp).unwrap_or('\u{FFFD}'), 6),
            None => ('\u{FFFD}', 2),
        },
        Some(&e) => match simple_escape(e) {
            Some(c) => (char::from(c), 2),
            None => ('\u{FFFD}', 1),
        },
        None => ('\u{FFFD}', 1),
    }
}

/// A one in each byte of a word; the top bit of each; a backslash in each.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const BACKSLASHES: u64 = ONES * b'\\' as u64;

/// How many bytes of a word (read little-endian: its first byte lowest) come before its
/// first backslash; 8 when it has none. A byte of `x` is zero where the word has a
/// backslash; the lowest flagged byte is the first zero (a borrow only flags bytes above a
/// zero), and no flag at all counts 64 trailing zeros.
#[inline]
fn before_backslash(word: u64) -> usize {
    let x = word ^ BACKSLASHES;
    let hit = x.wrapping_sub(ONES) & !x & HIGH;
    (hit.trailing_zeros() / 8) as usize
}

/// The next backslash of `b` from `i` on, the bytes before it appended to `v`; `None`
/// when there is none (every byte from `i` on appended). Eight bytes a step, each word
/// tested for a backslash at once and copied whole (a fixed-size copy, no call to
/// `memcpy`), the copy cut back to where a backslash stands: escapes come every few
/// bytes in arguments that hold code, where a search call and a copy call a run cost more
/// than the run.
#[inline]
fn next_backslash(b: &[u8], mut i: usize, v: &mut Vec<u8>) -> Option<usize> {
    while let Some(w) = b.get(i..i + 8) {
        let w: [u8; 8] = w.try_into().expect("eight bytes");
        let k = before_backslash(u64::from_le_bytes(w));
        let len = v.len();
        v.extend_from_slice(&w);
        if k < 8 {
            v.truncate(len + k);
            return Some(i + k);
        }
        i += 8;
    }
    let rest = &b[i..];
    match rest.iter().position(|&c| c == b'\\') {
        Some(k) => {
            v.extend_from_slice(&rest[..k]);
            Some(i + k)
        }
        None => {
            v.extend_from_slice(rest);
            None
        }
    }
}

#[cfg(test)]
mod tests {

    /// The reference for [`super::unescape_into`]: a character at a time, the escapes
    /// looked up in a table of pairs and the `\\u` escapes put together by
    /// `char::decode_utf16`.
    fn unescape_reference(raw: &str) -> String {
        const PAIRS: [(char, char); 8] = [
            ('"', '"'),
            ('\\', '\\'),
            ('/', '/'),
            ('b', '\u{8}'),
            ('f', '\u{c}'),
            ('n', '\n'),
            ('r', '\r'),
            ('t', '\t'),
        ];
        // The four hex digits at `at`, as a UTF-16 unit.
        let unit = |at: usize| -> Option<u16> {
            let h = raw.get(at..at + 4)?;
            if !h.chars().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            u16::from_str_radix(h, 16).ok()
        };
        let mut out = String::new();
        let mut i = 0;
        while let Some(c) = raw[i..].chars().next() {
            if c != '\\' {
                out.push(c);
                i += c.len_utf8();
                continue;
            }
            let next = raw[i + 1..].chars().next();
            if let Some(&(_, to)) = PAIRS.iter().find(|(e, _)| Some(*e) == next) {
                out.push(to);
                i += 2;
                continue;
            }
            if next != Some('u') {
                out.push('\u{FFFD}');
                i += 1;
                continue;
            }
            let Some(first) = unit(i + 2) else {
                out.push('\u{FFFD}');
                i += 2;
                continue;
            };
            let second = raw
                .get(i + 6..i + 8)
                .filter(|&u| u == "\\u")
                .and_then(|_| unit(i + 8));
            let pair = match second {
                Some(second) if (0xD800..0xDC00).contains(&first) => {
                    char::decode_utf16([first, second]).next()
                }
                _ => None,
            };
            match pair {
                Some(Ok(c)) => {
                    out.push(c);
                    i += 12;
                }
                _ => {
                    let one = char::decode_utf16([first]).next();
                    out.push(one.and_then(Result::ok).unwrap_or('\u{FFFD}'));
                    i += 6;
                }
            }
        }
        out
    }

    /// The word test against a byte search, on words of the bytes that could fool it:
    /// a backslash, its neighbours, it with the top bit set, zero and one (a borrow from
    /// a zero byte flags the byte above it too), in every arrangement of three.
    #[test]
    fn before_backslash_finds_the_first_backslash_of_a_word() {
        let bytes = [b'\\', b'\\' - 1, b'\\' + 1, b'\\' | 0x80, 0, 1, b'a', 0xFF];
        let mut words = 0;
        for a in bytes {
            for b in bytes {
                for c in bytes {
                    for at in 0..6 {
                        let mut w = [b'x'; 8];
                        w[at..at + 3].copy_from_slice(&[a, b, c]);
                        let want = w.iter().position(|&c| c == b'\\').unwrap_or(8);
                        assert_eq!(
                            super::before_backslash(u64::from_le_bytes(w)),
                            want,
                            "{w:?}"
                        );
                        words += 1;
                    }
                }
            }
        }
        assert_eq!(words, 8 * 8 * 8 * 6);
    }

    /// The fast unescape, and the comparison in place, agree with the reference on every
    /// string of three pieces drawn from escapes valid and not, surrogates whole and cut,
    /// hex digits and multi-byte characters, with runs between them of every length
    /// around the eight-byte step.
    #[test]
    fn unescape_agrees_with_the_reference() {
        // Escapes valid and not, whole and cut, beside text and hex-looking bytes.
        let pieces: Vec<&str> = concat!(
            r#"a|é|😀|\"|\\|\/|\b|\f|\n|\r|\t|\u0041|\u00e9|\uD83D|\uDE00|\uD83D\uDE00|"#,
            r#"\ud83d\u0041|\u12|\u12G4|\u|\x|\|\é|0|F|\uFFFF|\u0000"#
        )
        .split('|')
        .collect();
        let mut n = 0;
        for &a in &pieces {
            for &b in &pieces {
                for &c in &pieces {
                    for k in [0, 1, 3, 7, 8, 9, 15, 16, 17, 40] {
                        let d = "q".repeat(k);
                        let raw = format!("{a}{d}{b}{c}{d}");
                        let mut out = String::from("kept ");
                        super::unescape_into(&raw, &mut out);
                        let want = unescape_reference(&raw);
                        assert_eq!(out, format!("kept {want}"), "{raw:?}");
                        assert!(super::decodes_to(&raw, &want), "{raw:?}");
                        // One character more, one less, one changed: never equal.
                        assert!(!super::decodes_to(&raw, &format!("{want}x")), "{raw:?}");
                        if let Some((k, c)) = want.char_indices().last() {
                            assert!(!super::decodes_to(&raw, &want[..k]), "{raw:?}");
                            let other = if c == 'y' { 'z' } else { 'y' };
                            let changed = format!("{}{other}", &want[..k]);
                            assert!(!super::decodes_to(&raw, &changed), "{raw:?}");
                        }
                        // A character changed in the middle (inside an eight-byte step).
                        let chars: Vec<char> = want.chars().collect();
                        if let Some(&c) = chars.get(chars.len() / 2) {
                            let other = if c == 'y' { 'z' } else { 'y' };
                            let mut changed = chars.clone();
                            changed[chars.len() / 2] = other;
                            let changed: String = changed.into_iter().collect();
                            assert!(!super::decodes_to(&raw, &changed), "{raw:?}");
                        }
                        n += 1;
                    }
                }
            }
        }
        assert_eq!(n, pieces.len().pow(3) * 10);
    }

    /// `simple_string` reads what `string_token` reads, the same way, on every token it
    /// takes; and it takes every token of its kind.
    #[test]
    fn simple_string_agrees_with_string_token() {
        let pieces = [
            "a", " ", "~", "\u{7f}", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t",
            "\\u0041", "\\x", "\u{e9}", "\u{1}", "\"", "\\",
        ];
        let simple = |p: &str| !matches!(p, "\\u0041" | "\\x" | "\u{e9}" | "\u{1}" | "\\" | "\\/");
        // What the escaper writes for a value: a simple token's own text.
        let escaped = |v: &str| {
            let mut e = Vec::new();
            crate::json::escape::write_inner(&mut e, v);
            String::from_utf8(e).unwrap()
        };
        let mut out = String::new();
        let mut taken = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let token = format!("\"{a}{b}{c}\",1");
                    let bytes = token.as_bytes();
                    let ours = simple_into(bytes, 0, &mut out);
                    let theirs = string_token(bytes, 0);
                    if let Some((end, was)) = ours {
                        taken += 1;
                        let (e, s) = theirs.expect(&token);
                        assert_eq!((end, was), (e, s.escaped), "{token}");
                        assert_eq!(out, s.cow(), "{token}");
                        assert_eq!(escaped(&out), s.raw, "{token}");
                    } else if [a, b, c].into_iter().all(simple) {
                        // Of its kind: a quote may end it early, as `string_token` sees.
                        assert!(theirs.is_none(), "{token}");
                    }
                }
            }
        }
        assert!(taken > 1000, "{taken}");
        // Long tokens (16 bytes at a time, the buffer refilled), with and without bytes
        // after them, and cut anywhere.
        let mut seed = 0x2545_f491_u32;
        let mut long = 0;
        for round in 0..3000 {
            let mut token = String::from("\"");
            for _ in 0..round % 97 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let p = pieces[seed as usize % pieces.len()];
                // Mostly plain runs, so that tokens get long.
                token.push_str(if seed.is_multiple_of(3) {
                    p
                } else {
                    "abcdefgh"
                });
            }
            token.push('"');
            if round % 2 == 0 {
                token.push_str(",\"after\":\"0123456789abcdef\"}");
            }
            let bytes = token.as_bytes();
            for cut in [bytes.len(), bytes.len() / 2, bytes.len().saturating_sub(3)] {
                let bytes = &bytes[..cut];
                let theirs = string_token(bytes, 0);
                match simple_into(bytes, 0, &mut out) {
                    Some((end, was)) => {
                        long += usize::from(end > 40);
                        let (e, s) = theirs.expect(&token);
                        assert_eq!((end, was), (e, s.escaped), "{token}");
                        assert_eq!(out, s.cow(), "{token}");
                        assert_eq!(escaped(&out), s.raw, "{token}");
                    }
                    None => {
                        if let Some((_, s)) = theirs {
                            // Only a kind it does not take.
                            let kind = s.raw.contains("\\u")
                                || !s.raw.is_ascii()
                                || s.raw.contains("\\x")
                                || s.raw.contains("\\/");
                            assert!(kind, "{token}");
                        }
                    }
                }
            }
        }
        assert!(long > 60, "{long}");
        assert_eq!(simple_into(b"x\"a\"", 0, &mut out), None);
        assert_eq!(simple_into(b"\"ab", 0, &mut out), None);
    }
    use super::*;

    /// [`simple_string_onto`] into an emptied `out`.
    fn simple_into(bytes: &[u8], at: usize, out: &mut String) -> Option<(usize, bool)> {
        out.clear();
        simple_string_onto(bytes, at, out)
    }

    /// `unescape` of valid string content gives serde_json's value: every escape, a
    /// surrogate pair, non-ASCII runs between escapes, runs of every length.
    #[test]
    fn unescape_agrees_with_serde_json_on_valid_content() {
        let pieces = [
            "a",
            "é",
            "日本",
            "😀",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u0041",
            "\\u00e9",
            "\\u65e5",
            "\\ud83d\\ude00",
            "\\u0000",
            " ",
        ];
        let mut seed = 0x9e37_79b9_u32;
        for n in 0..2000 {
            let mut raw = String::new();
            for _ in 0..n % 23 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                raw.push_str(pieces[seed as usize % pieces.len()]);
            }
            let want: String = serde_json::from_str(&format!("\"{raw}\"")).unwrap();
            assert_eq!(unescape(&raw), want, "{raw}");
        }
    }

    /// Content no checked token holds (the request reader's text is not checked first):
    /// each bad escape is one U+FFFD and the rest of the text is kept.
    #[test]
    fn unescape_replaces_each_bad_escape_and_keeps_the_rest() {
        let cases = [
            ("a\\xb", "a\u{FFFD}xb"),
            ("\\u+abcd", "\u{FFFD}+abcd"),
            ("\\u12", "\u{FFFD}12"),
            // A high surrogate with no `\\u` after it pairs with nothing.
            ("\\ud83dXXde00", "\u{FFFD}XXde00"),
            ("\\ud83d\\u0041", "\u{FFFD}A"),
            ("\\ude00", "\u{FFFD}"),
            ("end\\", "end\u{FFFD}"),
            ("é\\qü", "é\u{FFFD}qü"),
        ];
        for (raw, want) in cases {
            assert_eq!(unescape(raw), want, "{raw}");
        }
    }

    /// Skip every value of `text` through the cursor; the result must match serde_json's
    /// verdict on the same text.
    fn skip_all(text: &str) -> Result<(), CursorError> {
        let mut c = Cursor::new(text);
        c.skip()?;
        c.end()
    }

    #[test]
    fn skip_agrees_with_serde_json_on_containers_and_scalars() {
        let cases = [
            r#"{"a":[1,2,{"b":null}],"c":"x\"y"}"#,
            r#"[]"#,
            r#"{"a":01}"#,
            r#"{"a":1,}"#,
            r#""plain""#,
            r#""bad \x escape""#,
            r#"true "#,
            r#"nul"#,
            r#"{"a":"\u00e9\ud83d\ude00"}"#,
            r#"[1.5e3, -0, 2E-2]"#,
            r#"[1,]"#,
            r#"{"a" 1}"#,
        ];
        for text in cases {
            let ours = skip_all(text).is_ok();
            let theirs = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
            assert_eq!(ours, theirs, "{text}");
        }
        // Stricter than serde_json's skipping, like the splitter: a lone surrogate.
        assert!(skip_all(r#"["\ud800"]"#).is_err());
    }

    #[test]
    fn strings_are_borrowed_unless_escaped_and_decode_like_serde_json() {
        for raw in [
            r#""abc""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""caf\u00e9 \ud83d\ude00 é""#,
            r#""""#,
        ] {
            let mut c = Cursor::new(raw);
            let s = c.string().unwrap();
            let want: String = serde_json::from_str(raw).unwrap();
            assert_eq!(s.cow(), want, "{raw}");
            assert_eq!(matches!(s.cow(), Cow::Borrowed(_)), !raw.contains('\\'));
            assert!(s.is(&want));
        }
    }

    #[test]
    fn members_and_elements_enforce_commas_and_keys() {
        let read = |text: &str| -> Result<Vec<String>, CursorError> {
            let mut c = Cursor::new(text);
            let mut m = c.object()?;
            let mut keys = Vec::new();
            while let Some(k) = c.key(&mut m)? {
                keys.push(k.cow().into_owned());
                c.skip()?;
            }
            c.end()?;
            Ok(keys)
        };
        assert_eq!(read(r#" { "a" : 1 , "b":[] } "#).unwrap(), ["a", "b"]);
        assert_eq!(read("{}").unwrap(), Vec::<String>::new());
        for bad in [
            "{,}",
            r#"{"a":1,}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"a"}"#,
            "{1:2}",
            "{",
            r#"{"a":1}x"#,
        ] {
            let e = read(bad).unwrap_err();
            assert!(e.offset <= bad.len(), "{bad}: {e:?}");
        }
        let mut c = Cursor::new("[1, 2 ,3]");
        let mut e = c.array().unwrap();
        let mut n = 0;
        while c.element(&mut e).unwrap() {
            c.skip().unwrap();
            n += 1;
        }
        assert_eq!(n, 3);
        let mut c = Cursor::new("[1 2]");
        let mut e = c.array().unwrap();
        assert!(c.element(&mut e).unwrap());
        c.skip().unwrap();
        assert!(c.element(&mut e).is_err());
    }

    #[test]
    fn opt_u32_takes_plain_integers_only() {
        for (text, want) in [
            ("0", Ok(Some(0))),
            ("4294967295", Ok(Some(u32::MAX))),
            ("null", Ok(None)),
            ("4294967296", Err(())),
            ("-1", Err(())),
            ("1.0", Err(())),
            ("1e2", Err(())),
            ("\"1\"", Err(())),
        ] {
            let text = format!("{text},");
            let got = Cursor::new(&text).opt_u32().map_err(|_| ());
            assert_eq!(got, want, "{text}");
        }
    }
}
