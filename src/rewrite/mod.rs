//! The response rewriters: sans-IO, bytes of the upstream's stream in, bytes for the client
//! out, in the provider's own shapes — what `toolstream proxy` applies, for a gateway to
//! embed.
//!
//! Each reads the stream with toolstream's layers (SSE framing, the provider's decoder,
//! the tool-call assembler) and forwards everything as it arrives except the tool calls'
//! argument fragments: those are held by the assembler, and each call goes out whole, in
//! the provider's shape, the moment its arguments object closes. Glued objects become
//! separate calls (ids made in the provider's shape, [`crate::ids`]), duplicates are
//! dropped, failed calls go out as the provider sent them (so the agent's own handling
//! applies), annotated with an SSE comment; a stream that was cut or lost data ends with an
//! error in the API's shape, never a clean end. With a [`text::TextSetting`], the calls
//! written into the text are taken out of it and sent as the API's calls.
//!
//! | API | rewriter | calls in the text become |
//! |---|---|---|
//! | OpenAI chat completions | [`OpenAiRewriter`] (and [`rewrite_completion`], not streaming) | `tool_calls` entries, `finish_reason: tool_calls` |
//! | Anthropic Messages | [`AnthropicRewriter`] (and [`rewrite_message`]) | `tool_use` blocks in their place, `stop_reason: tool_use` |
//! | OpenAI Responses | [`ResponsesRewriter`] (and [`rewrite_response`]) | `function_call` items after their message |
//!
//! [`Rewriter`] is any of the three by [`Api`]. Three ways to use it:
//!
//! - **sans-IO**: push the upstream's bytes, send what comes out:
//!
//! ```
//! use bytes::{Bytes, BytesMut};
//! use toolstream::classify::Provider;
//! use toolstream::rewrite::{Api, Rewriter};
//!
//! let mut r = Rewriter::new(Api::Messages, Provider::Anthropic, false, None);
//! let mut out = BytesMut::new();
//! for chunk in [&b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"[..],
//!               b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"] {
//!     r.push(Bytes::copy_from_slice(chunk), &mut out);
//!     // send `out.split()` to the client
//! }
//! let (counts, _) = r.finish(None, &mut out); // `Some(why)` when the upstream's body broke
//! assert!(out.ends_with(b"data: {\"type\":\"message_stop\"}\n\n"));
//! assert_eq!(counts.calls, 0);
//! ```
//!
//! - **tower** (feature `tower`): [`tower::RewriteLayer`] over the service that reaches the
//!   upstream; `proxy/examples/axum_gateway.rs` is a whole gateway in axum built so.
//! - **async streams** (feature `futures`): [`Rewriter::stream`] over any stream of chunks.
//! - **Python**: `toolstream.Rewriter("chat" | "anthropic" | "responses", text_calls=...,
//!   request=...)`, with `push(bytes) -> bytes` and `finish(cut=None) -> bytes`.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::assemble::{Event, Failure, IdSource, Policy, ToolCallAssembler};
use crate::classify::{classify_stream_error, Phase, Policy as ClassifyPolicy, Provider};
use crate::provider::{Decoder, Delta, Format};
use crate::sse;
use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};

use crate::text_calls::Piece;
use text::{Extraction, TextSetting};

mod any;
mod escaped;
mod responses;
pub mod text;
#[cfg(feature = "tower")]
pub mod tower;
mod whole;

#[cfg(feature = "futures")]
pub use any::RewriteStream;
pub use any::{Api, Rewriter};
pub use whole::{rewrite_message, rewrite_response};

pub use responses::{
    continue_request, previous_response_id, Continuation, MadeCall, ResponsesRewriter, MAX_HELD,
};

/// What a rewriter counted, for the logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Calls forwarded whole.
    pub calls: u32,
    /// Calls split out of glued objects (parts after the first).
    pub splits: u32,
    /// Duplicates dropped.
    pub duplicates: u32,
    /// Failed calls forwarded as the provider sent them.
    pub failures: u32,
    /// Errors inside the stream.
    pub errors: u32,
    /// Calls taken out of the text (`--text-calls`), among `calls`.
    pub text_calls: u32,
    /// Calls whose arguments were repaired (`--repair`), among `calls`.
    pub repaired: u32,
}

/// One SSE event or comment of the upstream stream, decoded.
enum Frame {
    Comment(Bytes),
    Event { ty: Bytes, data: Bytes },
    Skipped,
}

/// SSE framing, the provider's decoder and the assembler, fed by `push`.
struct Core {
    sse: Option<sse::Decoder>,
    /// The chunk being pushed (empty between pushes): what a payload kept past the push
    /// is a slice of ([`Core::keep`]).
    chunk: Bytes,
    decoder: Decoder,
    assembler: ToolCallAssembler,
    deltas: Vec<Delta>,
    /// A call's argument fragment read by the decoder's template ([`Decoder::decode_lane`]):
    /// one buffer for them all.
    args: String,
    provider: Provider,
    /// Calls written into the text, when taken out.
    text: Option<Box<Extraction>>,
    format: Format,
    /// The response's salt for the ids made ([`crate::ids::salt`] of its first payload).
    salt: Option<u64>,
    /// Ids minted for calls that came without one.
    minted: u32,
    /// The call ids sent to the client (a minted id is checked against them).
    sent: HashSet<String>,
    /// The provider's call indices whose end the last payload decoded said.
    ended: Vec<u32>,
    /// The argument bytes the last payload's call fragments carried.
    arg_bytes: usize,
    /// The provider's index of the last call delta the last payload decoded to.
    call_index: Option<u32>,
    /// The last payload named a call (a call delta with its id or name: a call's start).
    call_named: bool,
    /// The last payload decoded to one call fragment and nothing else (an argument
    /// delta).
    only_fragment: bool,
    /// The call whose fragments the last payloads were, while they run on ([`Run`]).
    run: Option<Run>,
    /// What the assembler made of a run's fragments when the run ended: for the rewriter
    /// to handle as its last fragment's payload would have ([`Rewrite::ran`]).
    ran: Vec<(u32, Event)>,
    /// A run's buffer, kept from one run to the next.
    run_buf: String,
    /// A run's buffer of escaped text, kept from one run to the next.
    run_raw: Vec<u8>,
    /// The arguments of the calls in flight as JSON string text, for a rewriter that
    /// writes calls whole ([`escaped`]).
    escaped: Option<escaped::Escaped>,
    /// The fragments [`Core::next_fragment`] took (for tests: the path is not otherwise
    /// seen from outside, its output being the framing's).
    #[cfg(test)]
    taken: usize,
}

/// A run of one call's argument fragments, one payload after another in the same push,
/// each held back from the assembler until the run ends (at any other payload, frame or
/// the push's end), then pushed as one: the splitter reads a fragment of a few bytes at a
/// fixed cost, a run of them at the cost of their bytes. Only fragments after the first of
/// a run wait, and only for a call the assembler has open, so the one push finds the slot
/// each of them would have found; the splitter's results do not depend on where its input
/// was cut, so the assembler's events are the same, and no payload between the first and
/// the last of the run writes anything of them: the client gets the same bytes
/// (`tests/rewrite_invariance.rs`).
struct Run {
    choice: u32,
    index: Option<u32>,
    /// The fragments held back, in order.
    args: String,
    /// Their JSON string text, when the core keeps it ([`Core::escaped`]).
    raw: Vec<u8>,
}

/// The most argument bytes a run holds back before it is pushed (bounds what a run holds
/// beside the chunk it came in).
const MAX_RUN: usize = 64 << 10;

/// The largest run buffer kept for the next run.
const KEEP_RUN_BUF: usize = 4 << 10;

impl Core {
    fn new(format: Format, provider: Provider) -> Self {
        Core {
            sse: Some(sse::Decoder::new()),
            chunk: Bytes::new(),
            decoder: Decoder::new(format),
            assembler: ToolCallAssembler::new(Policy::default()),
            deltas: Vec::new(),
            args: String::new(),
            provider,
            text: None,
            format,
            salt: None,
            minted: 0,
            sent: HashSet::new(),
            ended: Vec::new(),
            arg_bytes: 0,
            call_index: None,
            call_named: false,
            only_fragment: false,
            run: None,
            ran: Vec::new(),
            run_buf: String::new(),
            run_raw: Vec::new(),
            escaped: None,
            #[cfg(test)]
            taken: 0,
        }
    }

    /// The run of fragments ends: what it held goes to the assembler, and what the
    /// assembler makes of it to [`Core::ran`].
    fn end_run(&mut self) {
        let Some(mut run) = self.run.take() else {
            return;
        };
        if !run.args.is_empty() {
            if let Some(e) = &mut self.escaped {
                e.piece((run.choice, run.index), &run.args, Some(&run.raw));
            }
            let mut produced = Vec::new();
            self.assembler
                .push_fragment(run.choice, run.index, &run.args, &mut produced);
            self.ran
                .extend(produced.into_iter().map(|e| (run.choice, e)));
        }
        run.args.clear();
        run.raw.clear();
        // (A small one: a stream that ran a long run once does not keep its size.)
        if run.args.capacity() <= KEEP_RUN_BUF {
            self.run_buf = run.args;
        }
        if run.raw.capacity() <= KEEP_RUN_BUF {
            self.run_raw = run.raw;
        }
    }

