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

use crate::assemble::{DropReason, Dropped, Event, Policy, ToolCallAssembler};
#[cfg(feature = "bedrock")]
use crate::eventstream;
use crate::ndjson;
use crate::provider::{self, Delta, FinishReason, Format, Framing};
use crate::sse;
use crate::text_calls::{Extractor, Family, Piece, Tools, MAX_CHOICES};

/// Whitespace held before the framing is known: past this many leading whitespace bytes,
/// the stream is read as SSE, however it is chunked.
const MAX_HELD: usize = 64 << 10;
/// Frames held before the format is known (and at most the event limit of bytes in all).
const MAX_PENDING: usize = 16;
/// The most of one pushed chunk a line-framed or binary decoder is handed at a time: what
/// it decodes from one piece is handled before the next, so one huge push costs what many
/// small ones cost.
const PIECE: usize = 64 << 10;

#[derive(Clone, Debug)]
enum Framer {
    /// Not decided yet (auto): nothing but whitespace seen.
    Undecided,
    Sse(sse::Decoder),
    Ndjson(ndjson::Decoder),
    #[cfg(feature = "bedrock")]
    EventStream(eventstream::Decoder),
}

/// What each framing may buffer, set per framing: the SSE line and event, the NDJSON
/// line, the AWS event stream message. Each over-limit line, event or message is dropped
/// and reported ([`Event::Dropped`]).
///
/// The default is the SSE decoder's (8 MiB lines, 16 MiB events), NDJSON lines as long as
/// an SSE line and event stream messages as long as an SSE event; `From<sse::Limits>`
/// derives the other two from the SSE limits the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramingLimits {
    sse: sse::Limits,
    ndjson_line: u64,
    event_stream_message: u64,
}

impl Default for FramingLimits {
    fn default() -> Self {
        sse::Limits::default().into()
    }
}

impl From<sse::Limits> for FramingLimits {
    fn from(sse: sse::Limits) -> Self {
        FramingLimits {
            sse,
            ndjson_line: sse.line_bytes(),
            event_stream_message: sse.event_bytes(),
        }
    }
}

impl FramingLimits {
    /// The SSE line and event limits (the other framings' are left as they are).
    pub fn sse(mut self, limits: sse::Limits) -> Self {
        self.sse = limits;
        self
    }
    /// Maximum bytes of one NDJSON line, without its line end (at least 1).
    pub fn ndjson_line_bytes(mut self, n: u64) -> Self {
        self.ndjson_line = n.max(1);
        self
    }
    /// Maximum bytes of one AWS event stream message, prelude and checksums included (at
    /// least the 16 bytes of those).
    pub fn event_stream_message_bytes(mut self, n: u64) -> Self {
        self.event_stream_message = n.max(16);
        self
    }
    /// The SSE limits.
    pub fn sse_limits(&self) -> sse::Limits {
        self.sse
    }
    /// The NDJSON line limit.
    pub fn ndjson_line(&self) -> u64 {
        self.ndjson_line
    }
    /// The AWS event stream message limit.
    pub fn event_stream_message(&self) -> u64 {
        self.event_stream_message
    }
    /// Payloads held before the format shows: at most as many bytes as one SSE event.
    fn pending_bytes(&self) -> u64 {
        self.sse.event_bytes()
    }
}

/// The AWS event stream decoder for the pipeline.
#[cfg(feature = "bedrock")]
fn event_stream_decoder(framing: FramingLimits) -> eventstream::Decoder {
    eventstream::Decoder::with_limits(
        eventstream::Limits::default().max_message_bytes(framing.event_stream_message),
    )
}

/// A payload that arrived before the format was known: its event type, data and offset.
type Pending = (Option<Bytes>, Bytes, u64);

