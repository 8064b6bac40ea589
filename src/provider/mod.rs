//! Provider decoders: from framed payloads (an SSE event's type and data, or an NDJSON
//! line) to a common [`Delta`] type. One module per wire format; unknown fields and unknown
//! event types are ignored, never errors.

use std::fmt;

pub mod anthropic;
pub mod bedrock;
pub mod gemini;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;
mod partial_args;
mod template;

/// A provider's streaming wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// OpenAI Chat Completions (and the OpenAI-compatible servers: Ollama `/v1`, vLLM,
    /// SGLang, llama.cpp, LiteLLM, OpenRouter, Groq, Mistral, DeepSeek, xAI, Gemini's
    /// OpenAI-compatible endpoint).
    OpenAiChat,
    /// OpenAI Responses API.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `streamGenerateContent?alt=sse`.
    Gemini,
    /// Ollama native `/api/chat` (NDJSON).
    Ollama,
    /// Amazon Bedrock `ConverseStream` (AWS event stream framing).
    Bedrock,
}

/// How a format is framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// `text/event-stream`.
    Sse,
    /// One JSON value per line.
    Ndjson,
    /// AWS event stream (`application/vnd.amazon.eventstream`): binary, length-prefixed
    /// messages with headers ([`crate::eventstream`]).
    EventStream,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 6] = [
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Ollama,
        Format::Bedrock,
    ];

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai",
            Format::OpenAiResponses => "responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Ollama => "ollama",
            Format::Bedrock => "bedrock",
        }
    }

    /// Parse a name: `openai` (also `openai_chat`, `chat`), `responses`, `anthropic`,
    /// `gemini`, `ollama`, `bedrock`.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "openai" | "openai_chat" | "chat" => Some(Format::OpenAiChat),
            "responses" | "openai_responses" => Some(Format::OpenAiResponses),
            "anthropic" => Some(Format::Anthropic),
            "gemini" => Some(Format::Gemini),
            "ollama" => Some(Format::Ollama),
            "bedrock" => Some(Format::Bedrock),
            _ => None,
        }
    }

    /// The framing this format uses.
    pub fn framing(self) -> Framing {
        match self {
            Format::Ollama => Framing::Ndjson,
            Format::Bedrock => Framing::EventStream,
            _ => Framing::Sse,
        }
    }

    /// Guess the format from one framed payload (and its SSE event type, if any).
    /// Returns `None` when the payload says nothing yet (a comment, `[DONE]`, a ping).
    pub fn detect(event: Option<&[u8]>, payload: &[u8]) -> Option<Format> {
        if let Some(e) = event {
            if e.starts_with(b"response.") {
                return Some(Format::OpenAiResponses);
            }
            if matches!(
                e,
                b"message_start" | b"content_block_start" | b"content_block_delta" | b"ping"
            ) {
                return Some(Format::Anthropic);
            }
        }
        let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
        let v = match &v {
            serde_json::Value::Array(items) => items.first()?.clone(),
            _ => v,
        };
        let has = |k: &str| v.get(k).is_some();
        let ty = v.get("type").and_then(|t| t.as_str()).unwrap_or("");
        if ty.starts_with("response.") {
            Some(Format::OpenAiResponses)
        } else if ty.starts_with("message_") || ty.starts_with("content_block_") {
            Some(Format::Anthropic)
        } else if has("candidates") || has("promptFeedback") {
            Some(Format::Gemini)
        } else if has("choices")
            || v.get("object").and_then(|o| o.as_str()) == Some("chat.completion.chunk")
        {
            Some(Format::OpenAiChat)
        } else if has("message") && has("done") {
            Some(Format::Ollama)
        } else {
            None
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why generation stopped, normalised across providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural stop.
    Stop,
    /// The token limit.
    Length,
    /// The model asked for tools.
    ToolCalls,
    /// A content filter.
    ContentFilter,
    /// An error ended generation.
    Error,
    /// Anything else (the raw value is kept).
    Other,
}

impl FinishReason {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Error => "error",
            FinishReason::Other => "other",
        }
    }

    /// Normalise a provider's raw value.
    pub fn from_raw(raw: &str) -> FinishReason {
        match raw {
            "stop" | "end_turn" | "stop_sequence" | "STOP" | "completed" | "pause_turn" => {
                FinishReason::Stop
            }
            "length"
            | "max_tokens"
            | "MAX_TOKENS"
            | "max_output_tokens"
            | "incomplete"
            | "model_context_window_exceeded" => FinishReason::Length,
            "tool_calls" | "tool_use" | "function_call" => FinishReason::ToolCalls,
            "content_filter"
            | "refusal"
            | "SAFETY"
            | "RECITATION"
            | "PROHIBITED_CONTENT"
            | "BLOCKLIST"
            | "SPII"
            | "content_filtered"
            | "guardrail_intervened" => FinishReason::ContentFilter,
            "error" | "failed" | "MALFORMED_FUNCTION_CALL" => FinishReason::Error,
            _ => FinishReason::Other,
        }
    }

    /// Whether this finish means the output was cut by the token limit.
    pub fn is_length(self) -> bool {
        self == FinishReason::Length
    }
}