    /// The open run's next fragment, read straight from the framing's chunk: an event next
    /// in it that is one `data:` line (after an `event:` line of the template's type, for
    /// a decoder whose templates have one), each line ended by LF and the event by a blank
    /// line, whose payload the decoder's template reads as the run's call's next argument
    /// fragment, goes to the run as [`Core::decode_tagged`] would take it: the framing,
    /// the decoder and the core are left as the event's way through them would leave them,
    /// without the framing's event or the decoder's dispatch. Anything else, down to one
    /// byte, is left to them (`false`). Only while a payload that is the run's next
    /// fragment changes nothing else ([`Rewrite::holds_fragments`]).
    fn next_fragment(&mut self, d: &mut sse::Decoder) -> bool {
        let Core {
            run,
            decoder,
            text,
            escaped,
            ..
        } = self;
        let Some(run) = run
            .as_mut()
            .filter(|r| text.is_none() && r.args.len() < MAX_RUN)
        else {
            return false;
        };
        let Some(rest) = d.between_events() else {
            return false;
        };
        let Some(key) = decoder.fragment_templates().and_then(|t| t.key()) else {
            return false;
        };
        // The framing's value of a field: after its name's colon and one space, if one is.
        let value = |line: &[u8], name: &[u8]| {
            let v = line.strip_prefix(name)?.strip_prefix(b":")?;
            Some(line.len() - v.strip_prefix(b" ").unwrap_or(v).len())
        };
        // The type line, when there is one: its length and where the data line starts.
        let (type_line, at) = match value(rest, b"event") {
            // (An empty type or `message` is the decoder's empty key: left to the framing.)
            Some(v) if !key.is_empty() => {
                let end = v + key.len();
                if rest.get(v..end) != Some(key) || rest.get(end) != Some(&b'\n') {
                    return false;
                }
                (end, end + 1)
            }
            Some(_) => return false,
            None if key.is_empty() => (0, 0),
            None => return false,
        };
        let Some(v) = value(&rest[at..], b"data") else {
            return false;
        };
        // The fragment's text goes onto the run's at once (taken off again if the event
        // is not taken).
        let mark = run.args.len();
        let Some((len, f, raw, simple)) = decoder.fragment_at(&rest[at + v..], &mut run.args)
        else {
            return false;
        };
        let data_line = v + len;
        let end = at + data_line;
        if rest.get(end..end + 2) != Some(b"\n\n")
            || !d.event_fits(type_line, data_line)
            || (run.choice, run.index) != (f.choice, f.index)
        {
            run.args.truncate(mark);
            return false;
        }
        decoder.took_fragment(f, &run.args[mark..], simple.then_some(raw));
        if escaped.is_some() {
            if simple {
                run.raw.extend_from_slice(raw.as_bytes());
            } else {
                crate::json::escape::write_inner(&mut run.raw, &run.args[mark..]);
            }
        }
        d.took(end + 2);
        self.arg_bytes = run.args.len() - mark;
        self.ended.clear();
        self.call_index = f.index;
        self.call_named = false;
        self.only_fragment = true;
        #[cfg(test)]
        {
            self.taken += 1;
        }
        true
    }

    /// [`Core::next_fragment`] while it takes one: how many it took, and their argument
    /// bytes in all.
    fn next_fragments(&mut self, d: &mut sse::Decoder) -> (u32, usize) {
        let (mut n, mut bytes) = (0, 0);
        while self.next_fragment(d) {
            n += 1;
            bytes += self.arg_bytes;
        }
        (n, bytes)
    }

    /// Repair closed-form mistakes in failed calls' arguments (before any byte is pushed);
    /// with the request's declared tools, coerce calls by their schemas too.
    fn set_repair(&mut self, repair: &CallRepair) {
        self.assembler = ToolCallAssembler::new(Policy {
            repair: repair.policy,
            ..Policy::default()
        });
        if let Some(tools) = &repair.schemas {
            self.assembler.set_schemas(tools.clone());
        }
    }

    /// The layout of the payload just decoded, when the decoder read it whole and keeps
    /// layouts (the Responses decoder, for its rewriter).
    fn take_layout(&mut self) -> Option<Box<crate::provider::openai_responses::EventLayout>> {
        match &mut self.decoder {
            Decoder::OpenAiResponses(d) => d.take_layout(),
            _ => None,
        }
    }

    /// The id the client gets for a call, and, when toolstream made it, a note that says
    /// from what (sent as an SSE comment before the call). A call without an id gets one
    /// minted in the API's shape ([`crate::ids::mint`], unique among the ids sent).
    fn client_id(&mut self, id: String, source: &IdSource) -> (String, Option<String>) {
        let (id, note) = if id.is_empty() {
            let salt = !self.salt.unwrap_or(0);
            let mut attempt = 0;
            let id = loop {
                let id = crate::ids::mint(self.format.id_prefix(), salt, self.minted, attempt);
                if !self.sent.contains(&id) {
                    break id;
                }
                attempt += 1;
            };
            self.minted += 1;
            let note = format!("toolstream id {id} minted: the provider sent the call without one");
            (id, Some(note))
        } else {
            let note = match source {
                IdSource::Provider => None,
                IdSource::Split { of } => Some(format!(
                    "toolstream id {id} made for a call split from {of}'s arguments"
                )),
                IdSource::Text => Some(format!(
                    "toolstream id {id} made for a call taken out of the text"
                )),
            };
            (id, note)
        };
        if self.sent.len() < MAX_IDS_KEPT {
            self.sent.insert(id.clone());
        }
        (id, note)
    }

    /// What of the framing's item the rewriters handle.
    fn frame(item: sse::Item) -> Option<Frame> {
        match item {
            sse::Item::Event(e) => {
                let (ty, data) = e.into_type_and_data();
                Some(Frame::Event { ty, data })
            }
            sse::Item::Comment(c) => Some(Frame::Comment(c)),
            // A comment over the limit carries no data: nothing of the response lost.
            sse::Item::Skipped(s) if s.reason == sse::SkipReason::CommentTooLong => None,
            sse::Item::Skipped(_) => Some(Frame::Skipped),
            _ => None,
        }
    }

    /// `data`, kept past the push: a slice of the chunk being pushed when it lies there
    /// (no copy), else a copy.
    fn keep(&self, data: &[u8]) -> Bytes {
        let (c, d) = (self.chunk.as_ptr() as usize, data.as_ptr() as usize);
        if !data.is_empty() && d >= c && d + data.len() <= c + self.chunk.len() {
            self.chunk.slice_ref(data)
        } else {
            Bytes::copy_from_slice(data)
        }
    }

    /// Decode one payload; the events it completes go to `events`, each with the choice
    /// of the delta that produced it (0 for a delta of no choice). What its deltas were is
    /// returned.
    fn decode_tagged(&mut self, ty: &[u8], data: &[u8], events: &mut Vec<(u32, Event)>) -> Seen {
        if self.salt.is_none() {
            // As the pipeline does: the first payload salts the ids made for the response.
            let salt = crate::ids::salt(&data[..data.len().min(512)]);
            self.salt = Some(salt);
            self.assembler.set_ids(self.format.id_prefix(), salt);
        }
        let ty = (ty != b"message").then_some(ty);
        self.ended.clear();
        self.arg_bytes = 0;
        self.call_index = None;
        self.call_named = false;
        let lane = self
            .decoder
            .decode_lane(ty, data, &mut self.deltas, &mut self.args);
        self.only_fragment = lane.is_some()
            || matches!(
                self.deltas.as_slice(),
                [Delta::Call {
                    arguments: Some(_),
                    id: None,
                    name: None,
                    complete: false,
                    ..
                }]
            );
        let mut seen = Seen::default();
        if let Some(x) = self.text.as_deref_mut() {
            x.start();
        }
        let mut produced = Vec::new();
        if let Some(f) = lane {
            // A call's argument fragment, as the loop below takes its delta.
            self.arg_bytes = self.args.len();
            self.call_index = f.index;
            seen.calls = true;
            // The next of a run: held back.
            if let Some(run) = self
                .run
                .as_mut()
                .filter(|r| r.choice == f.choice && r.index == f.index && r.args.len() < MAX_RUN)
            {
                run.args.push_str(&self.args);
                if self.escaped.is_some() {
                    crate::json::escape::write_inner(&mut run.raw, &self.args);
                }
                return seen;
            }
            self.end_run();
            if let Some(e) = &mut self.escaped {
                e.piece((f.choice, f.index), &self.args, None);
            }
            self.assembler
                .push_fragment(f.choice, f.index, &self.args, &mut produced);
            events.extend(produced.into_iter().map(|e| (f.choice, e)));
            // The first of a run: the ones after it may wait.
            if self.assembler.takes_fragments(f.choice, f.index) {
                self.run = Some(Run {
                    choice: f.choice,
                    index: f.index,
                    args: std::mem::take(&mut self.run_buf),
                    raw: std::mem::take(&mut self.run_raw),
                });
            }
            return seen;
        }
        self.end_run();
        for d in self.deltas.drain(..) {
            match &d {
                Delta::CallEnd { index: Some(i), .. } => {
                    self.ended.push(*i);
                    self.call_index = Some(*i);
                }
                Delta::Call {
                    arguments,
                    index,
                    id,
                    name,
                    choice,
                    ..
                } => {
                    self.arg_bytes += arguments.as_ref().map_or(0, String::len);
                    self.call_index = *index;
                    let named = id.is_some() || name.is_some();
                    self.call_named |= named;
                    if let Some(e) = &mut self.escaped {
                        if named {
                            e.start((*choice, *index));
                        }
                        if let Some(a) = arguments.as_deref().filter(|a| !a.is_empty()) {
                            e.piece((*choice, *index), a, None);
                        }
                    }
                }
                Delta::CallFailed { index, .. } => self.call_index = *index,
                _ => {}
            }
            let choice = match &d {
                Delta::Call { choice, .. }
                | Delta::CallEnd { choice, .. }
                | Delta::CallFailed { choice, .. } => {
                    seen.calls = true;
                    *choice
                }
                Delta::Finish { choice, .. } => {
                    seen.finish = true;
                    *choice
                }
                Delta::Text { choice, .. }
                | Delta::Reasoning { choice, .. }
                | Delta::ReasoningSignature { choice, .. }
                | Delta::RedactedReasoning { choice, .. }
                | Delta::ReasoningItem { choice, .. }
                | Delta::ReasoningDetail { choice, .. } => *choice,
                Delta::Undecodable { .. } => {
                    seen.undecodable = true;
                    0
                }
                Delta::Error { .. } => {
                    seen.error = true;
                    0
                }
                Delta::Done => {
                    seen.done = true;
                    0
                }
                _ => 0,
            };
            match (self.text.as_deref_mut(), d) {
                (Some(x), Delta::Text { choice, text }) => {
                    x.push(choice, text, &mut self.assembler, &mut produced)
                }
                (Some(x), d @ Delta::Finish { .. }) => {
                    // The choice's text is over: what its extractor holds comes first.
                    x.finish(Some(choice), &mut self.assembler, &mut produced);
                    self.assembler.push(d, &mut produced);
                }
                (_, d) => self.assembler.push(d, &mut produced),
            }
            events.extend(produced.drain(..).map(|e| (choice, e)));
        }
        seen
    }

