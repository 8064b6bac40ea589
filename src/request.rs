//! The request side: tool calls in a request's history whose arguments a provider would
//! refuse, found ([`check`]) and repaired losslessly ([`repair`]).
//!
//! A tool loop sends the model's calls back in the next request. When the model wrote broken
//! arguments (`{"a":1`, two objects glued, an array, nothing), many servers refuse the whole
//! request (`400 invalid tool call arguments`, DashScope's "must be in JSON format"): no
//! other provider would take it either, and the agent is stuck. [`repair`] replaces each such
//! argument with one JSON object that keeps the raw text, `{"INVALID_JSON": "<raw>"}` — the
//! convention Anthropic documents for sending invalid tool input back — so the request goes
//! through and the model can still see what it wrote. This is what the classifier's
//! `request_repair` hint for replayed arguments asks for.
//!
//! Three request shapes are read, wherever they occur in the body:
//! - OpenAI chat: `messages[].tool_calls[].function.arguments` (a string of JSON text);
//! - OpenAI Responses: `input[]` items of type `function_call`, their `arguments` (the same);
//! - Anthropic Messages: `messages[].content[]` blocks of type `tool_use`, their `input` (an
//!   object).
//!
//! ```
//! use serde_json::json;
//! use toolstream::request::{repair, Problem};
//!
//! let mut body = json!({"model": "m", "messages": [
//!     {"role": "user", "content": "hi"},
//!     {"role": "assistant", "tool_calls": [
//!         {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}{\"b\":2}"}}
//!     ]},
//!     {"role": "tool", "tool_call_id": "c1", "content": "ok"},
//! ]});
//! let fixed = repair(&mut body);
//! assert_eq!(fixed[0].problem, Problem::Glued);
//! assert_eq!(fixed[0].path, "/messages/1/tool_calls/0/function/arguments");
//! assert_eq!(
//!     body["messages"][1]["tool_calls"][0]["function"]["arguments"],
//!     r#"{"INVALID_JSON":"{\"a\":1}{\"b\":2}"}"#
//! );
//! ```

use std::fmt;

use bytes::Bytes;
use serde_json::{json, Value};

use crate::json::{Mode, Splitter};

/// What is wrong with one call's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Problem {
    /// Not valid JSON.
    Invalid,
    /// More than one JSON value, glued (`{"a":1}{"b":2}`).
    Glued,
    /// One JSON value that is not an object (an array, a string, a number...).
    NotObject,
    /// Nothing, or only whitespace.
    Empty,
    /// Where JSON text (a string) belongs, something else (an object given as an object is
    /// turned into its text, losing nothing).
    NotText,
}

impl Problem {
    /// `invalid`, `glued`, `not_object`, `empty` or `not_text`.
    pub fn as_str(self) -> &'static str {
        match self {
            Problem::Invalid => "invalid",
            Problem::Glued => "glued",
            Problem::NotObject => "not_object",
            Problem::Empty => "empty",
            Problem::NotText => "not_text",
        }
    }
}

/// One call whose arguments are (or were, after [`repair`]) not one JSON object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where, as a JSON Pointer into the request (`/messages/3/tool_calls/0/function/arguments`).
    pub path: String,
    /// What was wrong.
    pub problem: Problem,
    /// The tool's name, if the call has one.
    pub tool: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.path, self.problem.as_str())?;
        if !self.tool.is_empty() {
            write!(f, ", tool {}", self.tool)?;
        }
        f.write_str(")")
    }
}

/// The calls of `request` whose arguments a provider would refuse. Nothing is changed.
pub fn check(request: &Value) -> Vec<Finding> {
    let mut copy = request.clone();
    repair(&mut copy)
}

