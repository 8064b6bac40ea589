//! [`Splitter`]: the byte-owning layer over the state machine.
//!
//! # How it works
//!
//! The [`Machine`] reads bytes and says where values begin and end; it owns no bytes. The
//! splitter owns them: a value that lies inside one pushed [`Bytes`] chunk comes out as a
//! slice of it (no copy), and the bytes of a value still open at the end of a chunk are
//! appended to one buffer, from which the value comes out when its last byte arrives. The
//! buffer is bounded by the value limit.
//!
//! Each chunk takes the cheapest path that can read it, in this order:
//!
//! 1. **It waits** ([`batch`]): inside an open container, a chunk that cannot hold the
//!    byte that ends the top-level value is appended to the buffer unread; the waiting
//!    chunks are read later back to back, in one pass.
//! 2. **The short-chunk path** ([`Machine::run_short`]): a chunk of at most [`SHORT`] bytes
//!    inside a value, in one tight loop with no call.
//! 3. **The string run** ([`Machine::run_string`]): a chunk that starts inside a string's
//!    content, read by the string scanner as far as the string goes on.
//! 4. **The machine** ([`Machine::feed_with`]): its token path for runs of whole tokens,
//!    its byte loop for the rest.
//!
//! Every path stops before a byte it cannot take and leaves the machine as the byte loop
//! would have, so errors, offsets and values are the byte loop's whatever the cut. After
//! an error the splitter is fused: every later call returns the same error.

use std::fmt;

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::error::{Error, ErrorAt, Truncation};
use super::machine::{Machine, Step, FAST_MIN};
use super::{Container, ErrorKind, Lexical, Limits, Mode};

mod batch;
use batch::{Batch, HOLD_MAX};

/// Chunks up to this long are first taken by the short-chunk path
/// ([`Machine::run_short`]). Longer ones go straight to the token path, which is faster
/// in wall time from here on though it runs more instructions.
const SHORT: usize = FAST_MIN - 1;

/// How far past the buffer's end a chunk of 17 bytes to [`HOLD_MAX`] that waits asks for
/// the line a later one will write ([`Splitter::append_waiting`]). With 4 KiB pieces in
/// 64-byte chunks and ~50 µs of other work between pieces (the `gateway` benches), 2 KiB
/// ahead gained 3–9 % against none, and more than 320 bytes ahead with it.
const AHEAD: usize = 2048;

/// The bytes of a chunk of 1 to 16 bytes as two little-endian words, the bytes past the
/// chunk zero: read with overlapping loads, no loop and no call.
#[inline(always)]
fn words(c: &[u8]) -> (u64, u64) {
    let n = c.len();
    let word = |at: usize| u64::from_le_bytes(c[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            c[at..at + 4].try_into().unwrap_or([0; 4]),
        ))
    };
    if n > 8 {
        // The last 8 bytes, shifted down past the ones the first word has.
        (word(0), word(n - 8) >> (8 * (16 - n)))
    } else if n >= 4 {
        // Two 4-byte halves overlapping on equal bytes: OR keeps them.
        (half(0) | (half(n - 4) << (8 * (n - 4))), 0)
    } else if n > 0 {
        let b = |i: usize| u64::from(c[i]) << (8 * i);
        (b(0) | b(n / 2) | b(n - 1), 0)
    } else {
        (0, 0)
    }
}

/// Whether a byte of `w` is `}` or `]` (`]` is 0x5D and `}` is 0x7D; no other byte ORed
/// with 0x20 gives 0x7D, and a zero byte gives 0x20). Exact: the classic zero-byte test
/// never reports a zero that is not there when asked only whether there is one.
#[inline(always)]
fn word_has_closer(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = (w | (ONES * 0x20)) ^ (ONES * 0x7D);
    x.wrapping_sub(ONES) & !x & (ONES * 0x80) != 0
}

/// Append `bytes` to `buf`. A call to `memcpy` costs more than a few bytes stored one by
/// one, and tiny appends are the common case when deltas are a byte or a few long.
#[inline(always)]
fn append(buf: &mut BytesMut, bytes: &[u8]) {
    if bytes.len() <= 4 {
        for &b in bytes {
            buf.put_u8(b);
        }
    } else {
        crate::scan::append_copy(buf, bytes);
    }
}

/// One complete top-level JSON value.
#[derive(Clone, PartialEq, Eq)]
pub struct Value {
    bytes: Bytes,
    start: u64,
    end: u64,
    index: u64,
}