    /// An SSE comment annotating an error the provider sent: the classifier's verdict
    /// (before or after output started).
    fn annotate_error(&self, payload: &[u8], output_started: bool, out: &mut BytesMut) {
        let phase = if output_started {
            Phase::AfterOutput
        } else {
            Phase::BeforeOutput
        };
        let v = classify_stream_error(self.provider, payload, phase, 0, &ClassifyPolicy::default());
        let _ = write!(
            Writer(out),
            ": toolstream error reason={} action={}",
            v.reason,
            v.action
        );
        if let Some(d) = v.retry_after {
            let _ = write!(Writer(out), " retry_after_ms={}", d.as_millis());
        }
        out.extend_from_slice(b"\n\n");
    }
}

/// What one payload's deltas were.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    /// A call's fragment, end or failure.
    calls: bool,
    /// A finish reason.
    finish: bool,
    /// A payload the decoder could not read.
    undecodable: bool,
    /// An error the provider sent.
    error: bool,
    /// The terminal marker.
    done: bool,
}

/// What both rewriters share: the framing's comments and over-limit events handled alike,
/// each event's payload handed to the rewriter.
trait Rewrite {
    fn core(&mut self) -> &mut Core;

    /// One SSE event's payload (slices of the chunk pushed, most often: see [`Core::keep`]
    /// for one kept past the push).
    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut);

    /// Bytes of the stream were dropped: it cannot end cleanly.
    fn dropped(&mut self, why: &'static str);

    /// Whether a payload that is the open run's next argument fragment, and nothing else,
    /// would change nothing of the rewriter's but what [`Rewrite::took_fragments`] does:
    /// then [`Core::next_fragments`] may take it from the framing's chunk.
    fn holds_fragments(&self) -> bool {
        false
    }

    /// [`Core::next_fragments`] took the run's next `n` fragments, of `bytes` argument
    /// bytes in all: what [`Rewrite::payload`] does with them beside the core.
    fn took_fragments(&mut self, n: u32, bytes: usize) {
        let _ = (n, bytes);
    }

    /// What the assembler made of a run of fragments when it ended ([`Run`]): handled as
    /// the run's last fragment's payload would have handled it.
    fn ran(&mut self, events: Vec<(u32, Event)>, out: &mut BytesMut);

    /// [`Core::decode_tagged`], with what a run it ended made handled first.
    fn decode(
        &mut self,
        ty: &[u8],
        data: &[u8],
        events: &mut Vec<(u32, Event)>,
        out: &mut BytesMut,
    ) -> Seen {
        let seen = self.core().decode_tagged(ty, data, events);
        self.take_ran(out);
        seen
    }

    /// What a run that ended made, handled.
    fn take_ran(&mut self, out: &mut BytesMut) {
        if !self.core().ran.is_empty() {
            let ran = std::mem::take(&mut self.core().ran);
            self.ran(ran, out);
        }
    }

    /// The run of fragments ends here (a frame that is not a payload, the push's end).
    fn end_run(&mut self, out: &mut BytesMut) {
        self.core().end_run();
        self.take_ran(out);
    }

    /// Feed upstream bytes: comments (keep-alives) forwarded, an event over the limit
    /// reported and the calls it cut failed, each event's payload handled.
    ///
    /// An event whole in the chunk is handed over as a slice of it (no reference counted
    /// of each); the decoder is out of the core meanwhile, and the chunk in it
    /// ([`Core::keep`]) until the push ends.
    fn feed(&mut self, chunk: Bytes, out: &mut BytesMut) {
        let Some(mut d) = self.core().sse.take() else {
            self.end_run(out);
            return;
        };
        d.feed(chunk.clone());
        self.core().chunk = chunk.clone();
        loop {
            if self.holds_fragments() {
                let (n, bytes) = self.core().next_fragments(&mut d);
                if n > 0 {
                    self.took_fragments(n, bytes);
                }
            }
            let Some(next) = d.next_local() else {
                break;
            };
            let frame = match next {
                sse::Next::Local { ty, data } => {
                    self.payload(ty.bytes(), &chunk[data], out);
                    continue;
                }
                sse::Next::Item(item) => match Core::frame(item) {
                    Some(frame) => frame,
                    None => continue,
                },
            };
            if !matches!(frame, Frame::Event { .. }) {
                self.end_run(out);
            }
            match frame {
                Frame::Comment(c) => {
                    // Keep-alives go on; what the client gets is UTF-8 whatever came.
                    out.extend_from_slice(b":");
                    out.extend_from_slice(String::from_utf8_lossy(&c).as_bytes());
                    out.extend_from_slice(b"\n\n");
                }
                Frame::Skipped => {
                    self.dropped("an event over the size limit was dropped");
                    self.core()
                        .assembler
                        .interrupt("an event over the limit was dropped");
                    comment(out, "toolstream dropped an event over the size limit");
                }
                Frame::Event { ty, data } => self.payload(&ty, &data, out),
            }
        }
        self.core().sse = Some(d);
        self.core().chunk = Bytes::new();
        self.end_run(out);
    }

    /// The end of the framing: what the decoder still yields is handled; a stream cut
    /// inside an event fails the calls open.
    fn end_framing(&mut self, out: &mut BytesMut) {
        let Some(d) = self.core().sse.take() else {
            return;
        };
        let mut items = Vec::new();
        let end = d.finish(&mut items);
        for item in items {
            if let sse::Item::Event(e) = item {
                let (ty, data) = e.into_type_and_data();
                self.payload(&ty, &data, out);
            }
        }
        self.end_run(out);
        // As the pipeline does: an event cut off by the end of the stream is not
        // dispatched, but what it carried is decoded (an error sent just before the
        // connection dropped is not lost).
        // (An event of only `id:` or `retry:` fields carries no data: nothing is lost.)
        if let Err(partial) = end {
            if partial.skipped.is_some() {
                self.dropped("an event over the size limit was dropped");
                self.core()
                    .assembler
                    .interrupt("an event over the limit was dropped");
            }
            if !partial.data.is_empty() {
                // Decoded as the pipeline decodes it: a payload that reads whole is the
                // provider's last event without its blank line (and goes out framed);
                // one the cut left unreadable is undecodable, and the end an error.
                let ty = if partial.event.is_empty() {
                    Bytes::from_static(b"message")
                } else {
                    partial.event
                };
                self.payload(&ty, &partial.data, out);
                self.end_run(out);
            }
        }
    }
}

impl Rewrite for OpenAiRewriter {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) {
        OpenAiRewriter::payload(self, ty, data, out)
    }
    fn dropped(&mut self, why: &'static str) {
        self.broken.get_or_insert(why);
    }
    fn holds_fragments(&self) -> bool {
        // What `payload` returns at once from: a held fragment, after the first payload
        // (the envelope), before the terminal marker, with no text extracted.
        !self.saw_done && self.envelope.is_some() && self.core.text.is_none()
    }
    fn ran(&mut self, mut events: Vec<(u32, Event)>, out: &mut BytesMut) {
        // As a fragment's payload: its events written.
        for (c, e) in &events {
            if let Event::CallStarted { index, .. } = e {
                self.slot_choice.insert(*index, *c);
            }
        }
        self.write(&mut events, true, out);
    }
}

impl Rewrite for AnthropicRewriter {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) {
        AnthropicRewriter::payload(self, ty, data, out)
    }
    fn dropped(&mut self, why: &'static str) {
        self.broken.get_or_insert(why);
    }
    fn ran(&mut self, events: Vec<(u32, Event)>, out: &mut BytesMut) {
        // As a fragment's payload: the calls it closed written.
        let mut events = events.into_iter().map(|(_, e)| e).collect();
        self.calls(&mut events, out);
    }
}

