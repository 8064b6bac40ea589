//! [`Splitter`]: the byte-owning layer over the state machine.

use std::fmt;

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::error::{Error, Fail, Truncation};
use super::machine::{Machine, Step, FAST_MIN};
use super::{Container, ErrorKind, Lexical, Limits, Mode};

/// Chunks up to this long are first taken by the short-chunk path
/// ([`Machine::run_short`]). Longer ones go straight to the token path: at 16–32 bytes the
/// short path ran fewer instructions but was slower in wall time (interleaved runs against
/// the byte loop, 0.57–0.59× against 0.65–0.70×).
const SHORT: usize = FAST_MIN - 1;

/// Append `bytes` to `buf`. A call to `memcpy` costs more than a few bytes stored one by
/// one, and tiny appends are the common case when deltas are a byte or a few long.
#[inline(always)]
fn append(buf: &mut BytesMut, bytes: &[u8]) {
    if bytes.len() <= 4 {
        for &b in bytes {
            buf.put_u8(b);
        }
    } else {
        buf.extend_from_slice(bytes);
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
            failed: None,
        }
    }

    /// Feed the next chunk. Every value whose last byte is in `chunk` is appended to `out`
    /// (in order) before this returns — including the values that precede an error in the
    /// same chunk.
    ///
    /// An empty chunk is allowed and does nothing.
    ///
    /// # Errors
    ///
    /// The first byte that cannot be accepted fails the push; see [`Error`]. The splitter
    /// is then fused: later calls return the same error.
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
            // The short-chunk loop specialized for one byte: a single dispatch on the state.
            // Its own branch that returns, here: inside `Self::run_short` the same
            // specialization gained nothing in wall time, and as a second call beside the
            // generic one it slowed the whole buffer (code layout; see BENCHMARKS.md).
            if self.run_short(&chunk[..1]) == 1 {
                return Ok(());
            }
            return self.push_long::<false>(chunk, out);
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
    /// the cheap way to feed many tiny fragments (tool-call argument deltas); for large
    /// chunks already in a [`Bytes`], [`Splitter::push`] is zero-copy.
    ///
    /// # Errors
    ///
    /// As [`Splitter::push`].
    #[inline]
    pub fn push_slice(&mut self, chunk: &[u8], out: &mut Vec<Value>) -> Result<(), Error> {
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
    fn raw_for(&mut self, chunk: &Bytes, base: u64, f: Fail, in_value: bool) -> (Bytes, u64) {
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
        f: Fail,
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

    /// A read-only view of where the splitter stands.
    pub fn state(&self) -> State<'_> {
        State { m: &self.m }
    }

    /// Total bytes consumed so far (the absolute offset of the next byte).
    pub fn offset(&self) -> u64 {
        self.m.offset()
    }

    /// Number of values emitted so far.
    pub fn values_emitted(&self) -> u64 {
        self.m.values()
    }

    /// Bytes held for a value that spans chunks (bounded by the value limit).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The error the splitter is fused with, if any.
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
