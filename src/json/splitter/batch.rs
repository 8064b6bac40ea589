//! Chunks that wait unread: the [`Splitter`](super::Splitter)'s batching.
//!
//! Inside an open array or object, a top-level value can only end at the `}` or `]` that
//! closes the outermost one. A chunk that cannot hold that byte may therefore be appended
//! to the splitter's buffer unread, and such chunks read later back to back, in one pass
//! (see [`Splitter::push`](super::Splitter::push)). This module decides which chunks may
//! wait and keeps the bookkeeping: where the waiting bytes begin in the buffer, when they
//! must be read, the one-byte chunks staged before they are appended, and the
//! [`Tracker`] that follows strings and nesting through longer chunks. The splitter does
//! the reading.

use bytes::{BufMut, BytesMut};

use super::super::machine::Machine;
use super::super::Limits;
use crate::scan;

/// Chunks up to this long may be held back unread (see [`Splitter::push`](super::Splitter::push)).
pub(super) const HOLD_MAX: usize = 1024;

/// One-byte chunks that wait are first stored here, so many bytes (a plain store each),
/// then appended to the buffer together.
const STAGE: usize = 32;

/// Held-back bytes are read once there are this many: the buffer holds the value's bytes
/// anyway (memory is bounded by the value limit, not by this), and each read costs the
/// machine its entry and, after other work, its cold start, so a long value is read in
/// few runs (the runs that chose it are in the commit that set it).
const HOLD_BATCH: usize = 65536;

/// Strings and nesting through bytes that wait unread, from where the machine stood when
/// they began to wait ([`scan::track`]: exact on every valid prefix; where the bytes are
/// not valid, the machine finds the error when it reads them). It only answers "can the
/// top-level value end here?": yes exactly where the depth outside strings falls to zero.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tracker(pub(super) scan::Track);

impl Tracker {
    pub(super) fn new(m: &Machine) -> Self {
        let (in_string, escaped) = m.string_state();
        Tracker(scan::Track {
            in_string: if in_string { u64::MAX } else { 0 },
            escape: u64::from(escaped),
            depth: m.depth() as u64,
        })
    }

    /// Follow `chunk`; false (and the tracker left anywhere) if the top-level value may
    /// end in it.
    #[inline]
    pub(super) fn follow(&mut self, chunk: &[u8]) -> bool {
        scan::track(chunk, &mut self.0)
    }
}

/// The waiting chunks' bookkeeping. The waiting bytes themselves lie at the end of the
/// splitter's buffer, from `from`, then in the stage.
#[derive(Clone, Debug)]
pub(super) struct Batch {
    /// Where in the buffer the bytes the machine has not read yet begin. Meaningful when
    /// `end` is not zero: then the machine is inside a container and alive, and the value
    /// cannot end in these bytes.
    from: usize,
    /// Zero when no bytes wait; else the length of the buffer at which they are read.
    end: usize,
    /// The value limit plus one: with bytes waiting, the buffer and the stage never hold
    /// more than the value limit (a wait ends a full stage short of it), so a push that
    /// leaves bytes unread never leaves more buffered than the limit allows.
    cap: usize,
    /// One-byte chunks that wait, after the buffer's waiting bytes (`stage_len` of them).
    stage: [u8; STAGE],
    stage_len: usize,
    /// Strings and nesting followed through the waiting bytes, so that a chunk longer
    /// than 16 bytes may wait even when it holds a `}` or `]`, if that cannot end the
    /// value; valid while the buffer is `tracked_to` long (`usize::MAX`: not valid, as in a
    /// wait that does not follow its chunks, see [`Batch::may_hold_long`]; a short chunk
    /// that waits untracked leaves it behind).
    track: Tracker,
    tracked_to: usize,
    /// The start of the value whose waits follow every chunk longer than 16 bytes (see
    /// [`Batch::may_hold_long`]); `u64::MAX` for none.
    follow_value: u64,
}

impl Batch {
    pub(super) fn new(limits: &Limits) -> Self {
        Batch {
            from: 0,
            end: 0,
            cap: usize::try_from(limits.max_value_bytes)
                .unwrap_or(usize::MAX)
                .saturating_add(1),
            stage: [0; STAGE],
            stage_len: 0,
            track: Tracker(scan::Track::default()),
            tracked_to: usize::MAX,
            follow_value: u64::MAX,
        }
    }

    /// Whether bytes wait unread.
    #[inline(always)]
    pub(super) fn waiting(&self) -> bool {
        self.end > 0
    }

    /// Whether one-byte chunks are staged.
    #[inline(always)]
    pub(super) fn staged(&self) -> bool {
        self.stage_len > 0
    }

    /// How many one-byte chunks are staged.
    #[inline(always)]
    pub(super) fn stage_len(&self) -> usize {
        self.stage_len
    }

