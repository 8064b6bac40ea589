//! [`Stream`]: framing + provider decoding + tool-call assembly behind one
//! `push(Bytes)` / `finish()`.
//!
//! ```
//! use bytes::Bytes;
//! use toolstream::assemble::Event;
//! use toolstream::pipeline::Stream;
//!
//! let mut s = Stream::new(None); // detect the format from the first frames
//! let mut events = Vec::new();
//! s.push(Bytes::from_static(br#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}
//!
//! data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}}]}
//!
//! "#), &mut events);
//! // The call is out the moment its arguments object closed.
//! assert!(events.iter().any(|e| matches!(e, Event::ToolCall(c) if &c.arguments[..] == br#"{"city":"Paris"}"#)));
//! s.push(Bytes::from_static(b"data: [DONE]\n\n"), &mut events);
//! s.finish(&mut events);
//! assert_eq!(events.last(), Some(&Event::End { complete: true }));
//! ```

use bytes::Bytes;

use crate::assemble::{Event, Policy, ToolCallAssembler};
use crate::eventstream;
use crate::ndjson;
use crate::provider::{self, Delta, Format, Framing};
use crate::sse;

/// Whitespace held before the framing is known.
const MAX_HELD: usize = 64 << 10;
/// Frames held before the format is known.
const MAX_PENDING: usize = 16;

#[derive(Clone, Debug)]
enum Framer {
    /// Not decided yet (auto): nothing but whitespace seen.
    Undecided,
    Sse(sse::Decoder),
    Ndjson(ndjson::Decoder),
    EventStream(eventstream::Decoder),
}

/// The AWS event stream decoder for the pipeline: a message may be as large as an SSE
/// event.
fn event_stream_decoder(framing: sse::Limits) -> eventstream::Decoder {
    eventstream::Decoder::with_limits(
        eventstream::Limits::default().max_message_bytes(framing.event_bytes()),
    )
}

/// The one-call pipeline. See the module docs.
#[derive(Clone, Debug)]
pub struct Stream {
    framer: Framer,
    framing: sse::Limits,
    /// Bytes seen while the framing is undecided (whitespace only).
    held: Vec<Bytes>,
    format: Option<Format>,
    decoder: Option<provider::Decoder>,
    /// Payloads that arrived before the format was known.
    pending: Vec<(Option<Bytes>, Bytes)>,
    assembler: ToolCallAssembler,
    deltas: Vec<Delta>,
    sse_items: Vec<sse::Item>,
    nd_items: Vec<ndjson::Item>,
    messages: Vec<eventstream::Message>,
    /// The event stream framing failed (reported once).
    framing_failed: bool,
}

impl Stream {
    /// A pipeline for `format`, or for the format detected from the first frames (`None`).
    pub fn new(format: Option<Format>) -> Self {
        Self::with_policy(format, Policy::default())
    }

    /// A pipeline with an assembler policy.
    pub fn with_policy(format: Option<Format>, policy: Policy) -> Self {
        Self::with_limits(format, policy, sse::Limits::default())
    }

    /// A pipeline with an assembler policy and framing limits (the SSE line and event
    /// limits; NDJSON lines use the SSE line limit, AWS event stream messages the event
    /// limit).
    pub fn with_limits(format: Option<Format>, policy: Policy, framing: sse::Limits) -> Self {
        let framer = match format.map(Format::framing) {
            Some(Framing::Sse) => Framer::Sse(sse::Decoder::with_limits(framing)),
            Some(Framing::Ndjson) => Framer::Ndjson(ndjson::Decoder::with_limits(
                framing.line_bytes(),
                crate::json::Limits::default(),
            )),
            Some(Framing::EventStream) => Framer::EventStream(event_stream_decoder(framing)),
            None => Framer::Undecided,
        };
        Stream {
            framer,
            framing,
            held: Vec::new(),
            format,
            decoder: format.map(provider::Decoder::new),
            pending: Vec::new(),
            assembler: ToolCallAssembler::new(policy),
            deltas: Vec::new(),
            sse_items: Vec::new(),
            nd_items: Vec::new(),
            messages: Vec::new(),
            framing_failed: false,
        }
    }