/// One decoded piece of a streamed response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delta {
    /// Assistant text.
    Text {
        /// Choice / candidate index.
        choice: u32,
        /// The text.
        text: String,
    },
    /// A fragment of the model's reasoning ("thinking") text: `reasoning_content` or
    /// `reasoning` in OpenAI-compatible chat (DeepSeek, xAI, OpenRouter, vLLM), Anthropic's
    /// `thinking_delta`, the Responses API's reasoning text and reasoning summary deltas,
    /// Gemini's `thought` parts.
    Reasoning {
        /// Choice / candidate index.
        choice: u32,
        /// The text.
        text: String,
    },
    /// Opaque data the provider needs back, verbatim, in the next request of a tool loop:
    /// the signature that closes an Anthropic thinking block (`signature_delta`; the
    /// reasoning before it is the block's text), or Gemini's `thoughtSignature` (it
    /// belongs to the part that carried it: the text, reasoning or call that comes right
    /// after, or an empty text part when nothing from that part follows). Through Gemini's
    /// OpenAI-compatible API the same signature comes as `extra_content.google.thought_signature`
    /// on a tool call (it comes right before that call, and goes back on it) or on the
    /// delta (right before the delta's text and calls, after its reasoning).
    ReasoningSignature {
        /// Choice / candidate index.
        choice: u32,
        /// The signature, as the provider sent it.
        signature: String,
    },
    /// A reasoning block the provider sent encrypted (Anthropic's `redacted_thinking`):
    /// its data, to be sent back as it is.
    RedactedReasoning {
        /// Choice / candidate index.
        choice: u32,
        /// The data, as the provider sent it.
        data: String,
    },
    /// A finished reasoning output item as the provider sent it, for a client that keeps
    /// the conversation itself to put back in the next request's input as it is: the
    /// Responses API's `reasoning` items (from `response.output_item.done`: the item's `id`,
    /// its `summary` and, when the request included `reasoning.encrypted_content`, its
    /// `encrypted_content`). It comes before the items that followed it in the response;
    /// the API wants it back before them too.
    ReasoningItem {
        /// Choice / candidate index.
        choice: u32,
        /// The item's JSON text, as it stood in the event.
        raw: String,
    },
    /// One element of OpenRouter's `reasoning_details` array as a delta carried it: a
    /// fragment of one reasoning detail (its text, summary or encrypted data in pieces, its
    /// signature in a later element of the same `type` and `index`). The assembler merges
    /// them into the array a tool loop must send back ([`crate::assemble::Event::ReasoningDetails`]).
    ReasoningDetail {
        /// Choice / candidate index.
        choice: u32,
        /// The element's JSON text (an object), as it stood in the payload.
        raw: String,
    },
    /// A piece of a tool call: any of its identity and an argument fragment (already
    /// unescaped from the envelope).
    Call {
        /// Choice / candidate index.
        choice: u32,
        /// The provider's slot index, if it sent one.
        index: Option<u32>,
        /// The call id, if present and non-empty.
        id: Option<String>,
        /// The function name, if present and non-empty.
        name: Option<String>,
        /// An argument fragment (JSON text), if any.
        arguments: Option<String>,
        /// The arguments are complete with this fragment (whole-object formats).
        complete: bool,
    },
    /// The provider's own description of a call cannot be turned into arguments (e.g. a
    /// Gemini `partialArgs` path that does not fit what came before).
    CallFailed {
        /// Choice / candidate index.
        choice: u32,
        /// The slot index.
        index: Option<u32>,
        /// What did not fit.
        message: String,
    },
    /// The provider says a call's arguments are complete.
    CallEnd {
        /// Choice / candidate index.
        choice: u32,
        /// The slot index.
        index: Option<u32>,
    },
    /// Generation finished.
    Finish {
        /// Choice / candidate index.
        choice: u32,
        /// Normalised.
        reason: FinishReason,
        /// The provider's raw value.
        raw: String,
    },
    /// Token usage (the provider's raw JSON).
    Usage {
        /// Raw JSON.
        raw: String,
    },
    /// An error reported by the provider inside the stream, or an envelope that could not
    /// be decoded.
    Error {
        /// An HTTP-like status in the error, if any.
        status: Option<u16>,
        /// The message.
        message: String,
        /// The error's raw JSON (or the undecodable payload).
        body: String,
    },
    /// The format's terminal marker.
    Done,
}