/// The one-call pipeline. See the module docs.
///
/// What it guarantees whatever the bytes (each tested, see the README's Guarantees):
/// nothing it drops goes unreported ([`Event::Dropped`] for an over-limit line or event,
/// payloads after the terminal marker, a stream that is no event stream; an error event
/// for each of the first [`MAX_UNDECODABLE_REPORTS`] undecodable payloads, one
/// [`Event::Dropped`] for the rest), every call open when bytes were lost fails, and
/// [`Event::End`] is `complete` only for a whole stream; memory stays within the
/// configured limits plus a constant times the chunk in hand.
#[derive(Clone, Debug)]
pub struct Stream {
    framer: Framer,
    framing: FramingLimits,
    /// Bytes seen while the framing is undecided (whitespace only).
    /// (Copied into one buffer: a million one-byte chunks must not cost a handle each.)
    held: Vec<u8>,
    format: Option<Format>,
    decoder: Option<provider::Decoder>,
    /// Payloads that arrived before the format was known, and their bytes.
    pending: Vec<Pending>,
    pending_len: usize,
    assembler: ToolCallAssembler,
    deltas: Vec<Delta>,
    nd_items: Vec<ndjson::Item>,
    #[cfg(feature = "bedrock")]
    messages: Vec<eventstream::Message>,
    /// The event stream framing failed (reported once).
    #[cfg(feature = "bedrock")]
    framing_failed: bool,
    /// The SSE decoder produced something (an event, a comment, a retry, a skip).
    sse_items: bool,
    /// The ids the assembler makes are set up (from the first payload decoded).
    ids_set: bool,
    /// Payloads after the terminal marker: the first one's offset, and their bytes.
    after_end: Option<(u64, u64)>,
    /// Undecodable payloads reported one by one so far (at most
    /// [`MAX_UNDECODABLE_REPORTS`]).
    undecodable: usize,
    /// Undecodable payloads past those: the first one's offset, and their bytes.
    undecodable_dropped: Option<(u64, u64)>,
    /// The offset of the event the end of the stream cut off, once `finish` decodes it:
    /// if it does not decode, that is the cut, not an error the provider sent.
    cut_at: Option<u64>,
    /// Calls written into the text, when extracted ([`Stream::with_text_calls`]).
    text_calls: Option<Box<TextCalls>>,
}

/// The extraction of calls written into the text: an extractor per choice.
#[derive(Clone, Debug)]
struct TextCalls {
    family: Option<Family>,
    tools: Tools,
    /// Each choice's extractor, and whether a call was taken out of its text.
    choices: Vec<(u32, Extractor, bool)>,
    pieces: Vec<Piece>,
}

impl TextCalls {
    /// Choice `choice`'s text delta: its pieces to the assembler.
    fn text(&mut self, choice: u32, text: String, a: &mut ToolCallAssembler, out: &mut Vec<Event>) {
        let at = match self.choices.iter().position(|(c, ..)| *c == choice) {
            Some(at) => at,
            None if self.choices.len() >= MAX_CHOICES => {
                a.push(Delta::Text { choice, text }, out);
                return;
            }
            None => {
                let x = Extractor::new(self.family, self.tools.clone());
                self.choices.push((choice, x, false));
                self.choices.len() - 1
            }
        };
        let (_, x, called) = &mut self.choices[at];
        if x.passes(&text) {
            // Plain text, the most of any stream: straight on.
            a.push(Delta::Text { choice, text }, out);
            return;
        }
        x.push_owned(text, &mut self.pieces);
        for p in self.pieces.drain(..) {
            *called |= matches!(p, Piece::Call { .. });
            a.push_text_piece(choice, p, out);
        }
    }

    /// The end of choice `choice`'s text (`None`: of every choice's).
    /// Whether a call was taken out of the text of choice `choice`.
    fn finish(
        &mut self,
        choice: Option<u32>,
        a: &mut ToolCallAssembler,
        out: &mut Vec<Event>,
    ) -> bool {
        let mut any = false;
        for (c, x, called) in &mut self.choices {
            if choice.is_none_or(|choice| choice == *c) {
                x.finish(&mut self.pieces);
                for p in self.pieces.drain(..) {
                    *called |= matches!(p, Piece::Call { .. });
                    a.push_text_piece(*c, p, out);
                }
                any |= *called;
            }
        }
        any
    }
}

