//! The assistant turn to send back: what a tool loop's next request must carry of the
//! response it just streamed, in the request shape of the response's format.
//!
//! The next request of a tool loop repeats the assistant's turn before the tool results,
//! and the providers check what it repeats of the model's reasoning: Anthropic wants the
//! turn's thinking blocks unchanged with their signatures before its `tool_use` blocks,
//! Gemini 3 each part's `thoughtSignature` on the same part, DeepSeek's thinking mode the
//! turn's `reasoning_content`, OpenRouter its `reasoning_details`, a `store: false`
//! Responses client the reasoning items whole. Missing or altered, the request is refused
//! (see [`crate::classify::Reason::ReasoningReplay`]). A [`Turn`] is fed the assembler's
//! events and builds that message:
//!
//! ```
//! use bytes::Bytes;
//! use toolstream::pipeline::Stream;
//! use toolstream::provider::Format;
//! use toolstream::replay::Turn;
//!
//! let sse = concat!(
//!     "event: content_block_start\n",
//!     "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Paris, then.\"}}\n\n",
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB\"}}\n\n",
//!     "event: content_block_start\n",
//!     "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}\n\n",
//!     "event: content_block_stop\n",
//!     "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
//! );
//! let mut stream = Stream::new(Some(Format::Anthropic));
//! let mut events = Vec::new();
//! stream.push(Bytes::from(sse), &mut events);
//! stream.finish(&mut events);
//! let mut turn = Turn::new(Format::Anthropic);
//! for e in &events {
//!     turn.push(e);
//! }
//! assert_eq!(
//!     turn.to_json(),
//!     serde_json::json!({"role": "assistant", "content": [
//!         {"type": "thinking", "thinking": "Paris, then.", "signature": "EqQB"},
//!         {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
//!     ]})
//! );
//! ```
//!
//! What a turn leaves out: calls that failed or were dropped as duplicates (never executed:
//! the feedback for a failed call goes in the next user message), Anthropic thinking
//! without its signature (the API would refuse it), events of choices other than the first
//! (tool calls carry no choice: all of them are in the turn; tool loops ask for one choice).

use bytes::Bytes;
use serde_json::{json, Map, Value};

use crate::assemble::Event;
use crate::provider::Format;

/// One piece of the turn, in stream order.
#[derive(Clone, Debug)]
enum Block {
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Redacted {
        data: String,
    },
    Text {
        text: String,
        signature: Option<String>,
    },
    Call {
        id: String,
        name: String,
        arguments: Bytes,
        signature: Option<String>,
    },
    /// A Responses reasoning item, whole.
    Item {
        raw: String,
    },
}

/// An assistant turn being collected from a response's events. See the module docs.
#[derive(Clone, Debug)]
pub struct Turn {
    format: Format,
    blocks: Vec<Block>,
    /// Gemini's signature for the part that comes next.
    pending: Option<String>,
    /// Signatures of calls that started but whose arguments have not closed yet, by slot:
    /// a call's part is the one that opened its slot, and other parts may come before its
    /// arguments close.
    call_signatures: std::collections::HashMap<u32, String>,
    /// OpenRouter's merged reasoning details.
    details: Option<String>,
    /// [`Turn::reasoning_content_on_every_call_turn`].
    reasoning_content_always: bool,
}

impl Turn {
    /// An empty turn for a response in `format`: the format of the request the turn goes
    /// back in. (For Claude through Bedrock's `InvokeModelWithResponseStream`, whose
    /// stream the pipeline reads as [`Format::Bedrock`] but whose requests take Anthropic's
    /// messages, that is [`Format::Anthropic`]; [`Format::Bedrock`] gives Converse's.)
    pub fn new(format: Format) -> Turn {
        Turn {
            format,
            blocks: Vec::new(),
            pending: None,
            call_signatures: std::collections::HashMap::new(),
            details: None,
            reasoning_content_always: false,
        }
    }

    /// OpenAI chat: give a turn with tool calls a `reasoning_content` even when the turn had
    /// no reasoning (an empty string). DeepSeek's thinking mode refuses a history whose
    /// tool-call turns lack it; other servers may refuse a member they do not know, so by
    /// default it is there only when the turn had reasoning.
    pub fn reasoning_content_on_every_call_turn(mut self, yes: bool) -> Turn {
        self.reasoning_content_always = yes;
        self
    }

