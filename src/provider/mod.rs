//! Provider decoders: from framed payloads (an SSE event's type and data, or an NDJSON
//! line) to a common [`Delta`] type. One module per wire format; unknown fields and unknown
//! event types are ignored, never errors.

use std::fmt;

use crate::json::cursor::{Cursor, CursorError};

pub mod anthropic;
#[cfg(feature = "bedrock")]
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
    #[cfg(feature = "bedrock")]
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
    /// messages with headers ([`crate::eventstream`]; feature `bedrock`).
    #[cfg(feature = "bedrock")]
    EventStream,
}

impl Format {
    /// Every format.
    pub const ALL: &'static [Format] = &[
        Format::OpenAiChat,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Ollama,
        #[cfg(feature = "bedrock")]
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
            #[cfg(feature = "bedrock")]
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
            #[cfg(feature = "bedrock")]
            "bedrock" => Some(Format::Bedrock),
            _ => None,
        }
    }

    /// The prefix of the call ids this API gives (`call_`, `toolu_`, `tooluse_`): the
    /// shape of the ids toolstream makes for it ([`crate::ids`]).
    pub fn id_prefix(self) -> &'static str {
        match self {
            Format::Anthropic => "toolu_",
            #[cfg(feature = "bedrock")]
            Format::Bedrock => "tooluse_",
            _ => "call_",
        }
    }

    /// The framing this format uses.
    pub fn framing(self) -> Framing {
        match self {
            Format::Ollama => Framing::Ndjson,
            #[cfg(feature = "bedrock")]
            Format::Bedrock => Framing::EventStream,
            _ => Framing::Sse,
        }
    }

    /// Whether a payload of SSE event type (or AWS `:event-type`) `event` is part of the
    /// stream after the format's terminal marker: only Bedrock's `metadata` (the usage and
    /// metrics it sends after `messageStop`). Anything else after the marker is dropped and
    /// reported ([`crate::assemble::DropReason::AfterEnd`]).
    pub fn trails_end(self, event: Option<&[u8]>) -> bool {
        #[cfg(feature = "bedrock")]
        return self == Format::Bedrock && event == Some(b"metadata");
        #[cfg(not(feature = "bedrock"))]
        return {
            let _ = event;
            false
        };
    }

    /// Anthropic's content blocks (Anthropic, and Bedrock Converse after it): thinking
    /// signatures go back with the block.
    pub(crate) fn is_anthropic_like(self) -> bool {
        match self {
            Format::Anthropic => true,
            #[cfg(feature = "bedrock")]
            Format::Bedrock => true,
            _ => false,
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
        // The top-level members, read without building a tree (a payload may be as large
        // as the event limit; a tree of it would cost ~100 times that).
        let text = utf8(payload.trim_ascii()).ok()?;
        let mut c = Cursor::new(text);
        let mut array = None;
        if c.peek() == Some(b'[') {
            let mut e = c.array().ok()?;
            if !c.element(&mut e).ok()? {
                return None;
            }
            array = Some(e);
        }
        let mut ty = String::new();
        let (mut gemini, mut chat, mut message, mut done) = (false, false, false, false);
        let (mut output, mut stop_reason) = (false, false);
        let mut m = c.object().ok()?;
        while let Some(k) = c.key(&mut m).ok()? {
            let k = k.cow();
            match &*k {
                "type" | "object" if c.peek() == Some(b'"') => {
                    let v = c.string().ok()?.cow();
                    if k == "type" {
                        ty = v.into_owned();
                    } else if v == "chat.completion.chunk" {
                        chat = true;
                    } else if v == "response" {
                        // A Responses API body, not streamed.
                        ty = "response.".into();
                    }
                }
                _ => {
                    c.skip().ok()?;
                    match &*k {
                        "candidates" | "promptFeedback" => gemini = true,
                        "choices" => chat = true,
                        "message" => message = true,
                        "done" => done = true,
                        "output" => output = true,
                        "stopReason" => stop_reason = true,
                        _ => {}
                    }
                }
            }
        }
        // The rest of the payload must be JSON too (validated, not kept).
        if let Some(mut e) = array {
            while c.element(&mut e).ok()? {
                c.skip().ok()?;
            }
        }
        c.end().ok()?;
        if ty.starts_with("response.") {
            Some(Format::OpenAiResponses)
        } else if ty.starts_with("message_") || ty.starts_with("content_block_") || ty == "message"
        {
            Some(Format::Anthropic)
        } else if gemini {
            Some(Format::Gemini)
        } else if chat {
            Some(Format::OpenAiChat)
        } else if message && done {
            Some(Format::Ollama)
        } else if output && stop_reason {
            // A non-streaming Bedrock `Converse` body.
            #[cfg(feature = "bedrock")]
            return Some(Format::Bedrock);
            #[cfg(not(feature = "bedrock"))]
            return None;
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
    /// The provider could not parse the model's tool call and delivered none (Gemini's
    /// `MALFORMED_FUNCTION_CALL`): the assembler reports it as a failed call.
    MalformedCall,
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
            FinishReason::MalformedCall => "malformed_call",
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
            "error" | "failed" => FinishReason::Error,
            "MALFORMED_FUNCTION_CALL" => FinishReason::MalformedCall,
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
    /// OpenRouter's `reasoning_details` as a delta carried them: fragments of reasoning
    /// details (their text, summary or encrypted data in pieces, a signature in a later
    /// element of the same `type` and `index`). The assembler merges them into the array a
    /// tool loop must send back ([`crate::assemble::Event::ReasoningDetails`]).
    ReasoningDetail {
        /// Choice / candidate index.
        choice: u32,
        /// One fragment's JSON text (an object), or a delta's whole array of them as it
        /// stood in the payload (one delta for the array, however many elements it has:
        /// its elements that are not objects are none). Either way, as it stood.
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
    /// An error reported by the provider inside the stream.
    Error {
        /// An HTTP-like status in the error, if any.
        status: Option<u16>,
        /// The message.
        message: String,
        /// The error's raw JSON.
        body: String,
    },
    /// A payload that is not what its format sends (not UTF-8, not the JSON it should
    /// be): whatever it carried is lost, so the calls open at that point cannot be trusted.
    Undecodable {
        /// Why, starting `undecodable`.
        message: String,
        /// The payload (lossily as text).
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
    #[cfg(feature = "bedrock")]
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
            #[cfg(feature = "bedrock")]
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
            #[cfg(feature = "bedrock")]
            Decoder::Bedrock(d) => d.decode(event, payload, out),
        }
    }

    /// [`Decoder::decode`], except that a payload that is a call's argument fragment and
    /// nothing else, read by the decoder's template (the most frequent payload of a stream
    /// of calls), gives no [`Delta`]: its arguments are decoded into `args` (cleared
    /// first) and the [`Fragment`] returned says whose they are — what the delta would
    /// have said, without the delta's allocation.
    pub(crate) fn decode_lane(
        &mut self,
        event: Option<&[u8]>,
        payload: &[u8],
        out: &mut Vec<Delta>,
        args: &mut String,
    ) -> Option<Fragment> {
        match self {
            Decoder::OpenAiChat(d) => d.decode_lane(payload, out, args),
            Decoder::OpenAiResponses(d) => d.decode_lane(event, payload, out, args),
            Decoder::Anthropic(d) => d.decode_lane(event, payload, out, args),
            _ => {
                self.decode(event, payload, out);
                None
            }
        }
    }
}

impl Decoder {
    /// The template of a decoder that reads call fragments with one and has one (the chat
    /// completions and Responses decoders'): [`Decoder::fragment_at`]'s reader.
    pub(crate) fn fragment_templates(&self) -> Option<&template::Templates> {
        match self {
            Decoder::OpenAiChat(d) => Some(d.templates()),
            Decoder::OpenAiResponses(d) => Some(d.templates()),
            _ => None,
        }
    }

    /// A call's argument fragment and nothing else that is the payload at the start of
    /// `bytes`, given with the template's key ([`template::Templates::key`]: the SSE event
    /// type, or none for the chat decoder's), read by the decoder's template as
    /// [`Decoder::decode_lane`] would read that payload: where it ends, whose fragment, its
    /// text appended to `args`, and the text as it stands in `bytes` (with whether it is
    /// of the simple kind, the escaper's own text). Nothing changes
    /// until the caller says it took the fragment ([`Decoder::took_fragment`]), and the
    /// decoder then stands as `decode_lane` would have left it.
    pub(crate) fn fragment_at<'p>(
        &self,
        bytes: &'p [u8],
        args: &mut String,
    ) -> Option<(usize, Fragment, &'p str, bool)> {
        self.fragment_templates()?.fragment_at(bytes, args)
    }

    /// The fragment [`Decoder::fragment_at`] read was taken: `args` its text, `simple` as
    /// it stood in the payload when that is of the simple kind (the escaper's text).
    pub(crate) fn took_fragment(&mut self, f: Fragment, args: &str, simple: Option<&str>) {
        match self {
            Decoder::OpenAiChat(d) => d.took_fragment(),
            Decoder::OpenAiResponses(d) => d.took_fragment(f, args, simple),
            _ => {}
        }
    }
}

/// A call's argument fragment with nothing else, read by a decoder's template
/// ([`Decoder::decode_lane`]): whose it is (its text went to the buffer given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fragment {
    /// The call's choice.
    pub(crate) choice: u32,
    /// The call's index.
    pub(crate) index: Option<u32>,
}

