//! Gemma 4's calls: `<|tool_call>call:NAME{key:value,...}<tool_call|>`, values written in
//! the model's own notation: a string between `<|"|>` delimiters (its bytes as they are:
//! no escapes, so a string may hold anything but the delimiter, the closing marker
//! included), a number, `true`, `false`, `null`, an object `{key:value,...}` with bare keys,
//! an array `[value,...]`. The name may come without `call` (`:NAME`) and the arguments in
//! parentheses; the call ends where its arguments close (the closing marker after them,
//! when it comes, is the call's too).

use serde_json::{Map, Value};

use super::{Args, Tools};

/// The string delimiter.
const QUOTE: &str = "<|\"|>";
/// The closing marker.
pub(super) const CLOSE: &str = "<tool_call|>";

/// The deepest a value may nest (deeper is a failure, not a deep recursion).
const MAX_DEPTH: usize = 64;

/// How far the end of a call's markup has been looked for, each byte once.
#[derive(Clone, Debug, Default)]
pub(super) struct Scan {
    /// The next byte to read (an index into the call's markup).
    at: usize,
    /// Open brackets outside strings.
    depth: u32,
    /// Inside a `<|"|>` string.
    in_str: bool,
    /// Whether the arguments' first bracket was seen.
    opened: bool,
    /// Where the arguments closed.
    closed: Option<usize>,
}

impl Scan {
    /// The end of the call's markup (past the arguments, and past the closing marker when
    /// it follows them), `None` while it has not come. `whole` is where the markup would
    /// end if the text ended now (the arguments closed, and only whitespace or a part of
    /// the closing marker came after them). `Err` at a byte the markup cannot hold (a
    /// closing bracket with none open).
    pub(super) fn end(
        &mut self,
        call: &str,
        from: usize,
        whole: &mut Option<usize>,
    ) -> Option<Result<usize, usize>> {
        let b = call.as_bytes();
        self.at = self.at.max(from);
        while self.closed.is_none() {
            let i = self.at;
            let &c = b.get(i)?;
            if c == b'<' {
                let rest = &call[i..];
                if rest.starts_with(QUOTE) {
                    self.in_str = !self.in_str;
                    self.at = i + QUOTE.len();
                    continue;
                }
                if QUOTE.starts_with(rest) {
                    // A delimiter the delta may have cut: the next one says.
                    return None;
                }
            }
            if !self.in_str {
                match c {
                    b'{' | b'(' | b'[' => {
                        self.opened = true;
                        self.depth += 1;
                    }
                    b'}' | b')' | b']' => {
                        if self.depth == 0 {
                            return Some(Err(i + 1));
                        }
                        self.depth -= 1;
                        if self.depth == 0 {
                            self.closed = Some(i + 1);
                        }
                    }
                    // The name's line ends without arguments: not a call of this form.
                    b'\n' if !self.opened => return Some(Err(i + 1)),
                    _ => {}
                }
            }
            self.at = i + 1;
        }
        let e = self.closed.expect("closed above");
        let rest = &call[e..];
        let t = rest.trim_start();
        let at = call.len() - t.len();
        if t.starts_with(CLOSE) {
            *whole = None;
            Some(Ok(at + CLOSE.len()))
        } else if CLOSE.starts_with(t) {
            *whole = Some(e);
            None
        } else {
            *whole = None;
            Some(Ok(e))
        }
    }
}

/// The call in `body` (the markup after the opening marker, without the closing one): its
/// name and arguments, each top-level value not written as a string typed by the tool's
/// schema.
pub(super) fn call(body: &str, tools: &Tools) -> Result<(String, String), &'static str> {
    let rest = body.strip_prefix("call").unwrap_or(body);
    let rest = rest.strip_prefix(':').ok_or("no : before the name")?;
    let open = rest.find(['{', '(']).ok_or("no arguments after the name")?;
    let name = rest[..open].trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err("the call has no name");
    }
    let close = if rest.as_bytes()[open] == b'{' {
        '}'
    } else {
        ')'
    };
    let mut r = Reader {
        s: &rest[open + 1..],
    };
    let mut args = Args::default();
    r.ws();
    if !r.eat(close) {
        loop {
            let key = r.key()?;
            let value = match r.value(0)? {
                Raw::Str(s) => Value::String(s),
                Raw::Bare(t) => super::typed(&t, tools.param_type(name, &key).or(Some("json"))),
                Raw::Value(v) => v,
            };
            args.add(&key, value)?;
            r.ws();
            if r.eat(',') {
                continue;
            }
            if r.eat(close) {
                break;
            }
            return Err("expected , or the end of the arguments");
        }
    }
    if !r.s.trim().is_empty() {
        return Err("text after the arguments");
    }
    Ok((name.to_string(), args.finish()?))
}

