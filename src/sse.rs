//! A WHATWG-conformant, push-based decoder for `text/event-stream` (Server-Sent Events).
//!
//! Push [`Bytes`] chunks cut anywhere with [`Decoder::push`]; [`Item`]s come out as soon as
//! the line that completes them arrives. The rules are those of the HTML Standard,
//! "Server-sent events", sections "Parsing an event stream" and "Interpreting an event
//! stream":
//!
//! * lines end with CRLF, LF or a lone CR. A CR that ends a chunk ends the line at once;
//!   an LF at the start of the next chunk is then swallowed (no waiting, no double end);
//! * one UTF-8 BOM at the very start of the stream is stripped, even split across chunks;
//!   a later BOM is data;
//! * a line starting with `:` is a comment, reported as [`Item::Comment`] (keep-alives such
//!   as `: OPENROUTER PROCESSING` let a gateway reset its idle timer);
//! * `name: value` removes one leading space from the value; a line without a colon is a
//!   field with an empty value; names are case-sensitive; unknown names are ignored;
//! * `data` appends the value and LF to the data buffer; a blank line dispatches; an empty
//!   data buffer dispatches nothing; one trailing LF is removed; `event` sets the type
//!   (default `message`, and reset after each dispatch); `id` sets the last event ID unless
//!   the value contains NUL, and it persists across events; `retry` is honoured only when
//!   the value is all ASCII digits (reported as [`Item::Retry`], saturating at `u64::MAX`);
//! * at the end of the stream an unterminated event is not dispatched, but
//!   [`Decoder::finish`] reports it with its bytes and its data, so an error event cut off
//!   by a dropped connection never vanishes silently.
//!
//! Text is kept as raw bytes: field names and line ends are ASCII, so splitting the raw
//! bytes gives the same fields as decoding first (the WHATWG UTF-8 decoder never swallows an
//! ASCII byte into a replacement character). [`Event::data_lossy`] applies the replacement
//! decoding; [`Event::data_str`] tells whether the data is valid UTF-8. Invalid UTF-8 never
//! stalls or fails the decoder.
//!
//! Zero-copy: an event whose data is a single line inside one chunk carries a slice of
//! that chunk.
//!
//! ```
//! use bytes::Bytes;
//! use toolstream::sse::{Decoder, Item};
//!
//! let mut d = Decoder::new();
//! let mut items = Vec::new();
//! d.push(Bytes::from_static(b"event: delta\r\ndata: {\"a\""), &mut items);
//! d.push(Bytes::from_static(b":1}\r\n\r\n: ping\n"), &mut items);
//! match &items[0] {
//!     Item::Event(e) => {
//!         assert_eq!(e.event_type(), b"delta");
//!         assert_eq!(&e.data()[..], b"{\"a\":1}");
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! assert!(matches!(&items[1], Item::Comment(c) if &c[..] == b"ping"));
//! assert!(d.finish(&mut items).is_ok());
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

/// Bounds on what the decoder buffers. Each has its own [`SkipReason`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_line: u64,
    max_event: u64,
}

impl Default for Limits {
    /// 8 MiB per line, 16 MiB per event.
    fn default() -> Self {
        Limits {
            max_line: 8 << 20,
            max_event: 16 << 20,
        }
    }
}

impl Limits {
    /// Maximum bytes of one line, without its line end (default 8 MiB; at least 1).
    pub fn max_line_bytes(mut self, n: u64) -> Self {
        self.max_line = n.max(1);
        self
    }
    /// Maximum bytes of one event: the sum of its field lines (default 16 MiB; at least 1).
    pub fn max_event_bytes(mut self, n: u64) -> Self {
        self.max_event = n.max(1);
        self
    }
    /// The line limit.
    pub fn line_bytes(&self) -> u64 {
        self.max_line
    }
    /// The event limit.
    pub fn event_bytes(&self) -> u64 {
        self.max_event
    }
}

/// A dispatched event.
#[derive(Clone, PartialEq, Eq)]
pub struct Event {
    event: Bytes,
    data: Bytes,
    id: Bytes,
    offset: u64,
}