/// Undecodable payloads a stream reports one by one, each as an [`Event::ProviderError`]
/// with its text; past these they are counted and reported once at the end, as
/// [`DropReason::Undecodable`]. A stream of tiny bad lines (`[\n` over and over) would
/// otherwise cost an event of about a hundred bytes for every two bytes of input.
pub const MAX_UNDECODABLE_REPORTS: usize = 16;

impl Stream {
    /// A pipeline for `format`, or for the format detected from the first frames (`None`).
    pub fn new(format: Option<Format>) -> Self {
        Self::with_policy(format, Policy::default())
    }

    /// A pipeline with an assembler policy.
    pub fn with_policy(format: Option<Format>, policy: Policy) -> Self {
        Self::with_limits(format, policy, FramingLimits::default())
    }

    /// A pipeline with an assembler policy and framing limits: a [`FramingLimits`], or
    /// [`sse::Limits`] alone (NDJSON lines then as long as an SSE line, AWS event stream
    /// messages as an SSE event).
    pub fn with_limits(
        format: Option<Format>,
        policy: Policy,
        framing: impl Into<FramingLimits>,
    ) -> Self {
        let framing = framing.into();
        let framer = match format.map(Format::framing) {
            Some(Framing::Sse) => Framer::Sse(sse::Decoder::with_limits(framing.sse)),
            Some(Framing::Ndjson) => Framer::Ndjson(ndjson_decoder(framing)),
            #[cfg(feature = "bedrock")]
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
            pending_len: 0,
            assembler: ToolCallAssembler::new(policy),
            deltas: Vec::new(),
            nd_items: Vec::new(),
            #[cfg(feature = "bedrock")]
            messages: Vec::new(),
            #[cfg(feature = "bedrock")]
            framing_failed: false,
            sse_items: false,
            ids_set: false,
            after_end: None,
            undecodable: 0,
            undecodable_dropped: None,
            cut_at: None,
            text_calls: None,
        }
    }

    /// Calls the model wrote into its text ([`text_calls`](crate::text_calls)) are taken out of it and handed
    /// over as calls: for `family` (`None`: any family, recognised by its marker), and only
    /// calls to `tools` (the tools the request declared; other markup stays text). Each
    /// such call has a slot of its own and an id made for it in the API's shape
    /// ([`crate::ids`]: from the response's first payload and the slot).
    /// Off unless set.
    pub fn with_text_calls(mut self, family: Option<Family>, tools: Tools) -> Self {
        self.text_calls = Some(Box::new(TextCalls {
            family,
            tools,
            choices: Vec::new(),
            pieces: Vec::new(),
        }));
        self
    }

    /// The tools the request declared (`schema::Tools::from_request`): with the policy's
    /// [`repair`](crate::assemble::Policy::repair) allowing
    /// [`coerce`](crate::repair::RepairKind::Coerce), a call that does not match its tool's
    /// schema only because a string stands where the schema says a number, a boolean, an
    /// object or an array is coerced, each change a repair of kind `coerce` with its path
    /// ([`crate::repair::coerce_call`]). Calls are not otherwise checked here: a call that
    /// still does not match comes out as it came, for the caller's check.
    pub fn with_schemas(mut self, tools: crate::schema::Tools) -> Self {
        self.assembler.set_schemas(std::sync::Arc::new(tools));
        self
    }