/// `fmt::Write` into a `BytesMut`.
struct Writer<'a>(&'a mut BytesMut);

impl std::fmt::Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// An event's data as SSE: a `data:` line for each of its lines (an event that came in
/// several `data:` lines, or whose data holds a line break, stays one valid event).
fn sse_data(out: &mut BytesMut, data: &[u8]) {
    let mut from = 0;
    for nl in memchr::memchr_iter(b'\n', data).chain(std::iter::once(data.len())) {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&data[from..nl]);
        out.extend_from_slice(b"\n");
        from = nl + 1;
    }
    out.extend_from_slice(b"\n");
}

fn sse_event(out: &mut BytesMut, ty: &[u8], data: &[u8]) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(ty);
    out.extend_from_slice(b"\n");
    sse_data(out, data);
}

fn comment(out: &mut BytesMut, text: &str) {
    out.extend_from_slice(b": ");
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\n\n");
}

/// The most call ids a rewriter keeps to check minted ones against (more calls than a
/// response may hold: the assembler refuses past [`Policy::max_calls`]).
const MAX_IDS_KEPT: usize = 4096;

/// OpenAI chat completions (and the servers that speak it).
///
/// What the client gets is derived from the library's decoding of each payload and from
/// nothing else. A payload whose deltas carry no call fragment, close no call and need no
/// finish corrected goes out as it came; any other is written anew from the events its
/// deltas produced (each call whole, in its own choice, the finish reason corrected per
/// choice). A payload the decoder cannot read is not forwarded (a client that read it
/// another way could run a call twice, or one the library failed): it is noted in the
/// stream, and the stream ends with an error.
pub struct OpenAiRewriter {
    core: Core,
    /// The response's envelope members (`"id":...,"model":...`), as they came.
    envelope: Option<String>,
    /// Whether the envelope holds no line end (its members' values as they came may), so
    /// that a chunk in it goes out as one `data:` line written in place.
    envelope_one_line: bool,
    /// The buffer a call's choice is written in, kept from call to call.
    scratch: Vec<u8>,
    /// The assembler's call slots' choices.
    slot_choice: HashMap<u32, u32>,
    /// Per choice: the next tool-call index for the client.
    next_index: HashMap<u32, u32>,
    /// Choices with a whole call delivered.
    delivered: HashSet<u32>,
    /// Choices the client has seen a delta of (later ones need no `role`).
    opened: HashSet<u32>,
    /// A thought signature (Gemini's OpenAI-compatible API) waiting for its call.
    signatures: HashMap<u32, String>,
    keep_finish_reason: bool,
    saw_done: bool,
    after_done: bool,
    saw_finish: bool,
    /// Why the stream cannot end cleanly, once something was dropped.
    broken: Option<&'static str>,
    output_started: bool,
    counts: Counts,
    events: Vec<(u32, Event)>,
}

impl OpenAiRewriter {
    /// A rewriter for one response. `keep_finish_reason` leaves the provider's `stop` as it
    /// is when calls were delivered (by default it becomes `tool_calls`); `text` takes the
    /// calls written into the content out of it.
    pub fn new(provider: Provider, keep_finish_reason: bool, text: Option<TextSetting>) -> Self {
        let mut core = Core::new(Format::OpenAiChat, provider);
        core.text = text.map(|t| Box::new(Extraction::new(t)));
        // Calls are written whole: their arguments' JSON text is kept as it comes.
        core.escaped = Some(escaped::Escaped::default());
        OpenAiRewriter {
            core,
            envelope: None,
            envelope_one_line: false,
            scratch: Vec::new(),
            slot_choice: HashMap::new(),
            next_index: HashMap::new(),
            delivered: HashSet::new(),
            opened: HashSet::new(),
            signatures: HashMap::new(),
            keep_finish_reason,
            saw_done: false,
            after_done: false,
            saw_finish: false,
            broken: None,
            output_started: false,
            counts: Counts::default(),
            events: Vec::new(),
        }
    }

    /// What was counted so far.
    pub fn counts(&self) -> Counts {
        Counts {
            text_calls: self.core.text.as_ref().map_or(0, |x| x.calls),
            ..self.counts
        }
    }

    /// Feed upstream bytes; what the client gets is appended to `out`.
    pub fn push(&mut self, chunk: Bytes, out: &mut BytesMut) {
        self.feed(chunk, out);
    }

    /// The notes of markup left in the text, as comments.
    fn notes(&mut self, out: &mut BytesMut) {
        if let Some(x) = self.core.text.as_deref_mut() {
            for n in x.notes.drain(..) {
                self.counts.failures += 1;
                comment(out, &n);
            }
        }
    }

    /// The text the extractors let go of, each choice's in a chunk of its own.
    fn text_left(&mut self, out: &mut BytesMut) {
        let Some(x) = self.core.text.as_deref_mut() else {
            return;
        };
        let left = std::mem::take(&mut x.text);
        for (choice, text) in left.into_iter().filter(|(_, t)| !t.is_empty()) {
            self.delta(choice, json!({"content": text}), out);
        }
    }