    /// Whether the waiting bytes must be read now, the buffer being `buf_len` long.
    #[inline(always)]
    pub(super) fn due(&self, buf_len: usize) -> bool {
        buf_len >= self.end
    }

    /// How many bytes wait unread, the buffer being `buf_len` long.
    #[inline(always)]
    pub(super) fn held(&self, buf_len: usize) -> usize {
        if self.end > 0 {
            buf_len - self.from + self.stage_len
        } else {
            0
        }
    }

    /// Whether a chunk with no `}` or `]` may wait unread: some already wait, or the
    /// machine is inside a container (then this starts the wait, at the buffer's end).
    #[inline(always)]
    pub(super) fn may_hold(&mut self, m: &Machine, buf_len: usize) -> bool {
        if self.end > 0 {
            return true;
        }
        if !m.in_container() {
            return false;
        }
        // Room for a full stage under the value limit, or no wait (near the limit the
        // byte machine reads at once and finds it).
        let end = buf_len
            .saturating_add(HOLD_BATCH)
            .min(self.cap.saturating_sub(STAGE));
        if end <= buf_len {
            return false;
        }
        self.from = buf_len;
        self.end = end;
        true
    }

    /// Stage a one-byte chunk that waits; false when the stage is full.
    #[inline(always)]
    pub(super) fn stage(&mut self, b: u8) -> bool {
        let n = self.stage_len;
        if n < STAGE {
            self.stage[n] = b;
            self.stage_len = n + 1;
            return true;
        }
        false
    }

    /// Move the staged one-byte chunks to the end of the buffer.
    #[inline(never)]
    pub(super) fn flush_stage(&mut self, buf: &mut BytesMut) {
        buf.extend_from_slice(&self.stage[..self.stage_len]);
        self.stage_len = 0;
    }

    /// Move a full stage and then `b` to the end of the buffer: one reservation and a copy
    /// of a length known here (no call to `memcpy`).
    #[inline(never)]
    pub(super) fn flush_full_stage(&mut self, buf: &mut BytesMut, b: u8) {
        buf.reserve(STAGE + 1);
        buf.extend_from_slice(&self.stage);
        buf.put_u8(b);
        self.stage_len = 0;
    }

    /// [`Batch::may_hold`] for a chunk longer than 16 bytes: it has no `}` or `]`, or its
    /// closers may not end the value, as far as the tracker can tell.
    ///
    /// Following the bytes costs several times the test for a closer, and most chunks of
    /// long strings and number arrays have none, so a value's waits begin with the test
    /// alone (a chunk with a closer then ends the wait). Once a closer ended a wait
    /// without ending the value (an edit list has one every few dozen bytes), its later
    /// waits follow every chunk from their start.
    ///
    /// Inlined into [`Splitter::push_slice`](super::Splitter::push_slice), where a
    /// chunk that waits then makes one call (to the tracker), not two.
    #[inline(always)]
    pub(super) fn may_hold_long(&mut self, m: &Machine, buf_len: usize, chunk: &[u8]) -> bool {
        if self.end == 0 {
            if !self.may_hold(m, buf_len) {
                return false;
            }
            if self.follow_value == m.value_start() {
                self.track = Tracker::new(m);
                self.tracked_to = buf_len;
            }
        }
        if self.tracked_to == buf_len {
            if self.track.follow(chunk) {
                self.tracked_to += chunk.len();
                true
            } else {
                false
            }
        } else {
            !scan::has_closer(chunk)
        }
    }

    /// [`Batch::may_hold_long`] out of line, for [`Splitter::push`](super::Splitter::push),
    /// which is inlined into its callers: their code stays as small as it was.
    #[inline(never)]
    pub(super) fn may_hold_long_outlined(
        &mut self,
        m: &Machine,
        buf_len: usize,
        chunk: &[u8],
    ) -> bool {
        self.may_hold_long(m, buf_len, chunk)
    }

    /// A closer ended a wait without ending the value that starts at `value_start`: its
    /// later waits follow their chunks.
    #[inline(always)]
    pub(super) fn follow(&mut self, value_start: u64) {
        self.follow_value = value_start;
    }

    /// The waiting bytes are about to be read: the staged ones are appended, the wait
    /// ends, and where they begin in the buffer is returned.
    #[inline(always)]
    pub(super) fn start_read(&mut self, buf: &mut BytesMut) -> usize {
        if self.stage_len > 0 {
            self.flush_stage(buf);
        }
        self.end = 0;
        self.tracked_to = usize::MAX;
        self.from
    }

    /// Nothing waits any more (the splitter failed, its buffer dropped).
    pub(super) fn clear(&mut self) {
        self.end = 0;
        self.stage_len = 0;
        self.tracked_to = usize::MAX;
    }
}