impl Fragment {
    /// The delta [`Decoder::decode`] gives for it.
    pub(crate) fn into_delta(self, arguments: String) -> Delta {
        Delta::Call {
            choice: self.choice,
            index: self.index,
            id: None,
            name: None,
            arguments: Some(arguments),
            complete: false,
        }
    }
}

/// A decoder's `decode` from its `decode_lane`: the fragment, if the lane gave one, made
/// the delta it stands for.
pub(crate) fn through_lane(
    out: &mut Vec<Delta>,
    lane: impl FnOnce(&mut Vec<Delta>, &mut String) -> Option<Fragment>,
) {
    let mut args = String::new();
    if let Some(f) = lane(out, &mut args) {
        out.push(f.into_delta(args));
    }
}

/// How many tool blocks (or function-call items) a decoder follows at once. Past it, a new
/// block's deltas still reach the assembler (whose own limit, `Policy::max_calls`, is far
/// lower by default) but its end is not tracked: a stream cannot grow the decoder's sets
/// without bound.
pub(crate) const MAX_OPEN_BLOCKS: usize = 1024;

/// Parse an envelope. The payload is checked as UTF-8 once, up front (std's check runs at
/// many GB/s on ASCII), so serde_json reads it as `&str` and skips its per-string checks.
pub(crate) fn parse<'a, T: serde::Deserialize<'a>>(payload: &'a [u8]) -> Result<T, Delta> {
    let text = utf8(payload).map_err(|e| Delta::Undecodable {
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

/// Text of choice 0, when there is some.
pub(crate) fn text_delta(t: Option<std::borrow::Cow<'_, str>>) -> Option<Delta> {
    t.filter(|t| !t.is_empty()).map(|t| Delta::Text {
        choice: 0,
        text: t.into_owned(),
    })
}

/// Reasoning text of choice 0, when there is some.
pub(crate) fn reasoning_delta(t: Option<std::borrow::Cow<'_, str>>) -> Option<Delta> {
    t.filter(|t| !t.is_empty()).map(|t| Delta::Reasoning {
        choice: 0,
        text: t.into_owned(),
    })
}

/// The end of a whole (non-streaming) body: its finish by the provider's raw reason, its
/// usage, and the terminal marker (a body that was read whole is complete).
pub(crate) fn whole_end(
    reason: Option<std::borrow::Cow<'_, str>>,
    usage: Option<&str>,
    out: &mut Vec<Delta>,
) {
    if let Some(raw) = reason {
        out.push(Delta::Finish {
            choice: 0,
            reason: FinishReason::from_raw(&raw),
            raw: raw.into_owned(),
        });
    }
    if let Some(u) = usage.filter(|&u| u != "null") {
        out.push(Delta::Usage { raw: u.to_string() });
    }
    out.push(Delta::Done);
}

/// A part of a payload that is not what it should be (its text kept).
pub(crate) fn malformed_text(text: &str) -> Delta {
    Delta::Undecodable {
        message: "undecodable payload: an item that is not one".into(),
        body: text.to_string(),
    }
}

/// An envelope that is not the JSON it should be.
pub(crate) fn malformed(payload: &[u8], e: &serde_json::Error) -> Delta {
    Delta::Undecodable {
        message: format!("undecodable payload: {e}"),
        body: String::from_utf8_lossy(payload).into_owned(),
    }
}

/// An error object inside a payload: its `message` and an HTTP-like status from `code`
/// (else `status`), read from the top-level members without building a tree (the last of a
/// repeated member counts, as in a tree). Not JSON: no message, no status.
pub(crate) fn error_delta(err: &str) -> Delta {
    let e = ErrorMembers::read(err).unwrap_or_default();
    let status = e
        .code
        .or(e.status)
        .flatten()
        .filter(|c| (100..600).contains(c))
        .map(|c| c as u16);
    Delta::Error {
        status,
        message: e.message.unwrap_or_default(),
        body: err.to_string(),
    }
}

/// What an error value says, read in one pass: its `message` (the value itself when it is
/// a string), and whether its `code` and `status` members are present and, if so, their
/// values as non-negative integers.
#[derive(Default)]
struct ErrorMembers {
    message: Option<String>,
    code: Option<Option<u64>>,
    status: Option<Option<u64>>,
}

impl ErrorMembers {
    fn read(text: &str) -> Result<ErrorMembers, CursorError> {
        let mut c = Cursor::new(text);
        let mut e = ErrorMembers::default();
        if c.peek() == Some(b'"') {
            e.message = Some(c.string()?.cow().into_owned());
        } else if c.peek() == Some(b'{') {
            let mut m = c.object()?;
            while let Some(k) = c.key(&mut m)? {
                let k = k.cow();
                if k == "message" && c.peek() == Some(b'"') {
                    e.message = Some(c.string()?.cow().into_owned());
                    continue;
                }
                let v = c.skip()?;
                let integer = v.bytes().all(|b| b.is_ascii_digit());
                let number = v.parse::<u64>().ok().filter(|_| integer);
                match &*k {
                    "message" => e.message = None,
                    "code" => e.code = Some(number),
                    "status" => e.status = Some(number),
                    _ => {}
                }
            }
        } else {
            c.skip()?;
        }
        c.end()?;
        Ok(e)
    }
}

/// The `message` of an exception's payload: a JSON object's `message` member, if it is a
/// string.
#[cfg(feature = "bedrock")]
pub(crate) fn message_member(payload: &[u8]) -> Option<String> {
    let text = utf8(payload).ok()?;
    if Cursor::new(text).peek() != Some(b'{') {
        return None;
    }
    ErrorMembers::read(text).ok()?.message
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
