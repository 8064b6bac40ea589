//! The response rewriters: sans-IO, bytes of the upstream's stream in, bytes for the client
//! out, in the provider's own shapes.
//!
//! Both read the stream with toolstream's layers (SSE framing, the provider's decoder, the
//! tool-call assembler) and forward everything as it arrives except the tool calls' argument
//! fragments: those are held by the assembler, and each call goes out whole, in the
//! provider's shape, the moment its arguments object closes. Glued objects become separate
//! calls, duplicates are dropped, failed calls go out as the provider sent them (so the
//! agent's own handling applies), annotated with an SSE comment.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

use bytes::{Bytes, BytesMut};
use memchr::memmem::Finder;
use serde_json::{json, Map, Value};
use toolstream::assemble::{Event, Failure, Policy, ToolCallAssembler};
use toolstream::classify::{classify_stream_error, Phase, Policy as ClassifyPolicy, Provider};
use toolstream::provider::{Decoder, Delta, Format};
use toolstream::sse;

use crate::text::{completion_message, Extraction, TextSetting};

/// Searchers built once (building one costs more than searching a payload).
macro_rules! finder {
    ($name:ident, $needle:expr) => {
        static $name: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new($needle));
    };
}
finder!(FINISH, b"\"finish_reason\"");
finder!(FINISH_NULL, b"\"finish_reason\":null");
finder!(TOOL_CALLS, b"\"tool_calls\"");
finder!(STOP, b"\"stop\"");
finder!(LOGPROBS, b"\"logprobs\"");

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
    decoder: Decoder,
    assembler: ToolCallAssembler,
    deltas: Vec<Delta>,
    provider: Provider,
    /// The last payload carried something besides tool-call fragments (text, reasoning, a
    /// finish, usage, an error...).
    other: bool,
    /// The last payload carried tool-call fragments.
    calls: bool,
    /// Calls written into the text, when taken out.
    text: Option<Box<Extraction>>,
}

impl Core {
    fn new(format: Format, provider: Provider) -> Self {
        Core {
            sse: Some(sse::Decoder::new()),
            decoder: Decoder::new(format),
            assembler: ToolCallAssembler::new(Policy::default()),
            deltas: Vec::new(),
            provider,
            other: false,
            calls: false,
            text: None,
        }
    }

    fn next(&mut self) -> Option<Frame> {
        loop {
            return match self.sse.as_mut()?.next_item()? {
                sse::Item::Event(e) => Some(Frame::Event {
                    ty: Bytes::copy_from_slice(e.event_type()),
                    data: e.data().clone(),
                }),
                sse::Item::Comment(c) => Some(Frame::Comment(c)),
                sse::Item::Skipped(_) => Some(Frame::Skipped),
                _ => continue,
            };
        }
    }

    /// Decode one payload; the events it completes go to `events`.
    fn decode(&mut self, ty: &[u8], data: &[u8], events: &mut Vec<Event>) {
        let ty = (ty != b"message").then_some(ty);
        self.decoder.decode(ty, data, &mut self.deltas);
        self.other = self
            .deltas
            .iter()
            .any(|d| !matches!(d, Delta::Call { .. } | Delta::CallEnd { .. }));
        self.calls = self.deltas.iter().any(|d| matches!(d, Delta::Call { .. }));
        let Some(x) = self.text.as_deref_mut() else {
            for d in self.deltas.drain(..) {
                self.assembler.push(d, events);
            }
            return;
        };
        x.start();
        for d in self.deltas.drain(..) {
            match d {
                Delta::Text { choice, text } => x.push(choice, text, &mut self.assembler, events),
                Delta::Finish { choice, .. } => {
                    // The choice's text is over: what its extractor holds comes first.
                    x.finish(Some(choice), &mut self.assembler, events);
                    self.assembler.push(d, events);
                }
                d => self.assembler.push(d, events),
            }
        }
    }