impl Value {
    /// The value's exact bytes, from its first byte to its last (no surrounding
    /// whitespace). A zero-copy slice of the pushed chunk when the value lay inside one
    /// chunk; otherwise one buffer assembled once.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }
    /// Take the bytes.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }
    /// Absolute offset of the value's first byte in the stream.
    pub fn start(&self) -> u64 {
        self.start
    }
    /// Absolute offset just past the value's last byte.
    pub fn end(&self) -> u64 {
        self.end
    }
    /// 0-based index of the value in the stream.
    pub fn index(&self) -> u64 {
        self.index
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Value")
            .field("index", &self.index)
            .field("span", &(self.start..self.end))
            .field("bytes", &String::from_utf8_lossy(&self.bytes))
            .finish()
    }
}

/// A strict, push-based splitter of a stream of JSON values.
///
/// Push chunks with [`Splitter::push`]; each top-level value is appended to the output
/// during the push that delivers its last byte. Call [`Splitter::finish`] at the end of
/// the stream: it tells a clean end from a truncated value.
///
/// A number has no closing byte: a top-level number (only in [`Mode::Any`]) is emitted when
/// the byte after it arrives, or by [`Splitter::finish`].
///
/// **After an error the splitter is fused**: every later `push` and `finish` returns the
/// same error and consumes nothing. Values emitted before the error stay valid.
///
/// ```
/// use bytes::Bytes;
/// use toolstream::json::{Mode, Splitter};
///
/// let mut s = Splitter::new(Mode::Objects);
/// let mut out = Vec::new();
/// s.push(Bytes::from_static(b"{\"a\":1}{\"b\""), &mut out).unwrap();
/// assert_eq!(out.len(), 1); // the first object closed in this chunk
/// s.push(Bytes::from_static(b":2}"), &mut out).unwrap();
/// assert_eq!(&out[1].bytes()[..], b"{\"b\":2}");
/// assert_eq!((out[1].start(), out[1].end()), (7, 14));
/// assert!(s.finish().unwrap().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Splitter {
    m: Machine,
    /// The bytes of a value that started in an earlier chunk.
    buf: BytesMut,
    /// Chunks that wait unread, and what tells whether one may (see [`Batch`]).
    batch: Batch,
    failed: Option<Error>,
}

impl Splitter {
    /// A splitter with the default [`Limits`].
    pub fn new(mode: Mode) -> Self {
        Self::with_limits(mode, Limits::default())
    }

    /// A splitter with the given limits.
    pub fn with_limits(mode: Mode, limits: Limits) -> Self {
        Splitter {
            m: Machine::new(mode, limits),
            buf: BytesMut::new(),
            batch: Batch::new(&limits),
            failed: None,
        }
    }

    /// Room for `n` more bytes of values in the buffer (a hint: the buffer grows as needed).
    pub(crate) fn reserve(&mut self, n: usize) {
        self.buf.reserve(n);
    }

