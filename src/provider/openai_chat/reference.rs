//! The reference decoder of OpenAI chat chunks: typed serde structs and `serde_json`, the
//! way most clients read them. [`super::Decoder`] is checked against it (`tests/envelopes.rs`,
//! the fuzz targets) and the benches measure it beside the fast one; the two differ only
//! where serde is laxer or stricter than JSON itself (see [`decode_reference`]).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::super::{error_delta, non_empty, parse, Delta, FinishReason};
use super::reasoning_text;

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
    /// A non-streaming `chat.completion`'s message.
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    /// Reasoning text (DeepSeek, xAI, vLLM before 0.10, LiteLLM); any other value is no
    /// reasoning.
    #[serde(borrow, default)]
    reasoning_content: Option<&'a RawValue>,
    /// The same under the name OpenRouter, Groq, Ollama and newer vLLM use.
    #[serde(borrow, default)]
    reasoning: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
    /// Gemini's OpenAI-compatible API: `{"google":{"thought_signature":...}}`.
    #[serde(borrow, default)]
    extra_content: Option<&'a RawValue>,
    /// OpenRouter's reasoning fragments: an array of objects.
    #[serde(borrow, default)]
    reasoning_details: Option<&'a RawValue>,
}

/// A `reasoning_details` array as it stands, if it has an object element (any other value
/// is none): the reference's reading.
fn reasoning_details(raw: Option<&RawValue>) -> Option<&str> {
    let raw = raw.filter(|r| r.get().starts_with('['))?;
    serde_json::from_str::<Vec<&RawValue>>(raw.get())
        .unwrap_or_default()
        .iter()
        .any(|e| e.get().starts_with('{'))
        .then(|| raw.get())
}

/// A JSON string value, unescaped; `None` for any other value.
fn string_value(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let text = raw?.get();
    if text.starts_with('"') {
        serde_json::from_str::<Cow<'_, str>>(text).ok()
    } else {
        None
    }
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
    /// As in [`Message`].
    #[serde(borrow, default)]
    extra_content: Option<&'a RawValue>,
}

/// Gemini's thought signature as its OpenAI-compatible API sends it, on a message delta
/// or a tool call: `extra_content.google.thought_signature`, a non-empty string (any other
/// shape is no signature). The reference's reading: a JSON value, the last of repeated
/// keys.
fn thought_signature(raw: Option<&RawValue>) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(raw?.get()).ok()?;
    let s = v.get("google")?.get("thought_signature")?.as_str()?;
    (!s.is_empty()).then(|| s.to_owned())
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
    let text = raw?.get();
    if text.starts_with('"') {
        string_value(raw).map(Cow::into_owned)
    } else if text == "null" {
        None
    } else {
        Some(text.to_string())
    }
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
            reference_message(c, delta, false, out);
        }
        if let Some(message) = choice.message {
            reference_message(c, message, true, out);
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

/// [`decode_reference`]'s reading of one choice's delta (or, `whole`, its message).
fn reference_message(c: u32, delta: Message<'_>, whole: bool, out: &mut Vec<Delta>) {
    let reasoning = reasoning_text(
        string_value(delta.reasoning_content),
        string_value(delta.reasoning),
    );
    if let Some(text) = reasoning {
        out.push(Delta::Reasoning {
            choice: c,
            text: text.into_owned(),
        });
    }
    if let Some(raw) = reasoning_details(delta.reasoning_details) {
        out.push(Delta::ReasoningDetail {
            choice: c,
            raw: raw.to_string(),
        });
    }
    if let Some(signature) = thought_signature(delta.extra_content) {
        out.push(Delta::ReasoningSignature {
            choice: c,
            signature,
        });
    }
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
        if let Some(signature) = thought_signature(call.extra_content) {
            out.push(Delta::ReasoningSignature {
                choice: c,
                signature,
            });
        }
        out.push(Delta::Call {
            choice: c,
            index: call.index,
            id: non_empty(call.id),
            name,
            arguments,
            complete: whole,
        });
    }
}