    /// An SSE comment annotating an error the provider sent: the classifier's verdict.
    fn annotate_error(&self, payload: &[u8], phase: Phase, out: &mut BytesMut) {
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

/// What both rewriters share: the framing's comments and over-limit events handled alike,
/// each event's payload handed to the rewriter.
trait Rewrite {
    fn core(&mut self) -> &mut Core;

    /// One SSE event's payload.
    fn payload(&mut self, ty: &[u8], data: Bytes, out: &mut BytesMut);

    /// Feed upstream bytes: comments (keep-alives) forwarded, an event over the limit
    /// reported and the calls it cut failed, each event's payload handled.
    fn feed(&mut self, chunk: Bytes, out: &mut BytesMut) {
        if let Some(d) = self.core().sse.as_mut() {
            d.feed(chunk);
        }
        while let Some(frame) = self.core().next() {
            match frame {
                Frame::Comment(c) => {
                    out.extend_from_slice(b":");
                    out.extend_from_slice(&c);
                    out.extend_from_slice(b"\n\n");
                }
                Frame::Skipped => {
                    self.core()
                        .assembler
                        .interrupt("an event over the limit was dropped");
                    comment(out, "toolstream dropped an event over the size limit");
                }
                Frame::Event { ty, data } => self.payload(&ty, data, out),
            }
        }
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
                let (ty, data) = (Bytes::copy_from_slice(e.event_type()), e.data().clone());
                self.payload(&ty, data, out);
            }
        }
        if end.is_err() {
            self.core()
                .assembler
                .interrupt("the stream was cut inside an event");
        }
    }
}

impl Rewrite for OpenAiRewriter {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
    fn payload(&mut self, ty: &[u8], data: Bytes, out: &mut BytesMut) {
        OpenAiRewriter::payload(self, ty, data, out)
    }
}