    /// Bytes the pipeline holds between pushes: the framing's partial line and event, the
    /// whitespace held before the framing is known (at most 64 KiB), the payloads held
    /// before the format is known (at most the event limit), what the assembler holds
    /// ([`ToolCallAssembler::buffered`]) and, with text calls on, the markup of a call in
    /// the text ([`Extractor::buffered`]); each part is bounded by its limit.
    pub fn buffered(&self) -> usize {
        let framing = match &self.framer {
            Framer::Undecided => 0,
            Framer::Sse(d) => d.buffered(),
            Framer::Ndjson(d) => d.buffered(),
            #[cfg(feature = "bedrock")]
            Framer::EventStream(d) => d.buffered(),
        };
        let text_calls = self.text_calls.as_ref().map_or(0, |tc| {
            tc.choices.iter().map(|(_, x, _)| x.buffered()).sum()
        });
        framing + self.held.len() + self.pending_len + self.assembler.buffered() + text_calls
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
    /// A chunk of any size costs what the same bytes in small chunks cost: it is decoded
    /// piece by piece, each piece's events handled before the next.
    pub fn push(&mut self, chunk: Bytes, out: &mut Vec<Event>) {
        if let Framer::Undecided = self.framer {
            // The framing is decided by the first byte that is not whitespace, once at
            // most MAX_HELD whitespace bytes came before it (counted, not chunked).
            let first = chunk.iter().position(|b| !b.is_ascii_whitespace());
            let first = match first {
                None if self.held.len() + chunk.len() <= MAX_HELD => {
                    self.held.extend_from_slice(&chunk);
                    return;
                }
                Some(k) if self.held.len() + k <= MAX_HELD => chunk[k],
                // Too much whitespace for anything but SSE's blank lines.
                _ => b':',
            };
            // A JSON value first means NDJSON (Ollama native); a zero byte, the high byte of
            // a binary length prefix, the AWS event stream (Bedrock; without the feature,
            // read as SSE and reported as no event stream); anything else is SSE.
            self.framer = if cfg!(feature = "bedrock") && first == 0 {
                self.event_stream()
            } else if matches!(first, b'{' | b'[') {
                Framer::Ndjson(ndjson_decoder(self.framing))
            } else {
                Framer::Sse(sse::Decoder::with_limits(self.framing.sse))
            };
            let held = std::mem::take(&mut self.held);
            if !held.is_empty() {
                self.frame(Bytes::from(held), out);
            }
        }
        self.frame(chunk, out);
    }

    /// The AWS event stream framing, and Bedrock's format.
    #[cfg(feature = "bedrock")]
    fn event_stream(&mut self) -> Framer {
        self.format = Some(Format::Bedrock);
        self.decoder = Some(provider::Decoder::new(Format::Bedrock));
        Framer::EventStream(event_stream_decoder(self.framing))
    }

    #[cfg(not(feature = "bedrock"))]
    fn event_stream(&mut self) -> Framer {
        unreachable!("only with the bedrock feature")
    }

    fn frame(&mut self, chunk: Bytes, out: &mut Vec<Event>) {
        match &mut self.framer {
            Framer::Undecided => {}
            Framer::Sse(d) => {
                // Lazily, one item at a time: a huge chunk never becomes a huge list.
                d.feed(chunk);
                self.sse_events(out);
            }
            _ => {
                let mut at = 0;
                while at < chunk.len() {
                    let end = chunk.len().min(at + PIECE);
                    self.frame_piece(chunk.slice(at..end), out);
                    at = end;
                }
            }
        }
    }

    /// A piece of at most [`PIECE`] bytes through a line-framed or binary decoder.
    fn frame_piece(&mut self, piece: Bytes, out: &mut Vec<Event>) {
        match &mut self.framer {
            Framer::Ndjson(d) => {
                d.push(piece, &mut self.nd_items);
                self.lines(out);
            }
            #[cfg(feature = "bedrock")]
            Framer::EventStream(d) => {
                let r = d.push(piece, &mut self.messages);
                self.event_messages(out);
                if let Err(e) = r {
                    // Reported once: the decoder is fused and every later push fails alike.
                    if !std::mem::replace(&mut self.framing_failed, true) {
                        self.assembler.interrupt("the event stream framing failed");
                        out.push(Event::ProviderError {
                            status: None,
                            message: e.to_string(),
                            body: String::new(),
                        });
                    }
                }
            }
            Framer::Undecided | Framer::Sse(_) => {}
        }
    }

    #[cfg(feature = "bedrock")]
    /// The AWS event stream messages decoded so far, each as one framed payload: an
    /// event by its `:event-type`, an exception by its `:exception-type`, an error message
    /// as the Bedrock decoder frames it ([`provider::bedrock::error_message`]).
    fn event_messages(&mut self, out: &mut Vec<Event>) {
        let mut messages = std::mem::take(&mut self.messages);
        for m in messages.drain(..) {
            let kind = m.str_header(":message-type").unwrap_or(b"event");
            if kind == b"error" {
                let code = m.str_header(":error-code").unwrap_or(b"error");
                let message = m.str_header(":error-message").unwrap_or_default();
                let (name, payload) = provider::bedrock::error_message(code, message);
                self.payload(Some(&name), payload, m.offset(), out);
                continue;
            }
            let name = if kind == b"exception" {
                m.str_header(":exception-type")
                    .unwrap_or(b"unknownException")
            } else {
                m.str_header(":event-type").unwrap_or_default()
            };
            self.payload(Some(name), m.payload().clone(), m.offset(), out);
        }
        self.messages = messages;
    }

    fn lines(&mut self, out: &mut Vec<Event>) {
        let mut items = std::mem::take(&mut self.nd_items);
        for item in items.drain(..) {
            match item {
                ndjson::Item::Value(v) => self.payload(None, v.bytes().clone(), v.offset(), out),
                ndjson::Item::Error(e) if e.kind() == ndjson::ErrorKind::LineTooLong => {
                    // Reported once the line passes the limit: at least this much of it.
                    let bytes = self.framing.ndjson_line + 1;
                    self.dropped(DropReason::LineTooLong, e.offset(), bytes, out)
                }
                ndjson::Item::Error(e) if self.cut_at == Some(e.line_offset()) => {
                    self.dropped(DropReason::Cut, e.line_offset(), e.raw().len() as u64, out)
                }
                ndjson::Item::Error(e) => {
                    self.assembler.interrupt("a line could not be decoded");
                    if !self.report_undecodable(e.offset(), e.raw().len()) {
                        continue;
                    }
                    out.push(Event::ProviderError {
                        status: None,
                        message: format!("undecodable line: {e}"),
                        body: String::from_utf8_lossy(e.raw()).into_owned(),
                    })
                }
            }
        }
        self.nd_items = items;
    }

    /// The SSE items decoded from what was fed, one at a time: each event as one framed
    /// payload (its type, unless the default `message`, and its data); a skipped event
    /// reported.
    fn sse_events(&mut self, out: &mut Vec<Event>) {
        loop {
            let item = match &mut self.framer {
                Framer::Sse(d) => d.next_item(),
                _ => None,
            };
            let Some(item) = item else {
                return;
            };
            self.sse_item(item, out);
        }
    }

    /// One SSE item: an event as a framed payload, a skipped event reported.
    fn sse_item(&mut self, item: sse::Item, out: &mut Vec<Event>) {
        self.sse_items = true;
        match item {
            sse::Item::Event(e) => {
                let ty = e.event_type();
                let ty = (ty != b"message").then_some(ty);
                self.payload(ty, e.data().clone(), e.offset(), out);
            }
            sse::Item::Skipped(s) => self.skipped(s, out),
            _ => {}
        }
    }

    fn skipped(&mut self, s: sse::Skipped, out: &mut Vec<Event>) {
        let reason = match s.reason {
            sse::SkipReason::LineTooLong => DropReason::LineTooLong,
            // A comment carries no data: skipping it loses nothing, as a comment within
            // the limit is nothing to the pipeline either.
            sse::SkipReason::CommentTooLong => return,
            _ => DropReason::EventTooLarge,
        };
        self.dropped(reason, s.offset, s.dropped, out);
    }

    /// Bytes a framing decoder dropped: reported, and every open call fails.
    fn dropped(&mut self, reason: DropReason, offset: u64, bytes: u64, out: &mut Vec<Event>) {
        self.assembler
            .interrupt(&format!("{} bytes dropped ({})", bytes, reason.as_str()));
        out.push(Event::Dropped(Dropped {
            reason,
            offset,
            bytes,
        }));
    }

    /// One framed payload. The event type is copied only if the payload must wait for
    /// the format to be detected. A payload of only whitespace carries nothing.
    fn payload(&mut self, event: Option<&[u8]>, data: Bytes, offset: u64, out: &mut Vec<Event>) {
        if data.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if self.decoder.is_none() {
            match Format::detect(event, &data) {
                Some(f) => self.start(f, out),
                // Held until the format shows, but not for ever: past a few frames (or
                // the event limit in bytes) the payloads are read as OpenAI chat, the
                // lingua franca.
                None if self.pending.len() < MAX_PENDING
                    && (self.pending_len + data.len()) as u64 <= self.framing.pending_bytes() =>
                {
                    self.pending_len += data.len();
                    self.pending
                        .push((event.map(Bytes::copy_from_slice), data, offset));
                    return;
                }
                None => self.start(Format::OpenAiChat, out),
            }
        }
        self.decode(event, &data, offset, out);
    }

    /// The format is known: the payloads held so far are decoded.
    fn start(&mut self, format: Format, out: &mut Vec<Event>) {
        self.format = Some(format);
        self.decoder = Some(provider::Decoder::new(format));
        self.pending_len = 0;
        for (e, d, at) in std::mem::take(&mut self.pending) {
            self.decode(e.as_deref(), &d, at, out);
        }
    }

    fn decode(&mut self, event: Option<&[u8]>, data: &[u8], offset: u64, out: &mut Vec<Event>) {
        let Some(decoder) = self.decoder.as_mut() else {
            return;
        };
        let trails = self.format.is_some_and(|f| f.trails_end(event));
        if self.assembler.saw_end_marker() && !trails {
            // After the terminal marker: a repeated `[DONE]` is harmless; anything else is
            // dropped, and reported once at the end.
            if data.trim_ascii() != b"[DONE]" {
                let (_, bytes) = self.after_end.get_or_insert((offset, 0));
                *bytes += data.len() as u64;
            }
            return;
        }
        if !self.ids_set {
            // The response's first payload (its id, its creation time) salts the ids made
            // for its text calls: whole when decoded, so the same at any chunking.
            self.ids_set = true;
            let format = self.format.unwrap_or(Format::OpenAiChat);
            let salt = crate::ids::salt(&data[..data.len().min(512)]);
            self.assembler.set_ids(format.id_prefix(), salt);
        }
        decoder.decode(event, data, &mut self.deltas);
        let mut deltas = std::mem::take(&mut self.deltas);
        for d in deltas.drain(..) {
            if matches!(d, Delta::Undecodable { .. }) && self.cut_at == Some(offset) {
                self.dropped(DropReason::Cut, offset, data.len() as u64, out);
                continue;
            }
            if matches!(d, Delta::Undecodable { .. })
                && !self.report_undecodable(offset, data.len())
            {
                self.assembler.interrupt("a payload could not be decoded");
                continue;
            }
            match (self.text_calls.as_deref_mut(), d) {
                (Some(tc), Delta::Text { choice, text }) => {
                    tc.text(choice, text, &mut self.assembler, out);
                }
                (
                    Some(tc),
                    Delta::Finish {
                        choice,
                        reason,
                        raw,
                    },
                ) => {
                    // The choice's text is over: what its extractor holds comes first.
                    // A model that wrote its calls into the text says it stopped; the
                    // reason a tool loop acts on is that it called tools (the provider's
                    // value stays in `raw`).
                    let called = tc.finish(Some(choice), &mut self.assembler, out);
                    let reason = match reason {
                        FinishReason::Stop if called => FinishReason::ToolCalls,
                        r => r,
                    };
                    let finish = Delta::Finish {
                        choice,
                        reason,
                        raw,
                    };
                    self.assembler.push(finish, out);
                }
                (_, d) => self.assembler.push(d, out),
            }
        }
        self.deltas = deltas;
    }

    /// Whether an undecodable payload is reported on its own (the first
    /// [`MAX_UNDECODABLE_REPORTS`] of the stream); if not, it is counted for the one
    /// report at the end.
    fn report_undecodable(&mut self, offset: u64, bytes: usize) -> bool {
        if self.undecodable < MAX_UNDECODABLE_REPORTS {
            self.undecodable += 1;
            return true;
        }
        let (_, total) = self.undecodable_dropped.get_or_insert((offset, 0));
        *total += bytes as u64;
        false
    }

    /// The SSE framing's end: what its decoder still yields, and an event cut off by the
    /// end of the stream.
    fn finish_sse(&mut self, d: sse::Decoder, out: &mut Vec<Event>) {
        let total = d.offset();
        // `finish` takes the decoder: what it still yields is handled here.
        let mut items = Vec::new();
        let end = d.finish(&mut items);
        for item in items {
            self.sse_item(item, out);
        }
        // An event cut off by the end of the stream is not dispatched (WHATWG), but
        // what it carried is decoded so that an error sent just before a dropped
        // connection is not lost. The stream is incomplete either way.
        if let Err(partial) = end {
            if let Some(s) = partial.skipped {
                self.sse_items = true;
                self.skipped(s, out);
            }
            if !partial.data.is_empty() {
                self.sse_items = true;
                let ty = (!partial.event.is_empty()).then_some(&partial.event[..]);
                let at = total - partial.discarded;
                self.cut_at = Some(at);
                self.payload(ty, partial.data, at, out);
            }
        }
        if !self.sse_items && total > 0 {
            self.dropped(DropReason::NotAnEventStream, 0, total, out);
        }
    }

    /// The NDJSON framing's end: the last line, cut off by the end of the stream.
    fn finish_ndjson(&mut self, d: ndjson::Decoder, out: &mut Vec<Event>) {
        // What `finish` yields is the last line, cut off by the end of the stream.
        d.finish(&mut self.nd_items);
        for item in &self.nd_items {
            if let ndjson::Item::Error(e) = item {
                if e.kind() != ndjson::ErrorKind::LineTooLong {
                    self.cut_at = Some(e.line_offset());
                }
            }
        }
        self.lines(out);
    }

    /// End of stream: closes open calls (truncated if the stream ended without its
    /// format's terminal marker), reports what was dropped, and appends [`Event::End`]:
    /// `complete` only if the terminal marker came and nothing was lost, interrupted or
    /// sent after it.
    pub fn finish(mut self, out: &mut Vec<Event>) {
        match std::mem::replace(&mut self.framer, Framer::Undecided) {
            Framer::Sse(d) => self.finish_sse(d, out),
            Framer::Ndjson(d) => self.finish_ndjson(d, out),
            #[cfg(feature = "bedrock")]
            Framer::EventStream(d) => {
                // A message cut by the end of the stream is lost (its checksum is at its
                // end): reported as the cut it is.
                if let Err(eventstream::Finish::Incomplete(i)) = d.finish() {
                    self.dropped(DropReason::Cut, i.offset, i.bytes as u64, out);
                }
            }
            Framer::Undecided => {}
        }
        // Payloads of a format never recognised: decode them as OpenAI chat, the
        // lingua franca, so their errors are not lost.
        if self.decoder.is_none() && !self.pending.is_empty() {
            self.start(Format::OpenAiChat, out);
        }
        if let Some((offset, bytes)) = self.after_end {
            out.push(Event::Dropped(Dropped {
                reason: DropReason::AfterEnd,
                offset,
                bytes,
            }));
        }
        let ended = self.assembler.saw_end_marker()
            || (self.assembler.saw_finish()
                && matches!(self.format, Some(Format::OpenAiChat | Format::Gemini)));
        if let Some((offset, bytes)) = self.undecodable_dropped {
            out.push(Event::Dropped(Dropped {
                reason: DropReason::Undecodable,
                offset,
                bytes,
            }));
        }
        if let Some(tc) = self.text_calls.as_deref_mut() {
            tc.finish(None, &mut self.assembler, out);
        }
        let complete = ended
            && !self.assembler.interrupted()
            && self.after_end.is_none()
            && self.undecodable_dropped.is_none();
        self.assembler.finish(complete, out);
        out.push(Event::End { complete });
    }
}

/// The NDJSON decoder for the pipeline.
fn ndjson_decoder(framing: FramingLimits) -> ndjson::Decoder {
    ndjson::Decoder::with_limits(framing.ndjson_line, crate::json::Limits::default())
}