impl Event {
    /// The event type: the last `event` field's value, or `message` when there was none or
    /// it was empty.
    pub fn event_type(&self) -> &[u8] {
        if self.event.is_empty() {
            b"message"
        } else {
            &self.event
        }
    }
    /// The data: the `data` lines joined with LF, as raw bytes.
    pub fn data(&self) -> &Bytes {
        &self.data
    }
    /// The event type (as [`Event::event_type`]) and the data, taken out of the event
    /// without a copy.
    pub fn into_type_and_data(self) -> (Bytes, Bytes) {
        let ty = if self.event.is_empty() {
            Bytes::from_static(b"message")
        } else {
            self.event
        };
        (ty, self.data)
    }
    /// The data as text, if it is valid UTF-8.
    ///
    /// # Errors
    ///
    /// The data is not valid UTF-8; [`Event::data_lossy`] decodes it with replacement.
    pub fn data_str(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.data)
    }
    /// The data decoded as the standard prescribes: invalid UTF-8 becomes U+FFFD.
    pub fn data_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.data)
    }
    /// The last event ID at dispatch (persists across events; empty if never set).
    pub fn last_event_id(&self) -> &Bytes {
        &self.id
    }
    /// Absolute offset of the blank line that dispatched the event.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("type", &String::from_utf8_lossy(self.event_type()))
            .field("data", &self.data_lossy())
            .field("id", &String::from_utf8_lossy(&self.id))
            .finish()
    }
}

/// Why bytes were skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SkipReason {
    /// A line longer than [`Limits::max_line_bytes`].
    LineTooLong,
    /// An event larger than [`Limits::max_event_bytes`].
    EventTooLarge,
    /// A comment line longer than [`Limits::max_line_bytes`]: only that line is skipped (a
    /// comment carries no data), and the event around it goes on.
    CommentTooLong,
}

/// An over-limit event that was dropped; decoding resumed after the next blank line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Which limit was hit.
    pub reason: SkipReason,
    /// Absolute offset of the first byte past the limit.
    pub offset: u64,
    /// Bytes dropped, from the start of the dropped event up to (not including) the blank
    /// line that ended it.
    pub dropped: u64,
}

/// What the decoder produces.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Item {
    /// A dispatched event.
    Event(Event),
    /// A comment line's text after the `:` (one leading space removed).
    Comment(Bytes),
    /// A valid `retry` field: the reconnection time in milliseconds.
    Retry(u64),
    /// An over-limit event was dropped and the decoder resynchronised.
    Skipped(Skipped),
}

/// What [`Decoder::finish`] reports when the stream did not end on an event boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incomplete {
    /// Bytes of the undispatched event: its field lines and any unterminated line.
    pub discarded: u64,
    /// Whether the stream ended in the middle of a line.
    pub unterminated_line: bool,
    /// The data the event would have carried (the unterminated line counted as a line).
    pub data: Bytes,
    /// The `event` field of the undispatched event, if any.
    pub event: Bytes,
    /// An over-limit event that was still being skipped at the end.
    pub skipped: Option<Skipped>,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stream ended inside an event: {} bytes discarded",
            self.discarded
        )?;
        if self.unterminated_line {
            f.write_str(" (unterminated line)")?;
        }
        Ok(())
    }
}

impl std::error::Error for Incomplete {}

/// The data buffer: nothing, one line (zero-copy), or several lines joined with LF.
#[derive(Clone, Debug)]
enum Data {
    Empty,
    One(Bytes),
    Many(BytesMut),
}

/// What [`Decoder::next_local`] gives: an item, or an event as its range in the chunk fed.
#[derive(Debug)]
pub(crate) enum Next {
    /// Any item (an event among them, when it is not whole in the chunk fed last).
    Item(Item),
    /// An event whose data is `data` in the chunk fed last (its type `ty`; the event's id
    /// and offset are not given).
    Local {
        ty: LocalType,
        data: std::ops::Range<usize>,
    },
}

impl Next {
    /// For the decoder's own items only, which are never [`Next::Local`].
    fn into_item(self) -> Item {
        match self {
            Next::Item(item) => item,
            Next::Local { .. } => unreachable!("a local event out of step::<false>"),
        }
    }
}