/// Repair every call of `request` whose arguments are not one JSON object, in place, and say
/// which: JSON text that is not one object becomes `{"INVALID_JSON": "<the raw text>"}`'s
/// text (an Anthropic `input` that is not an object becomes that object); an object where
/// the text belongs becomes its text. Everything else is left as it is.
pub fn repair(request: &mut Value) -> Vec<Finding> {
    let mut found = Vec::new();
    if let Some(messages) = request.get_mut("messages").and_then(Value::as_array_mut) {
        for (m, message) in messages.iter_mut().enumerate() {
            if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
                for (c, call) in calls.iter_mut().enumerate() {
                    let tool = name(call.pointer("/function/name"));
                    if let Some(args) = call.pointer_mut("/function/arguments") {
                        let path = format!("/messages/{m}/tool_calls/{c}/function/arguments");
                        text_arguments(args, path, tool, &mut found);
                    }
                }
            }
            if let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) {
                for (b, block) in blocks.iter_mut().enumerate() {
                    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                        continue;
                    }
                    let tool = name(block.get("name"));
                    if let Some(input) = block.get_mut("input") {
                        let path = format!("/messages/{m}/content/{b}/input");
                        object_input(input, path, tool, &mut found);
                    }
                }
            }
        }
    }
    if let Some(items) = request.get_mut("input").and_then(Value::as_array_mut) {
        for (i, item) in items.iter_mut().enumerate() {
            if item.get("type").and_then(Value::as_str) != Some("function_call") {
                continue;
            }
            let tool = name(item.get("name"));
            if let Some(args) = item.get_mut("arguments") {
                text_arguments(args, format!("/input/{i}/arguments"), tool, &mut found);
            }
        }
    }
    found
}

fn name(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

/// How much of an arguments text [`judge`] hands the splitter at a time.
const JUDGE_PIECE: usize = 4 << 10;

/// What JSON text is, as arguments.
fn judge(text: &str) -> Option<Problem> {
    if text.trim().is_empty() {
        return Some(Problem::Empty);
    }
    // Fed a piece at a time and stopped at the second value: a text of a million small
    // values (`1 1 1 ...`) costs no more than its bytes.
    let mut s = Splitter::new(Mode::Any);
    let mut values = Vec::new();
    let bytes = Bytes::copy_from_slice(text.as_bytes());
    let mut ok = Ok(());
    for at in (0..bytes.len()).step_by(JUDGE_PIECE) {
        let piece = bytes.slice(at..bytes.len().min(at + JUDGE_PIECE));
        ok = s.push(piece, &mut values);
        if ok.is_err() || values.len() > 1 {
            break;
        }
    }
    if ok.is_ok() && values.len() <= 1 {
        ok = s.finish().map(|last| values.extend(last));
    }
    match ok {
        Err(_) => Some(Problem::Invalid),
        Ok(()) if values.len() > 1 => Some(Problem::Glued),
        Ok(())
            if values
                .first()
                .is_some_and(|v| v.bytes().first() == Some(&b'{')) =>
        {
            None
        }
        Ok(()) => Some(Problem::NotObject),
    }
}

fn wrapped(raw: &str) -> Value {
    json!({ "INVALID_JSON": raw })
}

/// Arguments carried as JSON text (OpenAI chat, Responses).
fn text_arguments(args: &mut Value, path: String, tool: String, found: &mut Vec<Finding>) {
    let problem = match args {
        Value::String(text) => match judge(text) {
            None => return,
            Some(p) => {
                *args = Value::String(wrapped(text).to_string());
                p
            }
        },
        Value::Object(_) => {
            *args = Value::String(args.to_string());
            Problem::NotText
        }
        other => {
            let raw = other.to_string();
            *other = Value::String(wrapped(&raw).to_string());
            Problem::NotObject
        }
    };
    found.push(Finding {
        path,
        problem,
        tool,
    });
}

/// Arguments carried as a JSON value (Anthropic's `input`).
fn object_input(input: &mut Value, path: String, tool: String, found: &mut Vec<Finding>) {
    let problem = match input {
        Value::Object(_) => return,
        Value::String(text) => match judge(text) {
            // An object's text where the object belongs: the object.
            None => {
                *input = serde_json::from_str(text).unwrap_or_else(|_| wrapped(text));
                Problem::NotText
            }
            Some(p) => {
                *input = wrapped(text);
                p
            }
        },
        other => {
            let raw = other.to_string();
            *other = wrapped(&raw);
            Problem::NotObject
        }
    };
    found.push(Finding {
        path,
        problem,
        tool,
    });
}

/// Why a request body could not be read for [`repair_bytes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The byte offset where reading stopped.
    pub offset: usize,
    /// What was wrong there.
    pub what: &'static str,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

impl std::error::Error for ReadError {}

/// What [`repair_bytes`] found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// The repaired body, or `None` when nothing needed repair (send the body as it is).
    pub body: Option<Vec<u8>>,
    /// Each call repaired, as [`repair`] reports them.
    pub found: Vec<Finding>,
}