    /// The end of every choice's text: what the extractors held, out.
    fn end_text(&mut self, events: &mut Vec<(u32, Event)>) {
        if let Some(x) = self.core.text.as_deref_mut() {
            x.start();
            let mut plain = Vec::new();
            x.finish(None, &mut self.core.assembler, &mut plain);
            events.extend(plain.into_iter().map(|e| (0, e)));
        }
    }

    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) {
        if self.saw_done {
            // After the terminal marker nothing more belongs to the response: not
            // forwarded, said once, and the stream does not end cleanly.
            if data.trim_ascii() != b"[DONE]" && !std::mem::replace(&mut self.after_done, true) {
                comment(out, "toolstream dropped data after [DONE]");
            }
            return;
        }
        let mut events = std::mem::take(&mut self.events);
        let seen = self.decode(ty, data, &mut events, out);
        // A held call's next fragment, which closed nothing (most payloads of a stream of
        // calls): nothing to write and nothing to note, as the rest would find.
        if events.is_empty()
            && seen.calls
            && self.core.only_fragment
            && !seen.error
            && !seen.undecodable
            && self.envelope.is_some()
            && self.core.text.is_none()
        {
            self.events = events;
            return;
        }
        for (c, e) in &events {
            if let Event::CallStarted { index, .. } = e {
                self.slot_choice.insert(*index, *c);
            }
        }
        if seen.undecodable {
            self.broken.get_or_insert("a payload could not be decoded");
            comment(out, "toolstream dropped a payload it could not decode");
        } else if self.envelope.is_none() {
            self.envelope = envelope(data);
            self.envelope_one_line = self
                .envelope
                .as_ref()
                .is_some_and(|e| memchr::memchr2(b'\n', b'\r', e.as_bytes()).is_none());
        }
        if seen.error {
            self.counts.errors += 1;
            self.core.annotate_error(data, self.output_started, out);
        }
        if seen.finish && !seen.error {
            self.saw_finish = true;
        }
        self.notes(out);
        let text_changed = self.core.text.as_ref().is_some_and(|x| x.changed);
        let as_it_came = !seen.undecodable
            && !seen.calls
            && !text_changed
            && !events.iter().any(|(c, e)| self.changes(*c, e));
        if as_it_came {
            if let Some(x) = self.core.text.as_deref_mut() {
                x.text.clear();
            }
            for (c, e) in &events {
                if matches!(e, Event::Text { .. } | Event::Reasoning { .. }) {
                    self.opened.insert(*c);
                }
            }
            if !seen.done {
                sse_data(out, data);
                self.output_started = true;
            }
        } else {
            self.text_left(out);
            self.write(&mut events, !seen.undecodable, out);
        }
        if seen.done {
            // Held until the upstream's body ends: whatever comes after it decides whether
            // the client sees a clean end.
            self.saw_done = true;
            self.end_text(&mut events);
            self.text_left(out);
            self.write(&mut events, true, out);
        }
        events.clear();
        self.events = events;
    }

    /// Whether event `e` of choice `c` makes its payload one to write anew: a call, a
    /// failure or a duplicate to send in its place, or a finish to correct.
    fn changes(&self, c: u32, e: &Event) -> bool {
        match e {
            Event::ToolCall(_) | Event::ToolCallFailed(_) | Event::Duplicate { .. } => true,
            Event::Finish { raw, .. } => {
                raw == "stop" && !self.keep_finish_reason && self.delivered.contains(&c)
            }
            _ => false,
        }
    }

    /// A payload written anew from its events, in their order: text and reasoning, each
    /// call whole in its choice (failures as the provider sent them, annotated), finish
    /// reasons corrected per choice, usage, errors (`errors`: the provider's, not an
    /// undecodable payload's).
    fn write(&mut self, events: &mut Vec<(u32, Event)>, errors: bool, out: &mut BytesMut) {
        if events.is_empty() {
            // (Most payloads of a stream of calls: a held call's fragment.)
            return;
        }
        for (c, e) in events.drain(..) {
            match e {
                Event::Text { choice, text } => self.delta(choice, json!({"content": text}), out),
                Event::Reasoning { choice, text } => {
                    self.delta(choice, json!({"reasoning_content": text}), out)
                }
                Event::ReasoningSignature { choice, signature } => {
                    self.signatures.insert(choice, signature);
                }
                Event::Finish { raw, .. } => {
                    // What the extractor let go of at the choice's end comes first.
                    self.text_left(out);
                    let reason =
                        if raw == "stop" && !self.keep_finish_reason && self.delivered.contains(&c)
                        {
                            "tool_calls".to_string()
                        } else {
                            raw
                        };
                    self.choice(
                        json!({"index": c, "delta": {}, "finish_reason": reason}),
                        out,
                    );
                }
                Event::Usage { raw } => {
                    let usage = serde_json::from_str::<Value>(&raw).unwrap_or(Value::Null);
                    self.chunk(Value::Array(Vec::new()), Some(usage), out);
                }
                Event::ProviderError { body, .. } if errors => {
                    let error = serde_json::from_str::<Value>(&body).unwrap_or(Value::String(body));
                    sse_data(out, json!({ "error": error }).to_string().as_bytes());
                }
                e => {
                    let index = match &e {
                        Event::ToolCall(t) => Some(t.index),
                        Event::ToolCallFailed(f) => Some(f.index),
                        _ => None,
                    };
                    let choice = index
                        .and_then(|i| self.slot_choice.get(&i).copied())
                        .unwrap_or(c);
                    if let Some(call) = outgoing(&mut self.counts, e, out) {
                        if call.whole {
                            self.delivered.insert(choice);
                        }
                        self.call_chunk(choice, call, out);
                    }
                }
            }
        }
    }

    fn call_chunk(&mut self, choice: u32, mut call: Outgoing, out: &mut BytesMut) {
        let next = self.next_index.entry(choice).or_insert(0);
        let index = *next;
        *next += 1;
        let (id, note) = self
            .core
            .client_id(std::mem::take(&mut call.id), &call.source);
        if let Some(note) = note {
            comment(out, &note);
        }
        // Written as bytes, the arguments through the block escaper, the other strings
        // through serde_json's: the most frequent chunk the proxy writes, and the largest.
        // (In a buffer kept from call to call; the integers without a formatter.)
        let mut c = std::mem::take(&mut self.scratch);
        c.clear();
        let arguments = call.arguments();
        c.reserve(arguments.len() + call.name.len() + id.len() + 160);
        c.extend_from_slice(b"[{\"index\":");
        push_u32(&mut c, choice);
        c.extend_from_slice(b",\"delta\":{");
        if self.opened.insert(choice) {
            c.extend_from_slice(b"\"role\":\"assistant\",");
        }
        c.extend_from_slice(b"\"tool_calls\":[{\"index\":");
        push_u32(&mut c, index);
        c.extend_from_slice(b",\"id\":");
        let _ = serde_json::to_writer(&mut c, &id);
        c.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
        let _ = serde_json::to_writer(&mut c, &call.name);
        c.extend_from_slice(b",\"arguments\":");
        c.push(b'"');
        if !self
            .core
            .escaped
            .as_mut()
            .is_some_and(|e| e.take(&arguments, &mut c))
        {
            crate::json::escape::write_inner(&mut c, &arguments);
        }
        c.push(b'"');
        c.push(b'}');
        if let Some(s) = self.signatures.remove(&choice) {
            c.extend_from_slice(b",\"extra_content\":{\"google\":{\"thought_signature\":");
            let _ = serde_json::to_writer(&mut c, &s);
            c.extend_from_slice(b"}}");
        }
        c.extend_from_slice(b"}]},\"finish_reason\":null}]");
        self.chunk_bytes(&c, None, out);
        self.scratch = c;
    }

    /// One delta of choice `choice`, in a chunk of its own (with `role` the first time).
    fn delta(&mut self, choice: u32, mut delta: Value, out: &mut BytesMut) {
        if self.opened.insert(choice) {
            delta["role"] = json!("assistant");
        }
        self.choice(
            json!({"index": choice, "delta": delta, "finish_reason": null}),
            out,
        );
    }

    fn choice(&mut self, choice: Value, out: &mut BytesMut) {
        self.chunk(Value::Array(vec![choice]), None, out);
    }

    /// A chunk of the proxy's own, in the response's envelope.
    fn chunk(&mut self, choices: Value, usage: Option<Value>, out: &mut BytesMut) {
        let choices = serde_json::to_vec(&choices).unwrap_or_default();
        self.chunk_bytes(&choices, usage, out);
    }

    /// [`OpenAiRewriter::chunk`] with the choices' JSON text written already.
    fn chunk_bytes(&mut self, choices: &[u8], usage: Option<Value>, out: &mut BytesMut) {
        self.output_started = true;
        if let (Some(e), None) = (
            self.envelope.as_ref().filter(|_| self.envelope_one_line),
            &usage,
        ) {
            // One line (the choices' JSON text, serde_json's or the escaper's, holds no line
            // end either): written straight into `out`, no copy between.
            debug_assert!(memchr::memchr2(b'\n', b'\r', choices).is_none());
            out.reserve(e.len() + choices.len() + 24);
            out.extend_from_slice(b"data: {");
            out.extend_from_slice(e.as_bytes());
            out.extend_from_slice(b",\"choices\":");
            out.extend_from_slice(choices);
            out.extend_from_slice(b"}\n\n");
            return;
        }
        // Serialised as bytes (serde_json's writer), not through `Display`: text goes
        // through the escaper once, not a formatter per character.
        let mut text = Vec::with_capacity(choices.len() + 160);
        text.push(b'{');
        match &self.envelope {
            Some(e) => {
                text.extend_from_slice(e.as_bytes());
                text.push(b',');
            }
            None => text.extend_from_slice(b"\"object\":\"chat.completion.chunk\","),
        }
        text.extend_from_slice(b"\"choices\":");
        text.extend_from_slice(choices);
        if let Some(u) = usage {
            text.extend_from_slice(b",\"usage\":");
            let _ = serde_json::to_writer(&mut text, &u);
        }
        text.push(b'}');
        sse_data(out, &text);
    }

    /// The end of the upstream body. `cut` when the transport failed. The stream ends
    /// cleanly only when the library would call it complete: its terminal marker (or a
    /// finish) came and nothing was dropped, cut or sent after `[DONE]`; else it ends with
    /// an error in OpenAI's shape and no `[DONE]`.
    pub fn finish(mut self, cut: Option<&str>, out: &mut BytesMut) -> Counts {
        self.end_framing(out);
        let mut events = Vec::new();
        self.end_text(&mut events);
        let complete = cut.is_none()
            && (self.saw_done || self.saw_finish)
            && self.broken.is_none()
            && !self.after_done;
        let mut plain = Vec::new();
        self.core.assembler.finish(complete, &mut plain);
        events.extend(plain.into_iter().map(|e| (0, e)));
        self.text_left(out);
        self.write(&mut events, true, out);
        if complete {
            if self.saw_done {
                sse_data(out, b"[DONE]");
            }
        } else {
            let why = cut
                .or(self.broken)
                .or(self.after_done.then_some("data came after [DONE]"))
                .unwrap_or("the upstream ended the stream before it was complete");
            comment(
                out,
                "toolstream error reason=stream_interrupted action=retry",
            );
            let e = json!({"error": {
                "message": format!("upstream stream interrupted: {why}"),
                "type": "stream_interrupted",
                "code": "stream_interrupted",
            }});
            sse_data(out, e.to_string().as_bytes());
        }
        self.counts()
    }
}

/// The envelope members of a chat chunk (`id`, `object`, `created`, `model`,
/// `system_fingerprint`), as their JSON text, for the chunks the proxy writes. Only these
/// are read; a payload they cannot be read from gives none (the next one is tried).
fn envelope(data: &[u8]) -> Option<String> {
    use serde_json::value::RawValue;
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        object: Option<&'a RawValue>,
        #[serde(borrow)]
        created: Option<&'a RawValue>,
        #[serde(borrow)]
        model: Option<&'a RawValue>,
        #[serde(borrow)]
        system_fingerprint: Option<&'a RawValue>,
    }
    let e: Envelope = serde_json::from_slice(data).ok()?;
    let mut text = String::new();
    for (k, v) in [
        ("id", e.id),
        ("object", e.object),
        ("created", e.created),
        ("model", e.model),
        ("system_fingerprint", e.system_fingerprint),
    ] {
        if let Some(v) = v {
            if !text.is_empty() {
                text.push(',');
            }
            let _ = write!(text, "\"{k}\":{}", v.get());
        }
    }
    if e.object.is_none() {
        text.push_str(if text.is_empty() { "" } else { "," });
        text.push_str("\"object\":\"chat.completion.chunk\"");
    }
    Some(text)
}

/// `n`'s decimal digits at the end of `out`.
fn push_u32(out: &mut impl bytes::BufMut, n: u32) {
    push_u64(out, u64::from(n));
}

/// `n`'s decimal digits at the end of `out`, without a formatter.
fn push_u64(out: &mut impl bytes::BufMut, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.put_slice(&digits[at..]);
}