/// A [`Next::Local`] event's type field: one of the table's (or none), or its bytes.
#[derive(Debug)]
pub(crate) enum LocalType {
    Static(&'static [u8]),
    Owned(Bytes),
}

impl LocalType {
    /// The event type, as [`Event::event_type`] gives it (`message` for none or empty).
    pub(crate) fn bytes(&self) -> &[u8] {
        let t: &[u8] = match self {
            LocalType::Static(t) => t,
            LocalType::Owned(t) => t,
        };
        if t.is_empty() {
            b"message"
        } else {
            t
        }
    }
}

/// Skipping an over-limit event until the next blank line.
#[derive(Clone, Copy, Debug)]
struct Skipping {
    reason: SkipReason,
    offset: u64,
    start: u64,
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The event types of the streams the rewriters read (the most frequent first), as static
/// bytes: an event's type is then no slice of the chunk, whose count of owners every slice
/// raises and lowers again (an atomic operation each, twice an event), and a type kept
/// with an event a rewriter holds does not keep the chunk (and the reader's buffer) alive.
pub(crate) fn common_type(ty: &[u8]) -> Option<Bytes> {
    common_index(ty).map(|i| Bytes::from_static(COMMON[i]))
}

/// Where `ty` is in [`COMMON`].
fn common_index(ty: &[u8]) -> Option<usize> {
    COMMON.iter().position(|&c| c == ty)
}

/// [`common_type`]'s table.
const COMMON: [&[u8]; 26] = [
    b"response.function_call_arguments.delta",
    b"response.output_text.delta",
    b"response.reasoning_summary_text.delta",
    b"response.reasoning_text.delta",
    b"content_block_delta",
    b"ping",
    b"response.output_item.added",
    b"response.function_call_arguments.done",
    b"response.output_item.done",
    b"response.content_part.added",
    b"response.content_part.done",
    b"response.output_text.done",
    b"response.reasoning_summary_part.added",
    b"response.reasoning_summary_part.done",
    b"response.reasoning_summary_text.done",
    b"content_block_start",
    b"content_block_stop",
    b"message_start",
    b"message_delta",
    b"message_stop",
    b"response.created",
    b"response.in_progress",
    b"response.completed",
    b"response.incomplete",
    b"response.failed",
    b"error",
];

/// Size of the arena that assembles lines spanning chunks.
const ARENA: usize = 16 << 10;

/// The push-based SSE decoder. See the module docs for the rules.
#[derive(Clone, Debug)]
pub struct Decoder {
    limits: Limits,
    /// Absolute offset of the next byte.
    offset: u64,
    /// BOM bytes matched at the start; 3 once the start is past.
    bom: usize,
    /// The previous chunk ended with CR: an LF first in the next chunk is swallowed.
    skip_lf: bool,
    /// A line is in progress across chunks.
    in_line: bool,
    /// Absolute offset and length so far of the line in progress.
    line_start: u64,
    line_len: u64,
    /// The bytes of the line in progress (empty while skipping).
    line: BytesMut,
    data: Data,
    event: Bytes,
    last_id: Bytes,
    /// Bytes of the field lines of the event being built, and where it began.
    event_bytes: u64,
    event_start: Option<u64>,
    skipping: Option<Skipping>,
    /// Skipping the rest of a comment line over the line limit, from this offset (the
    /// first byte past the limit).
    skipping_comment: Option<u64>,
    /// The chunk being decoded, the position in it, and items decoded but not yet taken.
    pending: Bytes,
    pos: usize,
    /// Bytes of the last chunk fed that were not made `pending` (a byte order mark at the
    /// stream's start): a [`Next::Local`] range plus this is a range of the chunk fed.
    fed_skip: usize,
    backlog: VecDeque<Item>,
    /// Where the last event type read from the static table is in it ([`COMMON`];
    /// `u8::MAX` for none): the next `event:` line is first tried as the same type, which
    /// finds its end without a search.
    last_type: u8,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with default [`Limits`].
    pub fn new() -> Self {
        Self::with_limits(Limits::default())
    }

    /// A decoder with the given limits.
    pub fn with_limits(limits: Limits) -> Self {
        Decoder {
            limits,
            offset: 0,
            bom: 0,
            skip_lf: false,
            in_line: false,
            line_start: 0,
            line_len: 0,
            line: BytesMut::new(),
            data: Data::Empty,
            event: Bytes::new(),
            last_id: Bytes::new(),
            event_bytes: 0,
            event_start: None,
            skipping: None,
            skipping_comment: None,
            pending: Bytes::new(),
            pos: 0,
            fed_skip: 0,
            backlog: VecDeque::new(),
            last_type: u8::MAX,
        }
    }

    /// The last event ID seen so far (what a reconnecting client sends as `Last-Event-ID`).
    pub fn last_event_id(&self) -> &Bytes {
        &self.last_id
    }

    /// Bytes the decoder holds: a line that spans chunks and the data of the event being
    /// built (bounded by the line and event limits; fed chunks not yet decoded by
    /// [`Decoder::next_item`] are not counted).
    pub fn buffered(&self) -> usize {
        let data = match &self.data {
            Data::Empty => 0,
            Data::One(b) => b.len(),
            Data::Many(b) => b.len(),
        };
        self.line.len() + data + self.event.len()
    }

    /// Total bytes fed so far.
    pub fn offset(&self) -> u64 {
        self.offset + self.pending.len() as u64
    }