    /// Feed the next chunk. Every value whose last byte is in `chunk` is appended to `out`
    /// (in order) before this returns — including the values that precede an error in the
    /// same chunk.
    ///
    /// An empty chunk is allowed and does nothing.
    ///
    /// **Short chunks may wait.** Inside an open array or object, a value can only end at
    /// the `}` or `]` that closes the outermost one. A chunk of up to 1 KiB that cannot
    /// hold that byte — it has no `}` or `]`, or (over 16 bytes) its brackets outside
    /// strings, followed in order, never bring the depth to zero — may
    /// therefore be appended to the splitter's buffer unread, and such chunks read later
    /// back to back, in one pass: with the next chunk that may end the value, once 64 KiB
    /// wait, or at the next [`Splitter::push_slice`] of a chunk that does not wait itself
    /// (see there), [`Splitter::state`] or [`Splitter::finish`]. Every
    /// value still comes out of the push that delivers its last byte, no byte is read
    /// twice, and the buffer never holds more than the value limit after a push. What
    /// waits is only the reading: an error in such a chunk is returned by that later call
    /// (kind, offset and raw bytes unchanged: the offset is the wrong byte's own).
    ///
    /// # Errors
    ///
    /// The first byte that cannot be accepted fails the push that reads it (this one, or
    /// a later call when the chunk waited; see above) — see [`Error`]. The splitter is
    /// then fused: later calls return the same error.
    #[inline]
    pub fn push(&mut self, mut chunk: Bytes, out: &mut Vec<Value>) -> Result<(), Error> {
        // `k` bytes taken by a path that appended them itself: done when that was all of
        // the chunk, else the rest goes on. (An empty chunk still reaches `push_long`,
        // which reports a fused splitter's error.)
        macro_rules! taken {
            ($k:expr) => {{
                let k = $k;
                if k > 0 {
                    if k == chunk.len() {
                        return Ok(());
                    }
                    chunk.advance(k);
                }
            }};
        }
        if chunk.len() == 1 {
            let b = chunk[0];
            if b | 0x20 != b'}' && self.batch.may_hold(&self.m, self.buf.len()) {
                // The chunk is done with: dropped before the stores (its reference count's
                // atomic then runs before them, and no path after them drops it).
                drop(chunk);
                if self.batch.stage(b) {
                    return Ok(());
                }
                self.batch.flush_full_stage(&mut self.buf, b);
                if !self.batch.due(self.buf.len()) {
                    return Ok(());
                }
                return self.catch_up();
            }
            if self.batch.waiting() {
                // (Not `catch_up_with`, which reads the closer with the waiting bytes as
                // the longer chunks do: fewer instructions, but slower in wall time at
                // every chunk size, through code layout.)
                self.catch_up()?;
            }
            // The short-chunk loop specialized for one byte: a single dispatch on the state.
            // Its own branch that returns, here: inside `Self::run_short` the same
            // specialization gained nothing in wall time, and as a second call beside the
            // generic one it slowed the whole buffer (code layout).
            if self.run_short(&chunk[..1]) == 1 {
                return Ok(());
            }
            return self.push_long::<false>(chunk, out);
        }
        if self.batch.staged() {
            self.batch.flush_stage(&mut self.buf);
        }
        if chunk.len() <= 16 {
            let n = chunk.len();
            let (lo, hi) = words(&chunk);
            if !word_has_closer(lo)
                && !word_has_closer(hi)
                && self.batch.may_hold(&self.m, self.buf.len())
            {
                // Its bytes are in the words: dropped now, as above.
                drop(chunk);
                let len = self.buf.len();
                self.buf.put_u64_le(lo);
                if n > 8 {
                    self.buf.put_u64_le(hi);
                }
                self.buf.truncate(len + n);
                if !self.batch.due(self.buf.len()) {
                    return Ok(());
                }
                return self.catch_up();
            }
        } else if chunk.len() <= HOLD_MAX
            && self
                .batch
                .may_hold_long_outlined(&self.m, self.buf.len(), &chunk)
        {
            self.append_waiting(&chunk);
            if !self.batch.due(self.buf.len()) {
                return Ok(());
            }
            return self.catch_up();
        }
        if self.batch.waiting() {
            if chunk.len() <= HOLD_MAX {
                return self.catch_up_with_bytes(&chunk, out);
            }
            self.catch_up()?;
        }
        taken!(self.run_short(&chunk));
        if chunk.len() < FAST_MIN {
            return self.push_long::<false>(chunk, out);
        }
        taken!(self.run_string(&chunk));
        if chunk.len() < FAST_MIN {
            let k = self.run_short_rest(&chunk);
            if k == chunk.len() {
                return Ok(());
            }
            chunk.advance(k);
            self.push_long::<false>(chunk, out)
        } else {
            self.push_long::<true>(chunk, out)
        }
    }

    /// Append a chunk of 17 bytes to [`HOLD_MAX`] that waits, and ask for the buffer's line
    /// [`AHEAD`] bytes past its new end, which a later one will write: after other work (a
    /// gateway's other streams) the buffer's lines are out of the caches, and the writes
    /// of waiting chunks, one line a 64-byte push, were found waiting for them.
    #[inline(always)]
    fn append_waiting(&mut self, chunk: &[u8]) {
        crate::scan::append_copy(&mut self.buf, chunk);
        crate::scan::prefetch(self.buf.as_ptr().wrapping_add(self.buf.len() + AHEAD));
    }

    /// The short-chunk path, inlined into the caller: a chunk of at most [`SHORT`] bytes
    /// inside a value is consumed by [`Machine::run_short`] as far as it can go (all of it,
    /// unless a byte could end the value, is wrong, or needs the byte machine) and appended
    /// to the value's buffer. Returns how many bytes were consumed; the byte machine takes
    /// the rest.
    #[inline(always)]
    fn run_short(&mut self, chunk: &[u8]) -> usize {
        if chunk.len() > SHORT {
            return 0;
        }
        // A fused splitter's machine is dead: `run_short` consumes nothing.
        let k = self.m.run_short(chunk);
        debug_assert!(k == 0 || self.failed.is_none());
        append(&mut self.buf, &chunk[..k]);
        k
    }

