//! Amazon Bedrock `ConverseStream`: one event per AWS event stream message
//! ([`crate::eventstream`]), named by its `:event-type` header — `messageStart`,
//! `contentBlockStart` (`start.toolUse`: `toolUseId`, `name`), `contentBlockDelta`
//! (`delta.text`, `delta.toolUse.input`, `delta.reasoningContent` with `text`, `signature`
//! or `redactedContent`), `contentBlockStop`, `messageStop` (`stopReason`), `metadata`
//! (`usage`). An exception (`:message-type: exception`) comes with its `:exception-type`
//! as the event name (`throttlingException`, `modelStreamErrorException`, ...) and the
//! payload `{"message": ...}`; an error message (`:message-type: error`) as `error:` and
//! its `:error-code`.
//!
//! The same decoder reads `InvokeModelWithResponseStream`: its `chunk` events carry the
//! model's own event in base64 (`{"bytes": ...}`): Anthropic Messages events for Claude
//! (read by the Anthropic decoder), Converse-shaped events wrapped in a one-member object
//! for Amazon Nova (`{"contentBlockDelta": {...}}`).
//!
//! And a non-streaming `Converse` body (`output.message.content`, `stopReason`, `usage`),
//! which gives the same deltas as its stream.

use std::borrow::Cow;
use std::collections::BTreeSet;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use base64::Engine as _;

use super::{anthropic, non_empty, parse, Delta, FinishReason};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    #[serde(default)]
    content_block_index: Option<u32>,
    #[serde(borrow, default)]
    start: Option<Start<'a>>,
    #[serde(borrow, default)]
    delta: Option<BlockDelta<'a>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    /// A non-streaming `Converse` body's output.
    #[serde(borrow, default)]
    output: Option<Output<'a>>,
}

#[derive(Deserialize)]
struct Output<'a> {
    #[serde(borrow, default)]
    message: Option<WholeMessage<'a>>,
}

#[derive(Deserialize)]
struct WholeMessage<'a> {
    #[serde(borrow, default)]
    content: Option<Vec<WholeBlock<'a>>>,
}

/// One content block of a whole `Converse` message.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WholeBlock<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_use: Option<WholeToolUse<'a>>,
    #[serde(borrow, default)]
    reasoning_content: Option<WholeReasoning<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WholeToolUse<'a> {
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WholeReasoning<'a> {
    #[serde(borrow, default)]
    reasoning_text: Option<Reasoning<'a>>,
    #[serde(borrow, default)]
    redacted_content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start<'a> {
    #[serde(borrow, default)]
    tool_use: Option<ToolUse<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUse<'a> {
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_use: Option<ToolUse<'a>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Reasoning<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reasoning<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    redacted_content: Option<Cow<'a, str>>,
}

/// Which content blocks are tool calls; for `InvokeModelWithResponseStream`, the decoder of
/// the Anthropic events inside the chunks.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    tool_blocks: BTreeSet<u32>,
    anthropic: Option<Box<anthropic::Decoder>>,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    bytes: Cow<'a, str>,
}

/// A `reasoningContent` delta: its text, signature and redacted content, each when not
/// empty.
fn reasoning_deltas(r: Reasoning<'_>, out: &mut Vec<Delta>) {
    if let Some(t) = r.text.filter(|t| !t.is_empty()) {
        out.push(Delta::Reasoning {
            choice: 0,
            text: t.into_owned(),
        });
    }
    if let Some(s) = r.signature.filter(|s| !s.is_empty()) {
        out.push(Delta::ReasoningSignature {
            choice: 0,
            signature: s.into_owned(),
        });
    }
    if let Some(data) = r.redacted_content.filter(|d| !d.is_empty()) {
        out.push(Delta::RedactedReasoning {
            choice: 0,
            data: data.into_owned(),
        });
    }
}

/// A non-streaming `Converse` body: each block as its stream would give it (a tool use's
/// input whole), the stop reason, the usage and the end.
fn whole_converse(ev: Event<'_>, out: &mut Vec<Delta>) {
    let blocks = ev
        .output
        .and_then(|o| o.message)
        .and_then(|m| m.content)
        .unwrap_or_default();
    for (i, b) in blocks.into_iter().enumerate() {
        if let Some(r) = b.reasoning_content {
            if let Some(r) = r.reasoning_text {
                reasoning_deltas(r, out);
            }
            if let Some(data) = r.redacted_content.filter(|d| !d.is_empty()) {
                out.push(Delta::RedactedReasoning {
                    choice: 0,
                    data: data.into_owned(),
                });
            }
        }
        out.extend(super::text_delta(b.text));
        if let Some(t) = b.tool_use {
            out.push(Delta::Call {
                choice: 0,
                index: u32::try_from(i).ok(),
                id: non_empty(t.tool_use_id),
                name: non_empty(t.name),
                arguments: Some(t.input.map_or("{}", RawValue::get).to_string()),
                complete: true,
            });
        }
    }
    super::whole_end(ev.stop_reason, ev.usage.map(|u| u.get()), out);
}

