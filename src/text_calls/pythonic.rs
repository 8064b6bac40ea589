//! Llama's pythonic calls (Llama 3.2, 4): `[f(a=1, b='x'), g()]`, a Python list of calls
//! with keyword arguments whose values are Python literals. Read into JSON here: strings
//! (either quote, with escapes), integers and floats, `True`/`False`/`None`, lists, tuples
//! and dicts with string keys. Anything else (a positional argument, an expression, a
//! variable) is not a call.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::{Tools, MAX_NAME_BYTES};

/// Containers nested deeper than this are not read (the reader recurses).
const MAX_DEPTH: usize = 64;

/// Whether the text at a `[` opens a pythonic call list: `[` and a declared tool's name
/// and `(`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Open {
    /// It does.
    Yes,
    /// It may, when more text comes (the text ends inside a declared tool's name).
    Maybe,
    /// It does not.
    No,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Whether `rest` (from a `[`) opens a call list of `tools`.
pub(super) fn opens(rest: &str, tools: &Tools) -> Open {
    let name_part = &rest.as_bytes()[1..];
    let n = name_part
        .iter()
        .take(MAX_NAME_BYTES + 1)
        .take_while(|b| is_name_byte(**b))
        .count();
    if n > MAX_NAME_BYTES {
        return Open::No;
    }
    let name = &rest[1..1 + n];
    match name_part.get(n) {
        Some(b'(') if tools.contains(name) => Open::Yes,
        None if tools.has_prefix(name) => Open::Maybe,
        _ => Open::No,
    }
}

/// Where a call list ends: brackets counted outside strings, from `pos` on (both kept
/// between deltas, so each byte is looked at once).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lex {
    depth: u32,
    /// The quote of the string the scan is in (0: none).
    quote: u8,
    escape: bool,
}

impl Lex {
    /// A list whose `[` was read.
    pub(super) fn opened() -> Self {
        Lex {
            depth: 1,
            ..Lex::default()
        }
    }

    /// The end of the list (past its `]`), once `call` holds it; `pos` moves to where the
    /// scan stopped.
    pub(super) fn end(&mut self, call: &str, pos: &mut usize) -> Option<usize> {
        let bytes = call.as_bytes();
        while *pos < bytes.len() {
            let b = bytes[*pos];
            *pos += 1;
            if self.quote != 0 {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == self.quote {
                    self.quote = 0;
                }
                continue;
            }
            match b {
                b'\'' | b'"' => self.quote = b,
                b'[' | b'(' | b'{' => self.depth += 1,
                b']' | b')' | b'}' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(*pos);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// The calls of a list `[f(a=1), g()]`: each name, and its keyword arguments as a JSON
/// object's text (in the order written).
pub(super) fn calls(list: &str) -> Result<Vec<(String, String)>, &'static str> {
    let mut r = Reader {
        s: list.as_bytes(),
        at: 0,
    };
    r.ws();
    r.expect(b'[')?;
    let mut calls = Vec::new();
    loop {
        r.ws();
        if r.eat(b']') {
            break;
        }
        calls.push(r.call()?);
        r.ws();
        if r.eat(b',') {
            continue;
        }
        r.expect(b']')?;
        break;
    }
    r.ws();
    if r.at != r.s.len() {
        return Err("text after the call list");
    }
    Ok(calls)
}

/// A Python list of dicts, `[{'name': 'f', 'arguments': {'k': 1}}, ...]` (Sarashina's
/// calls): each dict one call, read as JSON's (see [`super::json_calls`]).
pub(super) fn dict_calls(list: &str) -> Result<Vec<(String, String)>, &'static str> {
    let mut r = Reader {
        s: list.as_bytes(),
        at: 0,
    };
    r.ws();
    if r.peek() != Some(b'[') {
        return Err("no list of calls");
    }
    let mut json = String::new();
    r.value(&mut json, 0)?;
    r.ws();
    if r.at != r.s.len() {
        return Err("text after the call list");
    }
    super::json_calls(&json, &["name"], &["arguments"])
}

struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let yes = self.peek() == Some(b);
        self.at += usize::from(yes);
        yes
    }

