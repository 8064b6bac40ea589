//! The tool-call assembler: provider [`Delta`]s in, tool calls out the moment each
//! arguments object closes.
//!
//! Each call slot owns a strict [`json::Splitter`] in [`Mode::Objects`], fed the argument
//! fragments as they arrive, so a call is emitted during the push that delivers its closing
//! brace, even while later calls are still streaming. The real-world rules:
//!
//! * a delta without `index` goes to the call with the same `id`, else to the last open call
//!   of its choice; the same index with a different non-empty `id` is a new call;
//! * `id` and `name` repeated on every delta are assigned, never appended; an empty one
//!   never overwrites a non-empty one; a different non-empty name on a slot whose current
//!   arguments object has closed starts a new call;
//! * `""`, whitespace-only, `null` or missing arguments mean `{}`;
//! * concatenated objects (`{"a":1}{"b":2}`) are one call each: the first keeps the
//!   provider's id, each later one gets an id made from it ([`crate::ids`]: the provider's
//!   shape, unique in the response, never `<id>_2`, which one agent reads as an entry of a
//!   batch); each counts against [`Policy::max_calls`]; an object identical
//!   (ignoring insignificant whitespace) to an earlier one of the same call is dropped and
//!   reported as [`Event::Duplicate`] (policy: keep). Objects are compared by a keyed
//!   64-bit SipHash of their normalised bytes (8 bytes kept per object, not the object):
//!   two different objects are taken for duplicates with probability 2^-64, and the keys
//!   are random per assembler, so an input cannot be built to collide;
//! * arguments cut off (finish `length`, or a stream that ends without its terminal
//!   marker) fail with kind [`FailureKind::Truncated`] — never a completed call;
//! * a call whose arguments failed keeps its slot: every later fragment the provider sends
//!   for it belongs to that failure (its bytes join the failure's `raw`, up to the
//!   arguments limit), until the provider starts a new call there (a new id or a new name).
//!   The failure is reported once, when the slot closes, with the offset of the first bad
//!   byte. So calls plus failures equal the calls the provider started;
//! * a call is only emitted with a name: arguments that close on a slot that never got
//!   one fail with kind [`FailureKind::NoName`];
//! * an undecodable payload, or bytes the layers below had to drop, fail every open call
//!   with kind [`FailureKind::Interrupted`] ([`ToolCallAssembler::interrupt`]);
//! * "has tool calls" is what was seen, not what `finish_reason` says;
//! * A call the provider could not parse ([`FinishReason::MalformedCall`], Gemini's
//!   `MALFORMED_FUNCTION_CALL`) is a failure event, not a silent stop.

use bytes::Bytes;

use crate::json::preview::{accepted, Builder};
use crate::json::{self, ErrorKind, Mode, Splitter};
use crate::provider::{Delta, FinishReason};

/// What the assembler allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Split concatenated objects into several calls (default true); when false, a second
    /// object is a failure.
    pub split_concatenated: bool,
    /// Keep duplicate objects as calls (default false: drop and report them).
    pub keep_duplicates: bool,
    /// Maximum calls per response (default 128); more fail with kind `limit`.
    pub max_calls: usize,
    /// Limits for each call's arguments (default: 16 MiB per call, 8 MiB per string, the
    /// rest as [`json::Limits::default`]).
    pub json: json::Limits,
    /// Keep a live view of each call's arguments while they stream,
    /// [`ToolCallAssembler::preview`] (default false: it costs a tree per open call). A
    /// call's view counts its bytes and 80 bytes per value in its tree against the
    /// arguments limit ([`Policy::json`]'s value limit); past it the call has no view.
    pub preview: bool,
    /// Which closed-form mistakes in a failed call's arguments are repaired
    /// ([`crate::repair`]; default: none, strict). Only a call that failed as syntax or as
    /// not an object is tried, never one the stream cut; a repaired call is a
    /// [`ToolCall`] whose `repairs` say every change.
    pub repair: crate::repair::RepairPolicy,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            split_concatenated: true,
            keep_duplicates: false,
            max_calls: 128,
            json: json::Limits::default()
                .max_value_bytes(16 << 20)
                .max_string_bytes(8 << 20),
            preview: false,
            repair: crate::repair::RepairPolicy::default(),
        }
    }
}

/// How a call's arguments failed: the one vocabulary of the assembler, the schema checks and
/// the classifier (which names it [`ToolFailureKind`](crate::classify::ToolFailureKind)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// Not valid JSON (grammar, escape, number, UTF-8, control byte).
    Syntax,
    /// Cut off before the object closed.
    Truncated,
    /// Valid JSON but not an object.
    NotObject,
    /// Over a limit (size, depth, number of calls).
    Limit,
    /// Arguments that closed on a call that never got a function name: nothing to run.
    NoName,
    /// The stream lost part of the call: an undecodable payload, or bytes a lower layer
    /// dropped (an over-limit line or event), while it was open.
    Interrupted,
    /// Valid JSON that does not match the tool's parameter schema
    /// ([`schema::Mismatch::Invalid`](crate::schema::Mismatch)); never from the assembler.
    Schema,
    /// A call to a tool the request did not declare
    /// ([`schema::Mismatch::UnknownTool`](crate::schema::Mismatch)); never from the
    /// assembler.
    UnknownTool,
}

impl FailureKind {
    /// `syntax`, `truncated`, `not_object`, `limit`, `no_name`, `interrupted`, `schema` or
    /// `unknown_tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Syntax => "syntax",
            FailureKind::Truncated => "truncated",
            FailureKind::NotObject => "not_object",
            FailureKind::Limit => "limit",
            FailureKind::NoName => "no_name",
            FailureKind::Interrupted => "interrupted",
            FailureKind::Schema => "schema",
            FailureKind::UnknownTool => "unknown_tool",
        }
    }

    fn of(kind: ErrorKind) -> FailureKind {
        match kind {
            ErrorKind::Truncated => FailureKind::Truncated,
            ErrorKind::NotAnObject => FailureKind::NotObject,
            ErrorKind::DepthLimit
            | ErrorKind::ValueTooLarge
            | ErrorKind::StringTooLong
            | ErrorKind::NumberTooLong => FailureKind::Limit,
            _ => FailureKind::Syntax,
        }
    }
}