impl Decoder {
    /// Decode one message's payload; `event` is its `:event-type` (for an exception, its
    /// `:exception-type`; for an error message, `error:` and its `:error-code`).
    pub fn decode(&mut self, event: Option<&[u8]>, payload: &[u8], out: &mut Vec<Delta>) {
        let name = event.unwrap_or_default();
        if let Some(code) = name.strip_prefix(b"error:") {
            return out.push(exception(code, payload));
        }
        if name.ends_with(b"Exception") {
            return out.push(exception(name, payload));
        }
        if name == b"chunk" {
            return self.chunk(payload, out);
        }
        let ev: Event<'_> = match parse(payload) {
            Ok(e) => e,
            Err(d) => return out.push(d),
        };
        if name.is_empty() && ev.output.is_some() {
            return whole_converse(ev, out);
        }
        let index = ev.content_block_index.unwrap_or(0);
        match name {
            b"contentBlockStart" => {
                if let Some(t) = ev.start.and_then(|s| s.tool_use) {
                    self.tool_use(index, t, out);
                }
            }
            b"contentBlockDelta" => {
                let Some(d) = ev.delta else { return };
                if let Some(t) = d.text.filter(|t| !t.is_empty()) {
                    out.push(Delta::Text {
                        choice: 0,
                        text: t.into_owned(),
                    });
                }
                if let Some(t) = d.tool_use {
                    self.tool_use(index, t, out);
                }
                if let Some(r) = d.reasoning_content {
                    reasoning_deltas(r, out);
                }
            }
            b"contentBlockStop" => {
                if self.tool_blocks.remove(&index) {
                    out.push(Delta::CallEnd {
                        choice: 0,
                        index: Some(index),
                    });
                }
            }
            b"messageStop" => {
                if let Some(raw) = ev.stop_reason {
                    out.push(Delta::Finish {
                        choice: 0,
                        reason: FinishReason::from_raw(&raw),
                        raw: raw.into_owned(),
                    });
                }
                out.push(Delta::Done);
            }
            b"metadata" => {
                if let Some(u) = ev.usage {
                    out.push(Delta::Usage {
                        raw: u.get().to_string(),
                    });
                }
            }
            _ => {
                // messageStart, and anything new; an error-like payload is still an error.
                if let Some(m) = ev.message.filter(|_| name.is_empty()) {
                    out.push(Delta::Error {
                        status: None,
                        message: m.into_owned(),
                        body: String::from_utf8_lossy(payload).into_owned(),
                    });
                }
            }
        }
    }

    /// A `toolUse` of block `index`, from a `contentBlockStart` (its id and name) or a
    /// `contentBlockDelta` (an `input` fragment; some models name the call in its first
    /// delta rather than in a block start, as reports of Bedrock streams show).
    fn tool_use(&mut self, index: u32, t: ToolUse<'_>, out: &mut Vec<Delta>) {
        if self.tool_blocks.len() < super::MAX_OPEN_BLOCKS {
            self.tool_blocks.insert(index);
        }
        out.push(Delta::Call {
            choice: 0,
            index: Some(index),
            id: non_empty(t.tool_use_id),
            name: non_empty(t.name),
            arguments: t.input.map(Cow::into_owned),
            complete: false,
        });
    }

    /// An `InvokeModelWithResponseStream` chunk: the model's event, base64 in `bytes`.
    fn chunk(&mut self, payload: &[u8], out: &mut Vec<Delta>) {
        let undecodable = |why: &str| Delta::Undecodable {
            message: format!("undecodable Bedrock chunk: {why}"),
            body: String::from_utf8_lossy(payload).into_owned(),
        };
        let chunk: Chunk<'_> = match parse(payload) {
            Ok(c) => c,
            Err(d) => return out.push(d),
        };
        let inner = match base64::engine::general_purpose::STANDARD.decode(chunk.bytes.as_bytes()) {
            Ok(b) => b,
            Err(_) => return out.push(undecodable("bytes is not base64")),
        };
        // Anthropic's events name themselves in `type`; Nova's are one member named after
        // the Converse event.
        let one: Option<std::collections::BTreeMap<Cow<'_, str>, &RawValue>> =
            serde_json::from_slice(&inner).ok();
        match one {
            Some(m) if m.len() == 1 && !m.contains_key("type") => {
                let (name, body) = m.into_iter().next().expect("one member");
                self.decode(Some(name.as_bytes()), body.get().as_bytes(), out);
            }
            _ => self
                .anthropic
                .get_or_insert_with(Box::default)
                .decode(None, &inner, out),
        }
    }
}

/// An AWS event stream *error* message (`:message-type: error`, which carries its
/// `:error-code` and `:error-message` in headers and no payload of its own) framed as
/// [`Decoder::decode`] reads it: the name `error:` and the code, and the payload
/// `{"message": ...}`.
pub fn error_message(code: &[u8], message: &[u8]) -> (Vec<u8>, Bytes) {
    let payload = serde_json::json!({ "message": String::from_utf8_lossy(message) }).to_string();
    ([&b"error:"[..], code].concat(), Bytes::from(payload))
}

/// An exception message: its type (from the header) and message (from the payload), as
/// `{"code": <type>, "message": ...}` so that the classifier reads the type as the
/// error code, as it reads Bedrock's `x-amzn-errortype` header on an HTTP error.
fn exception(name: &[u8], payload: &[u8]) -> Delta {
    let code = String::from_utf8_lossy(name).into_owned();
    let message = super::message_member(payload)
        .unwrap_or_else(|| String::from_utf8_lossy(payload).into_owned());
    // The HTTP status Bedrock gives the same exception outside a stream.
    let status = match name {
        b"throttlingException" => Some(429),
        b"validationException" => Some(400),
        b"modelStreamErrorException" => Some(424),
        b"modelTimeoutException" => Some(408),
        b"serviceUnavailableException" => Some(503),
        b"internalServerException" => Some(500),
        _ => None,
    };
    Delta::Error {
        status,
        body: serde_json::json!({ "code": code, "message": message }).to_string(),
        message,
    }
}