    /// Bytes the pipeline holds between pushes: the framing's partial line and event, and the
    /// open calls' argument buffers; each part is bounded by its limit. (Whitespace held
    /// before the framing is known, and payloads held before the format is known, are not
    /// counted: the second are bounded by the event limit times the frames before detection.)
    pub fn buffered(&self) -> usize {
        let framing = match &self.framer {
            Framer::Undecided => 0,
            Framer::Sse(d) => d.buffered(),
            Framer::Ndjson(d) => d.buffered(),
            Framer::EventStream(d) => d.buffered(),
        };
        framing + self.assembler.buffered()
    }

    /// The live view of call slot `index`'s arguments while they stream, when the policy's
    /// [`Policy::preview`](crate::assemble::Policy::preview) is on; see
    /// [`ToolCallAssembler::preview`].
    pub fn preview(&self, index: u32) -> Option<&serde_json::Value> {
        self.assembler.preview(index)
    }

    /// The format in use (once known).
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Feed the next chunk of the response body; events it completes are appended to `out`.
    pub fn push(&mut self, chunk: Bytes, out: &mut Vec<Event>) {
        if let Framer::Undecided = self.framer {
            let held: usize = self.held.iter().map(Bytes::len).sum();
            let first = chunk.iter().find(|b| !b.is_ascii_whitespace()).copied();
            // Whitespace only so far: hold it, but not without bound (then it is SSE).
            let first = match first {
                Some(b) => b,
                None if held + chunk.len() <= MAX_HELD => {
                    self.held.push(chunk);
                    return;
                }
                None => b':',
            };
            // A JSON value first means NDJSON (Ollama native); a zero byte, the high byte of
            // a binary length prefix, the AWS event stream (Bedrock); anything else is SSE.
            self.framer = if first == 0 {
                self.format = Some(Format::Bedrock);
                self.decoder = Some(provider::Decoder::new(Format::Bedrock));
                Framer::EventStream(event_stream_decoder(self.framing))
            } else if matches!(first, b'{' | b'[') {
                Framer::Ndjson(ndjson::Decoder::with_limits(
                    self.framing.line_bytes(),
                    crate::json::Limits::default(),
                ))
            } else {
                Framer::Sse(sse::Decoder::with_limits(self.framing))
            };
            for held in std::mem::take(&mut self.held) {
                self.frame(held, out);
            }
        }
        self.frame(chunk, out);
    }

    fn frame(&mut self, chunk: Bytes, out: &mut Vec<Event>) {
        match &mut self.framer {
            Framer::Undecided => {}
            Framer::Sse(d) => {
                d.push(chunk, &mut self.sse_items);
                self.sse_events(out);
            }
            Framer::Ndjson(d) => {
                d.push(chunk, &mut self.nd_items);
                self.lines(out);
            }
            Framer::EventStream(d) => {
                let r = d.push(chunk, &mut self.messages);
                self.event_messages(out);
                if let Err(e) = r {
                    // Reported once: the decoder is fused and every later push fails alike.
                    if !std::mem::replace(&mut self.framing_failed, true) {
                        out.push(Event::ProviderError {
                            status: None,
                            message: e.to_string(),
                            body: String::new(),
                        });
                    }
                }
            }
        }
    }

    /// The AWS event stream messages decoded so far, each as one framed payload: an
    /// event by its `:event-type`, an exception by its `:exception-type` (payload
    /// `{"message": ...}`), an error message as `error:` and its `:error-code` (its
    /// `:error-message` made the payload's message).
    fn event_messages(&mut self, out: &mut Vec<Event>) {
        let mut messages = std::mem::take(&mut self.messages);
        for m in messages.drain(..) {
            let kind = m.str_header(":message-type").unwrap_or(b"event");
            if kind == b"error" {
                let code = m.str_header(":error-code").unwrap_or(b"error");
                let message = m.str_header(":error-message").unwrap_or_default();
                let payload = serde_json::json!({
                    "message": String::from_utf8_lossy(message),
                })
                .to_string();
                let name = [&b"error:"[..], code].concat();
                self.payload(Some(&name), Bytes::from(payload), out);
                continue;
            }
            let name = if kind == b"exception" {
                m.str_header(":exception-type")
                    .unwrap_or(b"unknownException")
            } else {
                m.str_header(":event-type").unwrap_or_default()
            };
            self.payload(Some(name), m.payload().clone(), out);
        }
        self.messages = messages;
    }

