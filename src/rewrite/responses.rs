//! The OpenAI Responses API (`POST /v1/responses`, streaming).
//!
//! The events of a `function_call` item (`response.output_item.added`, its
//! `function_call_arguments.delta` / `.done`, `response.output_item.done`) are held until
//! the decoder says the call ended. A call that closed as one valid object goes out as it
//! came, but for its argument deltas, joined into one (numbered as the last of them: a
//! client reads one event per call, not one per few tokens). Any other is written anew from the assembler's events: each object of a glued
//! call its own item (the first with the provider's `id` and `call_id`, the next ones with
//! ids made from them, [`crate::ids`]), each announced with `output_item.added` and closed
//! with `arguments.done` and `output_item.done`; a duplicate dropped and noted; a broken
//! call sent as the provider sent its bytes, annotated. Later items' `output_index` moves
//! by the items added, every event's `sequence_number` stays strictly increasing, and the
//! terminal event's `response.output` lists the items the client got. Everything else
//! passes byte for byte (only those two numbers spliced where they change), including
//! reasoning items with `encrypted_content`, custom tools, web search, MCP and unknown
//! types. The terminal event is held until the upstream's body ends: a stream that was cut
//! or lost data ends with an `error` event instead.
//!
//! The upstream keeps its own copy of the output when `store` is on; a client that
//! continues with `previous_response_id` and answers a call whose id the rewriter made
//! refers to an id the upstream never gave, and the upstream refuses the output. So the
//! rewriter reports the calls it made ([`ResponsesRewriter::finish_with_calls`]), and
//! [`continue_request`] puts them into the follow-up request as explicit `function_call`
//! input items before their outputs: the upstream then holds every call the client
//! answers. (The glued original stays in the stored output; its first object's call id is
//! the original's, so its output still matches.)

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use bytes::{Bytes, BytesMut};
use serde_json::json;

use super::text::TextSetting;
use super::{comment, piece_text, push_u64, sse_event, Core, Counts, Outgoing, Rewrite};
use crate::assemble::{Event, IdSource};
use crate::classify::Provider;
use crate::json::cursor::{Cursor, CursorError};
use crate::provider::openai_responses::{event_layout, EventLayout};
use crate::provider::Format;
use crate::text_calls::{Extractor, Piece};
use serde_json::Value;

/// A `function_call` item of the upstream's output.
#[derive(Debug, Default)]
struct CallItem {
    /// Its events, held until the call ends.
    held: Vec<Held>,
    state: ItemState,
    /// The item's `id` (`fc_...`).
    item_id: Option<String>,
    /// The assembler's slot.
    slot: Option<u32>,
    /// The argument bytes its events carried (what a client reading them accumulates).
    streamed: usize,
    /// A call at an output index an earlier call had (the upstream reused it): written
    /// anew, after that call's items.
    reused: bool,
    /// Its `output_item.done` went out.
    closed: bool,
    /// Its fragments came in more than one run (other events between them).
    runs: bool,
    /// Its `arguments.done` differed from its deltas (the decoder said so).
    disagreed: bool,
}

/// A held event: its SSE type and data, its layout when it was read, and whether the
/// decoder read it as the call's start (its item announced).
#[derive(Debug)]
struct Held {
    ty: Bytes,
    data: Bytes,
    layout: Option<Box<EventLayout>>,
    start: bool,
    /// The decoder read it as one argument fragment and nothing else.
    fragment: bool,
    /// The upstream events it stands for: 1, or for the first of a run of fragments, the
    /// run's length (the later ones are not held: they go out joined into one).
    count: u32,
}

impl Held {
    /// What it holds, as counted against [`MAX_HELD`]: its bytes, its layout's and the
    /// entry itself (a flood of tiny events costs what it holds).
    fn size(&self) -> usize {
        self.data.len()
            + std::mem::size_of::<Held>()
            + self
                .layout
                .as_deref()
                .map_or(0, |l| std::mem::size_of::<EventLayout>() + layout_size(l))
    }
}

/// The bytes a layout holds beyond its own.
fn layout_size(l: &EventLayout) -> usize {
    l.kind.as_ref().map_or(0, String::len)
        + l.item_id.as_ref().map_or(0, String::len)
        + l.item_kind.as_ref().map_or(0, String::len)
        + l.response_id.as_ref().map_or(0, String::len)
        + l.output.as_ref().map_or(0, |o| o.len() * 24)
}

/// The bytes held entries hold ([`Held::size`]).
fn held_size(held: &[Held]) -> usize {
    held.iter().map(Held::size).sum()
}

/// An event type to keep: the static one, else a copy (a slice would keep its chunk).
fn own(ty: &[u8]) -> Bytes {
    crate::sse::common_type(ty).unwrap_or_else(|| Bytes::copy_from_slice(ty))
}

/// The upstream events held entries stand for.
fn events_of(held: &[Held]) -> i64 {
    held.iter().map(|h| i64::from(h.count)).sum()
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum ItemState {
    /// The call has not ended: its events are held.
    #[default]
    Holding,
    /// It ended as one valid call: its events went out as they came, and later ones do.
    Passed,
    /// It was written anew: the upstream's later events for it are dropped.
    Rewritten,
}

/// A call the rewriter sent that the upstream never saw as such: an object split off a
/// glued call, or a call given an id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MadeCall {
    /// The call id the client got.
    pub call_id: String,
    /// The function name.
    pub name: String,
    /// The arguments (JSON text).
    pub arguments: String,
}

/// What a follow-up request on this response needs: its id (the follow-up's
/// `previous_response_id`) and the calls the rewriter made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Continuation {
    /// The response's `id`.
    pub response_id: String,
    /// The calls made, in order.
    pub calls: Vec<MadeCall>,
}