/// [`repair`] on a request body's bytes, for a gateway: the same calls found and repaired
/// the same way, everything else kept byte for byte (nothing is re-serialised), in time
/// and memory in proportion to the body, whatever it holds. Only the members on the three
/// paths are read; everything else is skipped by where it ends, so a body is read whatever
/// RFC 8259's grammar allows in it — lone surrogate escapes, numbers out of a float's
/// range, nesting of any depth — none of which a tree reader such as serde_json takes.
/// An arguments string is judged as [`repair`] judges it; its replacement keeps its text
/// as it came, escapes and all.
///
/// # Errors
///
/// [`ReadError`] when the body is not UTF-8 or not a JSON object whose paths can be
/// followed (an unterminated string, a member without a value, ...): nothing is repaired,
/// and the caller should say so.
pub fn repair_bytes(body: &[u8]) -> Result<Repaired, ReadError> {
    use crate::json::cursor::Cursor;
    let text = std::str::from_utf8(body).map_err(|e| ReadError {
        offset: e.valid_up_to(),
        what: "the body is not UTF-8",
    })?;
    let mut w = Walk {
        c: Cursor::new(text),
        edits: Vec::new(),
        found: Vec::new(),
    };
    w.request().map_err(|e| ReadError {
        offset: e.offset,
        what: e.what,
    })?;
    if w.edits.is_empty() {
        return Ok(Repaired::default());
    }
    let mut out = Vec::with_capacity(body.len() + w.edits.len() * 32);
    let mut at = 0;
    for (start, end, with) in &w.edits {
        out.extend_from_slice(&body[at..*start]);
        out.extend_from_slice(with.as_bytes());
        at = *end;
    }
    out.extend_from_slice(&body[at..]);
    Ok(Repaired {
        body: Some(out),
        found: w.found,
    })
}

/// The walk of [`repair_bytes`]: the edits (byte span, replacement) in order.
struct Walk<'a> {
    c: crate::json::cursor::Cursor<'a>,
    edits: Vec<(usize, usize, String)>,
    found: Vec<Finding>,
}

type Step = Result<(), crate::json::cursor::CursorError>;

impl<'a> Walk<'a> {
    /// A value's raw text and where it starts.
    fn value(&mut self) -> Result<(usize, &'a str), crate::json::cursor::CursorError> {
        let raw = self.c.skip_lenient()?;
        let start = raw.as_ptr() as usize - self.c.text().as_ptr() as usize;
        Ok((start, raw))
    }

    /// A string member's decoded value, if it is a string (else skipped).
    fn string(&mut self) -> Result<Option<String>, crate::json::cursor::CursorError> {
        let (_, raw) = self.value()?;
        Ok(raw
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .map(crate::json::cursor::unescape))
    }

    fn request(&mut self) -> Step {
        let mut m = self.c.object()?;
        while let Some(k) = self.c.key(&mut m)? {
            match (&*k.cow(), self.c.peek()) {
                ("messages", Some(b'[')) => {
                    let mut e = self.c.array()?;
                    let mut i = 0;
                    while self.c.element(&mut e)? {
                        self.message(i)?;
                        i += 1;
                    }
                }
                ("input", Some(b'[')) => {
                    let mut e = self.c.array()?;
                    let mut i = 0;
                    while self.c.element(&mut e)? {
                        self.item(i)?;
                        i += 1;
                    }
                }
                _ => {
                    self.c.skip_lenient()?;
                }
            }
        }
        self.c.end()
    }

    fn message(&mut self, m: usize) -> Step {
        if self.c.peek() != Some(b'{') {
            return self.c.skip_lenient().map(drop);
        }
        let mut o = self.c.object()?;
        while let Some(k) = self.c.key(&mut o)? {
            match (&*k.cow(), self.c.peek()) {
                ("tool_calls", Some(b'[')) => {
                    let mut e = self.c.array()?;
                    let mut i = 0;
                    while self.c.element(&mut e)? {
                        self.call(m, i)?;
                        i += 1;
                    }
                }
                ("content", Some(b'[')) => {
                    let mut e = self.c.array()?;
                    let mut i = 0;
                    while self.c.element(&mut e)? {
                        self.block(m, i)?;
                        i += 1;
                    }
                }
                _ => {
                    self.c.skip_lenient()?;
                }
            }
        }
        Ok(())
    }