    fn expect(&mut self, b: u8) -> Result<(), &'static str> {
        if self.eat(b) {
            Ok(())
        } else {
            Err("not a pythonic call list")
        }
    }

    fn name(&mut self) -> Result<&'a str, &'static str> {
        let s: &'a [u8] = self.s;
        let from = self.at;
        while self.peek().is_some_and(is_name_byte) {
            self.at += 1;
        }
        let name = std::str::from_utf8(&s[from..self.at]).map_err(|_| "a bad name")?;
        if name.is_empty() {
            return Err("a call without a name");
        }
        Ok(name)
    }

    /// `f(a=1, b='x')`.
    fn call(&mut self) -> Result<(String, String), &'static str> {
        let name = self.name()?.to_string();
        self.expect(b'(')?;
        let mut args = String::from("{");
        // A set: a call of many keywords costs one lookup per keyword.
        let mut keys: HashSet<&str> = HashSet::new();
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            if !self.peek().is_some_and(is_name_byte) {
                return Err("a positional argument, not a keyword");
            }
            let key = self.name()?;
            if key.bytes().any(|b| matches!(b, b'-' | b'.')) || key.as_bytes()[0].is_ascii_digit() {
                return Err("a positional argument or an expression, not a keyword");
            }
            if !keys.insert(key) {
                return Err("a keyword argument given twice");
            }
            if keys.len() > 1 {
                args.push(',');
            }
            json_string(&mut args, key);
            args.push(':');
            self.ws();
            self.expect(b'=')
                .map_err(|_| "a positional argument, not a keyword")?;
            self.ws();
            self.value(&mut args, 0)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(b')')?;
            break;
        }
        args.push('}');
        Ok((name, args))
    }

    /// A Python literal, written to `out` as JSON.
    fn value(&mut self, out: &mut String, depth: usize) -> Result<(), &'static str> {
        if depth > MAX_DEPTH {
            return Err("values nested too deep");
        }
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                let s = self.string(q)?;
                json_string(out, &s);
                Ok(())
            }
            Some(b'[') => self.items(out, b']', depth),
            Some(b'(') => self.items(out, b')', depth),
            Some(b'{') => self.dict(out, depth),
            Some(b'-' | b'+' | b'.' | b'0'..=b'9') => self.number(out),
            _ => {
                let word = self.name()?;
                let json = match word {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    _ => return Err("a value that is not a literal"),
                };
                out.push_str(json);
                Ok(())
            }
        }
    }

    /// A list or a tuple, as an array.
    fn items(&mut self, out: &mut String, close: u8, depth: usize) -> Result<(), &'static str> {
        self.at += 1;
        out.push('[');
        let mut first = true;
        loop {
            self.ws();
            if self.eat(close) {
                break;
            }
            if !std::mem::replace(&mut first, false) {
                out.push(',');
            }
            self.value(out, depth + 1)?;
            self.ws();
            if !self.eat(b',') {
                self.expect(close)?;
                break;
            }
        }
        out.push(']');
        Ok(())
    }

    /// A dict with string keys, as an object.
    fn dict(&mut self, out: &mut String, depth: usize) -> Result<(), &'static str> {
        self.at += 1;
        out.push('{');
        let mut keys: HashSet<String> = HashSet::new();
        loop {
            self.ws();
            if self.eat(b'}') {
                break;
            }
            let Some(q @ (b'\'' | b'"')) = self.peek() else {
                return Err("a dict key that is not a string");
            };
            let key = self.string(q)?;
            if !keys.is_empty() {
                out.push(',');
            }
            json_string(out, &key);
            if !keys.insert(key) {
                return Err("a dict key given twice");
            }
            self.ws();
            self.expect(b':')?;
            self.ws();
            out.push(':');
            self.value(out, depth + 1)?;
            self.ws();
            if !self.eat(b',') {
                self.expect(b'}')?;
                break;
            }
        }
        out.push('}');
        Ok(())
    }

    /// A string in quote `q`, its escapes read.
    fn string(&mut self, q: u8) -> Result<String, &'static str> {
        self.at += 1;
        let mut s = Vec::new();
        loop {
            let b = self.peek().ok_or("a string that does not end")?;
            self.at += 1;
            match b {
                b'\\' => {
                    let e = self.peek().ok_or("a string that does not end")?;
                    self.at += 1;
                    let c = match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'0' => '\0',
                        b'\\' | b'\'' | b'"' => e as char,
                        b'x' => self.hex(2)?,
                        b'u' => self.hex(4)?,
                        b'U' => self.hex(8)?,
                        // Python keeps an unknown escape as written.
                        _ => {
                            s.extend_from_slice(&[b'\\', e]);
                            continue;
                        }
                    };
                    let mut buf = [0; 4];
                    s.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                b'\n' => return Err("a line break inside a string"),
                b if b == q => break,
                b => s.push(b),
            }
        }
        String::from_utf8(s).map_err(|_| "a string that is not UTF-8")
    }

    fn hex(&mut self, n: usize) -> Result<char, &'static str> {
        let digits = self.s.get(self.at..self.at + n).ok_or("a short escape")?;
        self.at += n;
        let text = std::str::from_utf8(digits).map_err(|_| "a bad escape")?;
        let code = u32::from_str_radix(text, 16).map_err(|_| "a bad escape")?;
        char::from_u32(code).ok_or("an escape of no character")
    }

    /// An integer or a float, written as JSON (`+1` as `1`, `.5` as `0.5`, `1.` as `1.0`).
    fn number(&mut self, out: &mut String) -> Result<(), &'static str> {
        let from = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.' | b'_'))
        {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.s[from..self.at]).map_err(|_| "a bad number")?;
        let t = text.strip_prefix('+').unwrap_or(text);
        let (sign, digits) = match t.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", t),
        };
        let is_int = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if is_int {
            if digits.len() > 1 && digits.starts_with('0') {
                return Err("an integer with a leading zero");
            }
            out.push_str(sign);
            out.push_str(digits);
            return Ok(());
        }
        match digits.parse::<f64>() {
            Ok(f) if f.is_finite() && digits.bytes().any(|b| b.is_ascii_digit()) => {
                let _ = write!(out, "{sign}{f:?}");
                Ok(())
            }
            _ => Err("a value that is not a literal"),
        }
    }
}

/// `s` as a JSON string.
fn json_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::String(s.to_string()).to_string());
}

/// The first tool a pythonic list names, read leniently (for a failure's report only).
pub(super) fn call_name(raw: &str) -> Option<String> {
    let rest = raw
        .strip_prefix("<|python_start|>")
        .unwrap_or(raw)
        .trim_start();
    let rest = rest.strip_prefix('[')?.trim_start();
    let end = rest.bytes().position(|b| !is_name_byte(b))?;
    (end > 0 && rest[end..].starts_with('(')).then(|| rest[..end].to_string())
}