/// OpenAI Responses API streams. See the module docs.
pub struct ResponsesRewriter {
    pub(super) core: Core,
    /// By upstream `output_index`.
    items: BTreeMap<u32, CallItem>,
    /// The assembler's events for each slot, until its call ends.
    pending: BTreeMap<u32, Vec<Event>>,
    /// Upstream `output_index` → the client's, once the indices changed (an item was
    /// added): each upstream index is given the next free one when first seen after that,
    /// so the client's indices stay unique whatever order the upstream's come in.
    places: BTreeMap<u32, u64>,
    /// Where indices start to change (the first call written anew): below it, indices
    /// not yet placed stay as they are.
    moved_from: Option<u32>,
    /// The next free client index.
    next_out: u64,
    /// The client's sequence number minus the upstream's, for the next forwarded event.
    seq_offset: i64,
    /// The last sequence number the client got, as far as read.
    last_seq: Option<u64>,
    /// The last event forwarded without being read (numbers unchanged): read only when a
    /// sequence number must follow it.
    unread_last: Option<Bytes>,
    /// The items written for each rewritten call, by upstream `output_index`: what the
    /// terminal event's `response.output` lists in the call's place.
    written: BTreeMap<u32, Vec<String>>,
    /// The terminal event (its type and data), held until the upstream's body ends.
    terminal: Option<(Bytes, Bytes)>,
    /// Why the stream cannot end cleanly, once something was dropped.
    broken: Option<&'static str>,
    output_started: bool,
    counts: Counts,
    /// The response's id (from the first event that names it).
    response_id: Option<String>,
    /// The calls made, for a follow-up request.
    made: Vec<MadeCall>,
    /// The highest upstream output index seen.
    max_index: u32,
    /// The bytes of the events held, all calls together (at most [`MAX_HELD`]).
    held_bytes: usize,
    /// Calls written into the text, when taken out.
    text: Option<Box<TextItems>>,
    /// Upstream `output_index` → the items that replace its element in the terminal
    /// event's `response.output` (a message whose text held calls: the message with its
    /// text as the client got it, then the calls' items).
    replaced: BTreeMap<u32, Vec<String>>,
}

/// The message items whose text is read for calls.
struct TextItems {
    setting: TextSetting,
    /// By upstream `output_index`, until the item's `output_item.done`.
    items: HashMap<u32, TextItem>,
    /// Calls taken out of the text.
    calls: u32,
    /// The bytes of text kept, every item's together.
    kept: usize,
}

/// A message item's text, read for calls.
struct TextItem {
    x: Extractor,
    pieces: Vec<Piece>,
    /// The text the client got for the content part in hand (up to [`MAX_HELD`]).
    text: String,
    /// The text outgrew [`MAX_HELD`] (it is no longer kept).
    over: bool,
    /// The texts of the parts done, by content index.
    parts: Vec<(u64, String)>,
    /// What the client got differs from what came (the item's done events are written
    /// with the client's text).
    changed: bool,
    /// The last `output_text.delta` written anew, the model of the ones written next.
    template: Option<Value>,
    /// The calls taken out, sent as items after the message.
    calls: Vec<Outgoing>,
}

impl TextItem {
    fn new(setting: &TextSetting) -> Self {
        TextItem {
            x: setting.extractor(),
            pieces: Vec::new(),
            text: String::new(),
            over: false,
            parts: Vec::new(),
            changed: false,
            template: None,
            calls: Vec::new(),
        }
    }

    /// The bytes of text it keeps.
    fn kept_bytes(&self) -> usize {
        self.text.len() + self.parts.iter().map(|(_, t)| t.len()).sum::<usize>()
    }

    /// Keep `text` as the client got it, within what is kept for every item together
    /// (`kept`, at most [`MAX_HELD`]): past it, the item's text is no longer kept.
    fn keep(&mut self, text: &str, kept: &mut usize) {
        if *kept + text.len() > MAX_HELD {
            self.over = true;
        } else if !self.over {
            *kept += text.len();
            self.text.push_str(text);
        }
    }
}

/// The most message items read for calls at once (a response streams one at a time).
const MAX_TEXT_ITEMS: usize = 64;

impl Default for ResponsesRewriter {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponsesRewriter {
    /// A rewriter for one response.
    pub fn new() -> Self {
        let mut core = Core::new(Format::OpenAiResponses, Provider::Openai);
        if let crate::provider::Decoder::OpenAiResponses(d) = &mut core.decoder {
            // Each event's numbers are read in the decoder's pass.
            d.keep_layouts();
        }
        ResponsesRewriter {
            core,
            items: BTreeMap::new(),
            pending: BTreeMap::new(),
            places: BTreeMap::new(),
            moved_from: None,
            next_out: 0,
            seq_offset: 0,
            last_seq: None,
            unread_last: None,
            written: BTreeMap::new(),
            terminal: None,
            broken: None,
            output_started: false,
            counts: Counts::default(),
            response_id: None,
            made: Vec::new(),
            max_index: 0,
            held_bytes: 0,
            text: None,
            replaced: BTreeMap::new(),
        }
    }