/// Decoding state for one stream of one format.
#[derive(Clone, Debug)]
pub enum Decoder {
    /// OpenAI Chat Completions.
    OpenAiChat(openai_chat::Decoder),
    /// OpenAI Responses.
    OpenAiResponses(openai_responses::Decoder),
    /// Anthropic Messages.
    Anthropic(anthropic::Decoder),
    /// Gemini.
    Gemini(gemini::Decoder),
    /// Ollama native.
    Ollama(ollama::Decoder),
    /// Bedrock ConverseStream.
    Bedrock(bedrock::Decoder),
}

impl Decoder {
    /// A decoder for `format`.
    pub fn new(format: Format) -> Decoder {
        match format {
            Format::OpenAiChat => Decoder::OpenAiChat(Default::default()),
            Format::OpenAiResponses => Decoder::OpenAiResponses(Default::default()),
            Format::Anthropic => Decoder::Anthropic(Default::default()),
            Format::Gemini => Decoder::Gemini(Default::default()),
            Format::Ollama => Decoder::Ollama(Default::default()),
            Format::Bedrock => Decoder::Bedrock(Default::default()),
        }
    }

    /// Decode one framed payload (`event` is the SSE event type, or for Bedrock the
    /// message's `:event-type` or `:exception-type`, if any).
    pub fn decode(&mut self, event: Option<&[u8]>, payload: &[u8], out: &mut Vec<Delta>) {
        match self {
            Decoder::OpenAiChat(d) => d.decode(payload, out),
            Decoder::OpenAiResponses(d) => d.decode(event, payload, out),
            Decoder::Anthropic(d) => d.decode(event, payload, out),
            Decoder::Gemini(d) => d.decode(payload, out),
            Decoder::Ollama(d) => d.decode(payload, out),
            Decoder::Bedrock(d) => d.decode(event, payload, out),
        }
    }
}

/// Parse an envelope. The payload is checked as UTF-8 once, up front (std's check runs at
/// many GB/s on ASCII), so serde_json reads it as `&str` and skips its per-string checks.
pub(crate) fn parse<'a, T: serde::Deserialize<'a>>(payload: &'a [u8]) -> Result<T, Delta> {
    let text = utf8(payload).map_err(|e| Delta::Error {
        status: None,
        message: format!("undecodable payload: {e}"),
        body: String::from_utf8_lossy(payload).into_owned(),
    })?;
    serde_json::from_str(text).map_err(|e| malformed(payload, &e))
}

/// Check a payload as UTF-8: simdutf8's SIMD check first (most payloads are valid), std's
/// for the exact error.
pub(crate) fn utf8(payload: &[u8]) -> Result<&str, std::str::Utf8Error> {
    #[cfg(not(any(toolstream_disable_simd, miri)))]
    if let Ok(text) = simdutf8::basic::from_utf8(payload) {
        return Ok(text);
    }
    std::str::from_utf8(payload)
}

/// An envelope that is not the JSON it should be.
pub(crate) fn malformed(payload: &[u8], e: &serde_json::Error) -> Delta {
    Delta::Error {
        status: None,
        message: format!("undecodable payload: {e}"),
        body: String::from_utf8_lossy(payload).into_owned(),
    }
}

/// An error object inside a payload.
pub(crate) fn error_delta(err: &str) -> Delta {
    let v: serde_json::Value = serde_json::from_str(err).unwrap_or_default();
    let message = match &v {
        serde_json::Value::String(s) => s.clone(),
        other => other
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or("")
            .to_string(),
    };
    let status = v
        .get("code")
        .or_else(|| v.get("status"))
        .and_then(|c| c.as_u64())
        .filter(|c| (100..600).contains(c))
        .map(|c| c as u16);
    Delta::Error {
        status,
        message,
        body: err.to_string(),
    }
}

/// A string that is present and not empty.
pub(crate) fn non_empty(s: Option<std::borrow::Cow<'_, str>>) -> Option<String> {
    s.filter(|s| !s.is_empty()).map(|s| s.into_owned())
}

/// The event's type: the payload's `type` field, else the SSE event name.
pub(crate) fn event_kind(kind: Option<&str>, event: Option<&[u8]>) -> String {
    kind.map(str::to_string)
        .or_else(|| event.map(|e| String::from_utf8_lossy(e).into_owned()))
        .unwrap_or_default()
}
