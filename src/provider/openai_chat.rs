//! OpenAI Chat Completions streaming (`chat.completion.chunk`), as spoken by OpenAI and the
//! OpenAI-compatible servers.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{error_delta, non_empty, parse, Delta, FinishReason};

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

/// Decoder state (none needed beyond the payload).
#[derive(Clone, Debug, Default)]
pub struct Decoder {}

impl Decoder {
    /// Decode one `data:` payload.
    pub fn decode(&mut self, payload: &[u8], out: &mut Vec<Delta>) {
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
            out.push(error_delta(err));
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
}