/// Bytes as text: validated once (a call's arguments are UTF-8 already), lossily only
/// where they are not (a failure's bytes may be cut inside a character).
fn text_of(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(t) => t.to_string(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The repair of the calls a rewriter sends ([`crate::repair`]): which closed-form mistakes
/// in a failed call's arguments are repaired, and the request's declared tools
/// (`schema::Tools::from_request`, or [`text::declared_schemas`] from its bytes) to coerce
/// calls by, when the policy allows [`coerce`](crate::repair::RepairKind::Coerce).
#[derive(Clone, Debug, Default)]
pub struct CallRepair {
    /// Which kinds of mistakes are repaired (default: none).
    pub policy: crate::repair::RepairPolicy,
    /// The declared tools, to coerce calls by their schemas.
    pub schemas: Option<std::sync::Arc<crate::schema::Tools>>,
}

/// A call to send the client: whole, or failed and sent as the provider sent it.
struct Outgoing {
    id: String,
    /// Where the assembler's id came from.
    source: IdSource,
    name: String,
    /// The arguments' bytes, as the assembler gave them (no copy).
    arguments: Bytes,
    /// A call that closed as one valid object (not a failure).
    whole: bool,
}

impl Outgoing {
    /// The arguments as text: a call's are UTF-8 already (checked again, ASCII a word at a
    /// time), a failure's bytes may be cut inside a character (then lossily).
    fn arguments(&self) -> std::borrow::Cow<'_, str> {
        match crate::scan::text(&self.arguments) {
            Some(t) => std::borrow::Cow::Borrowed(t),
            None => String::from_utf8_lossy(&self.arguments),
        }
    }
}

/// What both rewriters do with an assembler event: a call or a failure counted and
/// returned to be sent (a failure after its annotation), a duplicate counted and noted.
fn outgoing(counts: &mut Counts, e: Event, out: &mut BytesMut) -> Option<Outgoing> {
    match e {
        Event::ToolCall(c) => {
            counts.calls += 1;
            if c.part > 1 {
                counts.splits += 1;
            }
            if !c.repairs.is_empty() {
                counts.repaired += 1;
                comment(out, &repair_note(&c));
            }
            Some(Outgoing {
                arguments: c.arguments,
                id: c.id,
                source: c.id_source,
                name: c.name,
                whole: true,
            })
        }
        Event::ToolCallFailed(f) => {
            counts.failures += 1;
            comment(out, &failure_note(&f));
            Some(Outgoing {
                arguments: f.raw,
                id: f.id,
                source: f.id_source.clone(),
                name: f.name,
                whole: false,
            })
        }
        Event::Duplicate { index, id, .. } => {
            counts.duplicates += 1;
            comment(
                out,
                &format!("toolstream dropped a duplicate of call #{index} (id {id})"),
            );
            None
        }
        _ => None,
    }
}

/// The SSE comment before a repaired call: each change, in order.
fn repair_note(c: &crate::assemble::ToolCall) -> String {
    let mut note = format!("toolstream repaired call #{} ({}):", c.index, c.name);
    for r in &c.repairs {
        let _ = write!(note, " {} at {}", r.kind.as_str(), r.offset);
        if let Some(path) = &r.path {
            let _ = write!(note, " {path}");
        }
        let _ = write!(note, " ({:?} -> {:?});", r.replaced, r.with);
    }
    // One line: a comment cannot hold a line break.
    note.replace(['\n', '\r'], " ")
}

fn failure_note(f: &Failure) -> String {
    format!(
        "toolstream tool_call_error index={} kind={} offset={}",
        f.index,
        f.kind.as_str(),
        f.offset
    )
}

/// Anthropic Messages.
///
/// With a [`TextSetting`] ([`AnthropicRewriter::with_text`]), the calls written into
/// `text` blocks are taken out: the text before a call goes out in its block, the call as
/// a `tool_use` block of its own after it, the text after it in a new `text` block, and
/// `stop_reason: end_turn` becomes `tool_use`. A text block that held only a call is not
/// sent (an empty text block would be refused in the next request's history).
pub struct AnthropicRewriter {
    core: Core,
    /// Calls written into the text, when taken out.
    text: Option<Box<TextBlocks>>,
    /// Upstream block index → the client's.
    blocks: HashMap<u64, u64>,
    next_index: u64,
    /// The `message_stop` event (its type and data), held until the upstream's body ends.
    stop: Option<(Bytes, Bytes)>,
    /// Why the stream cannot end cleanly, once something was dropped.
    broken: Option<&'static str>,
    output_started: bool,
    counts: Counts,
    events: Vec<Event>,
}

impl AnthropicRewriter {
    /// A rewriter for one response.
    pub fn new() -> Self {
        AnthropicRewriter {
            core: Core::new(Format::Anthropic, Provider::Anthropic),
            text: None,
            blocks: HashMap::new(),
            next_index: 0,
            stop: None,
            broken: None,
            output_started: false,
            counts: Counts::default(),
            events: Vec::new(),
        }
    }

    /// A rewriter that takes the calls written into the text out of it (`None`: leaves
    /// the text as it came).
    pub fn with_text(text: Option<TextSetting>) -> Self {
        AnthropicRewriter {
            text: text.map(|t| Box::new(TextBlocks::new(&t))),
            ..Self::new()
        }
    }

    /// What was counted so far.
    pub fn counts(&self) -> Counts {
        Counts {
            text_calls: self.text.as_ref().map_or(0, |t| t.calls),
            ..self.counts
        }
    }

    /// Feed upstream bytes; what the client gets is appended to `out`.
    pub fn push(&mut self, chunk: Bytes, out: &mut BytesMut) {
        self.feed(chunk, out);
    }

    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) {
        if self.text.is_some() && self.stop.is_none() && self.text_payload(ty, data, out) {
            return;
        }
        if self.stop.is_some() {
            // After message_stop nothing more belongs to the message: not forwarded, said
            // once, and the stream does not end cleanly.
            if self.broken.is_none() {
                comment(out, "toolstream dropped data after message_stop");
            }
            self.broken.get_or_insert("data came after message_stop");
            return;
        }
        let mut events = std::mem::take(&mut self.events);
        let mut tagged = Vec::new();
        let seen = self.decode(ty, data, &mut tagged, out);
        events.extend(tagged.into_iter().map(|(_, e)| e));
        if seen.undecodable {
            // Not forwarded: a client reading it another way could place it wrongly.
            self.broken.get_or_insert("an event could not be decoded");
            comment(out, "toolstream dropped an event it could not decode");
        } else if seen.calls {
            // A `tool_use` block's start, input or stop, by the decoder's reading: held;
            // the call goes out whole when its input closes.
        } else if let Some((kind, i)) = block_event(ty, data) {
            // Any other block (text, thinking, a server tool's use and result, a type not
            // known): forwarded, its index made the client's.
            let mine = if kind == BlockEvent::Start {
                let mine = self.next_index;
                self.next_index += 1;
                self.blocks.insert(i, mine);
                mine
            } else {
                self.blocks.get(&i).copied().unwrap_or(i)
            };
            self.forward(ty, data, i, mine, out);
        } else {
            if seen.error {
                self.counts.errors += 1;
                self.core.annotate_error(data, self.output_started, out);
            }
            // The calls closed by this event go before it (a message_delta's stop
            // reason comes after every block).
            self.calls(&mut events, out);
            if seen.done {
                // Held until the upstream's body ends: whatever comes after it decides
                // whether the client sees a clean end.
                // (Copies: a slice would keep its chunk alive.)
                self.stop = Some((Bytes::copy_from_slice(ty), Bytes::copy_from_slice(data)));
            } else if seen.finish && self.text.as_ref().is_some_and(|t| t.delivered) {
                sse_event(out, ty, &tool_use_stop(data));
            } else {
                sse_event(out, ty, data);
            }
        }
        self.calls(&mut events, out);
        self.events = events;
    }

    /// A non-tool block's event, its index `i` made the client's (`mine`).
    fn forward(&mut self, ty: &[u8], data: &[u8], i: u64, mine: u64, out: &mut BytesMut) {
        self.output_started = true;
        if mine == i {
            return sse_event(out, ty, data);
        }
        match serde_json::from_slice::<Value>(data) {
            Ok(mut v) => {
                v["index"] = json!(mine);
                sse_event(out, ty, v.to_string().as_bytes());
            }
            Err(_) => {
                self.broken
                    .get_or_insert("a block event could not be renumbered");
                comment(
                    out,
                    "toolstream dropped a block event it could not renumber",
                );
            }
        }
    }

    fn calls(&mut self, events: &mut Vec<Event>, out: &mut BytesMut) {
        for e in events.drain(..) {
            if let Some(call) = outgoing(&mut self.counts, e, out) {
                self.block(&call, out);
            }
        }
    }

    /// One tool_use block, whole: start, its input in one delta, stop.
    fn block(&mut self, c: &Outgoing, out: &mut BytesMut) {
        self.output_started = true;
        let index = self.next_index;
        self.next_index += 1;
        let (id, note) = self.core.client_id(c.id.clone(), &c.source);
        if let Some(note) = note {
            comment(out, &note);
        }
        let start = json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": c.name, "input": {}}});
        sse_event(out, b"content_block_start", start.to_string().as_bytes());
        let delta = json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta",
                "partial_json": c.arguments()}});
        sse_event(out, b"content_block_delta", delta.to_string().as_bytes());
        let stop = json!({"type": "content_block_stop", "index": index});
        sse_event(out, b"content_block_stop", stop.to_string().as_bytes());
    }

    /// The end of the upstream body; a cut stream ends with an error event in Anthropic's
    /// shape and no `message_stop`.
    pub fn finish(mut self, cut: Option<&str>, out: &mut BytesMut) -> Counts {
        self.end_framing(out);
        // A text block the stream left open: what its extractor held goes out.
        self.end_text_block(out);
        let complete = cut.is_none() && self.stop.is_some() && self.broken.is_none();
        let mut events = Vec::new();
        self.core.assembler.finish(complete, &mut events);
        self.calls(&mut events, out);
        if let (true, Some((ty, data))) = (complete, &self.stop) {
            sse_event(out, ty, data);
        }
        if !complete {
            let why = cut
                .or(self.broken)
                .unwrap_or("the upstream ended the stream before message_stop");
            comment(
                out,
                "toolstream error reason=stream_interrupted action=retry",
            );
            let e = json!({"type": "error", "error": {
                "type": "api_error",
                "message": format!("upstream stream interrupted: {why}"),
            }});
            sse_event(out, b"error", e.to_string().as_bytes());
        }
        self.counts()
    }

    /// With calls taken out of the text: an event of a `text` block handled (its start
    /// held until text goes out, its text through the extractor, its stop closing what
    /// the client has open). `false` for any other event.
    fn text_payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) -> bool {
        let Some((kind, i, is_text)) = text_block_event(ty, data) else {
            return false;
        };
        let t = self.text.as_deref_mut().expect("text blocks");
        let start = kind == BlockEvent::Start && is_text && t.upstream.is_none();
        if !start && (kind != BlockEvent::Other || t.upstream != Some(i)) {
            return false;
        }
        let mut tagged = Vec::new();
        let seen = self.decode(ty, data, &mut tagged, out);
        if seen.undecodable {
            self.broken.get_or_insert("an event could not be decoded");
            comment(out, "toolstream dropped an event it could not decode");
            return true;
        }
        // The text, and what else the event closed (a stop at an index a call's block
        // had too ends that call, as the decoder reads it).
        let mut texts = Vec::new();
        let mut others = Vec::new();
        for (_, e) in tagged {
            match e {
                Event::Text { text, .. } => texts.push(text),
                e => others.push(e),
            }
        }
        if start {
            let t = self.text.as_deref_mut().expect("text blocks");
            t.upstream = Some(i);
            t.start = Some((Bytes::copy_from_slice(ty), Bytes::copy_from_slice(data)));
        } else if is_stop(ty, data) {
            self.end_text_block(out);
        } else {
            let t = self.text.as_deref_mut().expect("text blocks");
            if texts.iter().all(|s| t.x.passes(s)) {
                // Plain text (or another delta of the block): as it came, in the block
                // the client has open.
                let mine = self.open_text(out);
                self.forward(ty, data, i, mine, out);
            } else {
                for s in texts {
                    let t = self.text.as_deref_mut().expect("text blocks");
                    t.x.push_owned(s, &mut t.pieces);
                    self.text_pieces(out);
                }
            }
        }
        self.calls(&mut others, out);
        true
    }

    /// The client's text block, opened if it is not: the upstream's start event (its
    /// index made the client's) the first time, a start of the proxy's own after a call.
    fn open_text(&mut self, out: &mut BytesMut) -> u64 {
        let t = self.text.as_deref_mut().expect("text blocks");
        if let Some(mine) = t.client {
            return mine;
        }
        let mine = self.next_index;
        self.next_index += 1;
        t.client = Some(mine);
        match (t.start.take(), t.upstream) {
            (Some((ty, data)), Some(i)) => self.forward(&ty, &data, i, mine, out),
            _ => {
                self.output_started = true;
                let start = json!({"type": "content_block_start", "index": mine,
                    "content_block": {"type": "text", "text": ""}});
                sse_event(out, b"content_block_start", start.to_string().as_bytes());
            }
        }
        mine
    }

    /// The client's text block closed, if one is open.
    fn close_text(&mut self, out: &mut BytesMut) {
        if let Some(mine) = self.text.as_deref_mut().and_then(|t| t.client.take()) {
            let stop = json!({"type": "content_block_stop", "index": mine});
            sse_event(out, b"content_block_stop", stop.to_string().as_bytes());
        }
    }

    /// The end of the upstream's text block: what the extractor held goes out, and the
    /// client's block closes.
    fn end_text_block(&mut self, out: &mut BytesMut) {
        let Some(t) = self.text.as_deref_mut() else {
            return;
        };
        if t.upstream.take().is_none() {
            return;
        }
        t.start = None;
        t.x.finish(&mut t.pieces);
        self.text_pieces(out);
        self.close_text(out);
    }

    /// The extractor's pieces, in their order: text into the client's text block, each
    /// call a `tool_use` block after it, markup that could not be read back into the text
    /// (noted).
    fn text_pieces(&mut self, out: &mut BytesMut) {
        let t = self.text.as_deref_mut().expect("text blocks");
        let pieces = std::mem::take(&mut t.pieces);
        for p in pieces {
            let text = match piece_text(p, &mut self.counts, out) {
                Ok(text) => text,
                Err(call) => {
                    self.close_text(out);
                    let mut events = Vec::new();
                    self.core.assembler.push_text_piece(0, call, &mut events);
                    let t = self.text.as_deref_mut().expect("text blocks");
                    t.calls += 1;
                    t.delivered |= events.iter().any(|e| matches!(e, Event::ToolCall(_)));
                    self.calls(&mut events, out);
                    continue;
                }
            };
            if text.is_empty() {
                continue;
            }
            let mine = self.open_text(out);
            let delta = json!({"type": "content_block_delta", "index": mine,
                "delta": {"type": "text_delta", "text": text}});
            sse_event(out, b"content_block_delta", delta.to_string().as_bytes());
        }
        let t = self.text.as_deref_mut().expect("text blocks");
        t.pieces = Vec::new();
    }
}