/// A complete tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The call slot, in order of first appearance (0-based).
    pub index: u32,
    /// 1 for the first object of the slot, 2, 3, ... for concatenated ones.
    pub part: u32,
    /// The call's id: the provider's for part 1; for part ≥ 2 and for a call taken out
    /// of the text, one toolstream made ([`crate::ids`]: in the provider's shape, unique in
    /// the response, never the first's id plus a suffix). Empty when the provider gives
    /// calls no id (Gemini).
    pub id: String,
    /// Where the id came from.
    pub id_source: IdSource,
    /// The function name.
    pub name: String,
    /// The arguments: one strictly valid JSON object.
    pub arguments: Bytes,
    /// The changes made to the provider's arguments to make them valid, when repair is on
    /// ([`Policy::repair`]); empty for arguments that were valid as they came.
    pub repairs: Vec<crate::repair::Repair>,
    /// The provider's arguments as they came, when `repairs` were made.
    pub original: Option<Bytes>,
}

/// Where a [`ToolCall`]'s id came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum IdSource {
    /// The provider's, as it sent it.
    #[default]
    Provider,
    /// Made for the second or a later object of a glued call, from the first's id.
    Split {
        /// The first object's id (the provider's).
        of: String,
    },
    /// Made for a call the model wrote into its text.
    Text,
}

impl IdSource {
    /// `provider`, `split` or `text`.
    pub fn as_str(&self) -> &'static str {
        match self {
            IdSource::Provider => "provider",
            IdSource::Split { .. } => "split",
            IdSource::Text => "text",
        }
    }
}

/// A call whose arguments failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The call slot.
    pub index: u32,
    /// The call's id (made by toolstream for a later object of a glued call and for a
    /// call taken out of the text, as a [`ToolCall`]'s).
    pub id: String,
    /// Where the id came from.
    pub id_source: IdSource,
    /// The function name.
    pub name: String,
    /// How it failed.
    pub kind: FailureKind,
    /// The splitter's precise error kind, when the JSON itself failed.
    pub detail: Option<ErrorKind>,
    /// A short description.
    pub message: String,
    /// Offset of the failure within the call's argument bytes.
    pub offset: u64,
    /// The argument bytes of the failed object, as far as they arrived.
    pub raw: Bytes,
}

/// The splitter's explanation, without the kind and offset a [`Failure`] carries apart.
fn json_message(e: &json::Error) -> String {
    let mut m = e.detail().to_string();
    if let Some(t) = e.truncation().filter(|t| !t.lexical.in_token()) {
        m.push_str(", ");
        m.push_str(t.lexical.describe());
    }
    m
}

/// `tool call #0 get_weather (id call_1) failed: syntax at byte 12: expected ',' or '}'
/// after an object member`.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tool call #{} ", self.index)?;
        if !self.name.is_empty() {
            write!(f, "{} ", self.name)?;
        }
        if !self.id.is_empty() {
            write!(f, "(id {}) ", self.id)?;
        }
        write!(f, "failed: {} at byte {}", self.kind.as_str(), self.offset)?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// What the assembler (and the pipeline) produce.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A call slot opened.
    CallStarted {
        /// The slot.
        index: u32,
        /// The id, if known yet.
        id: String,
        /// The name, if known yet.
        name: String,
    },
    /// Assistant text.
    Text {
        /// Choice index.
        choice: u32,
        /// The text.
        text: String,
    },
    /// A fragment of the model's reasoning text ([`Delta::Reasoning`]).
    Reasoning {
        /// Choice index.
        choice: u32,
        /// The text.
        text: String,
    },
    /// Opaque data to send back verbatim in the next request of a tool loop
    /// ([`Delta::ReasoningSignature`]).
    ReasoningSignature {
        /// Choice index.
        choice: u32,
        /// The signature.
        signature: String,
    },
    /// An encrypted reasoning block ([`Delta::RedactedReasoning`]).
    RedactedReasoning {
        /// Choice index.
        choice: u32,
        /// The data.
        data: String,
    },
    /// A reasoning output item to send back as it is ([`Delta::ReasoningItem`]).
    ReasoningItem {
        /// Choice index.
        choice: u32,
        /// The item's JSON text.
        raw: String,
    },
    /// OpenRouter's `reasoning_details` for a choice, merged from the fragments its deltas
    /// carried ([`Delta::ReasoningDetail`]): the array to send back as the assistant
    /// message's `reasoning_details` in a tool loop. Fragments of the same `type` and
    /// `index` make one detail: their `text`, `summary` and `data` strings joined in order,
    /// any other member the last one given (a `null` never replacing a value). Comes right before the choice's
    /// [`Event::Finish`] (or at the end of a stream without one). Once the fragments held
    /// (of all choices together) would pass the arguments limit ([`Policy::json`]'s value
    /// limit), the stream's details are given up: none are sent, since a detail cut short
    /// would only be refused.
    ReasoningDetails {
        /// Choice index.
        choice: u32,
        /// The array's JSON text.
        raw: String,
    },
    /// A complete tool call.
    ToolCall(ToolCall),
    /// A failed tool call (never executed).
    ToolCallFailed(Failure),
    /// An object identical to an earlier object of the same call, dropped.
    Duplicate {
        /// The slot.
        index: u32,
        /// The id it would have had.
        id: String,
        /// The name.
        name: String,
        /// The object dropped, as it came (for a log; never to be run).
        arguments: Bytes,
    },
    /// Generation finished.
    Finish {
        /// Normalised reason.
        reason: FinishReason,
        /// The provider's value.
        raw: String,
    },
    /// Token usage (raw JSON).
    Usage {
        /// Raw JSON.
        raw: String,
    },
    /// An error reported by the provider inside the stream (or an undecodable payload).
    ProviderError {
        /// HTTP-like status, if any.
        status: Option<u16>,
        /// The message.
        message: String,
        /// Raw error JSON (or text).
        body: String,
    },
    /// Bytes of the stream that were not decoded ([`Dropped`]); the stream is then never
    /// complete, and every call open when they were dropped failed with kind
    /// [`FailureKind::Interrupted`].
    Dropped(Dropped),
    /// End of the stream: `complete` when the format's terminal marker was seen and nothing
    /// was dropped, interrupted or sent after that marker.
    End {
        /// Whether the stream ended properly.
        complete: bool,
    },
}