    /// Feed the next chunk; every item completed by it is appended to `out`, in order.
    /// Never fails: over-limit events are skipped and reported as [`Item::Skipped`].
    /// An empty chunk does nothing.
    ///
    /// This is [`Decoder::feed`] followed by [`Decoder::next_item`] until it returns `None`.
    pub fn push(&mut self, chunk: Bytes, out: &mut Vec<Item>) {
        self.feed(chunk);
        while let Some(item) = self.next_item() {
            out.push(item);
        }
    }

    /// Hand the decoder the next chunk without decoding it yet; take the items with
    /// [`Decoder::next_item`]. Decoding is lazy, one line at a time, so a huge chunk never
    /// turns into a huge list of items. Items of an earlier chunk not yet taken are kept
    /// and come first.
    pub fn feed(&mut self, mut chunk: Bytes) {
        if self.pos < self.pending.len() {
            while let Some(item) = self.step::<false>() {
                self.backlog.push_back(item.into_item());
            }
        }
        self.offset += self.pending.len() as u64;
        let fed = chunk.len();
        if self.bom < 3 {
            chunk = self.strip_bom(chunk);
        }
        self.fed_skip = fed - chunk.len();
        self.pos = 0;
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                self.pos = 1;
            }
        }
        self.pending = chunk;
    }

    /// The next item from the chunks fed so far, or `None` when they are used up.
    pub fn next_item(&mut self) -> Option<Item> {
        if let Some(item) = self.backlog.pop_front() {
            return Some(item);
        }
        self.step::<false>().map(Next::into_item)
    }

    /// As [`Decoder::next_item`], but an event whose data lies whole in the chunk fed last
    /// comes as its range there ([`Next::Local`]), for a caller that holds that chunk: no
    /// slice of it made (a reference count's two atomic operations an event, ~5 % of the
    /// proxy's time).
    pub(crate) fn next_local(&mut self) -> Option<Next> {
        if let Some(item) = self.backlog.pop_front() {
            return Some(Next::Item(item));
        }
        self.step::<true>()
    }

    /// The rest of the chunk fed last, when the decoder stands between two events with
    /// nothing of one held (no line, field, data, skip or item): a caller that reads the
    /// next events there itself, as this decoder would frame them, says how many bytes it
    /// took with [`Decoder::took`]. `None` when there is nothing left or something is held.
    #[inline]
    pub(crate) fn between_events(&self) -> Option<&[u8]> {
        (self.backlog.is_empty()
            && !self.in_line
            && !self.skip_lf
            && self.skipping.is_none()
            && self.skipping_comment.is_none()
            && matches!(self.data, Data::Empty)
            && self.event.is_empty()
            && self.event_bytes == 0
            && self.event_start.is_none()
            && self.pos < self.pending.len())
        .then(|| &self.pending[self.pos..])
    }

    /// Whether an event of a type line of `type_line` bytes (0 for none) and one data line
    /// of `data_line` bytes (their ends not counted) fits the limits.
    #[inline]
    pub(crate) fn event_fits(&self, type_line: usize, data_line: usize) -> bool {
        let (t, d) = (type_line as u64, data_line as u64);
        t <= self.limits.max_line && d <= self.limits.max_line && t + d <= self.limits.max_event
    }

    /// The caller of [`Decoder::between_events`] took the next `n` bytes of it: whole
    /// events, each at most an `event:` line and one `data:` line within the limits, each
    /// line ended by LF and the event by a blank line (what [`Decoder::next_local`] would
    /// have given as [`Next::Local`], and left in this state).
    #[inline]
    pub(crate) fn took(&mut self, n: usize) {
        debug_assert!(self.between_events().is_some_and(|r| r.len() >= n));
        self.pos += n;
    }

