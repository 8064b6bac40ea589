//! Anthropic Messages streaming: `message_start`, `content_block_start` (`tool_use`,
//! `redacted_thinking`), `content_block_delta` (`text_delta`, `input_json_delta`,
//! `thinking_delta`, `signature_delta`), `content_block_stop`,
//! `message_delta` (`stop_reason`), `message_stop`, `ping`, `error`; and a non-streaming
//! body (`"type": "message"`, the whole message), which gives the same deltas as its stream.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::template::Templates;
use super::{error_delta, event_kind, non_empty, parse, Delta, FinishReason, Fragment};

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    content_block: Option<Block<'a>>,
    #[serde(borrow, default)]
    delta: Option<BlockDelta<'a>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    /// A whole message's blocks (a non-streaming body).
    #[serde(borrow, default)]
    content: Option<Vec<WholeBlock<'a>>>,
    /// A whole message's stop reason.
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

/// One block of a whole message.
#[derive(Deserialize)]
struct WholeBlock<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

/// Which content blocks are tool calls, and the payload template (`provider::template`):
/// the `content_block_delta` events of one text, one thinking block or one call's arguments
/// are the same bytes around one string (`text`, `thinking` or `partial_json`), so after one such event the next is read
/// from its bytes, only the new string read and checked.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    tool_blocks: BTreeSet<u32>,
    /// Blocks open that are not `tool_use` (a server tool's input is not a call; a delta
    /// of a block never started is read as a call, which then fails for want of a name).
    other_blocks: BTreeSet<u32>,
    templates: Templates,
}

impl Decoder {
    /// Decode one event (`event` is the SSE event type; the payload's `type` wins).
    pub fn decode(&mut self, event: Option<&[u8]>, payload: &[u8], out: &mut Vec<Delta>) {
        super::through_lane(out, |out, args| self.decode_lane(event, payload, out, args));
    }

    /// [`Decoder::decode`], a call's argument fragment read by the template given as a
    /// [`Fragment`] and its text in `args` ([`super::Decoder::decode_lane`]).
    pub(crate) fn decode_lane(
        &mut self,
        event: Option<&[u8]>,
        payload: &[u8],
        out: &mut Vec<Delta>,
        args: &mut String,
    ) -> Option<Fragment> {
        let key = event.unwrap_or_default();
        if let Some(f) = self.templates.lane(key, payload, out, args) {
            return f;
        }
        let mark = out.len();
        self.decode_whole(event, payload, out);
        // Only a `content_block_delta` gives one text or call delta with its string, and
        // what it gives does not depend on the decoder's state.
        self.templates.learn_by_value(key, payload, &out[mark..]);
        None
    }

    /// Drop the payload template (the tests' way to have the whole reader decode the next
    /// event with the decoder otherwise as it is).
    #[doc(hidden)]
    pub fn forget_template(&mut self) {
        self.templates = Templates::default();
    }