    /// A rewriter that takes the calls written into `output_text` out of it (`None`:
    /// leaves the text as it came). Each call becomes a `function_call` item right after
    /// its message; the message's text deltas and done events carry the text without the
    /// calls.
    pub fn with_text(text: Option<TextSetting>) -> Self {
        ResponsesRewriter {
            text: text.map(|setting| {
                Box::new(TextItems {
                    setting,
                    items: HashMap::new(),
                    calls: 0,
                    kept: 0,
                })
            }),
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
        // The last event forwarded unread is read now, once a push: it is a slice of the
        // chunk, which nothing else keeps past the push.
        self.sync_seq();
    }

    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) {
        if self.terminal.is_some() {
            if self.broken.is_none() {
                comment(
                    out,
                    "toolstream dropped data after the response's last event",
                );
            }
            self.broken
                .get_or_insert("data came after the response's last event");
            return;
        }
        let mut tagged = Vec::new();
        let seen = self.decode(ty, data, &mut tagged, out);
        if tagged.is_empty() && self.next_of_run(seen) {
            return;
        }
        // The event's layout, when the decoder read it whole (read in the same pass).
        let read = self.core.take_layout();
        let ended = std::mem::take(&mut self.core.ended);
        if seen.undecodable {
            self.broken.get_or_insert("an event could not be decoded");
            comment(out, "toolstream dropped an event it could not decode");
            self.seq_offset -= 1;
            self.take_events(tagged, None);
            return;
        }
        if self.text.is_some()
            && !seen.calls
            && self.text_payload(ty, data, read.as_deref(), &tagged, out)
        {
            self.take_events(tagged, None);
            return;
        }
        if seen.calls {
            // The decoder says which output index the event is for; the event is read
            // here only when a call starts (its item's id), else when it goes out.
            let started = tagged
                .iter()
                .any(|(_, e)| matches!(e, Event::CallStarted { .. }));
            let mut layout = read.or_else(|| {
                (started || self.core.call_index.is_none())
                    .then(|| event_layout(data).map(Box::new))
                    .flatten()
            });
            let index = self.core.call_index.unwrap_or_else(|| {
                layout
                    .as_ref()
                    .and_then(|l| l.output_index.as_ref())
                    .map_or(0, |(_, i)| *i)
            });
            self.take_events(tagged, Some((index, layout.as_deref())));
            if seen.error {
                // A call's event that also says something went wrong (its `done`
                // arguments differ from its deltas): said, as any error.
                self.counts.errors += 1;
                self.core.annotate_error(data, self.output_started, out);
                self.items.entry(index).or_default().disagreed = true;
            }
            let arg_bytes = self.core.arg_bytes;
            let named = self.core.call_named;
            let fragment = self.core.only_fragment;
            self.max_index = self.max_index.max(index);
            let item = self.items.entry(index).or_default();
            item.streamed += arg_bytes;
            // A fragment after fragments is counted, not held.
            let counted = fragment && item.held.last().is_some_and(|h| h.fragment);
            match item.state {
                ItemState::Holding if !counted && self.held_bytes + data.len() > MAX_HELD => {
                    // A call whose events outgrow what is held for a response (the
                    // assembler fails its arguments past their limit long before): its
                    // events are not sent; what the assembler makes of it is written at
                    // the end.
                    let dropped = std::mem::take(&mut item.held);
                    item.state = ItemState::Rewritten;
                    self.seq_offset -= events_of(&dropped) + 1;
                    self.held_bytes -= held_size(&dropped);
                    comment(out, "toolstream stopped holding a call over the size limit");
                }
                ItemState::Holding => match item.held.last_mut() {
                    // (A valid call's fragments go out as one delta; any other call is
                    // written anew: their bytes are not needed.)
                    Some(h) if counted => h.count += 1,
                    _ => {
                        // Fragments again after other events: the call cannot go out as
                        // it came with its fragments joined (they are not all held).
                        item.runs |= fragment && item.held.iter().any(|h| h.fragment);
                        // A copy of its own: a slice would keep the whole chunk it came
                        // in (and the reader's buffer) until the call ends.
                        let h = Held {
                            ty: own(ty),
                            data: Bytes::copy_from_slice(data),
                            layout,
                            start: named,
                            fragment,
                            count: 1,
                        };
                        self.held_bytes += h.size();
                        item.held.push(h)
                    }
                },
                ItemState::Passed => {
                    // After its end a call has one event left, its item's `done`;
                    // anything else for it the library read as nothing (its call had
                    // ended), and the client must not read it either.
                    let done = is_kind(data, &mut layout, "response.output_item.done");
                    if done && !item.closed {
                        item.closed = true;
                        self.forward(ty, data, layout.as_deref(), out);
                    } else {
                        self.seq_offset -= 1;
                        comment(out, "toolstream dropped an event of a call that had ended");
                    }
                }
                ItemState::Rewritten => self.seq_offset -= 1,
            }
            for i in ended {
                self.end_call(i, out);
            }
            return;
        }
        self.take_events(tagged, None);
        if seen.error {
            self.counts.errors += 1;
            self.core.annotate_error(data, self.output_started, out);
        }
        if seen.done || seen.finish {
            // The response's last event: every call still held ends before it.
            self.end_texts(out);
            self.end_all(out);
            // Its own copy, as a held event's.
            self.terminal = Some((own(ty), Bytes::copy_from_slice(data)));
            return;
        }
        self.forward(ty, data, read.as_deref(), out);
    }

    /// The payload just decoded was one argument fragment of a call whose events are
    /// held, after another (the most frequent event by far): counted on the held entry of
    /// the run, as the rest of [`Self::payload`] would, and nothing else. `false` for any
    /// other payload.
    fn next_of_run(&mut self, seen: super::Seen) -> bool {
        if !seen.calls
            || seen.error
            || seen.undecodable
            || !self.core.only_fragment
            || !self.core.ended.is_empty()
        {
            return false;
        }
        let Some(index) = self.core.call_index else {
            return false;
        };
        self.count_fragments(index, 1, self.core.arg_bytes)
    }

    /// `n` argument fragments of the call at `index`, `bytes` argument bytes in all,
    /// counted on the last event its item holds, where that is a fragment of the held
    /// item (`false`, and nothing counted, otherwise). What [`Self::next_of_run`] does
    /// with one fragment's payload and [`Rewrite::took_fragments`] with those the core
    /// read from the chunk.
    fn count_fragments(&mut self, index: u32, n: u32, bytes: usize) -> bool {
        let Some(item) = self.items.get_mut(&index) else {
            return false;
        };
        if item.state != ItemState::Holding {
            return false;
        }
        let Some(h) = item.held.last_mut().filter(|h| h.fragment) else {
            return false;
        };
        h.count += n;
        item.streamed += bytes;
        self.max_index = self.max_index.max(index);
        true
    }

    /// The assembler's events of one payload: each call's kept for its slot, the slot of
    /// a call that started noted on the item at `at` (the payload's `output_index`).
    fn take_events(&mut self, tagged: Vec<(u32, Event)>, at: Option<(u32, Option<&EventLayout>)>) {
        for (_, e) in tagged {
            let slot = match &e {
                Event::CallStarted { index, .. } => {
                    if let Some((i, layout)) = at {
                        let item = self.items.entry(i).or_default();
                        if item.state != ItemState::Holding || item.slot.is_some() {
                            // A new call at an output index whose call ended (or is still
                            // held under another slot: that one ends now, as the decoder
                            // moved on): an item of its own.
                            // Its held events are not sent; its call's events stay pending
                            // and are written at the end.
                            let old = std::mem::take(item);
                            self.seq_offset -= events_of(&old.held);
                            self.held_bytes -= held_size(&old.held);
                            item.reused = true;
                        }
                        let item = self.items.entry(i).or_default();
                        item.slot = Some(*index);
                        if item.item_id.is_none() {
                            item.item_id = layout.and_then(|l| l.item_id.clone());
                        }
                    }
                    continue;
                }
                Event::ToolCall(c) => c.index,
                Event::ToolCallFailed(f) => f.index,
                Event::Duplicate { index, .. } => *index,
                _ => continue,
            };
            self.pending.entry(slot).or_default().push(e);
        }
    }

    /// Whether forwarded events need their numbers read (something was added or dropped).
    fn renumbering(&self) -> bool {
        self.seq_offset != 0 || self.moved_from.is_some() || self.last_seq.is_none()
    }

    /// The client's sequence number for an upstream event numbered `upstream`.
    fn next_seq(&mut self, upstream: Option<u64>) -> Option<u64> {
        let upstream = upstream?;
        self.sync_seq();
        let want = (upstream as i64 + self.seq_offset).max(0) as u64;
        let seq = match self.last_seq {
            Some(last) if want <= last => last + 1,
            _ => want,
        };
        self.seq_offset = seq as i64 - upstream as i64;
        self.last_seq = Some(seq);
        Some(seq)
    }