/// A piece of text read for calls, sorted: its text (markup that could not be read is put
/// back, counted and noted), or the call.
fn piece_text(p: Piece, counts: &mut Counts, out: &mut BytesMut) -> Result<String, Piece> {
    match p {
        Piece::Text(s) => Ok(s),
        Piece::Failed {
            name,
            kind,
            message,
            raw,
        } => {
            counts.failures += 1;
            comment(out, &text::failure_note(&name, kind, &message));
            Ok(raw)
        }
        call => Err(call),
    }
}

/// The text blocks of a message whose calls written into the text are taken out.
struct TextBlocks {
    x: crate::text_calls::Extractor,
    pieces: Vec<Piece>,
    /// The upstream's text block open, by index.
    upstream: Option<u64>,
    /// Its start event (type and data), held until its first text goes out.
    start: Option<(Bytes, Bytes)>,
    /// The client's text block open, by index.
    client: Option<u64>,
    /// Calls taken out of the text.
    calls: u32,
    /// Some went out whole (the stop reason becomes `tool_use`).
    delivered: bool,
}

impl TextBlocks {
    fn new(setting: &TextSetting) -> Self {
        TextBlocks {
            x: setting.extractor(),
            pieces: Vec::new(),
            upstream: None,
            start: None,
            client: None,
            calls: 0,
            delivered: false,
        }
    }
}

/// A `message_delta` whose `stop_reason` says `end_turn` made to say `tool_use` (calls
/// were taken out of the text); any other payload as it is.
fn tool_use_stop(data: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Value>(data) {
        Ok(mut v) if v["delta"]["stop_reason"] == "end_turn" => {
            v["delta"]["stop_reason"] = json!("tool_use");
            v.to_string().into_bytes()
        }
        _ => data.to_vec(),
    }
}

/// A content block event's kind and index, and whether it starts a `text` block.
fn text_block_event(ty: &[u8], data: &[u8]) -> Option<(BlockEvent, u64, bool)> {
    #[derive(serde::Deserialize)]
    struct Inner<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    #[derive(serde::Deserialize)]
    struct Start<'a> {
        #[serde(borrow)]
        content_block: Option<Inner<'a>>,
    }
    let (kind, i) = block_event(ty, data)?;
    let is_text = kind == BlockEvent::Start
        && serde_json::from_slice::<Start>(data)
            .ok()
            .and_then(|s| s.content_block?.kind)
            .is_some_and(|k| k == "text");
    Some((kind, i, is_text))
}

/// Whether a content block event is its block's stop.
fn is_stop(ty: &[u8], data: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Kind<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    match serde_json::from_slice::<Kind>(data)
        .ok()
        .and_then(|k| k.kind)
    {
        Some(k) => k == "content_block_stop",
        None => ty == b"content_block_stop",
    }
}

impl Default for AnthropicRewriter {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockEvent {
    Start,
    Other,
}

/// A content block event's kind and index (the payload's `type` wins over the SSE event's,
/// as in the decoder), read the way the decoder reads the event; `None` for any other
/// event.
fn block_event(ty: &[u8], data: &[u8]) -> Option<(BlockEvent, u64)> {
    #[derive(serde::Deserialize)]
    struct Block<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<std::borrow::Cow<'a, str>>,
        index: Option<u32>,
    }
    let b: Block = serde_json::from_slice(data).ok()?;
    let kind = b
        .kind
        .map(|k| k.into_owned().into_bytes())
        .unwrap_or_else(|| ty.to_vec());
    let kind = match &kind[..] {
        b"content_block_start" => BlockEvent::Start,
        b"content_block_delta" | b"content_block_stop" => BlockEvent::Other,
        _ => return None,
    };
    Some((kind, u64::from(b.index?)))
}