    /// The string-continuation path: a chunk of a window or more that starts inside a
    /// string's content is read by [`Machine::run_string`] as far as the string goes on in
    /// it, and appended to the value's buffer. Returns how many bytes were consumed; the
    /// byte machine takes the rest.
    #[inline(always)]
    fn run_string(&mut self, chunk: &[u8]) -> usize {
        // A fused splitter's machine is dead: `run_string` consumes nothing.
        let k = self.m.run_string(chunk);
        debug_assert!(k == 0 || self.failed.is_none());
        append(&mut self.buf, &chunk[..k]);
        k
    }

    /// The short-chunk path on what is left of a chunk after its string run (under 16
    /// bytes: the string's end and the tokens after it). Out of line: a second inlined copy
    /// of the loop in [`Splitter::push`] would crowd the one that takes tiny chunks.
    #[inline(never)]
    fn run_short_rest(&mut self, rest: &[u8]) -> usize {
        self.run_short(rest)
    }

    /// Read the bytes held back by [`Splitter::push`], from the splitter's buffer, where
    /// they lie back to back: a run of short chunks is read as one. Returns the span of
    /// the value they end, if they end it; else they were all read.
    #[inline(always)]
    fn read_held(&mut self) -> Result<Option<(u64, u64)>, Error> {
        let mut pos = self.batch.start_read(&mut self.buf);
        pos += self.m.run_string(&self.buf[pos..]);
        if pos == self.buf.len() {
            return Ok(None);
        }
        let rest = &self.buf[pos..];
        let (step, _) = if rest.len() >= FAST_MIN {
            self.m.feed_with::<true>(rest)
        } else {
            self.m.feed_with::<false>(rest)
        };
        match step {
            Step::NeedMore => Ok(None),
            Step::Value { start, end } => Ok(Some((start, end))),
            Step::Fail(f) => {
                // The buffer holds the value from its first byte.
                let start = self.m.value_start();
                let to = ((f.offset + 1 - start) as usize).min(self.buf.len());
                self.buf.truncate(to);
                let raw = self.buf.split().freeze();
                Err(self.fuse(f, raw, start, None))
            }
        }
    }

    /// [`Splitter::read_held`] when nothing more comes with them.
    ///
    /// No value can end in them: the machine was inside a container when the first came,
    /// and a top-level value ends there only at a `}` or `]` that closes its outermost
    /// container. A chunk waits only if it holds no `}` or `]`, or if the tracker ([`Batch`]),
    /// exact on every valid prefix, saw the depth outside strings stay above zero; and
    /// the machine ends a value only after a valid prefix. So this either
    /// reads them all or fails at the first wrong byte.
    #[inline(never)]
    fn catch_up(&mut self) -> Result<(), Error> {
        match self.read_held()? {
            None => Ok(()),
            Some(_) => unreachable!("a value ended in bytes that could not end it"),
        }
    }

    /// [`Splitter::catch_up_with`] for [`Splitter::push`]: the rest of the chunk after the
    /// value is pushed on its own, so that a value inside it is a slice of it. Out of line,
    /// as `catch_up_with` is: `push` calling itself would no longer inline into its
    /// caller, which costs tiny chunks most.
    #[inline(never)]
    fn catch_up_with_bytes(&mut self, chunk: &Bytes, out: &mut Vec<Value>) -> Result<(), Error> {
        let taken = self.catch_up_with(chunk, out)?;
        if taken == chunk.len() {
            return Ok(());
        }
        // The machine is between values now: nothing waits, and the rest of the chunk
        // takes the usual path.
        self.push(chunk.slice(taken..), out)
    }