    fn lines(&mut self, out: &mut Vec<Event>) {
        let items = std::mem::take(&mut self.nd_items);
        for item in &items {
            match item {
                ndjson::Item::Value(v) => self.payload(None, v.bytes().clone(), out),
                ndjson::Item::Error(e) => out.push(Event::ProviderError {
                    status: None,
                    message: format!("undecodable line: {e}"),
                    body: String::from_utf8_lossy(e.raw()).into_owned(),
                }),
            }
        }
        self.nd_items = items;
        self.nd_items.clear();
    }

    /// The SSE events decoded so far, each as one framed payload (its type, unless the
    /// default `message`, and its data).
    fn sse_events(&mut self, out: &mut Vec<Event>) {
        let mut items = std::mem::take(&mut self.sse_items);
        for item in items.drain(..) {
            if let sse::Item::Event(e) = item {
                let ty = e.event_type();
                let ty = (ty != b"message").then_some(ty);
                self.payload(ty, e.data().clone(), out);
            }
        }
        self.sse_items = items;
    }

    /// One framed payload. The event type is copied only if the payload must wait for
    /// the format to be detected.
    fn payload(&mut self, event: Option<&[u8]>, data: Bytes, out: &mut Vec<Event>) {
        if self.decoder.is_none() {
            match Format::detect(event, &data) {
                Some(f) => {
                    self.format = Some(f);
                    self.decoder = Some(provider::Decoder::new(f));
                    for (e, d) in std::mem::take(&mut self.pending) {
                        self.decode(e.as_deref(), &d, out);
                    }
                }
                // Held until the format shows, but not for ever: past a few frames the
                // payloads are read as OpenAI chat, the lingua franca.
                None if self.pending.len() < MAX_PENDING => {
                    self.pending.push((event.map(Bytes::copy_from_slice), data));
                    return;
                }
                None => {
                    self.format = Some(Format::OpenAiChat);
                    self.decoder = Some(provider::Decoder::new(Format::OpenAiChat));
                    for (e, d) in std::mem::take(&mut self.pending) {
                        self.decode(e.as_deref(), &d, out);
                    }
                }
            }
        }
        self.decode(event, &data, out);
    }

    fn decode(&mut self, event: Option<&[u8]>, data: &[u8], out: &mut Vec<Event>) {
        let Some(decoder) = self.decoder.as_mut() else {
            return;
        };
        decoder.decode(event, data, &mut self.deltas);
        for d in self.deltas.drain(..) {
            self.assembler.push(d, out);
        }
    }

    /// End of stream: closes open calls (truncated if the stream ended without its
    /// format's terminal marker) and appends [`Event::End`].
    pub fn finish(mut self, out: &mut Vec<Event>) {
        match std::mem::replace(&mut self.framer, Framer::Undecided) {
            Framer::Sse(d) => {
                let end = d.finish(&mut self.sse_items);
                self.sse_events(out);
                // An event cut off by the end of the stream is not dispatched (WHATWG), but
                // what it carried is decoded so that an error sent just before a dropped
                // connection is not lost. The stream is incomplete either way.
                if let Err(partial) = end {
                    if !partial.data.is_empty() {
                        let ty = (!partial.event.is_empty()).then_some(&partial.event[..]);
                        self.payload(ty, partial.data, out);
                    }
                }
            }
            Framer::Ndjson(d) => {
                d.finish(&mut self.nd_items);
                self.lines(out);
            }
            Framer::EventStream(d) => {
                // A message cut by the end of the stream is lost (its checksum is at its
                // end); the stream is incomplete unless `messageStop` came, as it is for
                // any format without its terminal marker.
                let _ = d.finish();
            }
            Framer::Undecided => {}
        }
        // Payloads of a format never recognised: decode them as OpenAI chat, the
        // lingua franca, so their errors are not lost.
        if self.decoder.is_none() && !self.pending.is_empty() {
            self.format = Some(Format::OpenAiChat);
            self.decoder = Some(provider::Decoder::new(Format::OpenAiChat));
            for (e, d) in std::mem::take(&mut self.pending) {
                self.decode(e.as_deref(), &d, out);
            }
        }
        let complete = self.assembler.saw_end_marker()
            || (self.assembler.saw_finish()
                && matches!(self.format, Some(Format::OpenAiChat | Format::Gemini)));
        self.assembler.finish(complete, out);
        out.push(Event::End { complete });
    }
}