/// A non-streaming OpenAI chat completion, read with the library's chat decoder (which
/// reads a `chat.completion` body's messages as it reads a stream's deltas) and the
/// assembler, and changed where their events say: each choice's tool calls with glued
/// arguments split into separate calls (`<id>_2`, ...), duplicates dropped, ids minted
/// where missing, `stop` made `tool_calls` when there are calls (unless
/// `keep_finish_reason`); with `text`, the calls written into the content taken out. Only
/// those members are rewritten (`tool_calls`, `finish_reason`, `content`, spliced into the
/// body where the same strict reader found them); everything else stays byte for byte.
/// `None` when the body is not such a JSON object, or the decoder cannot read it (it is
/// then forwarded as it is).
pub fn rewrite_completion(
    body: &[u8],
    keep_finish_reason: bool,
    text: Option<&TextSetting>,
    repair: Option<&CallRepair>,
) -> Option<(Bytes, Counts)> {
    let layout = crate::provider::openai_chat::completion_layout(body)?;
    let mut core = Core::new(Format::OpenAiChat, Provider::Openai);
    if let Some(r) = repair {
        core.set_repair(r);
    }
    core.text = text.cloned().map(|t| Box::new(Extraction::new(t)));
    let mut events = Vec::new();
    let seen = core.decode_tagged(b"message", body, &mut events);
    if seen.undecodable {
        return None;
    }
    // What every choice's text still holds, then the calls still open (each call of a
    // message is whole; a text call cut off by the end of the content fails).
    if let Some(x) = core.text.as_deref_mut() {
        let mut plain = Vec::new();
        x.finish(None, &mut core.assembler, &mut plain);
        events.extend(plain.into_iter().map(|e| (0, e)));
    }
    let mut plain = Vec::new();
    core.assembler.finish(true, &mut plain);
    events.extend(plain.into_iter().map(|e| (0, e)));

    let mut counts = Counts::default();
    let mut slot_choice: HashMap<u32, u32> = HashMap::new();
    /// What one choice gets.
    #[derive(Default)]
    struct Choice {
        calls: Vec<u8>,
        n: u32,
        changed: bool,
        any: bool,
        signature: Option<String>,
        finish: Option<String>,
    }
    let mut per: HashMap<u32, Choice> = HashMap::new();
    for (c, e) in events {
        if let Event::CallStarted { index, .. } = &e {
            slot_choice.insert(*index, c);
            continue;
        }
        let slot = match &e {
            Event::ToolCall(t) => Some(t.index),
            Event::ToolCallFailed(f) => Some(f.index),
            _ => None,
        };
        let c = slot.and_then(|i| slot_choice.get(&i).copied()).unwrap_or(c);
        let ch = per.entry(c).or_default();
        match e {
            Event::ReasoningSignature { signature, .. } => ch.signature = Some(signature),
            Event::Finish { raw, .. } => ch.finish = Some(raw),
            Event::Duplicate { .. } => {
                counts.duplicates += 1;
                ch.changed = true;
            }
            Event::ToolCall(t) => {
                counts.calls += 1;
                if t.part > 1 {
                    counts.splits += 1;
                }
                if !t.repairs.is_empty() {
                    counts.repaired += 1;
                }
                ch.changed |= t.part > 1
                    || t.id.is_empty()
                    || t.id_source == IdSource::Text
                    || !t.repairs.is_empty();
                let (id, _) = core.client_id(t.id, &t.id_source);
                call_entry(
                    &mut ch.calls,
                    &id,
                    &t.name,
                    &text_of(&t.arguments),
                    ch.signature.take(),
                );
                ch.n += 1;
                ch.any = true;
            }
            Event::ToolCallFailed(f) => {
                counts.failures += 1;
                let (id, _) = core.client_id(f.id, &f.id_source);
                call_entry(
                    &mut ch.calls,
                    &id,
                    &f.name,
                    &text_of(&f.raw),
                    ch.signature.take(),
                );
                ch.n += 1;
            }
            _ => {}
        }
    }
    // The text the extractors left, per choice, when it is not what came.
    let mut texts: HashMap<u32, String> = HashMap::new();
    if let Some(x) = core.text.as_deref_mut() {
        counts.text_calls = x.calls;
        counts.failures += x.notes.len() as u32;
        if x.calls > 0 {
            for (c, t) in std::mem::take(&mut x.text) {
                texts.entry(c).or_default().push_str(&t);
            }
        }
    }
    let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    let mut done = HashSet::new();
    for l in &layout {
        if !done.insert(l.index) {
            continue;
        }
        let Some(ch) = per.get(&l.index) else {
            continue;
        };
        let text_changed = texts.contains_key(&l.index);
        if ch.changed || text_changed {
            let mut array = Vec::with_capacity(ch.calls.len() + 2);
            array.push(b'[');
            array.extend_from_slice(&ch.calls);
            array.push(b']');
            match (&l.tool_calls, l.message_end) {
                (Some(r), _) => edits.push((r.start, r.end, array)),
                (None, Some(end)) if ch.n > 0 => {
                    let mut member = b",\"tool_calls\":".to_vec();
                    member.extend_from_slice(&array);
                    edits.push((end, end, member));
                }
                _ => {}
            }
        }
        if let (true, Some(r)) = (text_changed, &l.content) {
            let t = &texts[&l.index];
            let v = if t.is_empty() {
                b"null".to_vec()
            } else {
                serde_json::to_vec(t).unwrap_or_default()
            };
            edits.push((r.start, r.end, v));
        }
        let stop = ch.finish.as_deref() == Some("stop");
        if let (true, Some(r)) = (stop && ch.any && !keep_finish_reason, &l.finish_reason) {
            edits.push((r.start, r.end, b"\"tool_calls\"".to_vec()));
        }
    }
    if edits.is_empty() {
        return Some((Bytes::copy_from_slice(body), counts));
    }
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = Vec::with_capacity(body.len() + 256);
    let mut at = 0;
    for (start, end, with) in edits {
        if start < at {
            continue;
        }
        out.extend_from_slice(&body[at..start]);
        out.extend_from_slice(&with);
        at = end;
    }
    out.extend_from_slice(&body[at..]);
    Some((Bytes::from(out), counts))
}

/// One entry of a message's `tool_calls`, after a comma if others came before it.
fn call_entry(out: &mut Vec<u8>, id: &str, name: &str, arguments: &str, sig: Option<String>) {
    if !out.is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"id\":");
    let _ = serde_json::to_writer(&mut *out, id);
    out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
    let _ = serde_json::to_writer(&mut *out, name);
    out.extend_from_slice(b",\"arguments\":");
    crate::json::escape::write_str(out, arguments);
    out.push(b'}');
    if let Some(s) = sig {
        out.extend_from_slice(b",\"extra_content\":{\"google\":{\"thought_signature\":");
        let _ = serde_json::to_writer(&mut *out, &s);
        out.extend_from_slice(b"}}");
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chat stream of one call: its first payload, then `n` fragments.
    fn chat_call(n: usize) -> String {
        let ev = |head: &str| {
            format!(
                "data: {{\"id\":\"c\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,{head}}}]}},\"finish_reason\":null}}]}}\n\n"
            )
        };
        let mut s = ev(
            r#""id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":\""}"#,
        );
        for _ in 0..n {
            s.push_str(&ev(r#""function":{"arguments":"x\\\"y"}"#));
        }
        s.push_str(&ev(r#""function":{"arguments":"\"}"}"#));
        s.push_str("data: [DONE]\n\n");
        s
    }

    /// The fragments of a run whole in one push are taken from the chunk (all but the two
    /// read before the run: the first read whole, the template learned; the second by the
    /// template, which opens the run), on both APIs whose rewriters take them; the tests
    /// in `tests/rewrite_invariance.rs` compare what the client gets with the framing's
    /// own reading.
    #[test]
    fn a_runs_fragments_whole_in_a_push_are_taken_from_the_chunk() {
        let mut r = OpenAiRewriter::new(Provider::Openai, false, None);
        let mut out = BytesMut::new();
        r.push(Bytes::from(chat_call(50)), &mut out);
        assert_eq!(r.core.taken, 50 + 1 - 2);
        let text = String::from_utf8_lossy(&out);
        let args = format!("{{\\\"a\\\":\\\"{}\\\"}}", "x\\\\\\\"y".repeat(50));
        assert!(text.contains(&args), "{text}");

        // A byte at a time, nothing is whole in a chunk.
        let mut r = OpenAiRewriter::new(Provider::Openai, false, None);
        let mut cut = BytesMut::new();
        for b in chat_call(50).into_bytes() {
            r.push(Bytes::from(vec![b]), &mut cut);
        }
        assert_eq!(r.core.taken, 0);
        assert_eq!(cut, out);

        let mut seq = 0;
        let mut ev = |ty: &str, body: &str| {
            seq += 1;
            format!("event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq},{body}}}\n\n")
        };
        let mut s = ev(
            "response.created",
            r#""response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}"#,
        );
        s += &ev(
            "response.output_item.added",
            r#""output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"f"}"#,
        );
        for i in 0..30 {
            let delta = if i == 0 { r#"{\"k\":["# } else { "1," };
            let body = format!(r#""item_id":"fc_1","output_index":0,"delta":"{delta}""#);
            s.push_str(&ev("response.function_call_arguments.delta", &body));
        }
        let mut r = ResponsesRewriter::new();
        let mut out = BytesMut::new();
        r.push(Bytes::from(s), &mut out);
        assert_eq!(r.core.taken, 30 - 2);
    }
}