/// Why bytes of the stream were not decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// A line over the framing's line limit (SSE, NDJSON).
    LineTooLong,
    /// An SSE event over the event limit.
    EventTooLarge,
    /// Payloads after the format's terminal marker (`[DONE]`, `message_stop`,
    /// `response.completed`, ...): ignored, reported once at the end of the stream.
    AfterEnd,
    /// Bytes that are no event stream at all (binary, compressed, HTML): no SSE field,
    /// comment or event in the whole stream.
    NotAnEventStream,
    /// Undecodable payloads past the first
    /// [`MAX_UNDECODABLE_REPORTS`](crate::pipeline::MAX_UNDECODABLE_REPORTS), each of which
    /// was reported with its text: counted, and reported once at the end of the stream.
    Undecodable,
    /// The stream ended inside an event (a dropped connection, a proxy's timeout): the
    /// part that arrived did not decode. An event cut off this way that still decodes (an
    /// error sent just before the connection closed) is delivered as usual; the stream is
    /// incomplete either way. Not an error the provider sent.
    Cut,
}

impl DropReason {
    /// `line_too_long`, `event_too_large`, `after_end`, `not_an_event_stream`,
    /// `undecodable` or `cut`.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::LineTooLong => "line_too_long",
            DropReason::EventTooLarge => "event_too_large",
            DropReason::AfterEnd => "after_end",
            DropReason::NotAnEventStream => "not_an_event_stream",
            DropReason::Undecodable => "undecodable",
            DropReason::Cut => "cut",
        }
    }
}

/// Bytes of the stream that were not decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// Why.
    pub reason: DropReason,
    /// Absolute offset in the response body: for a limit, of the first byte past it; for
    /// [`DropReason::AfterEnd`] and [`DropReason::Undecodable`], where the first such
    /// payload was framed (an SSE event's dispatching blank line, an NDJSON line's or an
    /// AWS message's start); for [`DropReason::Cut`], where the cut event began;
    /// for [`DropReason::NotAnEventStream`], 0.
    pub offset: u64,
    /// How many bytes (for [`DropReason::AfterEnd`] and [`DropReason::Undecodable`], of
    /// payloads in all; for [`DropReason::Cut`], of the cut event's payload; for an NDJSON
    /// line over the limit, at least this many: it is reported as soon as it passes it).
    pub bytes: u64,
}

#[derive(Clone, Debug)]
struct Slot {
    choice: u32,
    key: Option<u32>,
    ordinal: u32,
    id: String,
    name: String,
    splitter: Option<Splitter>,
    /// The live view of the arguments in progress, when the policy asks for it.
    preview: Option<Box<Builder>>,
    parts: u32,
    /// The call's first object, kept (shared bytes) only until a second arrives: then it
    /// is hashed like every later one, for duplicate detection.
    first: Option<Bytes>,
    /// The hashes of the normalised objects this call produced (from the second on).
    seen: Vec<u64>,
    /// The call failed: everything the provider still sends for it is absorbed here, and
    /// the failure is reported once, when the slot closes.
    failed: Option<Box<Failed>>,
    /// The slot still takes the provider's deltas (a failed slot too, until it closes).
    open: bool,
    /// The ids made for its second and later objects ([`crate::ids::derive`]), by part
    /// from 2: each is made once, and the same part keeps it.
    derived: Vec<String>,
    /// A call taken out of the text (its id is made, [`crate::ids::mint`]).
    text: bool,
}

/// A failed call, still taking its fragments.
#[derive(Clone, Debug)]
struct Failed {
    failure: Failure,
    /// Every argument byte the slot received, up to the arguments limit.
    raw: Vec<u8>,
}

/// Emit `call`, coerced by its tool's declared schema first when there are schemas and
/// `repair` allows it.
fn emit(
    schemas: Option<&crate::schema::Tools>,
    repair: crate::repair::RepairPolicy,
    mut call: ToolCall,
    out: &mut Vec<Event>,
) {
    if let Some(tools) = schemas {
        if repair.allows(crate::repair::RepairKind::Coerce) {
            crate::repair::coerce_call(&mut call, tools);
        }
    }
    out.push(Event::ToolCall(call));
}

/// The assembler. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct ToolCallAssembler {
    policy: Policy,
    slots: Vec<Slot>,
    /// Calls counted against [`Policy::max_calls`]: slots, and the objects after a slot's
    /// first.
    calls: usize,
    saw_done: bool,
    saw_finish: bool,
    over_limit: bool,
    /// An error in the stream, or bytes dropped below: the stream is not whole.
    interrupted: bool,
    values: Vec<json::Value>,
    /// Keys for the duplicate hashes (random per assembler).
    hasher: std::collections::hash_map::RandomState,
    /// By choice.
    details: std::collections::BTreeMap<u32, Details>,
    /// The bytes the details are counted as holding (see [`Details::cost`]).
    details_held: u64,
    /// The stream's details were given up (they would have passed the limit).
    details_given_up: bool,
    /// The prefix of the ids made for calls taken out of the text (`None`: `call_`).
    id_prefix: Option<Box<str>>,
    /// What those ids are made from besides their slot: the response's (see
    /// [`Self::set_ids`]).
    id_salt: u64,
    /// The request's declared tools, to coerce calls by ([`Self::set_schemas`]).
    schemas: Option<std::sync::Arc<crate::schema::Tools>>,
}

/// The reasoning details of one choice being merged.
#[derive(Clone, Debug, Default)]
struct Details {
    /// Each detail, in order of first appearance.
    merged: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Where each key (`type`, `index` as JSON text) is in `merged` (a lookup per fragment
    /// that does not grow with the details).
    keys: std::collections::HashMap<DetailKey, usize>,
    /// What it counts for in [`ToolCallAssembler::details_held`].
    held: u64,
}

/// The buffer a call's splitter starts with, in bytes: most calls' arguments fit.
const ARGS_START: usize = 512;

/// What a choice's details are counted as holding beyond their fragments' bytes.
const DETAILS_OVERHEAD: u64 = 64;
/// What a new merged detail is counted as holding (its map), beyond its bytes.
const DETAIL_OVERHEAD: u64 = 256;
/// What each member of a fragment is counted as holding (its key and value in a tree).
const MEMBER_OVERHEAD: u64 = 64;

type DetailKey = (Option<String>, Option<String>);

impl Details {
    /// A fragment's key and members; `None` for anything but an object.
    fn parse(raw: &str) -> Option<(DetailKey, serde_json::Map<String, serde_json::Value>)> {
        let Ok(serde_json::Value::Object(fragment)) = serde_json::from_str(raw) else {
            return None;
        };
        let key = (
            fragment
                .get("type")
                .and_then(|t| t.as_str())
                .map(str::to_owned),
            fragment.get("index").map(|i| i.to_string()),
        );
        Some((key, fragment))
    }