    /// The waiting bytes and then `chunk` (of at most [`HOLD_MAX`] bytes, which may end
    /// the value), read together from the buffer: `chunk` is appended first, so the bytes
    /// are read back to back with no seam at the chunk's start. The value open before
    /// `chunk` comes out of the buffer, where its bytes are anyway. Returns how many bytes
    /// of `chunk` that took (all of it unless the value ended in it): the caller pushes
    /// the rest on its own, so that a value inside a [`Bytes`] chunk is a slice of it.
    #[inline(never)]
    fn catch_up_with(&mut self, chunk: &[u8], out: &mut Vec<Value>) -> Result<usize, Error> {
        if self.batch.staged() {
            self.batch.flush_stage(&mut self.buf);
        }
        // The buffer holds the open value from its first byte; `chunk` follows it.
        let base = self.m.value_start() + self.buf.len() as u64;
        self.buf.extend_from_slice(chunk);
        let Some((start, end)) = self.read_held()? else {
            // A closer that did not end the value: its later waits follow their chunks.
            self.batch.follow(self.m.value_start());
            return Ok(chunk.len());
        };
        let bytes = self.buf.split_to((end - start) as usize).freeze();
        self.buf.clear();
        out.push(Value {
            bytes,
            start,
            end,
            index: self.m.values() - 1,
        });
        Ok((end - base) as usize)
    }