    /// `messages[m].tool_calls[c]`: `function.arguments`, JSON text.
    fn call(&mut self, m: usize, c: usize) -> Step {
        if self.c.peek() != Some(b'{') {
            return self.c.skip_lenient().map(drop);
        }
        let mut o = self.c.object()?;
        let (mut name, mut args) = (None, None);
        while let Some(k) = self.c.key(&mut o)? {
            if !k.is("function") || self.c.peek() != Some(b'{') {
                self.c.skip_lenient()?;
                continue;
            }
            let mut f = self.c.object()?;
            while let Some(k) = self.c.key(&mut f)? {
                match &*k.cow() {
                    "name" => name = self.string()?,
                    "arguments" => args = Some(self.value()?),
                    _ => {
                        self.c.skip_lenient()?;
                    }
                }
            }
        }
        if let Some((start, raw)) = args {
            let path = format!("/messages/{m}/tool_calls/{c}/function/arguments");
            self.text_arguments(start, raw, path, name.unwrap_or_default());
        }
        Ok(())
    }

    /// `messages[m].content[b]`: a `tool_use` block's `input`, an object.
    fn block(&mut self, m: usize, b: usize) -> Step {
        if self.c.peek() != Some(b'{') {
            return self.c.skip_lenient().map(drop);
        }
        let mut o = self.c.object()?;
        let (mut ty, mut name, mut input) = (None, None, None);
        while let Some(k) = self.c.key(&mut o)? {
            match &*k.cow() {
                "type" => ty = self.string()?,
                "name" => name = self.string()?,
                "input" => input = Some(self.value()?),
                _ => {
                    self.c.skip_lenient()?;
                }
            }
        }
        if let (Some("tool_use"), Some((start, raw))) = (ty.as_deref(), input) {
            let path = format!("/messages/{m}/content/{b}/input");
            self.object_input(start, raw, path, name.unwrap_or_default());
        }
        Ok(())
    }

    /// `input[i]`: a `function_call` item's `arguments`, JSON text.
    fn item(&mut self, i: usize) -> Step {
        if self.c.peek() != Some(b'{') {
            return self.c.skip_lenient().map(drop);
        }
        let mut o = self.c.object()?;
        let (mut ty, mut name, mut args) = (None, None, None);
        while let Some(k) = self.c.key(&mut o)? {
            match &*k.cow() {
                "type" => ty = self.string()?,
                "name" => name = self.string()?,
                "arguments" => args = Some(self.value()?),
                _ => {
                    self.c.skip_lenient()?;
                }
            }
        }
        if let (Some("function_call"), Some((start, raw))) = (ty.as_deref(), args) {
            let path = format!("/input/{i}/arguments");
            self.text_arguments(start, raw, path, name.unwrap_or_default());
        }
        Ok(())
    }

    /// Arguments carried as JSON text: what [`text_arguments`] does to a tree, on the bytes.
    fn text_arguments(&mut self, start: usize, raw: &str, path: String, tool: String) {
        let (with, problem) = match raw.as_bytes()[0] {
            b'"' => {
                let content = &raw[1..raw.len() - 1];
                match judge(&crate::json::cursor::unescape(content)) {
                    None => return,
                    Some(p) => (string_literal(&wrapped_escaped(content)), p),
                }
            }
            b'{' => (string_literal(raw), Problem::NotText),
            _ => (
                string_literal(&wrapped_escaped(&escape_content(raw))),
                Problem::NotObject,
            ),
        };
        self.edit(start, raw, with, path, problem, tool);
    }

    /// Arguments carried as a JSON value (Anthropic's `input`): [`object_input`] on bytes.
    fn object_input(&mut self, start: usize, raw: &str, path: String, tool: String) {
        let (with, problem) = match raw.as_bytes()[0] {
            b'{' => return,
            b'"' => {
                let content = &raw[1..raw.len() - 1];
                let text = crate::json::cursor::unescape(content);
                match judge(&text) {
                    // An object's text where the object belongs: the object.
                    None => (text.trim().to_string(), Problem::NotText),
                    Some(p) => (wrapped_escaped(content), p),
                }
            }
            _ => (wrapped_escaped(&escape_content(raw)), Problem::NotObject),
        };
        self.edit(start, raw, with, path, problem, tool);
    }

    fn edit(
        &mut self,
        start: usize,
        raw: &str,
        with: String,
        path: String,
        problem: Problem,
        tool: String,
    ) {
        self.edits.push((start, start + raw.len(), with));
        self.found.push(Finding {
            path,
            problem,
            tool,
        });
    }
}

/// `{"INVALID_JSON":"<content>"}` for string content already escaped as JSON.
fn wrapped_escaped(content: &str) -> String {
    format!("{{\"INVALID_JSON\":\"{content}\"}}")
}

/// `text` as the content of a JSON string (quotes and backslashes escaped, control
/// characters as `\u00XX`).
fn escape_content(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a JSON string literal.
fn string_literal(text: &str) -> String {
    format!("\"{}\"", escape_content(text))
}