    /// Reads the last event forwarded unread, for its sequence number.
    fn sync_seq(&mut self) {
        if let Some(data) = self.unread_last.take() {
            if let Some((_, n)) = event_layout(&data).and_then(|l| l.sequence_number) {
                self.last_seq = Some(self.last_seq.map_or(n, |l| l.max(n)));
            }
        }
    }

    /// A sequence number for an event the rewriter writes.
    fn new_seq(&mut self) -> u64 {
        self.sync_seq();
        let seq = self.last_seq.map_or(0, |s| s + 1);
        self.last_seq = Some(seq);
        self.seq_offset += 1;
        seq
    }

    /// An upstream event to the client, its sequence number and output index made the
    /// client's (spliced in place; nothing else changes).
    fn forward(
        &mut self,
        ty: &[u8],
        data: &[u8],
        layout: Option<&EventLayout>,
        out: &mut BytesMut,
    ) {
        self.output_started = true;
        // Read only when its numbers may change (or until the first is known).
        let read;
        let l = match layout {
            Some(l) => l,
            None if self.renumbering() => match event_layout(data) {
                Some(l) => {
                    read = l;
                    &read
                }
                None => return sse_event(out, ty, data),
            },
            None => {
                self.unread_last = Some(self.core.keep(data));
                return sse_event(out, ty, data);
            }
        };
        // The event before, if it went out unread, numbers this one.
        self.sync_seq();
        if self.response_id.is_none() {
            self.response_id.clone_from(&l.response_id);
        }
        let seq = l.sequence_number.as_ref().map(|(r, n)| (r.clone(), *n));
        let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        if let Some((r, n)) = seq {
            if let Some(s) = self.next_seq(Some(n)) {
                if s != n {
                    edits.push((r, s.to_string()));
                }
            }
        }
        if let Some((r, i)) = &l.output_index {
            let moved = self.place(*i);
            if moved != u64::from(*i) {
                edits.push((r.clone(), moved.to_string()));
            }
        }
        sse_event(out, ty, &splice(data, edits));
    }

    /// The call of upstream item `index` ended: out as it came when it is one valid call
    /// with the provider's id, else written anew.
    fn end_call(&mut self, index: u32, out: &mut BytesMut) {
        let Some(item) = self.items.get_mut(&index) else {
            return;
        };
        if item.state != ItemState::Holding {
            return;
        }
        let events = item
            .slot
            .and_then(|s| self.pending.remove(&s))
            .unwrap_or_default();
        let mut held = std::mem::take(&mut item.held);
        self.held_bytes -= held_size(&held);
        // As it came only when a client reading the events gets the library's call: one
        // object, the provider's id, and the arguments exactly the bytes that streamed
        // (not "", `null` or whitespace around the object, which the library reads as `{}`
        // or trims).
        let streamed = item.streamed;
        // ... and when its events are one item's, announced once, first.
        let one_item =
            held.first().is_some_and(|h| h.start) && held.iter().filter(|h| h.start).count() == 1;
        let plain = one_item
            && !item.reused
            && !item.runs
            // Joined fragments go out under the item's id.
            && (item.item_id.is_some() || held.iter().all(|h| h.count == 1))
            && matches!(
                events.as_slice(),
                [Event::ToolCall(c)]
                    if c.part == 1 && c.id_source == IdSource::Provider && c.arguments.len() == streamed
            );
        if plain {
            item.state = ItemState::Passed;
            // The event that ended the call is the last held: the item's `done`, or the
            // arguments' (the item's then comes later).
            item.closed = held
                .last_mut()
                .is_some_and(|h| is_kind(&h.data, &mut h.layout, "response.output_item.done"));
            let item_id = item.item_id.clone();
            self.counts.calls += 1;
            let arguments = match events.as_slice() {
                [Event::ToolCall(c)] => c.arguments.clone(),
                _ => Bytes::new(),
            };
            self.pass(index, held, item_id, &arguments, out);
            return;
        }
        item.state = ItemState::Rewritten;
        let item_id = item.item_id.clone();
        let base = i64::from(item.reused);
        // The items written take the numbers from the first held event's on.
        self.sync_seq();
        let first_held = held.first().and_then(|h| {
            let read;
            let l = match &h.layout {
                Some(l) => l,
                None => {
                    read = event_layout(&h.data)?;
                    &read
                }
            };
            l.sequence_number.as_ref().map(|(_, n)| *n)
        });
        if let Some(h) = first_held {
            let client = h as i64 + self.seq_offset - 1;
            if client >= 0 {
                let client = client as u64;
                self.last_seq = Some(self.last_seq.map_or(client, |l| l.max(client)));
            }
        }
        self.seq_offset -= events_of(&held);
        let mut written = Vec::new();
        self.moved_from.get_or_insert(index);
        for e in events {
            let Some(call) = super::outgoing(&mut self.counts, e, out) else {
                continue;
            };
            // The first item takes the upstream's place (unless the upstream reused an
            // index a call had); the next ones the next free places.
            let at = if written.is_empty() && base == 0 {
                self.place(index)
            } else {
                self.take_place()
            };
            let nth = written.len() as u32 + 1;
            written.push(self.item(&call, item_id.as_deref(), nth, at, out));
        }
        self.written.entry(index).or_default().extend(written);
    }