/// A value as written: a delimited string, a bare scalar's text, or a container.
enum Raw {
    Str(String),
    Bare(String),
    Value(Value),
}

struct Reader<'a> {
    s: &'a str,
}

impl Reader<'_> {
    fn ws(&mut self) {
        self.s = self.s.trim_start();
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        match self.s.strip_prefix(c) {
            Some(r) => {
                self.s = r;
                true
            }
            None => false,
        }
    }

    /// A key: a delimited string, or the bare text up to its `:`.
    fn key(&mut self) -> Result<String, &'static str> {
        self.ws();
        let key = if let Some(r) = self.s.strip_prefix(QUOTE) {
            let (k, r) = r.split_once(QUOTE).ok_or("a key's string not closed")?;
            self.s = r;
            k.to_string()
        } else {
            let end = self
                .s
                .find([':', ',', '}', ')', ']', '<', '\n'])
                .ok_or("a key without :")?;
            let k = self.s[..end].trim();
            self.s = &self.s[end..];
            k.to_string()
        };
        if key.is_empty() {
            return Err("an empty key");
        }
        if !self.eat(':') {
            return Err("a key without :");
        }
        Ok(key)
    }

    fn value(&mut self, depth: usize) -> Result<Raw, &'static str> {
        if depth > MAX_DEPTH {
            return Err("values nested too deep");
        }
        self.ws();
        if let Some(r) = self.s.strip_prefix(QUOTE) {
            let (v, r) = r.split_once(QUOTE).ok_or("a string not closed")?;
            self.s = r;
            return Ok(Raw::Str(v.to_string()));
        }
        if let Some(r) = self.s.strip_prefix('{') {
            self.s = r;
            let mut m = Map::new();
            if !self.eat('}') {
                loop {
                    let k = self.key()?;
                    let v = self.nested(depth + 1)?;
                    if m.insert(k, v).is_some() {
                        return Err("a key given twice");
                    }
                    if self.eat(',') {
                        continue;
                    }
                    if self.eat('}') {
                        break;
                    }
                    return Err("expected , or } in an object");
                }
            }
            return Ok(Raw::Value(Value::Object(m)));
        }
        if let Some(r) = self.s.strip_prefix('[') {
            self.s = r;
            let mut a = Vec::new();
            if !self.eat(']') {
                loop {
                    a.push(self.nested(depth + 1)?);
                    if self.eat(',') {
                        continue;
                    }
                    if self.eat(']') {
                        break;
                    }
                    return Err("expected , or ] in an array");
                }
            }
            return Ok(Raw::Value(Value::Array(a)));
        }
        let end = self
            .s
            .find([',', '}', ')', ']'])
            .ok_or("a value without its end")?;
        let t = self.s[..end].trim();
        self.s = &self.s[end..];
        if t.is_empty() {
            return Err("an empty value");
        }
        Ok(Raw::Bare(t.to_string()))
    }

    /// A value inside a container: a bare scalar must be JSON's (a number, `true`,
    /// `false`, `null`).
    fn nested(&mut self, depth: usize) -> Result<Value, &'static str> {
        Ok(match self.value(depth)? {
            Raw::Str(s) => Value::String(s),
            Raw::Value(v) => v,
            Raw::Bare(t) => serde_json::from_str::<Value>(&t)
                .ok()
                .filter(|v| !v.is_object() && !v.is_array() && !v.is_string())
                .ok_or("a bare value that is no number, boolean or null")?,
        })
    }
}
