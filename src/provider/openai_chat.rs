//! OpenAI Chat Completions streaming (`chat.completion.chunk`), as spoken by OpenAI and the
//! OpenAI-compatible servers.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{error_delta, non_empty, parse, utf8, Delta, FinishReason};
use crate::json::cursor::{Bad, Cursor};

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    x_groq: Option<XGroq<'a>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct XGroq<'a> {
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    delta: Option<Message<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// Usually a string of JSON text; some servers send the object itself.
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// Arguments as JSON text: a JSON string is unescaped once; an object is taken as is.
pub(crate) fn arguments_text(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    let text = raw.get();
    if text.starts_with('"') {
        serde_json::from_str::<Cow<'_, str>>(text)
            .ok()
            .map(|s| s.into_owned())
    } else if text == "null" {
        None
    } else {
        Some(text.to_string())
    }
}

/// Decoder state: the envelope prefix it has already read and found to carry nothing.
///
/// Every chunk of one response starts with the same members (`id`, `object`, `created`,
/// `model`, `system_fingerprint`), which the decoder ignores. When a payload starts with
/// the very bytes of such a prefix read before — the top-level `{` and members that were
/// all skipped, ending just after a member's value — followed by a `,`, the reader's state
/// there is known (inside the top-level object, after a member, nothing collected), so it
/// resumes at the comma instead of reading the same bytes again. The bytes are compared,
/// never assumed.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    prefix: Vec<u8>,
}

/// Prefixes shorter than this are not worth remembering.
const MIN_PREFIX: usize = 32;

impl Decoder {
    /// Decode one `data:` payload. The envelope is read in one pass with the strict
    /// cursor (`json::cursor`: keys compared as bytes, unknown fields skipped but validated);
    /// [`decode_reference`] is the same decoder written with serde, kept as the oracle the
    /// tests compare it with.
    pub fn decode(&mut self, payload: &[u8], out: &mut Vec<Delta>) {
        let trimmed = payload.trim_ascii();
        if trimmed == b"[DONE]" {
            out.push(Delta::Done);
            return;
        }
        // The byte after the prefix must end its last value (`17` is a prefix of `1741`).
        let known = !self.prefix.is_empty()
            && trimmed.starts_with(&self.prefix)
            && trimmed.get(self.prefix.len()) == Some(&b',');
        let skip = if known { self.prefix.len() } else { 0 };
        let text = match utf8(&trimmed[skip..]) {
            Ok(t) => t,
            Err(e) => {
                out.push(undecodable(trimmed, &e));
                return;
            }
        };
        let mark = out.len();
        match read_chunk(text, skip > 0, out) {
            Ok(Some(p)) if skip == 0 && p >= MIN_PREFIX => {
                self.prefix.clear();
                self.prefix.extend_from_slice(&trimmed[..p]);
            }
            Ok(_) => {}
            Err(bad) => {
                out.truncate(mark);
                out.push(undecodable(
                    trimmed,
                    &format_args!("{} at byte {}", bad.what, skip + bad.offset),
                ));
            }
        }
    }
}

fn undecodable(payload: &[u8], why: &dyn std::fmt::Display) -> Delta {
    Delta::Error {
        status: None,
        message: format!("undecodable payload: {why}"),
        body: String::from_utf8_lossy(payload).into_owned(),
    }
}

fn set_choice(d: &mut Delta, c: u32) {
    if let Delta::Text { choice, .. } | Delta::Call { choice, .. } = d {
        *choice = c;
    }
}

/// A whole `chat.completion.chunk` (or, when `resumed`, its rest after a known prefix).
/// Deltas come out in the reference's order: an `error` first, then each choice (its text,
/// its calls, its finish), then usage. Returns the end of the leading run of ignored
/// members (a prefix worth remembering), if the text began with one.
fn read_chunk(text: &str, resumed: bool, out: &mut Vec<Delta>) -> Result<Option<usize>, Bad> {
    let mark = out.len();
    let mut c = Cursor::new(text);
    let (mut error, mut usage, mut groq_usage) = (None, None, None);
    let mut m = if resumed {
        Cursor::members_after_first()
    } else {
        c.object()?
    };
    // The leading run of ignored members: `Some(end)` while it lasts.
    let mut ignored_run = (!resumed).then_some(0);
    let mut prefix = None;
    while let Some(k) = c.key(&mut m)? {
        match &*k.cow() {
            "choices" => {
                if !c.null()? {
                    let mut e = c.array()?;
                    while c.element(&mut e)? {
                        read_choice(&mut c, out)?;
                    }
                }
            }
            "usage" => usage = raw_or_null(&mut c)?,
            "error" => error = raw_or_null(&mut c)?,
            "x_groq" => {
                if !c.null()? {
                    let mut g = c.object()?;
                    while let Some(k) = c.key(&mut g)? {
                        if k.is("usage") {
                            groq_usage = raw_or_null(&mut c)?;
                        } else {
                            c.skip()?;
                        }
                    }
                }
            }
            _ => {
                c.skip()?;
                if ignored_run.is_some() {
                    ignored_run = Some(c.offset());
                }
                continue;
            }
        }
        prefix = prefix.or(ignored_run.take());
    }
    c.end()?;
    if let Some(err) = error {
        out.insert(mark, error_delta(err));
    }
    if let Some(u) = usage.or(groq_usage) {
        out.push(Delta::Usage { raw: u.to_string() });
    }
    Ok(prefix.filter(|&p| p > 0))
}