    /// A call that ended as one valid call, out as it came, but for its argument deltas:
    /// a run of them goes out as one delta holding the whole arguments, numbered as the
    /// first of them and in its place (the client's accumulator gets the same arguments;
    /// the sequence numbers stay strictly increasing, and every other event keeps its
    /// own). A client then reads one event where the upstream sent one per few tokens.
    fn pass(
        &mut self,
        index: u32,
        mut held: Vec<Held>,
        item_id: Option<String>,
        arguments: &[u8],
        out: &mut BytesMut,
    ) {
        // The arguments as the upstream escaped them in the `arguments.done` that ended
        // the call, when the decoder found them the streamed ones (no copy escaped anew).
        let raw = held
            .last_mut()
            .filter(|_| !self.items.get(&index).is_some_and(|i| i.disagreed))
            .and_then(done_arguments);
        const DELTA: &str = "response.function_call_arguments.delta";
        let text = crate::provider::utf8(arguments).ok();
        for h in held {
            if !h.fragment || h.count == 1 {
                self.forward(&h.ty, &h.data, h.layout.as_deref(), out);
                continue;
            }
            // The one run of fragments (a call whose fragments came in several is written
            // anew): the whole arguments in one delta.
            let (Some(item_id), Some(text)) = (item_id.as_deref(), text) else {
                // Not reached: a call passed with joined fragments has its item's id
                // (else it is written anew), and its arguments are valid JSON text.
                self.forward(&h.ty, &h.data, h.layout.as_deref(), out);
                continue;
            };
            let read;
            let layout = match h.layout.as_deref() {
                Some(l) => Some(l),
                None => {
                    read = event_layout(&h.data);
                    read.as_ref()
                }
            };
            self.sync_seq();
            let seq = self.next_seq(layout.and_then(|l| l.sequence_number.as_ref().map(|s| s.1)));
            // The run's later events are not sent; the numbers after them stay the
            // upstream's (still strictly increasing: what the client checks).
            let at = self.place(index);
            // One `data:` line (JSON text from serde_json's writer, or a checked string
            // token, holds no line end), written straight into `out`.
            out.reserve(arguments.len() + item_id.len() + 2 * DELTA.len() + 128);
            out.extend_from_slice(b"event: ");
            out.extend_from_slice(DELTA.as_bytes());
            out.extend_from_slice(b"\ndata: ");
            out.extend_from_slice(br#"{"type":"response.function_call_arguments.delta","#);
            if let Some(seq) = seq {
                out.extend_from_slice(br#""sequence_number":"#);
                push_u64(out, seq);
                out.extend_from_slice(b",");
            }
            out.extend_from_slice(br#""item_id":"#);
            let _ = serde_json::to_writer(bytes::BufMut::writer(&mut *out), item_id);
            out.extend_from_slice(br#","output_index":"#);
            push_u64(out, at);
            out.extend_from_slice(br#","delta":"#);
            match &raw {
                Some(r) => out.extend_from_slice(r),
                None => {
                    let _ = serde_json::to_writer(bytes::BufMut::writer(&mut *out), text);
                }
            }
            out.extend_from_slice(b"}\n\n");
            self.output_started = true;
        }
    }

    /// The client's index for upstream index `i`: as placed; else, before any index moved
    /// (or below where they started to), the same; else the same or, when the items added
    /// took it, the next free one.
    fn place(&mut self, i: u32) -> u64 {
        if let Some(&c) = self.places.get(&i) {
            return c;
        }
        let c = match self.moved_from {
            Some(from) if i >= from => self.next_out.max(u64::from(i)),
            _ => u64::from(i),
        };
        self.next_out = self.next_out.max(c + 1);
        if self.places.len() < MAX_PLACES {
            self.places.insert(i, c);
        }
        c
    }

    /// The next free client index, for an item the rewriter adds.
    fn take_place(&mut self) -> u64 {
        let c = self.next_out;
        self.next_out += 1;
        c
    }

    /// Every call still held ends (the response is over, or the stream is).
    fn end_all(&mut self, out: &mut BytesMut) {
        let mut open: Vec<u32> = self
            .items
            .iter()
            .filter(|(_, i)| i.state == ItemState::Holding)
            .map(|(k, _)| *k)
            .collect();
        open.sort_unstable();
        for i in open {
            self.end_call(i, out);
        }
    }

    /// One `function_call` item, whole: added, its arguments in one delta, done, item
    /// done. Returns the item as the response's output lists it.
    fn item(
        &mut self,
        c: &Outgoing,
        item_id: Option<&str>,
        nth: u32,
        at: u64,
        out: &mut BytesMut,
    ) -> String {
        self.output_started = true;
        let (call_id, note) = self.core.client_id(c.id.clone(), &c.source);
        if let Some(note) = note {
            comment(out, &note);
        }
        // The first object keeps the provider's item id; a later one (or a call whose
        // item had none) gets one made in the `fc_` shape.
        let id = match item_id {
            Some(id) if nth == 1 => id.to_string(),
            Some(id) => crate::ids::derive(id, nth, 0),
            None => format!("fc_{}", &call_id[crate::ids::prefix_of(&call_id).len()..]),
        };
        let status = if c.whole { "completed" } else { "incomplete" };
        // Read as text once (lossily only where a failure's bytes are cut inside a
        // character) for the three events that carry them.
        let arguments = c.arguments();
        let added = json!({"type": "response.output_item.added", "sequence_number": self.new_seq(),
            "output_index": at, "item": {"id": id, "type": "function_call", "status": "in_progress",
            "arguments": "", "call_id": call_id, "name": c.name}});
        sse_event(
            out,
            b"response.output_item.added",
            added.to_string().as_bytes(),
        );
        let delta = json!({"type": "response.function_call_arguments.delta",
            "sequence_number": self.new_seq(), "item_id": id, "output_index": at,
            "delta": arguments});
        sse_event(
            out,
            b"response.function_call_arguments.delta",
            delta.to_string().as_bytes(),
        );
        let done = json!({"type": "response.function_call_arguments.done",
            "sequence_number": self.new_seq(), "item_id": id, "output_index": at,
            "arguments": arguments});
        sse_event(
            out,
            b"response.function_call_arguments.done",
            done.to_string().as_bytes(),
        );
        if c.source != IdSource::Provider || c.id.is_empty() {
            self.made.push(MadeCall {
                call_id: call_id.clone(),
                name: c.name.clone(),
                arguments: arguments.clone().into_owned(),
            });
        }
        let item = json!({"id": id, "type": "function_call", "status": status,
            "arguments": arguments, "call_id": call_id, "name": c.name});
        let item_done = json!({"type": "response.output_item.done",
            "sequence_number": self.new_seq(), "output_index": at, "item": item});
        sse_event(
            out,
            b"response.output_item.done",
            item_done.to_string().as_bytes(),
        );
        item.to_string()
    }

    /// With calls taken out of the text: an event of a message item handled (a text
    /// delta through the extractor, the item's done events with the client's text, the
    /// calls' items after the item). `false` for any other event.
    fn text_payload(
        &mut self,
        ty: &[u8],
        data: &[u8],
        layout: Option<&EventLayout>,
        tagged: &[(u32, Event)],
        out: &mut BytesMut,
    ) -> bool {
        let texts: Vec<&str> = tagged
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let t = self.text.as_deref_mut().expect("text items");
        if texts.is_empty() && t.items.is_empty() {
            return false;
        }
        let read;
        let l: &EventLayout = match layout {
            Some(l) => l,
            None => {
                read = event_layout(data);
                match &read {
                    Some(l) => l,
                    None => return false,
                }
            }
        };
        let Some((_, k)) = l.output_index.clone() else {
            return false;
        };
        if !texts.is_empty() {
            if !t.items.contains_key(&k) && t.items.len() >= MAX_TEXT_ITEMS {
                return false;
            }
            let setting = &t.setting;
            let item = t.items.entry(k).or_insert_with(|| TextItem::new(setting));
            if item.x.buffered() == 0 && texts.iter().all(|s| item.x.passes(s)) {
                // Plain text: as it came.
                for s in texts {
                    item.keep(s, &mut t.kept);
                }
                self.forward(ty, data, Some(l), out);
                return true;
            }
            let Ok(v) = serde_json::from_slice::<Value>(data) else {
                return false;
            };
            // The event is written anew from the pieces.
            item.template = Some(v);
            item.changed = true;
            for s in texts {
                item.x.push(s, &mut item.pieces);
            }
            self.seq_offset -= 1;
            self.text_pieces(k, out);
            return true;
        }
        if !t.items.contains_key(&k) {
            return false;
        }
        match l.kind.as_deref() {
            Some("response.output_text.done") => {
                self.flush_text(k, out);
                let t = self.text.as_deref_mut().expect("text items");
                let item = t.items.get_mut(&k).expect("item");
                let text = std::mem::take(&mut item.text);
                let changed = item.changed;
                let over = item.over;
                let edited = changed
                    .then(|| serde_json::from_slice::<Value>(data).ok())
                    .flatten();
                match edited {
                    Some(mut v) => {
                        let ci = v["content_index"].as_u64().unwrap_or(0);
                        v["text"] = Value::String(text.clone());
                        item.parts.push((ci, text));
                        if over {
                            self.broken
                                .get_or_insert("a message's text outgrew what is held");
                        }
                        self.write_event(ty, v, l, out);
                    }
                    None => {
                        let ci = serde_json::from_slice::<Value>(data)
                            .ok()
                            .and_then(|v| v["content_index"].as_u64())
                            .unwrap_or(0);
                        item.parts.push((ci, text));
                        self.forward(ty, data, Some(l), out);
                    }
                }
                true
            }
            Some("response.content_part.done") => {
                let item = &t.items[&k];
                if !item.changed {
                    return false;
                }
                let Ok(mut v) = serde_json::from_slice::<Value>(data) else {
                    return false;
                };
                let ci = v["content_index"].as_u64().unwrap_or(0);
                if v["part"]["type"] == "output_text" {
                    if let Some((_, text)) = item.parts.iter().find(|(c, _)| *c == ci) {
                        v["part"]["text"] = Value::String(text.clone());
                    }
                }
                self.write_event(ty, v, l, out);
                true
            }
            // The message's own `done` (another item's, at the same output index, ends
            // nothing here: the library reads the response's text as one).
            Some("response.output_item.done") if l.item_kind.as_deref() == Some("message") => {
                // What the extractor holds (a stream whose text had no `done`) first.
                self.flush_text(k, out);
                let t = self.text.as_deref_mut().expect("text items");
                let item = t.items.remove(&k).expect("item");
                t.kept = t.kept.saturating_sub(item.kept_bytes());
                let mut message = None;
                if item.changed {
                    if let Ok(mut v) = serde_json::from_slice::<Value>(data) {
                        if let Some(content) = v["item"]["content"].as_array_mut() {
                            for (ci, part) in content.iter_mut().enumerate() {
                                let text = item.parts.iter().find(|(c, _)| *c == ci as u64);
                                if let (Some((_, text)), "output_text") =
                                    (text, part["type"].as_str().unwrap_or(""))
                                {
                                    part["text"] = Value::String(text.clone());
                                }
                            }
                        }
                        message = Some(v["item"].to_string());
                        self.write_event(ty, v, l, out);
                    } else {
                        self.forward(ty, data, Some(l), out);
                    }
                } else {
                    self.forward(ty, data, Some(l), out);
                }
                self.text_calls_out(k, item.calls, message, out);
                true
            }
            _ => false,
        }
    }

    /// An event of the upstream's written anew (`v`): its sequence number and output
    /// index made the client's.
    fn write_event(&mut self, ty: &[u8], mut v: Value, l: &EventLayout, out: &mut BytesMut) {
        self.output_started = true;
        self.sync_seq();
        if let Some((_, n)) = &l.sequence_number {
            if let Some(s) = self.next_seq(Some(*n)) {
                v["sequence_number"] = json!(s);
            }
        }
        if let Some((_, i)) = &l.output_index {
            v["output_index"] = json!(self.place(*i));
        }
        sse_event(out, ty, v.to_string().as_bytes());
    }

    /// The end of message `k`'s text: what its extractor holds goes out.
    fn flush_text(&mut self, k: u32, out: &mut BytesMut) {
        if let Some(item) = self.text.as_deref_mut().and_then(|t| t.items.get_mut(&k)) {
            item.x.finish(&mut item.pieces);
        }
        self.text_pieces(k, out);
    }

    /// The pieces of message `k`'s extractor, in order: text as `output_text.delta`
    /// events, calls kept for after the item, markup that could not be read back into the
    /// text (noted).
    fn text_pieces(&mut self, k: u32, out: &mut BytesMut) {
        let t = self.text.as_deref_mut().expect("text items");
        let Some(item) = t.items.get_mut(&k) else {
            return;
        };
        let pieces = std::mem::take(&mut item.pieces);
        for p in pieces {
            let text = match piece_text(p, &mut self.counts, out) {
                Ok(text) => text,
                Err(call) => {
                    let mut events = Vec::new();
                    self.core.assembler.push_text_piece(0, call, &mut events);
                    let t = self.text.as_deref_mut().expect("text items");
                    t.calls += 1;
                    for e in events {
                        if let Some(c) = super::outgoing(&mut self.counts, e, out) {
                            t.items.get_mut(&k).expect("item").calls.push(c);
                        }
                    }
                    continue;
                }
            };
            if text.is_empty() {
                continue;
            }
            let t = self.text.as_deref_mut().expect("text items");
            let item = t.items.get_mut(&k).expect("item");
            item.keep(&text, &mut t.kept);
            let Some(mut v) = item.template.clone() else {
                continue;
            };
            v["delta"] = Value::String(text);
            v["sequence_number"] = json!(self.new_seq());
            v["output_index"] = json!(self.place(k));
            self.output_started = true;
            sse_event(out, b"response.output_text.delta", v.to_string().as_bytes());
        }
    }

    /// The calls taken out of message `k`'s text, as `function_call` items right after
    /// it; the terminal event's output lists them after the message (`message`: the
    /// message item as the client got it, when its text changed).
    fn text_calls_out(
        &mut self,
        k: u32,
        calls: Vec<Outgoing>,
        message: Option<String>,
        out: &mut BytesMut,
    ) {
        if calls.is_empty() && message.is_none() {
            return;
        }
        self.place(k);
        self.moved_from.get_or_insert(k.saturating_add(1));
        let mut items: Vec<String> = message.into_iter().collect();
        for c in calls {
            let at = self.take_place();
            items.push(self.item(&c, None, 1, at, out));
        }
        if !items.is_empty() {
            self.replaced.insert(k, items);
        }
    }

    /// Every message still read for calls ends (the response is over, or the stream is):
    /// what its extractor held goes out, its calls after it.
    fn end_texts(&mut self, out: &mut BytesMut) {
        let Some(t) = self.text.as_deref_mut() else {
            return;
        };
        let mut open: Vec<u32> = t.items.keys().copied().collect();
        open.sort_unstable();
        for k in open {
            self.flush_text(k, out);
            let t = self.text.as_deref_mut().expect("text items");
            let item = t.items.remove(&k).expect("item");
            t.kept = t.kept.saturating_sub(item.kept_bytes());
            // The message's own done events never came: its element in the output stays
            // as the upstream wrote it, the calls after it.
            let calls = item.calls;
            if !calls.is_empty() {
                self.place(k);
                self.moved_from.get_or_insert(k.saturating_add(1));
                for c in calls {
                    let at = self.take_place();
                    self.item(&c, None, 1, at, out);
                }
            }
        }
    }

    /// The end of the upstream body (`cut`: why it was cut, when it was). A stream that
    /// was cut or lost data ends with an `error` event, never the terminal event.
    pub fn finish(self, cut: Option<&str>, out: &mut BytesMut) -> Counts {
        self.finish_with_calls(cut, out).0
    }

    /// [`Self::finish`], and the calls made, for a follow-up request ([`continue_request`]);
    /// `None` when none was made or the response named no id.
    pub fn finish_with_calls(
        mut self,
        cut: Option<&str>,
        out: &mut BytesMut,
    ) -> (Counts, Option<Continuation>) {
        let counts = self.finish_inner(cut, out);
        let made = std::mem::take(&mut self.made);
        let cont = match (self.response_id.take(), made.is_empty()) {
            (Some(response_id), false) => Some(Continuation {
                response_id,
                calls: made,
            }),
            _ => None,
        };
        (counts, cont)
    }

    fn finish_inner(&mut self, cut: Option<&str>, out: &mut BytesMut) -> Counts {
        self.end_framing(out);
        let complete = cut.is_none() && self.terminal.is_some() && self.broken.is_none();
        let mut events = Vec::new();
        self.core.assembler.finish(complete, &mut events);
        self.take_events(events.into_iter().map(|e| (0, e)).collect(), None);
        self.end_texts(out);
        self.end_all(out);
        // What no item holds (a call whose item was replaced, a call refused past the
        // limit) is written after everything, never dropped.
        // (In slot order: the map is ordered.)
        for (_, events) in std::mem::take(&mut self.pending) {
            for e in events {
                if let Some(call) = super::outgoing(&mut self.counts, e, out) {
                    self.moved_from.get_or_insert(self.max_index);
                    let at = self.take_place();
                    self.item(&call, None, 1, at, out);
                }
            }
        }
        match (complete, self.terminal.take()) {
            (true, Some((ty, data))) => {
                let edited = self.terminal_event(&data);
                sse_event(out, &ty, &edited);
            }
            _ => {
                let why = cut
                    .or(self.broken)
                    .unwrap_or("the upstream ended the stream before the response's last event");
                comment(
                    out,
                    "toolstream error reason=stream_interrupted action=retry",
                );
                let message = format!("upstream stream interrupted: {why}");
                // The Responses API's error event, with the error also nested as the SDKs
                // read it to raise (an `error` event whose data has an `error` object).
                let e = json!({"type": "error", "sequence_number": self.new_seq(),
                    "code": "stream_interrupted", "message": message, "param": null,
                    "error": {"type": "api_error", "code": "stream_interrupted",
                        "message": message}});
                sse_event(out, b"error", e.to_string().as_bytes());
            }
        }
        self.counts
    }

    /// The terminal event with its sequence number made the client's and, in its
    /// `response.output`, each rewritten call's item replaced by the items the client got.
    fn terminal_event<'a>(&mut self, data: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(l) = event_layout(data) else {
            return Cow::Borrowed(data);
        };
        if self.response_id.is_none() {
            self.response_id.clone_from(&l.response_id);
        }
        let mut edits = Vec::new();
        if let Some((r, n)) = l.sequence_number.clone() {
            if let Some(s) = self.next_seq(Some(n)) {
                if s != n {
                    edits.push((r, s.to_string()));
                }
            }
        }
        if let Some(output) = &l.output {
            for (i, (r, _)) in output.iter().enumerate() {
                if let Some(items) = u32::try_from(i).ok().and_then(|i| self.replaced.get(&i)) {
                    edits.push((r.clone(), items.join(",")));
                }
            }
            for (i, (r, call)) in output.iter().enumerate() {
                let Some(items) = u32::try_from(i).ok().and_then(|i| self.written.get(&i)) else {
                    continue;
                };
                if *call {
                    edits.push((r.clone(), items.join(",")));
                }
            }
        }
        splice(data, edits)
    }
}

/// A Responses request's `previous_response_id`, read with the strict reader; `None` when
/// it has none (or is not a JSON object).
pub fn previous_response_id(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let mut c = Cursor::new(text);
    let mut m = c.object().ok()?;
    let mut found = None;
    while let Some(k) = c.key(&mut m).ok()? {
        if k.is("previous_response_id") && c.peek() == Some(b'"') {
            found = Some(c.string().ok()?.cow().into_owned());
        } else {
            c.skip().ok()?;
        }
    }
    c.end().ok()?;
    found
}

/// A follow-up request that answers calls the rewriter made (`made`: its
/// [`Continuation`]'s calls) with the made calls put into its `input` as `function_call`
/// items, each just before the first output that answers it (unless the input holds that
/// call already), and how many were put in. The rest of the body stays byte for byte.
/// `None` when nothing changes.
pub fn continue_request(body: &[u8], made: &[MadeCall]) -> Option<(Vec<u8>, usize)> {
    let text = std::str::from_utf8(body).ok()?;
    let elements = input_elements(text).ok()??;
    let mut present: Vec<&str> = elements
        .iter()
        .filter(|e| e.kind == "function_call")
        .map(|e| e.call_id.as_str())
        .collect();
    let mut edits: Vec<(usize, String)> = Vec::new();
    for e in &elements {
        if e.kind != "function_call_output" {
            continue;
        }
        let Some(call) = made.iter().find(|m| m.call_id == e.call_id) else {
            continue;
        };
        if present.contains(&call.call_id.as_str()) {
            continue;
        }
        present.push(&call.call_id);
        let item = json!({"type": "function_call", "call_id": call.call_id,
            "name": call.name, "arguments": call.arguments});
        edits.push((e.start, format!("{item},")));
    }
    if edits.is_empty() {
        return None;
    }
    let n = edits.len();
    let mut out = Vec::with_capacity(body.len() + n * 128);
    let mut at = 0;
    for (pos, text) in edits {
        out.extend_from_slice(&body[at..pos]);
        out.extend_from_slice(text.as_bytes());
        at = pos;
    }
    out.extend_from_slice(&body[at..]);
    Some((out, n))
}

/// An element of a request's `input` array: where it starts, its `type` and `call_id`.
struct InputElement {
    start: usize,
    kind: String,
    call_id: String,
}

/// The elements of the body's `input` array (the last `input` member), or `None` when
/// `input` is not an array.
fn input_elements(text: &str) -> Result<Option<Vec<InputElement>>, CursorError> {
    let mut c = Cursor::new(text);
    let mut m = c.object()?;
    let mut found = None;
    while let Some(k) = c.key(&mut m)? {
        if !k.is("input") || c.peek() != Some(b'[') {
            c.skip()?;
            continue;
        }
        let mut items = Vec::new();
        let mut e = c.array()?;
        while c.element(&mut e)? {
            let _ = c.peek();
            let start = c.offset();
            let (mut kind, mut call_id) = (String::new(), String::new());
            if c.peek() == Some(b'{') {
                let mut o = c.object()?;
                while let Some(k) = c.key(&mut o)? {
                    match (&*k.cow(), c.peek()) {
                        ("type", Some(b'"')) => kind = c.string()?.cow().into_owned(),
                        ("call_id", Some(b'"')) => call_id = c.string()?.cow().into_owned(),
                        _ => {
                            c.skip()?;
                        }
                    }
                }
            } else {
                c.skip()?;
            }
            items.push(InputElement {
                start,
                kind,
                call_id,
            });
        }
        found = Some(items);
    }
    c.end()?;
    Ok(found)
}

/// Whether an event is of type `kind`, by its payload's `type` as the decoder reads it
/// (which wins over the SSE event type): from its layout when it was read, else from the
/// payload, unless it starts with that member, as OpenAI writes it.
///
/// A layout read here is kept in `layout`: the event goes out next, and its numbers are
/// read from the same layout (the payload is not read twice).
fn is_kind(data: &[u8], layout: &mut Option<Box<EventLayout>>, kind: &str) -> bool {
    if let Some(l) = layout {
        return l.kind.as_deref() == Some(kind);
    }
    if let Some(rest) = data.strip_prefix(&br#"{"type":""#[..]) {
        // The first member is `type`, its value without escapes up to the quote; when no
        // later member can be another `type` (which would win in the decoder), it is the
        // event's type.
        if let Some(q) = memchr::memchr2(b'"', b'\\', rest) {
            static TYPE: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
                std::sync::OnceLock::new();
            let finder = TYPE.get_or_init(|| memchr::memmem::Finder::new(br#""type""#));
            if rest[q] == b'"' && finder.find(&rest[q..]).is_none() {
                return &rest[..q] == kind.as_bytes();
            }
        }
    }
    if layout.is_none() {
        *layout = event_layout(data).map(Box::new);
    }
    layout.as_deref().and_then(|l| l.kind.as_deref()) == Some(kind)
}

/// The most bytes of events held for the calls of one response, past which a call's events
/// are no longer held (it is then written from the assembler's events at the end: the
/// memory a stream holds stays bounded whatever the upstream streams).
pub const MAX_HELD: usize = 16 << 20;

/// The most output indices remembered (a response has far fewer items; past it, an index
/// is placed again each time, still unique but not stable).
const MAX_PLACES: usize = 1 << 16;

/// The `arguments` of a held `response.function_call_arguments.done` event, as their
/// JSON string's text (quotes and escapes as the upstream wrote them), from its layout
/// (read now if it was not); `None` for any other event.
fn done_arguments(h: &mut Held) -> Option<Bytes> {
    if h.layout.is_none() {
        h.layout = event_layout(&h.data).map(Box::new);
    }
    let l = h.layout.as_deref()?;
    let done = l.kind.as_deref() == Some("response.function_call_arguments.done");
    done.then(|| l.arguments.clone().map(|r| h.data.slice(r)))
        .flatten()
}

/// `data` with each range replaced (ranges in order, not overlapping).
fn splice(data: &[u8], mut edits: Vec<(std::ops::Range<usize>, String)>) -> Cow<'_, [u8]> {
    if edits.is_empty() {
        return Cow::Borrowed(data);
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut v = Vec::with_capacity(data.len() + 64);
    let mut at = 0;
    for (r, text) in edits {
        v.extend_from_slice(&data[at..r.start]);
        v.extend_from_slice(text.as_bytes());
        at = r.end;
    }
    v.extend_from_slice(&data[at..]);
    Cow::Owned(v)
}

impl Rewrite for ResponsesRewriter {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }
    fn payload(&mut self, ty: &[u8], data: &[u8], out: &mut BytesMut) {
        ResponsesRewriter::payload(self, ty, data, out)
    }
    fn dropped(&mut self, why: &'static str) {
        self.broken.get_or_insert(why);
    }
    fn holds_fragments(&self) -> bool {
        // Where `next_of_run` counts the run's next fragment: before the response's last
        // event, the run's item held, a fragment last among what it holds.
        self.terminal.is_none()
            && self
                .core
                .run
                .as_ref()
                .and_then(|r| r.index)
                .and_then(|i| self.items.get(&i))
                .is_some_and(|item| {
                    item.state == ItemState::Holding && item.held.last().is_some_and(|h| h.fragment)
                })
    }
    fn took_fragments(&mut self, n: u32, bytes: usize) {
        // What `next_of_run` does for each.
        let counted = match self.core.call_index {
            Some(index) => self.count_fragments(index, n, bytes),
            None => false,
        };
        debug_assert!(counted, "fragments taken where the run's item is not held");
    }
    fn ran(&mut self, events: Vec<(u32, Event)>, _: &mut BytesMut) {
        // As a fragment's payload: its call's events kept for when the call ends.
        self.take_events(events, None);
    }
}