    /// Decode lines of the pending chunk until one yields an item.
    /// The last type read from the table ([`Decoder::last_type`]) when `rest` starts with
    /// the line `event: ` and it, ended by LF.
    #[inline]
    fn same_type_line(&self, rest: &[u8]) -> Option<&'static [u8]> {
        let t: &'static [u8] = COMMON.get(usize::from(self.last_type))?;
        (rest.len() > 7 + t.len()
            && rest[7 + t.len()] == b'\n'
            && rest.starts_with(b"event: ")
            && &rest[7..7 + t.len()] == t)
            .then_some(t)
    }

    /// With `LOCAL`, the two one-step paths below give the event as its range in the chunk
    /// fed ([`Next::Local`]) instead of a slice of it.
    fn step<const LOCAL: bool>(&mut self) -> Option<Next> {
        // Taken out for the loop (no refcount traffic), put back at the end.
        let chunk = std::mem::take(&mut self.pending);
        let n = chunk.len();
        let base = self.offset;
        let mut out = None;
        let mut local = None;
        while self.pos < n && out.is_none() && local.is_none() {
            let pos = self.pos;
            // A blank line right after a line end (the common `\n\n`) needs no search, nor
            // an `event:` line of the type before (the table's types hold no line end),
            // whose type is then known.
            let mut same_type = None;
            let found = if !self.in_line && matches!(chunk[pos], b'\n' | b'\r') {
                Some(0)
            } else if let Some(t) = self.same_type_line(&chunk[pos..]).filter(|_| !self.in_line) {
                same_type = Some(t);
                Some(7 + t.len())
            } else {
                memchr::memchr2(b'\n', b'\r', &chunk[pos..])
            };
            let Some(k) = found else {
                self.partial_line(&chunk[pos..], base + pos as u64);
                self.pos = n;
                break;
            };
            let end = pos + k;
            // The most common event of all, `data: ...\n\n` on its own with nothing
            // pending, goes straight out: no data buffer, no second pass for the blank line.
            if !self.in_line
                && self.skipping.is_none()
                && end + 1 < n
                && chunk[end] == b'\n'
                && chunk[end + 1] == b'\n'
                && matches!(self.data, Data::Empty)
                && chunk[pos..end].starts_with(b"data:")
                && k as u64 <= self.limits.max_line
                && self.event_bytes + k as u64 <= self.limits.max_event
            {
                let v = if chunk.get(pos + 5) == Some(&b' ') && pos + 5 < end {
                    pos + 6
                } else {
                    pos + 5
                };
                if LOCAL {
                    let ty = match std::mem::take(&mut self.event) {
                        t if t.is_empty() => LocalType::Static(b""),
                        t => LocalType::Owned(t),
                    };
                    local = Some(self.local_out(ty, v..end));
                } else {
                    out = Some(self.event_out(chunk.slice(v..end), base + end as u64 + 1));
                }
                self.pos = end + 2;
                break;
            }
            // The next most common, `event: ...\ndata: ...\n\n` (Anthropic's and the
            // Responses API's every event), whole in the chunk with nothing pending: the
            // same one step.
            if !self.in_line
                && self.skipping.is_none()
                && chunk[end] == b'\n'
                && matches!(self.data, Data::Empty)
                && chunk[pos..end].starts_with(b"event:")
                && chunk[end + 1..].starts_with(b"data:")
            {
                let d = end + 1;
                if let Some(k2) = memchr::memchr2(b'\n', b'\r', &chunk[d..]) {
                    let dend = d + k2;
                    if dend + 1 < n
                        && chunk[dend] == b'\n'
                        && chunk[dend + 1] == b'\n'
                        && k as u64 <= self.limits.max_line
                        && k2 as u64 <= self.limits.max_line
                        && self.event_bytes + (k + k2) as u64 <= self.limits.max_event
                    {
                        let field = |at: usize, name: usize| {
                            if chunk.get(at + name) == Some(&b' ') {
                                at + name + 1
                            } else {
                                at + name
                            }
                        };
                        let ty = field(pos, 6)..end;
                        let last = COMMON.get(usize::from(self.last_type)).copied();
                        // The type before, known from its line, or compared here.
                        let same = same_type.or_else(|| last.filter(|&t| chunk[ty.clone()] == *t));
                        let ty = match same {
                            Some(t) => LocalType::Static(t),
                            None => match common_index(&chunk[ty.clone()]) {
                                Some(i) => {
                                    self.last_type = i as u8;
                                    LocalType::Static(COMMON[i])
                                }
                                None if ty.is_empty() => LocalType::Static(b""),
                                None => LocalType::Owned(chunk.slice(ty)),
                            },
                        };
                        let data = field(d, 5)..dend;
                        if LOCAL {
                            local = Some(self.local_out(ty, data));
                        } else {
                            self.event = match ty {
                                LocalType::Static(t) => Bytes::from_static(t),
                                LocalType::Owned(t) => t,
                            };
                            let data = chunk.slice(data);
                            out = Some(self.event_out(data, base + dend as u64 + 1));
                        }
                        self.pos = dend + 2;
                        break;
                    }
                }
            }
            if self.in_line {
                self.partial_line(&chunk[pos..end], base + pos as u64);
                self.in_line = false;
                let at = self.line_start;
                if let Some(offset) = self.skipping_comment.take() {
                    out = Some(Item::Skipped(Skipped {
                        reason: SkipReason::CommentTooLong,
                        offset,
                        dropped: self.line_len,
                    }));
                } else if self.skipping.is_some() {
                    self.skipped_line(self.line_len == 0, at, &mut out);
                } else {
                    let mut line = self.line.split().freeze();
                    let len = line.len();
                    // The same one-step path for a `data:` line that a chunk end cut in two
                    // (at 1 KiB chunks, about one event in four of a chat stream).
                    if end + 1 < n
                        && chunk[end] == b'\n'
                        && chunk[end + 1] == b'\n'
                        && matches!(self.data, Data::Empty)
                        && line.starts_with(b"data:")
                        && self.event_bytes + len as u64 <= self.limits.max_event
                    {
                        line.advance(if line.get(5) == Some(&b' ') { 6 } else { 5 });
                        out = Some(self.event_out(line, base + end as u64 + 1));
                        self.pos = end + 2;
                        break;
                    }
                    self.line_done(&line, 0, len, at, &mut out);
                }
            } else {
                let at = base + pos as u64;
                if self.skipping.is_some() {
                    self.skipped_line(k == 0, at, &mut out);
                } else if k as u64 > self.limits.max_line && chunk[pos] == b':' {
                    out = Some(Item::Skipped(Skipped {
                        reason: SkipReason::CommentTooLong,
                        offset: at + self.limits.max_line,
                        dropped: k as u64,
                    }));
                } else if k as u64 > self.limits.max_line {
                    self.start_skipping(SkipReason::LineTooLong, at, at + self.limits.max_line);
                } else {
                    self.line_done(&chunk, pos, end, at, &mut out);
                }
            }
            let mut next = end + 1;
            if chunk[end] == b'\r' {
                if next < n {
                    if chunk[next] == b'\n' {
                        next += 1;
                    }
                } else {
                    self.skip_lf = true;
                }
            }
            self.pos = next;
        }
        if self.pos >= n && n > 0 {
            // Used up: the chunk is let go of here, not when the next one comes, so that
            // whoever read it (hyper's read buffer, say) may reuse its memory meanwhile;
            // an event's data line it held whole, whose event ends in a later chunk, is
            // copied, or its slice would keep the chunk.
            self.offset += n as u64;
            self.pos = 0;
            if let Data::One(b) = &mut self.data {
                *b = Bytes::copy_from_slice(b);
            }
        } else {
            self.pending = chunk;
        }
        match local {
            Some(l) => Some(l),
            None => out.map(Next::Item),
        }
    }

    /// The one-step paths' event as its range in the chunk fed ([`Decoder::next_local`]),
    /// the event being built ended as [`Decoder::event_out`] ends it.
    fn local_out(&mut self, ty: LocalType, data: std::ops::Range<usize>) -> Next {
        self.event_bytes = 0;
        self.event_start = None;
        self.event = Bytes::new();
        Next::Local {
            ty,
            data: data.start + self.fed_skip..data.end + self.fed_skip,
        }
    }

    /// Match the BOM at the start of the stream, byte by byte (it may be split across
    /// chunks). On a mismatch, the matched bytes are the start of the first line.
    fn strip_bom(&mut self, mut chunk: Bytes) -> Bytes {
        let mut i = 0;
        while self.bom < 3 && i < chunk.len() {
            if chunk[i] == BOM[self.bom] {
                self.bom += 1;
                i += 1;
            } else {
                let matched = self.bom;
                self.bom = 3;
                if matched > 0 {
                    self.partial_line(&BOM[..matched], 0);
                }
            }
        }
        self.offset += i as u64;
        let _ = chunk.split_to(i);
        chunk
    }

    /// Bytes of a line that continues past them: kept (bounded) unless skipping.
    fn partial_line(&mut self, bytes: &[u8], at: u64) {
        if !self.in_line {
            self.in_line = true;
            self.line_start = at;
            self.line_len = 0;
        }
        self.line_len += bytes.len() as u64;
        if self.skipping.is_some() || self.skipping_comment.is_some() {
            return;
        }
        if self.line_len > self.limits.max_line {
            // The line's first byte: in the part kept so far, or this part's first.
            let first = self.line.first().or(bytes.first()).copied();
            self.line = BytesMut::new();
            if first == Some(b':') {
                self.skipping_comment = Some(self.line_start + self.limits.max_line);
                return;
            }
            let (start, over) = (self.line_start, self.line_start + self.limits.max_line);
            self.start_skipping(SkipReason::LineTooLong, start, over);
            return;
        }
        if self.line.capacity() - self.line.len() < bytes.len() {
            // Lines that span chunks are assembled in one arena: their frozen parts share
            // it, so one allocation serves many lines.
            self.line.reserve(bytes.len().max(ARENA));
        }
        self.line.extend_from_slice(bytes);
    }

    /// Drop the event being built (and the line at `line_at`) until the next blank line.
    #[cold]
    fn start_skipping(&mut self, reason: SkipReason, line_at: u64, offset: u64) {
        let start = self.event_start.unwrap_or(line_at);
        self.skipping = Some(Skipping {
            reason,
            offset,
            start,
        });
        self.data = Data::Empty;
        self.event = Bytes::new();
        self.event_bytes = 0;
        self.event_start = None;
    }

    /// A line ended while skipping: a blank one resynchronises.
    fn skipped_line(&mut self, blank: bool, at: u64, out: &mut Option<Item>) {
        if blank {
            if let Some(s) = self.skipping.take() {
                *out = Some(Item::Skipped(Skipped {
                    reason: s.reason,
                    offset: s.offset,
                    dropped: at - s.start,
                }));
            }
        }
    }

    /// A complete line `src[start..end]` at absolute offset `at`.
    fn line_done(
        &mut self,
        src: &Bytes,
        start: usize,
        end: usize,
        at: u64,
        out: &mut Option<Item>,
    ) {
        let line = &src[start..end];
        if line.is_empty() {
            self.dispatch(at, out);
            return;
        }
        if line[0] == b':' {
            let from = if line.get(1) == Some(&b' ') { 2 } else { 1 };
            *out = Some(Item::Comment(src.slice(start + from..end)));
            return;
        }
        // A field line counts towards the event's size.
        let event_start = *self.event_start.get_or_insert(at);
        self.event_bytes += line.len() as u64;
        if self.event_bytes > self.limits.max_event {
            let over = at + line.len() as u64 - (self.event_bytes - self.limits.max_event);
            self.start_skipping(SkipReason::EventTooLarge, event_start, over);
            return;
        }
        // The common case first: a `data:` line needs no colon search.
        if line.starts_with(b"data:") {
            let v = if line.get(5) == Some(&b' ') { 6 } else { 5 };
            self.append_data(src, start + v, end);
            return;
        }
        let (name, vstart) = match memchr::memchr(b':', line) {
            Some(c) => {
                let v = if line.get(c + 1) == Some(&b' ') {
                    c + 2
                } else {
                    c + 1
                };
                (&line[..c], start + v)
            }
            None => (line, end),
        };
        match name {
            b"data" => self.append_data(src, vstart, end),
            // A copy, unless static: the event may end in a later chunk, and a slice
            // would keep this one alive until then.
            b"event" => {
                self.event = common_type(&src[vstart..end])
                    .unwrap_or_else(|| Bytes::copy_from_slice(&src[vstart..end]))
            }
            b"id" if memchr::memchr(0, &src[vstart..end]).is_none() => {
                self.last_id = src.slice(vstart..end);
            }
            b"retry" => {
                let v = &src[vstart..end];
                if !v.is_empty() && v.iter().all(u8::is_ascii_digit) {
                    let ms = v.iter().fold(0u64, |acc, d| {
                        acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                    });
                    *out = Some(Item::Retry(ms));
                }
            }
            _ => {}
        }
    }

    fn append_data(&mut self, src: &Bytes, start: usize, end: usize) {
        match &mut self.data {
            Data::Empty => self.data = Data::One(src.slice(start..end)),
            Data::One(first) => {
                let mut buf = BytesMut::with_capacity(first.len() + 1 + end - start);
                buf.extend_from_slice(first);
                buf.extend_from_slice(b"\n");
                buf.extend_from_slice(&src[start..end]);
                self.data = Data::Many(buf);
            }
            Data::Many(buf) => {
                buf.extend_from_slice(b"\n");
                buf.extend_from_slice(&src[start..end]);
            }
        }
    }

    fn take_data(&mut self) -> Option<Bytes> {
        match std::mem::replace(&mut self.data, Data::Empty) {
            Data::Empty => None,
            Data::One(b) => Some(b),
            Data::Many(buf) => Some(buf.freeze()),
        }
    }

    /// A blank line at `at`: dispatch the event if it has data; either way the next event
    /// starts afresh.
    fn dispatch(&mut self, at: u64, out: &mut Option<Item>) {
        match self.take_data() {
            Some(data) => *out = Some(self.event_out(data, at)),
            None => {
                self.event = Bytes::new();
                self.event_bytes = 0;
                self.event_start = None;
            }
        }
    }

    /// The dispatched event with `data`, ending the event being built. Shared by the blank
    /// line and the one-step path for a lone `data:` line.
    fn event_out(&mut self, data: Bytes, at: u64) -> Item {
        self.event_bytes = 0;
        self.event_start = None;
        Item::Event(Event {
            event: std::mem::take(&mut self.event),
            data,
            // An empty id needs no call through the vtable to clone.
            id: if self.last_id.is_empty() {
                Bytes::new()
            } else {
                self.last_id.clone()
            },
            offset: at,
        })
    }

    /// End of stream. Items of fed chunks not yet taken with [`Decoder::next_item`] are
    /// appended to `out` first (nothing is ever dropped).
    ///
    /// # Errors
    ///
    /// [`Incomplete`] when the stream did not end on an event boundary: an event with
    /// field lines but no blank line after it, an unterminated line, or an over-limit event
    /// still being skipped. The partial event is not dispatched (as the standard says), but
    /// its data is in the report.
    pub fn finish(mut self, out: &mut Vec<Item>) -> Result<(), Incomplete> {
        while let Some(item) = self.next_item() {
            out.push(item);
        }
        let total = self.offset();
        if self.bom > 0 && self.bom < 3 {
            // The stream ended inside what looked like a BOM: those bytes are a line.
            let matched = self.bom;
            self.bom = 3;
            self.partial_line(&BOM[..matched], 0);
        }
        let unterminated_line = self.in_line;
        let mut discarded = self.event_bytes;
        if self.in_line {
            self.in_line = false;
            discarded += self.line_len;
            if self.skipping.is_none() && self.skipping_comment.take().is_none() {
                // Read the unterminated line as a line, only to report what it carried.
                let line = self.line.split().freeze();
                let len = line.len();
                let mut ignored = None;
                self.line_done(&line, 0, len, self.line_start, &mut ignored);
            }
        }
        let skipped = self.skipping.take().map(|s| Skipped {
            reason: s.reason,
            offset: s.offset,
            dropped: total - s.start,
        });
        if discarded == 0 && skipped.is_none() {
            return Ok(());
        }
        Err(Incomplete {
            discarded,
            unterminated_line,
            data: self.take_data().unwrap_or_default(),
            event: self.event,
            skipped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stream's events as (type, data), read through `next_local` (ranges resolved in
    /// the chunk fed) or through `next_item` (the reference), fed in `cuts`.
    fn events(stream: &[u8], cuts: &[usize], local: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut d = Decoder::new();
        let mut got = Vec::new();
        let mut at = 0;
        for &end in cuts.iter().chain(std::iter::once(&stream.len())) {
            let chunk = Bytes::copy_from_slice(&stream[at..end]);
            at = end;
            d.feed(chunk.clone());
            loop {
                let item = if local {
                    match d.next_local() {
                        Some(Next::Local { ty, data }) => {
                            got.push((ty.bytes().to_vec(), chunk[data].to_vec()));
                            continue;
                        }
                        Some(Next::Item(item)) => item,
                        None => break,
                    }
                } else {
                    match d.next_item() {
                        Some(item) => item,
                        None => break,
                    }
                };
                if let Item::Event(e) = item {
                    got.push((e.event_type().to_vec(), e.data().to_vec()));
                }
            }
        }
        let mut rest = Vec::new();
        let _ = d.finish(&mut rest);
        for item in rest {
            if let Item::Event(e) = item {
                got.push((e.event_type().to_vec(), e.data().to_vec()));
            }
        }
        got
    }

    #[test]
    fn local_events_are_the_items_events_at_every_cut() {
        let streams: [&[u8]; 6] = [
            b"data: {\"a\":1}\n\ndata:{\"b\":2}\n\ndata: [DONE]\n\n",
            b"\xEF\xBB\xBFdata: {\"a\":1}\n\nevent: ping\ndata: x\n\n",
            b"event: content_block_delta\ndata: {\"i\":0}\n\nevent: message_stop\ndata: {}\n\n",
            b"event: my_own_type\ndata: one\n\nevent:\ndata: two\n\nevent: \ndata: three\n\n",
            b"event: ping\n\ndata: a\ndata: b\n\n: comment\n\nid: 7\ndata: c\r\n\r\ndata: d\r\rdata: e\n\n",
            b"event: response.output_text.delta\ndata: {\"delta\":\"hi\"}\n\ndata: {\"x\":[]}\n\n",
        ];
        for stream in streams {
            let whole = events(stream, &[], false);
            assert!(!whole.is_empty());
            assert_eq!(events(stream, &[], true), whole, "whole: {stream:?}");
            let bytes: Vec<usize> = (1..stream.len()).collect();
            assert_eq!(events(stream, &bytes, true), whole, "1 byte: {stream:?}");
            for i in 1..stream.len() {
                assert_eq!(events(stream, &[i], false), whole, "ref at {i}: {stream:?}");
                assert_eq!(events(stream, &[i], true), whole, "cut at {i}: {stream:?}");
                for j in i + 1..stream.len() {
                    assert_eq!(events(stream, &[i, j], true), whole, "cuts {i}, {j}");
                }
            }
        }
    }
}