    /// What merging the fragment costs: its bytes, its members as a tree, and a new
    /// detail's map if its key is new.
    fn cost(&self, raw: &str, key: &DetailKey, members: usize) -> u64 {
        let new = if self.keys.contains_key(key) {
            0
        } else {
            DETAIL_OVERHEAD
        };
        raw.len() as u64 + members as u64 * MEMBER_OVERHEAD + new
    }

    fn add(&mut self, key: DetailKey, fragment: serde_json::Map<String, serde_json::Value>) {
        let next = self.merged.len();
        let i = *self.keys.entry(key).or_insert(next);
        if i == next {
            self.merged.push(serde_json::Map::new());
        }
        let detail = &mut self.merged[i];
        for (name, value) in fragment {
            let joined = matches!(name.as_str(), "text" | "summary" | "data");
            match (detail.get_mut(&name), value) {
                (Some(serde_json::Value::String(have)), serde_json::Value::String(more))
                    if joined =>
                {
                    have.push_str(&more)
                }
                // A null never takes the place of what was given (fragments carry
                // `"signature":null` or `"text":null` beside what they do carry).
                (Some(_), serde_json::Value::Null) => {}
                (_, value) => {
                    detail.insert(name, value);
                }
            }
        }
    }
}
impl Slot {
    /// Where the id of its object number `part` comes from.
    fn source(&self, part: u32) -> IdSource {
        if self.text {
            IdSource::Text
        } else if part > 1 && !self.id.is_empty() {
            IdSource::Split {
                of: self.id.clone(),
            }
        } else {
            IdSource::Provider
        }
    }
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            choice: 0,
            key: None,
            ordinal: 0,
            id: String::new(),
            name: String::new(),
            splitter: None,
            preview: None,
            parts: 0,
            first: None,
            seen: Vec::new(),
            failed: None,
            open: true,
            derived: Vec::new(),
            text: false,
        }
    }
}

/// The hash of an object with insignificant whitespace (outside strings) removed, for
/// duplicate detection.
fn normalized_hash(v: &[u8], keys: &impl std::hash::BuildHasher) -> u64 {
    use std::hash::Hasher;
    let mut h = keys.build_hasher();
    let (mut in_str, mut esc) = (false, false);
    let mut run = 0;
    for (i, &b) in v.iter().enumerate() {
        let keep = if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            true
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            false
        } else {
            in_str = b == b'"';
            true
        };
        if !keep {
            h.write(&v[run..i]);
            run = i + 1;
        }
    }
    h.write(&v[run..]);
    h.finish()
}

impl ToolCallAssembler {
    /// An assembler with the given policy.
    pub fn new(policy: Policy) -> Self {
        ToolCallAssembler {
            policy,
            ..Default::default()
        }
    }

    /// How the ids of calls taken out of the text are made ([`crate::ids::mint`]): with
    /// `prefix` (the API's shape: `call_` for OpenAI, the default; `toolu_` for Anthropic)
    /// and from `salt` (the response's: [`crate::ids::salt`] of its first payload, so that
    /// two responses give different ids and one response the same at any chunking).
    pub fn set_ids(&mut self, prefix: &str, salt: u64) {
        self.id_prefix = Some(prefix.into());
        self.id_salt = salt;
    }

    /// The tools the request declared: with [`Policy::repair`] allowing
    /// [`coerce`](crate::repair::RepairKind::Coerce), a call that does not match its tool's
    /// schema only because a string stands where the schema says another type is coerced
    /// ([`crate::repair::coerce_call`]) before it is emitted.
    pub fn set_schemas(&mut self, tools: std::sync::Arc<crate::schema::Tools>) {
        self.schemas = Some(tools);
    }

    /// Bytes held by the open calls' splitters (each bounded by the arguments limit; the
    /// number of calls is bounded by [`Policy::max_calls`]), the input bytes behind each
    /// [`ToolCallAssembler::preview`] (the same bound), the bytes kept of failed calls
    /// (the same bound), a call's first object until a second arrives and 8 bytes per
    /// object after it (duplicate detection), and the reasoning
    /// details being merged (their fragments' bytes and a fixed cost per choice, detail and
    /// member, bounded by the arguments limit in all).
    pub fn buffered(&self) -> usize {
        let mut held = self.details_held as usize;
        for s in &self.slots {
            held += s.splitter.as_ref().map_or(0, Splitter::buffered);
            held += s.preview.as_ref().map_or(0, |p| p.held() as usize);
            held += s.failed.as_ref().map_or(0, |f| f.raw.len());
            held += s.seen.len() * 8 + s.first.as_ref().map_or(0, Bytes::len);
        }
        held
    }

    /// The live view of call slot `index`'s arguments while they stream (see
    /// [`json::Preview`] for what it shows), when [`Policy::preview`] is on: `None` before
    /// its first byte, and once its object is complete (the [`Event::ToolCall`] has it).
    /// A call that failed keeps the view of what arrived. Reading it costs nothing: each
    /// fragment changes the tree, nothing is re-parsed.
    pub fn preview(&self, index: u32) -> Option<&serde_json::Value> {
        self.slots.get(index as usize)?.preview.as_ref()?.partial()
    }