    /// [`Splitter::push`] past the short-chunk path.
    #[inline(never)]
    fn push_long<const TOKENS: bool>(
        &mut self,
        chunk: Bytes,
        out: &mut Vec<Value>,
    ) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let base = self.m.offset();
        let mut pos = 0;
        loop {
            let (step, used) = self.m.feed_with::<TOKENS>(&chunk[pos..]);
            pos += used;
            match step {
                Step::Value { start, end } => {
                    let bytes = if start >= base {
                        chunk.slice((start - base) as usize..(end - base) as usize)
                    } else {
                        self.buf.extend_from_slice(&chunk[..(end - base) as usize]);
                        self.buf.split().freeze()
                    };
                    out.push(Value {
                        bytes,
                        start,
                        end,
                        index: self.m.values() - 1,
                    });
                }
                Step::NeedMore => {
                    if self.m.in_value() {
                        let start = self.m.value_start();
                        let from = start.saturating_sub(base) as usize;
                        append(&mut self.buf, &chunk[from..]);
                    }
                    return Ok(());
                }
                Step::Fail(f) => {
                    let in_value = self.m.failed_in_value();
                    let (raw, raw_offset) = self.raw_for(&chunk, base, f, in_value);
                    return Err(self.fuse(f, raw, raw_offset, None));
                }
            }
        }
    }

    /// Feed a chunk given as a slice. Nothing is allocated per call: the bytes of values are
    /// copied once into the splitter's own buffer, and each value comes out of it. This is
    /// the cheap way to feed many tiny fragments (tool-call argument deltas) and chunks
    /// read into a reused buffer; for large chunks already in a [`Bytes`],
    /// [`Splitter::push`] is zero-copy.
    ///
    /// **Chunks of 17 bytes to 1 KiB may wait**, as in [`Splitter::push`] and on the same
    /// terms (their bytes are copied into the buffer either way): inside an open array or
    /// object, one that cannot end the value is appended unread and read with the chunk that
    /// may end it. Every value still comes out of the call that delivers its last byte; an
    /// error in a chunk that waited is returned by that later call, its offset and raw
    /// bytes unchanged. Shorter chunks are read at once.
    ///
    /// # Errors
    ///
    /// As [`Splitter::push`].
    #[inline]
    pub fn push_slice(&mut self, chunk: &[u8], out: &mut Vec<Value>) -> Result<(), Error> {
        if chunk.len() > 16 && chunk.len() <= HOLD_MAX {
            if self.batch.staged() {
                self.batch.flush_stage(&mut self.buf);
            }
            if self.batch.may_hold_long(&self.m, self.buf.len(), chunk) {
                self.append_waiting(chunk);
                if !self.batch.due(self.buf.len()) {
                    return Ok(());
                }
                return self.catch_up();
            }
            if self.batch.waiting() {
                let taken = self.catch_up_with(chunk, out)?;
                if taken == chunk.len() {
                    return Ok(());
                }
                return self.push_slice_now(&chunk[taken..], out);
            }
        }
        self.push_slice_now(chunk, out)
    }

    /// [`Splitter::push_slice`] that reads the whole chunk before it returns (the bytes
    /// that wait, if any, first): for the callers that show what each chunk did as it
    /// came ([`super::Preview`], the assembler's previews and errors), where a chunk
    /// that waited would be shown as taken before it was checked.
    #[inline]
    pub(crate) fn push_slice_now(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<Value>,
    ) -> Result<(), Error> {
        if self.batch.waiting() {
            self.catch_up()?;
        }
        let k = self.run_short(chunk);
        let chunk = &chunk[k..];
        if chunk.is_empty() && k > 0 {
            return Ok(());
        }
        if chunk.len() < FAST_MIN {
            self.push_slice_long::<false>(chunk, out)
        } else {
            self.push_slice_long::<true>(chunk, out)
        }
    }

    /// [`Splitter::push_slice`] past the short-chunk path.
    #[inline(never)]
    fn push_slice_long<const TOKENS: bool>(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<Value>,
    ) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let base = self.m.offset();
        // The chunk's string content first, if it starts in some (appended here: the
        // steps below append from where they start).
        let mut pos = if TOKENS { self.run_string(chunk) } else { 0 };
        if pos > 0 && pos == chunk.len() {
            return Ok(());
        }
        loop {
            let (step, used) = self.m.feed_with::<TOKENS>(&chunk[pos..]);
            let from = pos;
            pos += used;
            match step {
                Step::Value { start, end } => {
                    let first = start.saturating_sub(base) as usize;
                    self.buf
                        .extend_from_slice(&chunk[first.max(from)..(end - base) as usize]);
                    out.push(Value {
                        bytes: self.buf.split().freeze(),
                        start,
                        end,
                        index: self.m.values() - 1,
                    });
                }
                Step::NeedMore => {
                    if self.m.in_value() {
                        let first = self.m.value_start().saturating_sub(base) as usize;
                        append(&mut self.buf, &chunk[first.max(from)..]);
                    }
                    return Ok(());
                }
                Step::Fail(f) => {
                    let at = (f.offset - base) as usize;
                    let end = (at + 1).min(chunk.len());
                    let (raw, raw_offset) = if self.m.failed_in_value() {
                        let first = self.m.value_start().saturating_sub(base) as usize;
                        self.buf.extend_from_slice(&chunk[first.max(from)..end]);
                        (self.buf.split().freeze(), self.m.value_start())
                    } else {
                        (Bytes::copy_from_slice(&chunk[at..end]), f.offset)
                    };
                    return Err(self.fuse(f, raw, raw_offset, None));
                }
            }
        }
    }

    /// The raw bytes for a failure at `f.offset` inside `chunk`.
    fn raw_for(&mut self, chunk: &Bytes, base: u64, f: ErrorAt, in_value: bool) -> (Bytes, u64) {
        let at = (f.offset - base) as usize;
        let end = (at + 1).min(chunk.len());
        let start = self.m.value_start();
        if !in_value {
            return (chunk.slice(at..end), f.offset);
        }
        if start >= base {
            (chunk.slice((start - base) as usize..end), start)
        } else {
            self.buf.extend_from_slice(&chunk[..end]);
            (self.buf.split().freeze(), start)
        }
    }

    #[cold]
    fn fuse(
        &mut self,
        f: ErrorAt,
        raw: Bytes,
        raw_offset: u64,
        truncation: Option<Truncation>,
    ) -> Error {
        let e = Error {
            kind: f.kind,
            offset: f.offset,
            value_index: self.m.values(),
            raw,
            raw_offset,
            truncation,
            detail: f.detail,
        };
        self.buf = BytesMut::new();
        self.batch.clear();
        self.failed = Some(e.clone());
        e
    }

    /// End of stream. Returns a top-level number that was still open (only possible in
    /// [`Mode::Any`]: `42` with nothing after it), or `None` on a clean end.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Truncated`] if the stream ended inside a value, with
    /// [`Error::truncation`] saying what was open and [`Error::raw`] holding everything of
    /// the value that arrived; or the error the splitter was fused with.
    pub fn finish(mut self) -> Result<Option<Value>, Error> {
        if self.batch.waiting() {
            self.catch_up()?;
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let truncation = Truncation {
            depth: self.m.depth(),
            lexical: self.m.lexical(),
        };
        let start = self.m.value_start();
        let in_value = self.m.in_value();
        match self.m.finish() {
            Ok(None) => Ok(None),
            Ok(Some((start, end))) => Ok(Some(Value {
                bytes: self.buf.split().freeze(),
                start,
                end,
                index: self.m.values() - 1,
            })),
            Err(f) => {
                let raw = self.buf.split().freeze();
                let raw_offset = if in_value { start } else { f.offset };
                let truncation = (f.kind == ErrorKind::Truncated).then_some(truncation);
                Err(self.fuse(f, raw, raw_offset, truncation))
            }
        }
    }

    /// A read-only view of where the splitter stands, after every byte pushed so far.
    /// Bytes that [`Splitter::push`] let wait are read first; an error in them fuses the
    /// splitter (see [`Splitter::error`]; the next push returns it) and the view is then
    /// of a stream that failed (between values, depth as it stood at the error).
    pub fn state(&mut self) -> State<'_> {
        if self.batch.waiting() {
            // An error in them fuses the splitter: `error` and the next push return it.
            let _ = self.catch_up();
        }
        State { m: &self.m }
    }

    /// Total bytes taken so far (the absolute offset of the next byte), those that wait
    /// unread included.
    pub fn offset(&self) -> u64 {
        self.m.offset() + self.batch.held(self.buf.len()) as u64
    }

    /// Number of values emitted so far.
    pub fn values_emitted(&self) -> u64 {
        self.m.values()
    }

    /// Bytes held for a value that spans chunks (bounded by the value limit).
    pub fn buffered(&self) -> usize {
        self.buf.len() + self.batch.stage_len()
    }

    /// The error the splitter is fused with, if any (not yet one in bytes that wait
    /// unread: [`Splitter::state`] reads them).
    pub fn error(&self) -> Option<&Error> {
        self.failed.as_ref()
    }
}