/// A value's raw text, or `None` for `null`.
fn raw_or_null<'a>(c: &mut Cursor<'a>) -> Result<Option<&'a str>, Bad> {
    if c.null()? {
        Ok(None)
    } else {
        c.skip().map(Some)
    }
}

fn read_choice(c: &mut Cursor<'_>, out: &mut Vec<Delta>) -> Result<(), Bad> {
    let mark = out.len();
    let (mut index, mut finish) = (None, None);
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        match &*k.cow() {
            "index" => index = c.opt_u32()?,
            "delta" => {
                if !c.null()? {
                    read_message(c, out)?;
                }
            }
            "finish_reason" => finish = c.opt_string()?.map(|s| s.cow()),
            _ => {
                c.skip()?;
            }
        }
    }
    let ci = index.unwrap_or(0);
    for d in &mut out[mark..] {
        set_choice(d, ci);
    }
    if let Some(raw) = finish {
        out.push(Delta::Finish {
            choice: ci,
            reason: FinishReason::from_raw(&raw),
            raw: raw.into_owned(),
        });
    }
    Ok(())
}

fn read_message(c: &mut Cursor<'_>, out: &mut Vec<Delta>) -> Result<(), Bad> {
    let mark = out.len();
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        let k = k.cow();
        if k == "content" {
            if let Some(text) = c.opt_string()?.filter(|s| !s.raw.is_empty()) {
                let d = Delta::Text {
                    choice: 0,
                    text: text.cow().into_owned(),
                };
                // Text comes before the calls, whatever the key order.
                out.insert(mark, d);
            }
        } else if k == "tool_calls" {
            if !c.null()? {
                let mut e = c.array()?;
                while c.element(&mut e)? {
                    read_call(c, out)?;
                }
            }
        } else {
            c.skip()?;
        }
    }
    Ok(())
}

fn read_call(c: &mut Cursor<'_>, out: &mut Vec<Delta>) -> Result<(), Bad> {
    let (mut index, mut id, mut name, mut arguments) = (None, None, None, None);
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        let k = k.cow();
        if k == "index" {
            index = c.opt_u32()?;
        } else if k == "id" {
            id = c.opt_string()?.map(|s| s.cow());
        } else if k == "function" {
            if c.null()? {
                continue;
            }
            let mut f = c.object()?;
            while let Some(k) = c.key(&mut f)? {
                let k = k.cow();
                if k == "name" {
                    name = c.opt_string()?.map(|s| s.cow());
                } else if k == "arguments" {
                    arguments = match c.peek() {
                        Some(b'"') => Some(c.string()?.cow().into_owned()),
                        _ if c.null()? => None,
                        // Some servers send the object itself.
                        _ => Some(c.skip()?.to_string()),
                    };
                } else {
                    c.skip()?;
                }
            }
        } else {
            c.skip()?;
        }
    }
    out.push(Delta::Call {
        choice: 0,
        index,
        id: non_empty(id),
        name: non_empty(name),
        arguments,
        complete: false,
    });
    Ok(())
}

/// The same decoder written with serde_json into borrowed typed structs: the oracle for
/// [`Decoder::decode`] in the tests (not meant for use). The two differ only where serde is
/// laxer or stricter than JSON itself: serde rejects a repeated key and accepts an array
/// in place of an object; the cursor reads repeated keys in order and wants objects.
#[doc(hidden)]
pub fn decode_reference(payload: &[u8], out: &mut Vec<Delta>) {
    let trimmed = payload.trim_ascii();
    if trimmed == b"[DONE]" {
        out.push(Delta::Done);
        return;
    }
    let chunk: Chunk<'_> = match parse(trimmed) {
        Ok(c) => c,
        Err(d) => {
            out.push(d);
            return;
        }
    };
    if let Some(err) = chunk.error {
        out.push(error_delta(err.get()));
    }
    for choice in chunk.choices.unwrap_or_default() {
        let c = choice.index.unwrap_or(0);
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                out.push(Delta::Text {
                    choice: c,
                    text: text.into_owned(),
                });
            }
            for call in delta.tool_calls.unwrap_or_default() {
                let (name, arguments) = match call.function {
                    Some(f) => (non_empty(f.name), arguments_text(f.arguments)),
                    None => (None, None),
                };
                out.push(Delta::Call {
                    choice: c,
                    index: call.index,
                    id: non_empty(call.id),
                    name,
                    arguments,
                    complete: false,
                });
            }
        }
        if let Some(raw) = choice.finish_reason {
            out.push(Delta::Finish {
                choice: c,
                reason: FinishReason::from_raw(&raw),
                raw: raw.into_owned(),
            });
        }
    }
    if let Some(u) = chunk.usage.or(chunk.x_groq.and_then(|x| x.usage)) {
        if u.get() != "null" {
            out.push(Delta::Usage {
                raw: u.get().to_string(),
            });
        }
    }
}