    /// Take one event of the response (events of other choices than the first, and
    /// events that carry nothing to send back, are passed over).
    pub fn push(&mut self, event: &Event) {
        match event {
            // Nothing to send (the decoders give none; a caller's event may).
            Event::Reasoning { text, .. } | Event::Text { text, .. } if text.is_empty() => {}
            Event::Reasoning { choice: 0, text } => self.push_text(true, text),
            Event::ReasoningSignature {
                choice: 0,
                signature,
            } => {
                if self.format.is_anthropic_like() {
                    // It closes the thinking block before it.
                    if let Some(Block::Thinking { signature: s, .. }) = self.blocks.last_mut() {
                        if s.is_none() {
                            *s = Some(signature.clone());
                            return;
                        }
                    }
                    self.blocks.push(Block::Thinking {
                        text: String::new(),
                        signature: Some(signature.clone()),
                    });
                } else {
                    // Gemini's: it belongs to the part that comes next.
                    if let Some(before) = self.pending.replace(signature.clone()) {
                        self.blocks.push(Block::Text {
                            text: String::new(),
                            signature: Some(before),
                        });
                    }
                }
            }
            Event::RedactedReasoning { choice: 0, data } => {
                self.blocks.push(Block::Redacted { data: data.clone() })
            }
            Event::ReasoningItem { choice: 0, raw } => {
                self.blocks.push(Block::Item { raw: raw.clone() })
            }
            Event::ReasoningDetails { choice: 0, raw } => self.details = Some(raw.clone()),
            Event::Text { choice: 0, text } => self.push_text(false, text),
            Event::CallStarted { index, .. } => {
                if let Some(signature) = self.pending.take() {
                    self.call_signatures.insert(*index, signature);
                }
            }
            Event::ToolCall(c) => {
                // The first object of the slot has the signature of the part that opened it
                // (glued objects after it are calls the provider did not sign).
                let signature = if c.part <= 1 {
                    self.call_signatures.remove(&c.index)
                } else {
                    None
                };
                self.blocks.push(Block::Call {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    signature,
                });
            }
            _ => {}
        }
    }

    /// Reasoning (`thought`) or text: onto the block of its kind before it, unless a
    /// signature waits for a part of its own (Gemini's) or closed that block (Anthropic's).
    fn push_text(&mut self, thought: bool, text: &str) {
        let closed =
            |signature: &Option<String>| self.format.is_anthropic_like() && signature.is_some();
        if self.pending.is_none() {
            match self.blocks.last_mut() {
                Some(Block::Thinking { text: t, signature }) if thought && !closed(signature) => {
                    return t.push_str(text);
                }
                Some(Block::Text { text: t, .. }) if !thought => return t.push_str(text),
                _ => {}
            }
        }
        let (text, signature) = (text.to_owned(), self.pending.take());
        self.blocks.push(if thought {
            Block::Thinking { text, signature }
        } else {
            Block::Text { text, signature }
        });
    }

    /// The turn in the request shape of its format: Anthropic's and OpenAI chat's
    /// assistant message, Ollama's, Gemini's `model` content, and for the Responses API the
    /// array of input items (reasoning items whole, text as an assistant message,
    /// `function_call` items).
    pub fn to_json(&self) -> Value {
        // A signature still waiting for its part had an empty one.
        let mut blocks = self.blocks.clone();
        if let Some(signature) = &self.pending {
            blocks.push(Block::Text {
                text: String::new(),
                signature: Some(signature.clone()),
            });
        }
        match self.format {
            Format::Anthropic => anthropic(&blocks),
            Format::Gemini => gemini(&blocks),
            Format::OpenAiResponses => responses(&blocks),
            Format::OpenAiChat => openai_chat(
                &blocks,
                self.details.as_deref(),
                self.reasoning_content_always,
            ),
            Format::Ollama => ollama(&blocks),
            #[cfg(feature = "bedrock")]
            Format::Bedrock => bedrock(&blocks),
        }
    }
}

/// The arguments object (always valid JSON: the assembler checked it).
fn object(arguments: &Bytes) -> Value {
    serde_json::from_slice(arguments).unwrap_or_else(|_| json!({}))
}

fn arguments_text(arguments: &Bytes) -> String {
    String::from_utf8_lossy(arguments).into_owned()
}

/// All text of one kind joined, or `None` when there is none.
fn joined(blocks: &[Block], thinking: bool) -> Option<String> {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Thinking { text, .. } if thinking => out.push_str(text),
            Block::Text { text, .. } if !thinking => out.push_str(text),
            _ => {}
        }
    }
    (!out.is_empty()).then_some(out)
}

fn anthropic(blocks: &[Block]) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .filter_map(|b| match b {
            // Unsigned thinking cannot be sent back.
            Block::Thinking {
                text,
                signature: Some(s),
            } => Some(json!({"type": "thinking", "thinking": text, "signature": s})),
            Block::Redacted { data } => Some(json!({"type": "redacted_thinking", "data": data})),
            Block::Text { text, .. } if !text.is_empty() => {
                Some(json!({"type": "text", "text": text}))
            }
            Block::Call {
                id,
                name,
                arguments,
                ..
            } => Some(
                json!({"type": "tool_use", "id": id, "name": name, "input": object(arguments)}),
            ),
            _ => None,
        })
        .collect();
    json!({"role": "assistant", "content": content})
}