/// Where a [`Splitter`] stands between pushes: the open containers and the lexical state.
/// Reading it costs O(1) per question (O(depth) to walk the containers), never a re-parse.
#[derive(Clone, Copy)]
pub struct State<'a> {
    m: &'a Machine,
}

impl State<'_> {
    /// Number of open arrays and objects.
    pub fn depth(&self) -> usize {
        self.m.depth()
    }
    /// The open container at `level` (0 = outermost), or `None` past the depth.
    pub fn container(&self, level: usize) -> Option<Container> {
        self.m.container(level)
    }
    /// The open containers, outermost first.
    pub fn containers(&self) -> impl Iterator<Item = Container> + '_ {
        (0..self.m.depth()).filter_map(|l| self.m.container(l))
    }
    /// The lexical state.
    pub fn lexical(&self) -> Lexical {
        self.m.lexical()
    }
    /// Whether a top-level value has started and not yet ended.
    pub fn in_value(&self) -> bool {
        self.m.in_value()
    }
    /// Absolute offset of the first byte of the value in progress, if any.
    pub fn value_start(&self) -> Option<u64> {
        self.m.in_value().then(|| self.m.value_start())
    }
}

impl fmt::Debug for State<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("containers", &self.containers().collect::<Vec<_>>())
            .field("lexical", &self.lexical())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::batch::Tracker;
    use super::{word_has_closer, words};
    use crate::json::machine::{Machine, Step};
    use crate::json::{Limits, Mode};

    /// The definition of a closer test: memchr's search for either byte.
    fn has_closer(chunk: &[u8]) -> bool {
        memchr::memchr2(b'}', b']', chunk).is_some()
    }

    /// The exact state (in a string, next byte escaped, depth) after each byte of a valid
    /// document, by the plain definition.
    fn naive(doc: &[u8]) -> Vec<(bool, bool, u64)> {
        let (mut s, mut e, mut d) = (false, false, 0u64);
        let mut out = vec![(s, e, d)];
        for &b in doc {
            if e {
                e = false;
            } else if s {
                match b {
                    b'\\' => e = true,
                    b'"' => s = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => s = true,
                    b'{' | b'[' => d += 1,
                    b'}' | b']' => d -= 1,
                    _ => {}
                }
            }
            out.push((s, e, d));
        }
        out
    }

    /// A document with brackets, quotes and backslash runs inside strings, nested.
    fn doc(seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let pieces: [&str; 10] = [
            r#""a]}b""#,
            r#""\\""#,
            r#""\"]""#,
            r#""x\\\"}\\""#,
            r#""\u005D\u007d""#,
            "12",
            "[]",
            "{}",
            r#""é{[""#,
            "null",
        ];
        let mut out = String::from("{\"k\":[");
        let mut open = vec!['}', ']'];
        for i in 0..200 {
            if i > 0 && !out.ends_with('[') && !out.ends_with(':') {
                out.push(',');
            }
            match next(6) {
                0 if open.len() < 12 => {
                    out.push_str("{\"q[\":");
                    open.push('}');
                    out.push_str(pieces[next(10) as usize]);
                    out.push(',');
                    out.push_str("\"n\":[");
                    open.push(']');
                }
                1 if open.len() > 2 => {
                    out.push_str(pieces[next(10) as usize]);
                    out.push(open.pop().unwrap_or(']'));
                    if open.last() == Some(&'}') && open.len() > 2 {
                        out.push(open.pop().unwrap_or('}'));
                    }
                }
                _ => out.push_str(pieces[next(10) as usize]),
            }
        }
        if !out.ends_with('[') {
            out.push(',');
        }
        out.push('0');
        while let Some(c) = open.pop() {
            out.push(c);
        }
        out.into_bytes()
    }

    #[test]
    fn the_tracker_follows_strings_and_depth_and_never_lets_the_end_wait() {
        for seed in 1..40u64 {
            let d = doc(seed * 0x9E37_79B9);
            assert!(
                serde_json::from_slice::<serde_json::Value>(&d).is_ok(),
                "{}",
                String::from_utf8_lossy(&d)
            );
            let want = naive(&d);
            let mut starts: Vec<usize> = (1..d.len()).step_by(7).collect();
            starts.extend(1..70.min(d.len()));
            for p in starts {
                let mut m = Machine::new(Mode::Objects, Limits::default());
                let (step, used) = m.feed(&d[..p]);
                assert_eq!((step, used), (Step::NeedMore, p));
                let t0 = Tracker::new(&m);
                assert_eq!(
                    (t0.0.in_string != 0, t0.0.escape == 1, t0.0.depth),
                    want[p],
                    "start {p}"
                );
                for len in [17, 40, 63, 64, 65, 127, 128, 200, 1024] {
                    let q = (p + len).min(d.len());
                    let mut t = t0;
                    let ends = (p..q).any(|i| want[i + 1].2 == 0);
                    let held = t.follow(&d[p..q]);
                    // Exact: it refuses the chunk where the value ends, and only there.
                    assert_eq!(held, !ends, "{p}..{q}");
                    if held {
                        assert_eq!(
                            (t.0.in_string != 0, t.0.escape == 1, t.0.depth),
                            want[q],
                            "after {p}..{q}"
                        );
                    }
                }
            }
        }
    }

    /// The chunk's bytes, in order, from the two words `words` made of it.
    fn bytes_of(n: usize, (lo, hi): (u64, u64)) -> Vec<u8> {
        let mut all = lo.to_le_bytes().to_vec();
        all.extend_from_slice(&hi.to_le_bytes());
        assert!(
            all[n..].iter().all(|&b| b == 0),
            "bytes past the chunk are zero"
        );
        all.truncate(n);
        all
    }

    #[test]
    fn words_hold_the_chunk_at_every_length() {
        let data: Vec<u8> = (0..16u8).map(|i| 0xF0 ^ i.wrapping_mul(37)).collect();
        for n in 0..=16 {
            for fill in [0x00, 0xFF, 0x7D] {
                let mut c = data[..n].to_vec();
                if n > 2 {
                    c[n / 2] = fill;
                }
                assert_eq!(bytes_of(n, words(&c)), c, "length {n}");
            }
        }
    }

    #[test]
    fn closers_found_in_words_exactly() {
        // Every byte value at every place, among fillers either side of 0x7D and 0x5D
        // (and zero, which pads short chunks); every pair of byte values side by side.
        for fill in [0x00u8, 0x20, 0x5C, 0x5E, 0x7C, 0x7E, 0xDD, 0xFD, 0xFF] {
            for at in 0..8 {
                for b in 0..=255u8 {
                    let mut w = [fill; 8];
                    w[at] = b;
                    assert_eq!(
                        word_has_closer(u64::from_le_bytes(w)),
                        matches!(b, b'}' | b']') || matches!(fill, b'}' | b']'),
                        "{b:#x} at {at} among {fill:#x}"
                    );
                }
            }
        }
        for at in 0..7 {
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    let mut w = [b'a'; 8];
                    w[at] = a;
                    w[at + 1] = b;
                    let want = has_closer(&w);
                    assert_eq!(word_has_closer(u64::from_le_bytes(w)), want);
                }
            }
        }
    }

    #[test]
    fn short_chunks_closers_by_words_match_memchr() {
        for n in 0..=16 {
            for at in 0..n {
                for b in [b'}', b']', b'{', b'[', b'=', b'\0'] {
                    let mut c = vec![b'x'; n];
                    c[at] = b;
                    let (lo, hi) = words(&c);
                    assert_eq!(
                        word_has_closer(lo) || word_has_closer(hi),
                        has_closer(&c),
                        "{c:?}"
                    );
                }
            }
        }
    }
}