    /// Whether any tool call slot was seen (the truth, whatever `finish_reason` said).
    pub fn has_tool_calls(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Whether the format's terminal marker (or a finish, for formats without one) was seen.
    pub fn saw_end_marker(&self) -> bool {
        self.saw_done
    }

    /// Whether a finish reason was seen.
    pub fn saw_finish(&self) -> bool {
        self.saw_finish
    }

    /// Whether the stream was interrupted: an undecodable payload ([`Delta::Undecodable`])
    /// or a call to [`ToolCallAssembler::interrupt`]. Such a stream is never complete.
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// The stream lost bytes (a lower layer dropped an over-limit line or event, or a
    /// payload could not be decoded): every open call fails with kind
    /// [`FailureKind::Interrupted`] (reported when its slot closes; a call that had failed
    /// already keeps its first failure), and absorbs what still comes for it.
    pub fn interrupt(&mut self, why: &str) {
        self.interrupted = true;
        for s in 0..self.slots.len() {
            if !self.slots[s].open || self.slots[s].failed.is_some() {
                continue;
            }
            let id = self.part_id(s, self.slots[s].parts + 1);
            let slot = &mut self.slots[s];
            let offset = slot.splitter.as_ref().map_or(0, Splitter::offset);
            // What the open object held so far (its truncation error carries it).
            let raw = match slot.splitter.take().map(Splitter::finish) {
                Some(Err(e)) => e.raw().clone(),
                _ => Bytes::new(),
            };
            let failure = Self::next_failure(
                &self.slots[s],
                id,
                FailureKind::Interrupted,
                format!("the stream lost part of this call: {why}"),
                offset,
                raw,
            );
            self.fail_with(s, failure);
        }
    }

    /// Apply one delta; events it completes are appended to `out`.
    pub fn push(&mut self, delta: Delta, out: &mut Vec<Event>) {
        match delta {
            Delta::Text { choice, text } => out.push(Event::Text { choice, text }),
            Delta::Reasoning { choice, text } => out.push(Event::Reasoning { choice, text }),
            Delta::ReasoningSignature { choice, signature } => {
                out.push(Event::ReasoningSignature { choice, signature })
            }
            Delta::RedactedReasoning { choice, data } => {
                out.push(Event::RedactedReasoning { choice, data })
            }
            Delta::ReasoningItem { choice, raw } => out.push(Event::ReasoningItem { choice, raw }),
            Delta::ReasoningDetail { choice, raw } => {
                if raw.trim_start().starts_with('[') {
                    self.details_array(choice, &raw)
                } else {
                    self.detail(choice, &raw)
                }
            }
            call @ Delta::Call { .. } => self.call_delta(call, out),
            Delta::CallFailed {
                choice,
                index,
                message,
            } => {
                if let Some(s) = self.find_open(choice, index) {
                    let id = self.part_id(s, self.slots[s].parts + 1);
                    let slot = &self.slots[s];
                    let offset = slot.splitter.as_ref().map_or(0, Splitter::offset);
                    let failure = Self::next_failure(
                        slot,
                        id,
                        FailureKind::Syntax,
                        message,
                        offset,
                        Bytes::new(),
                    );
                    self.fail_with(s, failure);
                }
            }
            Delta::CallEnd { choice, index } => {
                if let Some(s) = self.find_open(choice, index) {
                    self.close(s, true, out);
                }
            }
            Delta::Finish {
                choice,
                reason,
                raw,
            } => self.finish_delta(choice, reason, raw, out),
            Delta::Usage { raw } => out.push(Event::Usage { raw }),
            Delta::Error {
                status,
                message,
                body,
            } => out.push(Event::ProviderError {
                status,
                message,
                body,
            }),
            Delta::Undecodable { message, body } => {
                self.interrupt("a payload could not be decoded");
                out.push(Event::ProviderError {
                    status: None,
                    message,
                    body,
                })
            }
            Delta::Done => self.saw_done = true,
        }
    }

    /// A call's delta ([`Delta::Call`]; any other is ignored): its id, name or arguments,
    /// or the whole call.
    fn call_delta(&mut self, call: Delta, out: &mut Vec<Event>) {
        let Delta::Call {
            choice,
            index,
            id,
            name,
            arguments,
            complete,
        } = call
        else {
            return;
        };
        // A call repeated after it was closed (Mistral resends it with an empty
        // name after finish_reason) carries nothing new: not a new call.
        let no_args = || arguments.as_deref().is_none_or(|a| a.trim().is_empty());
        if !complete && id.is_some() && no_args() {
            if let Some(id) = id.as_deref() {
                let known = |open: bool| {
                    self.slots
                        .iter()
                        .any(|s| s.choice == choice && s.id == id && s.open == open)
                };
                if known(false) && !known(true) {
                    return;
                }
            }
        }
        let Some(s) = self.slot_for(choice, index, id.as_deref(), name.as_deref(), out) else {
            return;
        };
        if let Some(id) = id {
            self.slots[s].id = id;
        }
        if let Some(name) = name {
            self.slots[s].name = name;
        }
        if let Some(args) = arguments {
            self.feed(s, &args, out);
        }
        if complete {
            self.close(s, true, out);
        }
    }

    /// Whether a call fragment of `choice` at `index` (no id, no name) goes to a call
    /// open already ([`Self::push_fragment`] then opens nothing and says nothing of the
    /// slot: every such fragment goes to the same call, whatever came between them but
    /// more of its fragments).
    pub(crate) fn takes_fragments(&self, choice: u32, index: Option<u32>) -> bool {
        match index {
            Some(i) => self
                .slots
                .iter()
                .any(|s| s.choice == choice && s.key == Some(i) && s.open),
            None => self.slots.iter().any(|s| s.choice == choice && s.open),
        }
    }

    /// [`ToolCallAssembler::push`] of a call's argument fragment and nothing else (no id,
    /// no name, not complete), borrowed: what a decoder's template read
    /// ([`crate::provider::Fragment`]) goes here without a [`Delta`] made for it.
    pub(crate) fn push_fragment(
        &mut self,
        choice: u32,
        index: Option<u32>,
        args: &str,
        out: &mut Vec<Event>,
    ) {
        // `call_delta` with no id and no name: the check of a repeated call needs an id.
        if let Some(s) = self.slot_for(choice, index, None, None, out) {
            self.feed(s, args, out);
        }
    }

    /// A choice finished: its open calls close (cut off when the reason is the output
    /// limit), and a call the provider could not parse
    /// ([`FinishReason::MalformedCall`]) becomes a failure.
    fn finish_delta(
        &mut self,
        choice: u32,
        reason: FinishReason,
        raw: String,
        out: &mut Vec<Event>,
    ) {
        self.saw_finish = true;
        let ended_cleanly = !reason.is_length();
        for s in 0..self.slots.len() {
            if self.slots[s].open && self.slots[s].choice == choice {
                self.close(s, ended_cleanly, out);
            }
        }
        if reason == FinishReason::MalformedCall {
            let ordinal = self.slots.len() as u32;
            out.push(Event::ToolCallFailed(Failure {
                index: ordinal,
                id: String::new(),
                id_source: IdSource::Provider,
                name: String::new(),
                kind: FailureKind::Syntax,
                detail: None,
                message: format!(
                    "the provider could not parse the model's function call ({raw}); \
                     no call was delivered"
                ),
                offset: 0,
                raw: Bytes::new(),
            }));
        }
        self.flush_details(Some(choice), out);
        out.push(Event::Finish { reason, raw });
    }

    /// A delta's array of reasoning-detail fragments, element by element (no tree of the
    /// whole array): each object element is one fragment.
    fn details_array(&mut self, choice: u32, raw: &str) {
        let mut c = crate::json::cursor::Cursor::new(raw);
        let Ok(mut e) = c.array() else {
            return;
        };
        while let Ok(true) = c.element(&mut e) {
            let is_object = c.peek() == Some(b'{');
            let Ok(element) = c.skip() else {
                return;
            };
            if is_object {
                self.detail(choice, element);
            }
        }
    }

    /// One fragment of OpenRouter's reasoning details, merged unless the details were given
    /// up or would pass the limit.
    fn detail(&mut self, choice: u32, raw: &str) {
        if self.details_given_up {
            return;
        }
        let Some((key, fragment)) = Details::parse(raw) else {
            return;
        };
        let d = self.details.get(&choice);
        let cost = match d {
            Some(d) => d.cost(raw, &key, fragment.len()),
            None => Details::default().cost(raw, &key, fragment.len()) + DETAILS_OVERHEAD,
        };
        if self.details_held + cost > self.policy.json.max_value_bytes {
            self.details_given_up = true;
            self.details.clear();
            self.details_held = 0;
            return;
        }
        self.details_held += cost;
        let d = self.details.entry(choice).or_default();
        d.held += cost;
        d.add(key, fragment);
    }

    /// End of the stream. `complete` says whether the stream ended after its format's
    /// terminal marker; open calls with partial arguments then fail as truncated, and
    /// failed calls are reported.
    pub fn finish(&mut self, complete: bool, out: &mut Vec<Event>) {
        for s in 0..self.slots.len() {
            if self.slots[s].open {
                self.close(s, complete, out);
            }
        }
        self.flush_details(None, out);
    }

    /// The merged reasoning details of `choice` (of every choice, in choice order: `None`),
    /// as events.
    fn flush_details(&mut self, choice: Option<u32>, out: &mut Vec<Event>) {
        let taken = match choice {
            Some(c) => self
                .details
                .remove(&c)
                .map(|d| (c, d))
                .into_iter()
                .collect(),
            None => std::mem::take(&mut self.details)
                .into_iter()
                .collect::<Vec<_>>(),
        };
        for (choice, d) in taken {
            self.details_held -= d.held;
            if d.merged.is_empty() {
                continue;
            }
            let array = d
                .merged
                .into_iter()
                .map(serde_json::Value::Object)
                .collect();
            out.push(Event::ReasoningDetails {
                choice,
                raw: serde_json::Value::Array(array).to_string(),
            });
        }
    }

    fn find_open(&self, choice: u32, index: Option<u32>) -> Option<usize> {
        self.slots
            .iter()
            .rposition(|s| s.open && s.choice == choice && (index.is_none() || s.key == index))
    }

    /// The slot a call delta belongs to (creating one if needed).
    fn slot_for(
        &mut self,
        choice: u32,
        index: Option<u32>,
        id: Option<&str>,
        name: Option<&str>,
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        let found = match index {
            Some(i) => self
                .slots
                .iter()
                .rposition(|s| s.choice == choice && s.key == Some(i) && s.open),
            None => match id {
                Some(id) => self
                    .slots
                    .iter()
                    .rposition(|s| s.choice == choice && s.id == id && s.open)
                    .or_else(|| {
                        // A new id on an index-less stream is a new call, unless the last
                        // open call has no id yet.
                        self.slots
                            .iter()
                            .rposition(|s| s.choice == choice && s.open && s.id.is_empty())
                    }),
                None => self
                    .slots
                    .iter()
                    .rposition(|s| s.choice == choice && s.open),
            },
        };
        if let Some(s) = found {
            let slot = &mut self.slots[s];
            let new_id = id.is_some_and(|id| !slot.id.is_empty() && slot.id != id);
            // A new name starts a new call once the arguments are between objects, or once
            // the call failed (nothing of it can end cleanly any more).
            let between_objects = slot.failed.is_some()
                || (slot.parts > 0
                    && slot
                        .splitter
                        .as_mut()
                        .is_some_and(|sp| !sp.state().in_value()));
            let new_name =
                name.is_some_and(|n| !slot.name.is_empty() && slot.name != n) && between_objects;
            if !new_id && !new_name {
                return Some(s);
            }
            self.close(s, true, out);
        }
        self.open_slot(
            choice,
            index,
            id.unwrap_or(""),
            name.unwrap_or(""),
            false,
            out,
        )
    }

    /// A new slot (its [`Event::CallStarted`]), or none past [`Policy::max_calls`].
    fn open_slot(
        &mut self,
        choice: u32,
        key: Option<u32>,
        id: &str,
        name: &str,
        text: bool,
        out: &mut Vec<Event>,
    ) -> Option<usize> {
        if self.calls >= self.policy.max_calls {
            self.over_limit(id, name, text, out);
            return None;
        }
        self.calls += 1;
        let ordinal = self.slots.len() as u32;
        self.slots.push(Slot {
            choice,
            key,
            ordinal,
            splitter: Some({
                let mut s = Splitter::with_limits(Mode::Objects, self.policy.json);
                // Room for a usual call's arguments at once, not a growth by doubling
                // from a few bytes (a reallocation and a copy each time).
                s.reserve(ARGS_START);
                s
            }),
            preview: self.policy.preview.then(Box::default),
            text,
            ..Slot::default()
        });
        out.push(Event::CallStarted {
            index: ordinal,
            id: id.to_string(),
            name: name.to_string(),
        });
        Some(self.slots.len() - 1)
    }

    /// A piece of choice `choice`'s text as [`text_calls`](crate::text_calls) handed it
    /// over: text as [`Delta::Text`]; a call the model wrote into the text, or its failure,
    /// in a slot of its own (never one the provider's deltas address) with an id minted
    /// for it ([`crate::ids::mint`], see [`Self::set_ids`]), as for any call (the same limits, numbering and
    /// events).
    pub fn push_text_piece(
        &mut self,
        choice: u32,
        piece: crate::text_calls::Piece,
        out: &mut Vec<Event>,
    ) {
        use crate::text_calls::Piece;
        match piece {
            Piece::Text(text) => self.push(Delta::Text { choice, text }, out),
            Piece::Call { name, arguments } => {
                let id = self.text_call_id();
                if let Some(s) = self.open_slot(choice, None, &id, &name, true, out) {
                    self.slots[s].id = id;
                    self.slots[s].name = name;
                    self.feed(s, &arguments, out);
                    self.close(s, true, out);
                }
            }
            Piece::Failed {
                name,
                kind,
                message,
                raw,
            } => {
                let id = self.text_call_id();
                if let Some(s) = self.open_slot(choice, None, &id, &name, true, out) {
                    self.slots[s].id = id.clone();
                    self.slots[s].name = name.clone();
                    self.fail_with(
                        s,
                        Failure {
                            index: self.slots[s].ordinal,
                            id,
                            id_source: IdSource::Text,
                            name,
                            kind,
                            detail: None,
                            message: format!("a call written into the text: {message}"),
                            offset: 0,
                            raw: Bytes::from(raw),
                        },
                    );
                    self.close(s, true, out);
                }
            }
        }
    }

    /// The failure of every call past [`Policy::max_calls`], reported once.
    fn over_limit(&mut self, id: &str, name: &str, text: bool, out: &mut Vec<Event>) {
        if std::mem::replace(&mut self.over_limit, true) {
            return;
        }
        out.push(Event::ToolCallFailed(Failure {
            index: self.slots.len() as u32,
            id: id.to_string(),
            id_source: if text {
                IdSource::Text
            } else {
                IdSource::Provider
            },
            name: name.to_string(),
            kind: FailureKind::Limit,
            detail: None,
            message: format!(
                "more than {} tool calls in one response",
                self.policy.max_calls
            ),
            offset: 0,
            raw: Bytes::new(),
        }));
    }

    /// The id of slot `s`'s object number `part`: the provider's for the first; for the
    /// later ones an id made from it ([`crate::ids`]: the provider's shape, no numeric
    /// suffix, unique among the response's ids). A call without an id has none for any part.
    fn part_id(&mut self, s: usize, part: u32) -> String {
        let slot = &self.slots[s];
        if part <= 1 || slot.id.is_empty() {
            return slot.id.clone();
        }
        let k = (part - 2) as usize;
        if let Some(id) = slot.derived.get(k) {
            return id.clone();
        }
        // Parts come in order, so the ones before are made already.
        while self.slots[s].derived.len() <= k {
            let n = self.slots[s].derived.len() as u32 + 2;
            let mut attempt = 0;
            let id = loop {
                let id = crate::ids::derive(&self.slots[s].id, n, attempt);
                if !self.id_taken(&id) {
                    break id;
                }
                attempt += 1;
            };
            self.slots[s].derived.push(id);
        }
        self.slots[s].derived[k].clone()
    }

    /// An id for the next slot, a call taken out of the text: [`crate::ids::mint`] with
    /// the prefix and salt set by [`Self::set_ids`].
    fn text_call_id(&self) -> String {
        let prefix = self.id_prefix.as_deref().unwrap_or("call_");
        let slot = self.slots.len() as u32;
        let mut attempt = 0;
        loop {
            let id = crate::ids::mint(prefix, self.id_salt, slot, attempt);
            if !self.id_taken(&id) {
                return id;
            }
            attempt += 1;
        }
    }

    /// Whether `id` is any call's in this response, the provider's or one made.
    fn id_taken(&self, id: &str) -> bool {
        self.slots
            .iter()
            .any(|s| s.id == id || s.derived.iter().any(|d| d == id))
    }

    /// Push an argument fragment into a slot's splitter (or into its failure).
    fn feed(&mut self, s: usize, args: &str, out: &mut Vec<Event>) {
        let limit = self.policy.json.max_value_bytes;
        let slot = &mut self.slots[s];
        if let Some(f) = slot.failed.as_mut() {
            let room = (limit as usize).saturating_sub(f.raw.len());
            f.raw
                .extend_from_slice(&args.as_bytes()[..args.len().min(room)]);
            return;
        }
        let Some(splitter) = slot.splitter.as_mut() else {
            return; // closed
        };
        let mut values = std::mem::take(&mut self.values);
        let start = splitter.offset();
        let r = match slot.preview.as_mut() {
            None => splitter.push_slice_now(args.as_bytes(), &mut values),
            Some(p) => {
                let r = Self::feed_previewed(splitter, p, args.as_bytes(), &mut values);
                // A view that would cost more than the arguments limit is given up.
                if p.held() > limit {
                    slot.preview = None;
                }
                r
            }
        };
        for v in values.drain(..) {
            self.emit(s, v, out);
        }
        self.values = values;
        if let Err(e) = r {
            let id = self.part_id(s, self.slots[s].parts + 1);
            let slot = &self.slots[s];
            let mut failure = Self::json_failure(slot, id, &e);
            // The failed object's bytes so far, then every byte of the fragment after them.
            let mut raw = failure.raw.to_vec();
            let failed_at = (e.offset().saturating_sub(start) as usize + 1).min(args.len());
            raw.extend_from_slice(&args.as_bytes()[failed_at..]);
            raw.truncate(limit as usize);
            failure.raw = Bytes::new();
            self.slots[s].splitter = None;
            self.slots[s].failed = Some(Box::new(Failed { failure, raw }));
        }
    }

    /// [`Self::feed`]'s push with a preview: the bytes the splitter took go to the view too.
    #[cold]
    fn feed_previewed(
        splitter: &mut Splitter,
        preview: &mut Builder,
        args: &[u8],
        values: &mut Vec<json::Value>,
    ) -> Result<(), json::Error> {
        let start = splitter.offset();
        let r = splitter.push_slice_now(args, values);
        // Completed objects come out of the splitter as calls; the view starts afresh.
        preview.feed(&args[..accepted(start, args.len(), &r)], &mut Vec::new());
        r
    }

    /// The slot fails (unless it failed already): later fragments are absorbed, and the
    /// failure is reported when it closes.
    fn fail_with(&mut self, s: usize, mut failure: Failure) {
        let slot = &mut self.slots[s];
        if slot.failed.is_some() {
            return;
        }
        let raw = std::mem::take(&mut failure.raw).to_vec();
        slot.splitter = None;
        slot.failed = Some(Box::new(Failed { failure, raw }));
    }

    /// A complete object of slot `s`: a call, a duplicate, or the slot's failure.
    fn emit(&mut self, s: usize, v: json::Value, out: &mut Vec<Event>) {
        let policy = self.policy;
        let slot = &mut self.slots[s];
        if slot.failed.is_some() {
            return;
        }
        slot.parts += 1;
        let part = slot.parts;
        let id = self.part_id(s, part);
        let slot = &mut self.slots[s];
        let refused = if slot.name.is_empty() {
            Some((
                FailureKind::NoName,
                "the call's arguments closed but it has no function name".to_string(),
            ))
        } else if part > 1 && !policy.split_concatenated {
            Some((
                FailureKind::Syntax,
                "more than one JSON object in the arguments".to_string(),
            ))
        } else if part > 1 && self.calls >= policy.max_calls {
            Some((
                FailureKind::Limit,
                format!("more than {} tool calls in one response", policy.max_calls),
            ))
        } else {
            None
        };
        if let Some((kind, message)) = refused {
            let failure = Failure {
                index: slot.ordinal,
                id,
                id_source: slot.source(part),
                name: slot.name.clone(),
                kind,
                detail: None,
                message,
                offset: v.start(),
                raw: v.bytes().clone(),
            };
            self.fail_with(s, failure);
            return;
        }
        if !policy.keep_duplicates {
            if part == 1 {
                slot.first = Some(v.bytes().clone());
            } else {
                if let Some(first) = slot.first.take() {
                    slot.seen.push(normalized_hash(&first, &self.hasher));
                }
                let h = normalized_hash(v.bytes(), &self.hasher);
                if slot.seen.contains(&h) {
                    slot.parts -= 1;
                    out.push(Event::Duplicate {
                        index: slot.ordinal,
                        id,
                        name: slot.name.clone(),
                        arguments: v.bytes().clone(),
                    });
                    return;
                }
                slot.seen.push(h);
            }
        }
        if part > 1 {
            self.calls += 1;
        }
        let slot = &self.slots[s];
        let id_source = slot.source(part);
        let call = ToolCall {
            index: slot.ordinal,
            part,
            id,
            id_source,
            name: slot.name.clone(),
            arguments: v.into_bytes(),
            repairs: Vec::new(),
            original: None,
        };
        emit(self.schemas.as_deref(), self.policy.repair, call, out);
    }

    /// The failure of the slot's next object.
    fn next_failure(
        slot: &Slot,
        id: String,
        kind: FailureKind,
        message: String,
        offset: u64,
        raw: Bytes,
    ) -> Failure {
        Failure {
            index: slot.ordinal,
            id,
            id_source: slot.source(slot.parts + 1),
            name: slot.name.clone(),
            kind,
            detail: None,
            message,
            offset,
            raw,
        }
    }

    /// The failure of the slot's next object, from the splitter's error.
    fn json_failure(slot: &Slot, id: String, e: &json::Error) -> Failure {
        Failure {
            index: slot.ordinal,
            id,
            id_source: slot.source(slot.parts + 1),
            name: slot.name.clone(),
            kind: FailureKind::of(e.kind()),
            detail: Some(e.kind()),
            message: json_message(e),
            offset: e.offset(),
            raw: e.raw().clone(),
        }
    }

    /// Close a slot: its arguments are over. `cleanly` is false when the stream was cut
    /// (token limit, no terminal marker): anything open is then truncated. A failed slot
    /// reports its failure now, with every byte it took.
    fn close(&mut self, s: usize, cleanly: bool, out: &mut Vec<Event>) {
        let slot = &mut self.slots[s];
        if !slot.open {
            return;
        }
        slot.open = false;
        slot.first = None;
        slot.seen = Vec::new();
        if let Some(f) = slot.failed.take() {
            let Failed { mut failure, raw } = *f;
            failure.raw = Bytes::from(raw);
            // Opt-in repair of what failed as syntax or as no object, never of what the
            // stream cut (completing it would invent content).
            let repairable = matches!(failure.kind, FailureKind::Syntax | FailureKind::NotObject)
                && cleanly
                && self.policy.repair.is_on()
                && !failure.name.is_empty();
            if repairable {
                if let Ok(r) = crate::repair::repair(&failure.raw, self.policy.repair) {
                    let call = ToolCall {
                        index: failure.index,
                        part: slot.parts + 1,
                        id: failure.id,
                        id_source: failure.id_source,
                        name: failure.name,
                        arguments: r.arguments,
                        repairs: r.repairs,
                        original: Some(failure.raw),
                    };
                    emit(self.schemas.as_deref(), self.policy.repair, call, out);
                    return;
                }
            }
            out.push(Event::ToolCallFailed(failure));
            return;
        }
        let Some(splitter) = slot.splitter.take() else {
            return;
        };
        match splitter.finish() {
            // No error and no object: only whitespace (or nothing) arrived.
            Ok(_) if slot.parts == 0 => {
                let (kind, message) = if !cleanly {
                    (
                        FailureKind::Truncated,
                        "the stream ended before the call's arguments arrived",
                    )
                } else if slot.name.is_empty() {
                    (
                        FailureKind::NoName,
                        "the call ended but it has no function name",
                    )
                } else {
                    // "", whitespace, null or missing arguments: {} (no string to coerce).
                    out.push(Event::ToolCall(ToolCall {
                        index: slot.ordinal,
                        part: 1,
                        id: slot.id.clone(),
                        id_source: IdSource::Provider,
                        name: slot.name.clone(),
                        arguments: Bytes::from_static(b"{}"),
                        repairs: Vec::new(),
                        original: None,
                    }));
                    return;
                };
                out.push(Event::ToolCallFailed(Failure {
                    index: slot.ordinal,
                    id: slot.id.clone(),
                    id_source: slot.source(1),
                    name: slot.name.clone(),
                    kind,
                    detail: None,
                    message: message.into(),
                    offset: 0,
                    raw: Bytes::new(),
                }));
            }
            Ok(_) => {}
            Err(e) => {
                let failure = Self::json_failure(slot, String::new(), &e);
                let id = self.part_id(s, self.slots[s].parts + 1);
                out.push(Event::ToolCallFailed(Failure { id, ..failure }));
            }
        }
    }
}