/// Bedrock Converse: the assistant message's content blocks, reasoning as
/// `reasoningContent` (`reasoningText` with its signature, or `redactedContent`), calls as
/// `toolUse`. Unsigned reasoning is left out, as for Anthropic (Claude on Bedrock refuses
/// it the same way).
#[cfg(feature = "bedrock")]
fn bedrock(blocks: &[Block]) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Thinking {
                text,
                signature: Some(s),
            } => {
                Some(json!({"reasoningContent": {"reasoningText": {"text": text, "signature": s}}}))
            }
            Block::Redacted { data } => {
                Some(json!({"reasoningContent": {"redactedContent": data}}))
            }
            Block::Text { text, .. } if !text.is_empty() => Some(json!({ "text": text })),
            Block::Call {
                id,
                name,
                arguments,
                ..
            } => Some(
                json!({"toolUse": {"toolUseId": id, "name": name, "input": object(arguments)}}),
            ),
            _ => None,
        })
        .collect();
    json!({"role": "assistant", "content": content})
}

fn gemini(blocks: &[Block]) -> Value {
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|b| {
            let (mut part, signature) = match b {
                Block::Thinking { text, signature } => {
                    (json!({"text": text, "thought": true}), signature)
                }
                Block::Text { text, signature } => (json!({ "text": text }), signature),
                Block::Call {
                    id,
                    name,
                    arguments,
                    signature,
                } => {
                    let mut call = Map::new();
                    if !id.is_empty() {
                        call.insert("id".into(), json!(id));
                    }
                    call.insert("name".into(), json!(name));
                    call.insert("args".into(), object(arguments));
                    (json!({ "functionCall": call }), signature)
                }
                _ => return None,
            };
            if let Some(s) = signature {
                part["thoughtSignature"] = json!(s);
            }
            Some(part)
        })
        .collect();
    json!({"role": "model", "parts": parts})
}

fn openai_chat(blocks: &[Block], details: Option<&str>, reasoning_always: bool) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert("content".into(), json!(joined(blocks, false)));
    let has_calls = blocks.iter().any(|b| matches!(b, Block::Call { .. }));
    match joined(blocks, true) {
        Some(reasoning) => {
            m.insert("reasoning_content".into(), json!(reasoning));
        }
        None if reasoning_always && has_calls => {
            m.insert("reasoning_content".into(), json!(""));
        }
        None => {}
    }
    if let Some(d) = details {
        m.insert(
            "reasoning_details".into(),
            serde_json::from_str(d).unwrap_or_else(|_| json!([])),
        );
    }
    let calls: Vec<Value> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Call {
                id,
                name,
                arguments,
                signature,
            } => {
                let mut call = json!({
                    "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments_text(arguments)},
                });
                if let Some(s) = signature {
                    call["extra_content"] = json!({"google": {"thought_signature": s}});
                }
                Some(call)
            }
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    // A signature of the text (Gemini's OpenAI-compatible API), where it came.
    let text_signature = blocks.iter().find_map(|b| match b {
        Block::Text {
            signature: Some(s), ..
        }
        | Block::Thinking {
            signature: Some(s), ..
        } => Some(s),
        _ => None,
    });
    if let Some(s) = text_signature {
        m.insert(
            "extra_content".into(),
            json!({"google": {"thought_signature": s}}),
        );
    }
    Value::Object(m)
}

fn responses(blocks: &[Block]) -> Value {
    let mut items = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, items: &mut Vec<Value>| {
        if !text.is_empty() {
            items.push(json!({
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": std::mem::take(text)}],
            }));
        }
    };
    for b in blocks {
        match b {
            Block::Text { text: t, .. } => text.push_str(t),
            Block::Item { raw } => {
                flush(&mut text, &mut items);
                items.push(serde_json::from_str(raw).unwrap_or(Value::Null));
            }
            Block::Call {
                id,
                name,
                arguments,
                ..
            } => {
                flush(&mut text, &mut items);
                items.push(json!({
                    "type": "function_call", "call_id": id, "name": name,
                    "arguments": arguments_text(arguments),
                }));
            }
            _ => {}
        }
    }
    flush(&mut text, &mut items);
    Value::Array(items)
}

fn ollama(blocks: &[Block]) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        json!(joined(blocks, false).unwrap_or_default()),
    );
    if let Some(reasoning) = joined(blocks, true) {
        m.insert("thinking".into(), json!(reasoning));
    }
    let calls: Vec<Value> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Call {
                name, arguments, ..
            } => Some(json!({"function": {"name": name, "arguments": object(arguments)}})),
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(m)
}