impl Rewrite for AnthropicRewriter {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
    fn payload(&mut self, ty: &[u8], data: Bytes, out: &mut BytesMut) {
        AnthropicRewriter::payload(self, ty, data, out)
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

fn sse_data(out: &mut BytesMut, data: &[u8]) {
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
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

/// An id for a call that came without one: unique within the response (the seed is random
/// per stream), in OpenAI's form.
fn mint_id(seed: u64, n: u32) -> String {
    format!("call_{seed:016x}{n:04}")
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x5eed);
    h.finish()
}

/// OpenAI chat completions (and the servers that speak it).
pub struct OpenAiRewriter {
    core: Core,
    /// The response's envelope members, from its first chunk.
    envelope: Map<String, Value>,
    next_index: u32,
    seed: u64,
    keep_finish_reason: bool,
    delivered: bool,
    saw_done: bool,
    after_done: bool,
    saw_finish: bool,
    output_started: bool,
    counts: Counts,
    events: Vec<Event>,
}

impl OpenAiRewriter {
    /// A rewriter for one response. `keep_finish_reason` leaves the provider's `stop` as it
    /// is when calls were delivered (by default it becomes `tool_calls`); `text` takes the
    /// calls written into the content out of it.
    pub fn new(provider: Provider, keep_finish_reason: bool, text: Option<TextSetting>) -> Self {
        let mut core = Core::new(Format::OpenAiChat, provider);
        core.text = text.map(|t| Box::new(Extraction::new(t)));
        OpenAiRewriter {
            core,
            envelope: Map::new(),
            next_index: 0,
            seed: random_seed(),
            keep_finish_reason,
            delivered: false,
            saw_done: false,
            after_done: false,
            saw_finish: false,
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

    /// The text the chunks did not carry (held until the stream's end, or of a choice the
    /// chunk did not name), each choice's in a chunk of its own.
    fn text_left(&mut self, out: &mut BytesMut) {
        let Some(x) = self.core.text.as_deref_mut() else {
            return;
        };
        let left = std::mem::take(&mut x.text);
        for (choice, text) in left.into_iter().filter(|(_, t)| !t.is_empty()) {
            self.chunk(
                json!({"index": choice, "delta": {"content": text}, "finish_reason": null}),
                out,
            );
            self.output_started = true;
        }
    }

    /// The end of every choice's text: what the extractors held, out.
    fn end_text(&mut self, events: &mut Vec<Event>, out: &mut BytesMut) {
        if let Some(x) = self.core.text.as_deref_mut() {
            x.start();
            x.finish(None, &mut self.core.assembler, events);
        }
        self.notes(out);
        self.text_left(out);
    }

    fn payload(&mut self, ty: &[u8], data: Bytes, out: &mut BytesMut) {
        if self.saw_done {
            // After the terminal marker nothing more belongs to the response (the pipeline
            // drops it too): said once.
            if data.trim_ascii() != b"[DONE]" && !std::mem::replace(&mut self.after_done, true) {
                comment(out, "toolstream dropped data after [DONE]");
            }
            return;
        }
        let mut events = std::mem::take(&mut self.events);
        self.core.decode(ty, &data, &mut events);
        if data.trim_ascii() == b"[DONE]" {
            self.saw_done = true;
            self.end_text(&mut events, out);
            self.calls(&mut events, out);
            sse_data(out, b"[DONE]");
            self.events = events;
            return;
        }
        let is_error = events
            .iter()
            .any(|e| matches!(e, Event::ProviderError { .. }));
        if is_error {
            self.counts.errors += 1;
            let phase = if self.output_started {
                Phase::AfterOutput
            } else {
                Phase::BeforeOutput
            };
            self.core.annotate_error(&data, phase, out);
        }
        // The decoder saw a finish reason; the payload is searched only if it carried
        // something besides call fragments.
        let finish =
            self.core.other && FINISH.find(&data).is_some() && FINISH_NULL.find(&data).is_none();
        if finish && !is_error {
            self.saw_finish = true;
        }
        let forwarded = self.rewrite_chunk(&data, &events);
        self.notes(out);
        if finish {
            // The calls this chunk closed (a truncated one, at `length`) go before the
            // finish reason.
            self.text_left(out);
            self.calls(&mut events, out);
            if let Some(f) = &forwarded {
                sse_data(out, f);
            }
        } else {
            if let Some(f) = &forwarded {
                sse_data(out, f);
            }
            self.text_left(out);
            self.calls(&mut events, out);
        }
        if forwarded.is_some() {
            self.output_started = true;
        }
        self.events = events;
    }

    /// The chunk as the client gets it: as it came, unless it carries tool-call fragments
    /// (taken out: the calls go out whole) or a finish reason to correct; `None` when
    /// nothing is left to send.
    fn rewrite_chunk(&mut self, data: &Bytes, events: &[Event]) -> Option<Bytes> {
        let first = self.envelope.is_empty();
        // Only tool-call fragments, by what the decoder found in it (and no log
        // probabilities): nothing to forward but the calls, which go out whole. Most
        // payloads of a call's arguments take this way, searched once, unparsed.
        if !first && !self.core.other && self.core.calls && LOGPROBS.find(data).is_none() {
            return None;
        }
        let has_calls = TOOL_CALLS.find(data).is_some();
        let calls_now = events.iter().any(|e| matches!(e, Event::ToolCall(_)));
        let stop = STOP.find(data).is_some();
        // Text that is what came goes out in the chunk as it came.
        if let Some(x) = self.core.text.as_deref_mut().filter(|x| !x.changed) {
            x.text.clear();
        }
        let text = self.core.text.as_deref_mut().filter(|x| x.changed);
        let text_changed = text.is_some();
        if !has_calls && !first && !text_changed && !(stop && (self.delivered || calls_now)) {
            return Some(data.clone());
        }

        let Ok(Value::Object(mut chunk)) = serde_json::from_slice::<Value>(data) else {
            // The decoder read it, serde_json does not (nested past its depth): with its
            // text changed it is not forwarded as it came (that would leak the markup of a
            // call also sent as a call); its text goes out in chunks of its own.
            return (!text_changed).then(|| data.clone());
        };
        let mut changed = false;
        if let (Some(x), Some(Value::Array(choices))) = (text, chunk.get_mut("choices")) {
            x.rewrite(choices);
            changed = true;
        }
        if first {
            for key in ["id", "object", "created", "model", "system_fingerprint"] {
                if let Some(v) = chunk.get(key) {
                    self.envelope.insert(key.to_string(), v.clone());
                }
            }
        }
        let mut keep = chunk.get("usage").is_some_and(|u| !u.is_null())
            || chunk.get("error").is_some()
            || !chunk.contains_key("choices");
        if let Some(Value::Array(choices)) = chunk.get_mut("choices") {
            for choice in choices.iter_mut() {
                let Some(choice) = choice.as_object_mut() else {
                    keep = true;
                    continue;
                };
                if let Some(Value::Object(delta)) = choice.get_mut("delta") {
                    changed |= delta.remove("tool_calls").is_some();
                    // A delta left with only `role` or nulls still opens the turn for the
                    // client: kept when it carries anything at all.
                    if delta.values().any(|v| !v.is_null()) {
                        keep = true;
                    }
                }
                if let Some(reason) = choice.get_mut("finish_reason") {
                    if reason == "stop" && (self.delivered || calls_now) && !self.keep_finish_reason
                    {
                        *reason = json!("tool_calls");
                        changed = true;
                    }
                    if !reason.is_null() {
                        keep = true;
                    }
                }
            }
        }
        if !changed {
            return Some(data.clone());
        }
        keep.then(|| Bytes::from(Value::Object(chunk).to_string()))
    }

    /// The calls the last payload completed, each as one chunk of its own; failures as the
    /// provider sent them, annotated.
    fn calls(&mut self, events: &mut Vec<Event>, out: &mut BytesMut) {
        for e in events.drain(..) {
            if let Some(call) = outgoing(&mut self.counts, e, out) {
                self.call_chunk(&call.id, &call.name, call.arguments, out);
                self.delivered |= call.whole;
                self.output_started = true;
            }
        }
    }

    fn call_chunk(&mut self, id: &str, name: &str, arguments: String, out: &mut BytesMut) {
        let index = self.next_index;
        self.next_index += 1;
        // A call taken out of the text has the assembler's id (`text_call_<slot>`), not
        // one in OpenAI's form.
        let from_text = self.core.text.is_some() && id.starts_with("text_call_");
        let id = if id.is_empty() || id.starts_with('_') || from_text {
            mint_id(self.seed, index)
        } else {
            id.to_string()
        };
        self.chunk(
            json!({
                "index": 0,
                "delta": {"tool_calls": [{
                    "index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }]},
                "finish_reason": null,
            }),
            out,
        );
    }

    /// A chunk of the proxy's own, in the response's envelope, with one choice.
    fn chunk(&self, choice: Value, out: &mut BytesMut) {
        let mut chunk = self.envelope.clone();
        chunk
            .entry("object")
            .or_insert_with(|| json!("chat.completion.chunk"));
        chunk.insert("choices".into(), Value::Array(vec![choice]));
        sse_data(out, Value::Object(chunk).to_string().as_bytes());
    }

    /// The end of the upstream body. `cut` when the transport failed; a stream without
    /// `[DONE]` and without a finish reason is cut too. A cut stream ends with an error in
    /// OpenAI's shape and no `[DONE]`: never a clean end.
    pub fn finish(mut self, cut: Option<&str>, out: &mut BytesMut) -> Counts {
        self.end_framing(out);
        let complete = cut.is_none() && (self.saw_done || self.saw_finish);
        let mut events = Vec::new();
        self.end_text(&mut events, out);
        self.core.assembler.finish(complete, &mut events);
        self.calls(&mut events, out);
        if !complete {
            let why = cut.unwrap_or("the upstream ended the stream before it was complete");
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

/// A call to send the client: whole, or failed and sent as the provider sent it.
struct Outgoing {
    id: String,
    name: String,
    arguments: String,
    /// A call that closed as one valid object (not a failure).
    whole: bool,
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
            Some(Outgoing {
                arguments: String::from_utf8_lossy(&c.arguments).into_owned(),
                id: c.id,
                name: c.name,
                whole: true,
            })
        }
        Event::ToolCallFailed(f) => {
            counts.failures += 1;
            comment(out, &failure_note(&f));
            Some(Outgoing {
                arguments: String::from_utf8_lossy(&f.raw).into_owned(),
                id: f.id,
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

fn failure_note(f: &Failure) -> String {
    format!(
        "toolstream tool_call_error index={} kind={} offset={}",
        f.index,
        f.kind.as_str(),
        f.offset
    )
}

/// Anthropic Messages.
pub struct AnthropicRewriter {
    core: Core,
    /// Upstream block index → the client's.
    blocks: HashMap<u64, u64>,
    /// Upstream indices of the tool_use blocks held.
    held: HashMap<u64, ()>,
    next_index: u64,
    seed: u64,
    saw_stop: bool,
    output_started: bool,
    counts: Counts,
    events: Vec<Event>,
}

impl AnthropicRewriter {
    /// A rewriter for one response.
    pub fn new() -> Self {
        AnthropicRewriter {
            core: Core::new(Format::Anthropic, Provider::Anthropic),
            blocks: HashMap::new(),
            held: HashMap::new(),
            next_index: 0,
            seed: random_seed(),
            saw_stop: false,
            output_started: false,
            counts: Counts::default(),
            events: Vec::new(),
        }
    }

    /// What was counted so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Feed upstream bytes; what the client gets is appended to `out`.
    pub fn push(&mut self, chunk: Bytes, out: &mut BytesMut) {
        self.feed(chunk, out);
    }

    fn payload(&mut self, ty: &[u8], data: Bytes, out: &mut BytesMut) {
        let mut events = std::mem::take(&mut self.events);
        self.core.decode(ty, &data, &mut events);
        let parsed: Option<Value> = match ty {
            b"content_block_start" | b"content_block_delta" | b"content_block_stop" => {
                serde_json::from_slice(&data).ok()
            }
            _ => None,
        };
        let index = parsed
            .as_ref()
            .and_then(|v| v.get("index"))
            .and_then(Value::as_u64);
        match (ty, index) {
            (b"content_block_start", Some(i)) => {
                let is_tool = parsed
                    .as_ref()
                    .and_then(|v| v.pointer("/content_block/type"))
                    .and_then(Value::as_str)
                    == Some("tool_use");
                if is_tool {
                    // Held: the call goes out whole when its input closes.
                    self.held.insert(i, ());
                } else {
                    let mine = self.next_index;
                    self.next_index += 1;
                    self.blocks.insert(i, mine);
                    self.forward(ty, &data, parsed, i, out);
                }
            }
            (b"content_block_delta" | b"content_block_stop", Some(i))
                if self.held.contains_key(&i) =>
            {
                if ty == b"content_block_stop" {
                    self.held.remove(&i);
                }
            }
            (b"content_block_delta" | b"content_block_stop", Some(i)) => {
                self.forward(ty, &data, parsed, i, out);
            }
            _ => {
                if ty == b"error" {
                    self.counts.errors += 1;
                    let phase = if self.output_started {
                        Phase::AfterOutput
                    } else {
                        Phase::BeforeOutput
                    };
                    self.core.annotate_error(&data, phase, out);
                }
                if ty == b"message_stop" {
                    self.saw_stop = true;
                }
                // The calls closed by this event go before it (a message_delta's stop
                // reason comes after every block).
                self.calls(&mut events, out);
                sse_event(out, ty, &data);
            }
        }
        self.calls(&mut events, out);
        self.events = events;
    }

    /// A non-tool block's event, its index made the client's.
    fn forward(
        &mut self,
        ty: &[u8],
        data: &Bytes,
        parsed: Option<Value>,
        i: u64,
        out: &mut BytesMut,
    ) {
        self.output_started = true;
        let mine = self.blocks.get(&i).copied().unwrap_or(i);
        if mine == i {
            return sse_event(out, ty, data);
        }
        let mut v = parsed.unwrap_or(Value::Null);
        v["index"] = json!(mine);
        sse_event(out, ty, v.to_string().as_bytes());
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
        let id = if c.id.is_empty() || c.id.starts_with('_') {
            format!("toolu_{:016x}{index:04}", self.seed)
        } else {
            c.id.clone()
        };
        let start = json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": c.name, "input": {}}});
        sse_event(out, b"content_block_start", start.to_string().as_bytes());
        let delta = json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta",
                "partial_json": c.arguments}});
        sse_event(out, b"content_block_delta", delta.to_string().as_bytes());
        let stop = json!({"type": "content_block_stop", "index": index});
        sse_event(out, b"content_block_stop", stop.to_string().as_bytes());
    }

    /// The end of the upstream body; a cut stream ends with an error event in Anthropic's
    /// shape and no `message_stop`.
    pub fn finish(mut self, cut: Option<&str>, out: &mut BytesMut) -> Counts {
        self.end_framing(out);
        let complete = cut.is_none() && self.saw_stop;
        let mut events = Vec::new();
        self.core.assembler.finish(complete, &mut events);
        self.calls(&mut events, out);
        if !complete {
            let why = cut.unwrap_or("the upstream ended the stream before message_stop");
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
        self.counts
    }
}

impl Default for AnthropicRewriter {
    fn default() -> Self {
        Self::new()
    }
}

/// A non-streaming OpenAI chat completion: each choice's tool calls with glued arguments
/// split into separate calls (`<id>_2`, ...), duplicates dropped, ids minted where missing,
/// and `stop` made `tool_calls` when there are calls (unless `keep_finish_reason`); with
/// `text`, the calls written into the content taken out first. `None` when the body is not
/// such a JSON object (it is then forwarded as it is).
pub fn rewrite_completion(
    body: &[u8],
    keep_finish_reason: bool,
    text: Option<&TextSetting>,
) -> Option<(Bytes, Counts)> {
    let mut v: Value = serde_json::from_slice(body).ok()?;
    let seed = random_seed();
    let mut counts = Counts::default();
    let choices = v.get_mut("choices")?.as_array_mut()?;
    let mut changed = false;
    for choice in choices {
        if let (Some(setting), Some(Value::Object(message))) = (text, choice.get_mut("message")) {
            let (taken, failed) = completion_message(message, setting);
            counts.text_calls += taken;
            counts.failures += failed;
            changed |= taken > 0;
        }
        let Some(calls) = choice
            .pointer_mut("/message/tool_calls")
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        let mut out = Vec::new();
        for call in calls.drain(..) {
            let args = call
                .pointer("/function/arguments")
                .and_then(Value::as_str)
                .map(str::to_string);
            let parts = args.as_deref().and_then(split_objects);
            match parts {
                Some(parts) if parts.len() > 1 => {
                    changed = true;
                    let mut seen: Vec<&str> = Vec::new();
                    for (k, part) in parts.iter().enumerate() {
                        if seen.contains(&part.as_str()) {
                            counts.duplicates += 1;
                            continue;
                        }
                        seen.push(part);
                        let mut c = call.clone();
                        let id = c
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        if k > 0 {
                            c["id"] = json!(format!("{id}_{}", k + 1));
                            counts.splits += 1;
                        }
                        c["function"]["arguments"] = json!(part);
                        counts.calls += 1;
                        out.push(c);
                    }
                }
                Some(_) => {
                    counts.calls += 1;
                    out.push(call);
                }
                None => {
                    counts.failures += 1;
                    out.push(call);
                }
            }
        }
        for (n, c) in out.iter_mut().enumerate() {
            if c.get("id")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                c["id"] = json!(mint_id(seed, n as u32));
                changed = true;
            }
        }
        let any = !out.is_empty();
        *calls = out;
        if any && !keep_finish_reason && choice.get("finish_reason") == Some(&json!("stop")) {
            choice["finish_reason"] = json!("tool_calls");
            changed = true;
        }
    }
    let bytes = if changed {
        Bytes::from(v.to_string())
    } else {
        Bytes::copy_from_slice(body)
    };
    Some((bytes, counts))
}

/// The JSON objects glued in `text`, each as its exact text; `None` when the text is not
/// only objects.
fn split_objects(text: &str) -> Option<Vec<String>> {
    use toolstream::json::{Mode, Splitter};
    let mut s = Splitter::new(Mode::Objects);
    let mut values = Vec::new();
    s.push(Bytes::copy_from_slice(text.as_bytes()), &mut values)
        .ok()?;
    values.extend(s.finish().ok()?);
    if values.is_empty() {
        return None;
    }
    Some(
        values
            .iter()
            .map(|v| String::from_utf8_lossy(v.bytes()).into_owned())
            .collect(),
    )
}