    /// [`Decoder::decode`] without the template.
    fn decode_whole(&mut self, event: Option<&[u8]>, payload: &[u8], out: &mut Vec<Delta>) {
        let ev: Event<'_> = match parse(payload) {
            Ok(e) => e,
            Err(d) => {
                out.push(d);
                return;
            }
        };
        let kind = event_kind(ev.kind.as_deref(), event);
        // A block event says which block: one without an index cannot be placed (a client
        // would put it in the wrong block, or nowhere).
        if ev.index.is_none() && kind.starts_with("content_block_") {
            out.push(Delta::Undecodable {
                message: format!("undecodable payload: {kind} without an index"),
                body: String::from_utf8_lossy(payload).into_owned(),
            });
            return;
        }
        match kind.as_str() {
            "content_block_start" => self.block_start(ev, out),
            "content_block_delta" => {
                // Only a `tool_use` block's input is a client call: a `server_tool_use`
                // block's (web search, code execution, MCP) runs at the provider.
                let tool = ev.index.is_some_and(|i| !self.other_blocks.contains(&i));
                block_delta(ev, tool, out)
            }
            "content_block_stop" => {
                let index = ev.index.unwrap_or(0);
                self.other_blocks.remove(&index);
                if self.tool_blocks.remove(&index) {
                    // The template read this block's deltas as a call's: no later event
                    // is (a block's index is not reused in a valid stream; in another
                    // it must not make a server tool's input a call).
                    self.templates = Templates::default();
                    out.push(Delta::CallEnd {
                        choice: 0,
                        index: Some(index),
                    });
                }
            }
            "message_delta" => {
                if let Some(raw) = ev.delta.and_then(|d| d.stop_reason) {
                    out.push(Delta::Finish {
                        choice: 0,
                        reason: FinishReason::from_raw(&raw),
                        raw: raw.into_owned(),
                    });
                }
                if let Some(u) = ev.usage {
                    out.push(Delta::Usage {
                        raw: u.get().to_string(),
                    });
                }
            }
            "message_stop" => out.push(Delta::Done),
            "message" => whole_message(ev, out),
            "error" => {
                if let Some(err) = ev.error {
                    out.push(error_delta(err.get()));
                }
            }
            _ => {} // message_start, ping and anything new
        }
    }

    /// `content_block_start`: a tool call begins (its id and name), or a redacted thinking
    /// block comes whole.
    fn block_start(&mut self, ev: Event<'_>, out: &mut Vec<Delta>) {
        let Some(block) = ev.content_block else {
            return;
        };
        if block.kind.as_deref() != Some("tool_use")
            && self.other_blocks.len() < super::MAX_OPEN_BLOCKS
        {
            self.other_blocks.insert(ev.index.unwrap_or(0));
        }
        if block.kind.as_deref() == Some("redacted_thinking") {
            if let Some(data) = block.data {
                out.push(Delta::RedactedReasoning {
                    choice: 0,
                    data: data.into_owned(),
                });
            }
        } else if block.kind.as_deref() == Some("tool_use") {
            let index = ev.index.unwrap_or(0);
            if self.tool_blocks.len() < super::MAX_OPEN_BLOCKS {
                self.tool_blocks.insert(index);
            }
            // The `input: {}` placeholder is not the arguments: they stream next.
            out.push(Delta::Call {
                choice: 0,
                index: Some(index),
                id: non_empty(block.id),
                name: non_empty(block.name),
                arguments: None,
                complete: false,
            });
        }
    }
}

/// A non-streaming body: each block as its stream would give it (a `tool_use` block's
/// input whole, a server tool's not a call), the stop reason, the usage, and the end.
fn whole_message(ev: Event<'_>, out: &mut Vec<Delta>) {
    for (i, b) in ev.content.unwrap_or_default().into_iter().enumerate() {
        match b.kind.as_deref() {
            Some("text") => out.extend(super::text_delta(b.text)),
            Some("thinking") => {
                out.extend(super::reasoning_delta(b.thinking));
                if let Some(s) = b.signature {
                    out.push(Delta::ReasoningSignature {
                        choice: 0,
                        signature: s.into_owned(),
                    });
                }
            }
            Some("redacted_thinking") => {
                if let Some(data) = b.data {
                    out.push(Delta::RedactedReasoning {
                        choice: 0,
                        data: data.into_owned(),
                    });
                }
            }
            Some("tool_use") => out.push(Delta::Call {
                choice: 0,
                index: u32::try_from(i).ok(),
                id: non_empty(b.id),
                name: non_empty(b.name),
                arguments: Some(b.input.map_or("{}", RawValue::get).to_string()),
                complete: true,
            }),
            _ => {}
        }
    }
    super::whole_end(ev.stop_reason, ev.usage.map(|u| u.get()), out);
}

/// `content_block_delta`: text, thinking, a signature or, in a `tool_use` block (`tool`), a
/// call's arguments.
fn block_delta(ev: Event<'_>, tool: bool, out: &mut Vec<Delta>) {
    let Some(d) = ev.delta else { return };
    match d.kind.as_deref() {
        Some("text_delta") => out.extend(super::text_delta(d.text)),
        Some("thinking_delta") => out.extend(super::reasoning_delta(d.thinking)),
        Some("signature_delta") => {
            if let Some(s) = d.signature {
                out.push(Delta::ReasoningSignature {
                    choice: 0,
                    signature: s.into_owned(),
                });
            }
        }
        Some("input_json_delta") if tool => out.push(Delta::Call {
            choice: 0,
            index: ev.index,
            id: None,
            name: None,
            arguments: d.partial_json.map(Cow::into_owned),
            complete: false,
        }),
        _ => {}
    }
}
