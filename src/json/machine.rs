//! The byte-level state machine behind [`Splitter`](super::Splitter).
//!
//! # How the machine works
//!
//! JSON's grammar needs a stack only for containers, and each level only needs to know
//! whether it is an array or an object: one bit. Everything else — "inside a string",
//! "after a backslash", "third hex digit of a `\u` escape", "two UTF-8 continuation bytes
//! still due, the next one in `0xA0..=0xBF`", "after the exponent sign" — is a small
//! lexical state ([`ByteState`]) plus a few counters. All of it lives in [`Machine`], so a chunk
//! may end on any byte and the next chunk resumes exactly where the last one stopped.
//!
//! [`Machine::feed`] consumes bytes until one of three things happens:
//!
//! * a top-level value ends: it returns [`Step::Value`] with the value's absolute span and
//!   how many bytes it consumed (so the caller can slice the value out of its chunk and
//!   call again with the rest);
//! * a byte cannot be accepted: [`Step::Fail`], with the byte's absolute offset. The
//!   machine is then dead; the caller fuses;
//! * the input runs out: [`Step::NeedMore`].
//!
//! A number has no closing byte, so a number ends at the first byte that cannot continue
//! it. That byte is not consumed: the machine leaves the number state and the byte is
//! examined again in the state after the number (at the top level, [`ByteState::AfterScalar`],
//! which like serde_json's stream reader insists on whitespace or `{`, `[`, `"` after a
//! top-level number or literal, so `1true` and `truefalse` are errors, not two values).
//! A number that is still open when the stream ends is completed by [`Machine::finish`].
//!
//! Limits are absolute offsets computed when a value, string or number starts
//! (`value_limit`, `str_limit`, `num_limit`): the byte at or past a limit is rejected
//! with its own kind. One exception keeps limits from rejecting valid input: the byte that
//! ends a top-level number is not part of the value, so it is not held against the value's
//! size.
//!
//! Between tokens, with enough input left, [`Machine::feed`] hands over to the token-level
//! path (`fast.rs`), which reads whole tokens and gives the machine back at a token's start
//! or at a safe point inside a string. In this byte machine the runs are fast too: string
//! content (escapes included) is read by the same string scanner from any safe point, and
//! digits in a tight loop, all bounded by the limits. Each byte is examined a bounded number
//! of times (once, except the number delimiter and the few bytes of a token cut by a chunk
//! end), which the `examined` counter checks in the unit tests. [`super::reference`] holds a
//! slower, independent, byte-at-a-time machine that every test runs beside this one.
//!
//! Chunks of a few bytes (argument deltas) first go through [`Machine::run_short`]
//! (`short.rs`): the in-value transitions that cannot end the value or fail, in one inline
//! loop, stopping before any byte that needs this machine.

use super::error::ErrorAt;
use super::{Container, ErrorKind, Lexical, Limits, Mode};

mod fast;
mod short;

pub(super) use fast::{scan_number, scan_string, StrEnd};

/// At least this many input bytes must be left for [`Machine::feed`] to take the
/// token-level path ([`Machine::fast`]); shorter tails go byte by byte.
pub(super) const FAST_MIN: usize = 16;

/// The outcome of one [`Machine::feed`] call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// All input consumed; no value ended at its last byte (one may have started).
    NeedMore,
    /// A top-level value spans `start..end` (absolute offsets).
    Value { start: u64, end: u64 },
    /// The byte at `ErrorAt::offset` could not be accepted.
    Fail(ErrorAt),
}

/// Lexical states. See the module comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ByteState {
    // The between-tokens states come first (see `ByteState::between_tokens`).
    /// Between top-level values.
    Top,
    /// A value must come (after `:` or after `,` in an array).
    Value,
    /// After `[`.
    ArrFirst,
    /// After `{`.
    ObjFirst,
    /// After `,` in an object.
    Key,
    /// After a key.
    Colon,
    /// After a value inside a container.
    After,
    /// Stream start: a BOM may come.
    Start,
    /// Saw `EF` at offset 0.
    Bom1,
    /// Saw `EF BB` at offsets 0 and 1.
    Bom2,
    /// Right after a top-level number or literal.
    AfterScalar,
    /// Inside a string (key or value, see `in_key`).
    Str,
    /// After `\` in a string.
    Esc,
    /// Inside `\uXXXX` (`hex_n` digits read; `low` if this is the second of a pair).
    Hex,
    /// After a high surrogate: `\` must come.
    LowEsc,
    /// After a high surrogate and `\`: `u` must come.
    LowU,
    /// Inside a multi-byte UTF-8 sequence.
    Utf8,
    NumMinus,
    NumZero,
    NumInt,
    NumDot,
    NumFrac,
    NumE,
    NumESign,
    NumExp,
    /// Inside `true` / `false` / `null`.
    Lit,
    /// After a failure.
    Dead,
}

impl ByteState {
    /// The states [`Machine::fast`] starts from.
    #[inline]
    fn between_tokens(self) -> bool {
        (self as u8) <= ByteState::After as u8
    }
    fn is_number(self) -> bool {
        matches!(
            self,
            ByteState::NumMinus
                | ByteState::NumZero
                | ByteState::NumInt
                | ByteState::NumDot
                | ByteState::NumFrac
                | ByteState::NumE
                | ByteState::NumESign
                | ByteState::NumExp
        )
    }
    fn is_string(self) -> bool {
        matches!(
            self,
            ByteState::Str
                | ByteState::Esc
                | ByteState::Hex
                | ByteState::LowEsc
                | ByteState::LowU
                | ByteState::Utf8
        )
    }
}

const LITERALS: [&[u8]; 3] = [b"true", b"false", b"null"];

/// `PLAIN[b]` is true for bytes that need no attention inside a string: printable ASCII
/// other than `"` and `\`.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 0x80 {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Each byte's value as a hex digit, or `0xFF`.
static HEX: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut k = 0;
    while k < 10 {
        t[b'0' as usize + k] = k as u8;
        k += 1;
    }
    k = 0;
    while k < 6 {
        t[b'a' as usize + k] = 10 + k as u8;
        t[b'A' as usize + k] = 10 + k as u8;
        k += 1;
    }
    t
};

#[inline]
fn hex_val(b: u8) -> Option<u16> {
    let v = HEX[b as usize];
    (v != 0xFF).then_some(v as u16)
}

/// A UTF-8 lead byte: how many continuation bytes follow, and the range of the first one
/// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
#[inline(always)]
fn utf8_lead(b: u8) -> Option<(u8, u8, u8)> {
    Some(match b {
        0xC2..=0xDF => (1, 0x80, 0xBF),
        0xE0 => (2, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF),
        0xED => (2, 0x80, 0x9F),
        0xF0 => (3, 0x90, 0xBF),
        0xF1..=0xF3 => (3, 0x80, 0xBF),
        0xF4 => (3, 0x80, 0x8F),
        _ => return None,
    })
}

/// The state after the fourth hex digit of a `\u` escape of `cp` (`low`: the escape is the
/// second half of a surrogate pair), or what is wrong with it.
#[inline]
fn after_unicode_escape(cp: u16, low: bool) -> Result<ByteState, &'static str> {
    let is_high = (0xD800..=0xDBFF).contains(&cp);
    let is_low = (0xDC00..=0xDFFF).contains(&cp);
    match (low, is_high, is_low) {
        (true, _, true) | (false, false, false) => Ok(ByteState::Str),
        (true, _, false) => Err("high surrogate not followed by a low surrogate"),
        (false, true, _) => Ok(ByteState::LowEsc),
        (false, false, true) => Err("unpaired low surrogate"),
    }
}

/// A byte in a number state, by the number grammar alone (limits are the caller's).
#[derive(Clone, Copy)]
enum NumStep {
    /// The byte continues the number in this state.
    Next(ByteState),
    /// The number ended before the byte (which belongs to what follows).
    End,
    /// The byte cannot follow: what is wrong.
    Bad(&'static str),
}

#[inline(always)]
fn number_step(st: ByteState, b: u8) -> NumStep {
    use NumStep::*;
    match (st, b) {
        (ByteState::NumMinus, b'0') => Next(ByteState::NumZero),
        (ByteState::NumMinus, b'1'..=b'9') => Next(ByteState::NumInt),
        (ByteState::NumMinus, _) => Bad("expected a digit after '-'"),
        (ByteState::NumZero, b'0'..=b'9') => Bad("leading zero in number"),
        (ByteState::NumZero | ByteState::NumInt, b'.') => Next(ByteState::NumDot),
        (ByteState::NumZero | ByteState::NumInt | ByteState::NumFrac, b'e' | b'E') => {
            Next(ByteState::NumE)
        }
        (ByteState::NumInt, b'0'..=b'9') => Next(ByteState::NumInt),
        (ByteState::NumDot, b'0'..=b'9') => Next(ByteState::NumFrac),
        (ByteState::NumDot, _) => Bad("expected a digit after '.'"),
        (ByteState::NumFrac, b'0'..=b'9') => Next(ByteState::NumFrac),
        (ByteState::NumE, b'+' | b'-') => Next(ByteState::NumESign),
        (ByteState::NumE | ByteState::NumESign | ByteState::NumExp, b'0'..=b'9') => {
            Next(ByteState::NumExp)
        }
        (ByteState::NumE | ByteState::NumESign, _) => Bad("expected a digit in the exponent"),
        // NumZero, NumInt, NumFrac, NumExp and a byte that cannot continue: the end.
        _ => End,
    }
}

/// Bytes that may follow a backslash as a complete two-byte escape.
static SIMPLE_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let simple = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < simple.len() {
        t[simple[k] as usize] = true;
        k += 1;
    }
    t
};

/// The state machine. See the module comment.
#[derive(Clone, Debug)]
pub(crate) struct Machine {
    mode: Mode,
    limits: Limits,
    st: ByteState,
    /// Absolute offset of the next byte to examine.
    pos: u64,
    /// One bit per open container, 1 = object. Level `d` is bit `d % 64` of word `d / 64`.
    stack: Vec<u64>,
    depth: u32,
    in_key: bool,
    value_start: u64,
    value_limit: u64,
    str_limit: u64,
    /// `min(value_limit, str_limit)`: one compare per byte finds when either may apply.
    check_at: u64,
    num_limit: u64,
    hex: u16,
    hex_n: u8,
    low: bool,
    utf8_need: u8,
    utf8_lo: u8,
    utf8_hi: u8,
    lit: u8,
    lit_pos: u8,
    values: u64,
    /// Whether the machine was inside a value when it failed.
    failed_in_value: bool,
    #[cfg(test)]
    pub(crate) examined: u64,
}

type Out = Result<Option<Step>, ErrorAt>;

impl Machine {
    pub(crate) fn new(mode: Mode, limits: Limits) -> Self {
        Machine {
            mode,
            limits,
            st: ByteState::Start,
            pos: 0,
            stack: Vec::new(),
            depth: 0,
            in_key: false,
            value_start: 0,
            value_limit: u64::MAX,
            str_limit: u64::MAX,
            check_at: u64::MAX,
            num_limit: u64::MAX,
            hex: 0,
            hex_n: 0,
            low: false,
            utf8_need: 0,
            utf8_lo: 0,
            utf8_hi: 0,
            lit: 0,
            lit_pos: 0,
            values: 0,
            failed_in_value: false,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Absolute offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.pos
    }

    /// Number of top-level values completed.
    pub(crate) fn values(&self) -> u64 {
        self.values
    }

    /// Whether a top-level value has started and not ended.
    pub(crate) fn in_value(&self) -> bool {
        !matches!(
            self.st,
            ByteState::Start
                | ByteState::Bom1
                | ByteState::Bom2
                | ByteState::Top
                | ByteState::AfterScalar
                | ByteState::Dead
        )
    }

    /// Whether the machine is inside a container (and alive): a top-level value can then
    /// end only at a `}` or `]` byte, so bytes without either may wait (see
    /// `Splitter::push`).
    #[inline(always)]
    pub(crate) fn in_container(&self) -> bool {
        self.depth > 0 && self.st != ByteState::Dead
    }

    /// Where the machine stands for a tracker of strings: inside a string's content, and
    /// whether the next byte is escaped (it follows a backslash that starts an escape).
    pub(crate) fn string_state(&self) -> (bool, bool) {
        match self.st {
            ByteState::Str | ByteState::Hex | ByteState::LowEsc | ByteState::Utf8 => (true, false),
            ByteState::Esc | ByteState::LowU => (true, true),
            _ => (false, false),
        }
    }

    /// Whether the machine was inside a value when it failed.
    pub(crate) fn failed_in_value(&self) -> bool {
        self.failed_in_value
    }

    /// Absolute offset of the first byte of the current value (meaningful when `in_value`).
    pub(crate) fn value_start(&self) -> u64 {
        self.value_start
    }

    pub(crate) fn depth(&self) -> usize {
        self.depth as usize
    }

    /// The container at `level` (0 = outermost), if open.
    pub(crate) fn container(&self, level: usize) -> Option<Container> {
        if level >= self.depth as usize {
            return None;
        }
        let bit = (self.stack[level / 64] >> (level % 64)) & 1;
        Some(if bit == 1 {
            Container::Object
        } else {
            Container::Array
        })
    }

    pub(crate) fn lexical(&self) -> Lexical {
        match self.st {
            ByteState::Start
            | ByteState::Bom1
            | ByteState::Bom2
            | ByteState::Top
            | ByteState::AfterScalar
            | ByteState::Dead => Lexical::BetweenValues,
            ByteState::Value => Lexical::ExpectingValue,
            ByteState::ArrFirst => Lexical::ArrayStart,
            ByteState::ObjFirst => Lexical::ObjectStart,
            ByteState::Key => Lexical::ExpectingKey,
            ByteState::Colon => Lexical::ExpectingColon,
            ByteState::After => Lexical::AfterValue,
            s if s.is_string() => {
                if self.in_key {
                    Lexical::InKey
                } else {
                    Lexical::InString
                }
            }
            ByteState::Lit => Lexical::InLiteral,
            _ => Lexical::InNumber,
        }
    }

    #[inline]
    fn top_is_object(&self) -> bool {
        let level = self.depth as usize - 1;
        (self.stack[level / 64] >> (level % 64)) & 1 == 1
    }

    #[cold]
    fn fail(&mut self, kind: ErrorKind, offset: u64, detail: &'static str) -> ErrorAt {
        self.failed_in_value = self.in_value();
        self.st = ByteState::Dead;
        ErrorAt {
            kind,
            offset,
            detail,
        }
    }

    /// Push a container (`object` or array) opened at `off`.
    #[inline]
    fn open(&mut self, object: bool, off: u64) -> Result<(), ErrorAt> {
        if self.depth >= self.limits.max_depth {
            return Err(self.fail(ErrorKind::DepthLimit, off, "nesting too deep"));
        }
        self.push_level(object);
        Ok(())
    }

    /// A value ended; `end` is the absolute offset just past it. At depth 0 it is a
    /// top-level value.
    #[inline]
    fn value_done(&mut self, end: u64, scalar: bool) -> Option<Step> {
        if self.depth == 0 {
            self.st = if scalar {
                ByteState::AfterScalar
            } else {
                ByteState::Top
            };
            self.values += 1;
            self.value_limit = u64::MAX;
            self.check_at = self.value_limit.min(self.str_limit);
            Some(Step::Value {
                start: self.value_start,
                end,
            })
        } else {
            self.st = ByteState::After;
            None
        }
    }

    /// Start a value whose first byte is `b` at `off` (state is one that expects a value).
    #[inline(always)]
    fn begin_value(&mut self, b: u8, off: u64) -> Out {
        match b {
            b'{' => {
                self.open(true, off)?;
                self.st = ByteState::ObjFirst;
            }
            b'[' => {
                self.open(false, off)?;
                self.st = ByteState::ArrFirst;
            }
            b'"' => {
                self.st = ByteState::Str;
                self.in_key = false;
                self.str_limit = off.saturating_add(1 + self.limits.max_string_bytes);
                self.check_at = self.value_limit.min(self.str_limit);
            }
            b'-' | b'0'..=b'9' => {
                self.st = match b {
                    b'-' => ByteState::NumMinus,
                    b'0' => ByteState::NumZero,
                    _ => ByteState::NumInt,
                };
                self.num_limit = off.saturating_add(self.limits.max_number_bytes);
            }
            b't' | b'f' | b'n' => {
                self.st = ByteState::Lit;
                self.lit = match b {
                    b't' => 0,
                    b'f' => 1,
                    _ => 2,
                };
                self.lit_pos = 1;
            }
            _ => return Err(self.fail(ErrorKind::Syntax, off, "expected a JSON value")),
        }
        Ok(None)
    }

    /// Begin a top-level value at `off` (the byte is not whitespace).
    #[inline]
    fn begin_top(&mut self, b: u8, off: u64) -> Out {
        if self.mode == Mode::Objects && b != b'{' {
            return Err(match b {
                b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => self.fail(
                    ErrorKind::NotAnObject,
                    off,
                    "top-level value is not an object",
                ),
                _ => self.fail(ErrorKind::Syntax, off, "expected an object"),
            });
        }
        self.value_start = off;
        self.value_limit = off.saturating_add(self.limits.max_value_bytes);
        self.check_at = self.value_limit.min(self.str_limit);
        self.begin_value(b, off)
    }

    /// Consume bytes from `input`. Returns the outcome and the number of bytes consumed.
    #[inline(always)]
    pub(crate) fn feed(&mut self, input: &[u8]) -> (Step, usize) {
        self.feed_with::<true>(input)
    }

    /// [`Machine::feed`], with the token-level path only when `TOKENS`: an input shorter
    /// than [`FAST_MIN`] never takes it, and leaving it out keeps the byte loop's code
    /// (and its caller's frame) small for tiny chunks.
    #[inline(always)]
    pub(crate) fn feed_with<const TOKENS: bool>(&mut self, input: &[u8]) -> (Step, usize) {
        let base = self.pos;
        let n = input.len();
        let mut i = 0;
        if TOKENS && n >= FAST_MIN && self.st.between_tokens() {
            let (step, j) = self.fast(input, base, 0);
            if let Some(step) = step {
                self.pos = base + j as u64;
                return (step, j);
            }
            i = j;
        }
        while i < n {
            let b = input[i];
            let off = base + i as u64;
            #[cfg(test)]
            {
                self.examined += 1;
            }
            if off >= self.check_at {
                if let Some(f) = self.limit_check(b, off) {
                    self.pos = off;
                    return (Step::Fail(f), i);
                }
            }
            // `consume` is false only when a number ends at `b`, which is examined again.
            let mut consume = true;
            let r = match self.st {
                ByteState::Str => {
                    if b != b'"' && b >= 0x20 {
                        let j = self.string_content_end(input, i, off);
                        if j > i {
                            #[cfg(test)]
                            {
                                self.examined += (j - i - 1) as u64;
                            }
                            i = j;
                            continue;
                        }
                    }
                    self.string_byte(b, off)
                }
                ByteState::Top | ByteState::Start => self.top_byte(b, off),
                ByteState::Bom1 | ByteState::Bom2 => self.bom_byte(b, off),
                ByteState::AfterScalar => self.after_scalar_byte(b, off),
                ByteState::Value => self.value_byte(b, off),
                ByteState::ArrFirst => self.array_first_byte(b, off),
                ByteState::ObjFirst | ByteState::Key => self.key_byte(b, off),
                ByteState::Colon => self.colon_byte(b, off),
                ByteState::After => self.after_value_byte(b, off),
                ByteState::Esc => self.escape_byte(b, off),
                ByteState::Hex => self.hex_digit(b, off),
                ByteState::LowEsc | ByteState::LowU => self.low_surrogate_byte(b, off),
                ByteState::Utf8 => self.utf8_byte(b, off),
                ByteState::Lit => self.literal_byte(b, off),
                ByteState::Dead => Err(ErrorAt {
                    kind: ErrorKind::Syntax,
                    offset: off,
                    detail: "splitter already failed",
                }),
                ByteState::NumMinus
                | ByteState::NumZero
                | ByteState::NumInt
                | ByteState::NumDot
                | ByteState::NumFrac
                | ByteState::NumE
                | ByteState::NumESign
                | ByteState::NumExp => match self.number_byte(b, off) {
                    // Digits run on: take them in one go (bounded by both limits).
                    Ok(true)
                        if matches!(
                            self.st,
                            ByteState::NumInt | ByteState::NumFrac | ByteState::NumExp
                        ) =>
                    {
                        let j = self.digits_end(input, i, off);
                        #[cfg(test)]
                        {
                            self.examined += (j - i - 1) as u64;
                        }
                        i = j;
                        continue;
                    }
                    Ok(true) => Ok(None),
                    Ok(false) => {
                        consume = false;
                        Ok(self.value_done(off, true))
                    }
                    Err(f) => Err(f),
                },
            };
            match r {
                Ok(None) => {
                    if consume {
                        i += 1;
                    }
                    // Back to the token-level path once a token is done.
                    if TOKENS && self.st.between_tokens() && n - i >= FAST_MIN {
                        let (step, j) = self.fast(input, base, i);
                        if let Some(step) = step {
                            self.pos = base + j as u64;
                            return (step, j);
                        }
                        i = j;
                    }
                }
                Ok(Some(step)) => {
                    if consume {
                        i += 1;
                    }
                    self.pos = base + i as u64;
                    return (step, i);
                }
                Err(f) => {
                    self.pos = off;
                    return (Step::Fail(f), i);
                }
            }
        }
        self.pos = base + n as u64;
        (Step::NeedMore, n)
    }

    /// The end of a run of string content from `i` (escapes included), read by the token
    /// path's scanner from this safe point: bounded by the input and both limits. It stops
    /// at the closing quote or at a safe point before whatever the byte machine must look
    /// at itself; `i` when there is no run.
    #[inline(always)]
    fn string_content_end(&self, input: &[u8], i: usize, off: u64) -> usize {
        let room = self.str_limit.min(self.value_limit) - off;
        let end = (input.len() as u64).min(i as u64 + room) as usize;
        // Most of a window or more: the scanner's 16-byte windows, the last one reaching
        // back over bytes already read (the input has 16 before `end`). Fewer bytes, or a
        // shorter input: plain bytes inline, the rest byte by byte.
        if end >= 16 && end - i >= 12 {
            string_run(input, i, end)
        } else {
            let mut j = i;
            while j < end && PLAIN[input[j] as usize] {
                j += 1;
            }
            j
        }
    }

    /// The end of the digits that follow the one at `i`, bounded by both limits.
    #[inline(always)]
    fn digits_end(&self, input: &[u8], i: usize, off: u64) -> usize {
        let room = self.num_limit.min(self.value_limit) - off;
        let end = (input.len() as u64).min(i as u64 + room) as usize;
        let mut j = i + 1;
        while j < end && input[j].is_ascii_digit() {
            j += 1;
        }
        j
    }

    /// Between top-level values, or at the stream's start.
    #[inline(always)]
    fn top_byte(&mut self, b: u8, off: u64) -> Out {
        if is_ws(b) {
            self.st = ByteState::Top;
            Ok(None)
        } else if b == 0xEF && off == 0 {
            self.st = ByteState::Bom1;
            Ok(None)
        } else {
            self.st = ByteState::Top;
            self.begin_top(b, off)
        }
    }

    /// Inside a byte order mark.
    #[inline(always)]
    fn bom_byte(&mut self, b: u8, off: u64) -> Out {
        let want = if self.st == ByteState::Bom1 {
            0xBB
        } else {
            0xBF
        };
        if b != want {
            return Err(self.fail(ErrorKind::Syntax, off, "incomplete byte order mark"));
        }
        self.st = if self.st == ByteState::Bom1 {
            ByteState::Bom2
        } else {
            ByteState::Top
        };
        Ok(None)
    }

    /// Right after a top-level number or literal: whitespace or a value that cannot be
    /// read as its continuation.
    #[inline(always)]
    fn after_scalar_byte(&mut self, b: u8, off: u64) -> Out {
        if is_ws(b) {
            self.st = ByteState::Top;
            Ok(None)
        } else if matches!(b, b'{' | b'[' | b'"') {
            self.st = ByteState::Top;
            self.begin_top(b, off)
        } else {
            Err(self.fail(
                ErrorKind::Syntax,
                off,
                "expected whitespace after a top-level number or literal",
            ))
        }
    }

    /// Where a value must come.
    #[inline(always)]
    fn value_byte(&mut self, b: u8, off: u64) -> Out {
        if is_ws(b) {
            Ok(None)
        } else {
            self.begin_value(b, off)
        }
    }

    /// After `[`: a value or `]`.
    #[inline(always)]
    fn array_first_byte(&mut self, b: u8, off: u64) -> Out {
        if is_ws(b) {
            Ok(None)
        } else if b == b']' {
            self.depth -= 1;
            Ok(self.value_done(off + 1, false))
        } else {
            self.begin_value(b, off)
        }
    }

    /// After `{` (a key or `}`) or after `,` in an object (a key).
    #[inline(always)]
    fn key_byte(&mut self, b: u8, off: u64) -> Out {
        if is_ws(b) {
            Ok(None)
        } else if b == b'"' {
            self.st = ByteState::Str;
            self.in_key = true;
            self.str_limit = off.saturating_add(1 + self.limits.max_string_bytes);
            self.check_at = self.value_limit.min(self.str_limit);
            Ok(None)
        } else if b == b'}' && self.st == ByteState::ObjFirst {
            self.depth -= 1;
            Ok(self.value_done(off + 1, false))
        } else if self.st == ByteState::ObjFirst {
            Err(self.fail(ErrorKind::Syntax, off, "expected a string key or '}'"))
        } else {
            Err(self.fail(ErrorKind::Syntax, off, "expected a string key"))
        }
    }

    /// After a key: `:`.
    #[inline(always)]
    fn colon_byte(&mut self, b: u8, off: u64) -> Out {
        if is_ws(b) {
            Ok(None)
        } else if b == b':' {
            self.st = ByteState::Value;
            Ok(None)
        } else {
            Err(self.fail(ErrorKind::Syntax, off, "expected ':' after an object key"))
        }
    }

    /// After a value inside a container: `,` or the container's close.
    #[inline(always)]
    fn after_value_byte(&mut self, b: u8, off: u64) -> Out {
        let object = self.top_is_object();
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => Ok(None),
            b',' => {
                self.st = if object {
                    ByteState::Key
                } else {
                    ByteState::Value
                };
                Ok(None)
            }
            b'}' if object => {
                self.depth -= 1;
                Ok(self.value_done(off + 1, false))
            }
            b']' if !object => {
                self.depth -= 1;
                Ok(self.value_done(off + 1, false))
            }
            _ if object => Err(self.fail(ErrorKind::Syntax, off, "expected ',' or '}'")),
            _ => Err(self.fail(ErrorKind::Syntax, off, "expected ',' or ']'")),
        }
    }

    /// After `\` in a string.
    #[inline(always)]
    fn escape_byte(&mut self, b: u8, off: u64) -> Out {
        match b {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.st = ByteState::Str;
                Ok(None)
            }
            b'u' => {
                self.st = ByteState::Hex;
                self.hex = 0;
                self.hex_n = 0;
                self.low = false;
                Ok(None)
            }
            _ => Err(self.fail(ErrorKind::InvalidEscape, off, "unknown escape")),
        }
    }

    /// After a high surrogate: `\` then `u` must come.
    #[inline(always)]
    fn low_surrogate_byte(&mut self, b: u8, off: u64) -> Out {
        if self.st == ByteState::LowEsc && b == b'\\' {
            self.st = ByteState::LowU;
            Ok(None)
        } else if self.st == ByteState::LowU && b == b'u' {
            self.st = ByteState::Hex;
            self.hex = 0;
            self.hex_n = 0;
            self.low = true;
            Ok(None)
        } else {
            Err(self.fail(ErrorKind::InvalidEscape, off, "unpaired high surrogate"))
        }
    }

    /// A continuation byte of a multi-byte UTF-8 sequence.
    #[inline(always)]
    fn utf8_byte(&mut self, b: u8, off: u64) -> Out {
        if b < self.utf8_lo || b > self.utf8_hi {
            return Err(self.fail(
                ErrorKind::InvalidUtf8,
                off,
                "invalid UTF-8 continuation byte",
            ));
        }
        self.utf8_need -= 1;
        self.utf8_lo = 0x80;
        self.utf8_hi = 0xBF;
        if self.utf8_need == 0 {
            self.st = ByteState::Str;
        }
        Ok(None)
    }

    /// Inside `true`, `false` or `null`.
    #[inline(always)]
    fn literal_byte(&mut self, b: u8, off: u64) -> Out {
        let lit = LITERALS[self.lit as usize];
        if b != lit[self.lit_pos as usize] {
            return Err(self.fail(ErrorKind::Syntax, off, "invalid literal"));
        }
        self.lit_pos += 1;
        if self.lit_pos as usize == lit.len() {
            Ok(self.value_done(off + 1, true))
        } else {
            Ok(None)
        }
    }

    /// The value and string limits, for a byte at or past `check_at`.
    #[cold]
    fn limit_check(&mut self, b: u8, off: u64) -> Option<ErrorAt> {
        if off >= self.value_limit && !(self.depth == 0 && self.st.is_number()) {
            return Some(self.fail(
                ErrorKind::ValueTooLarge,
                off,
                "value exceeds max_value_bytes",
            ));
        }
        if off >= self.str_limit && self.st.is_string() && !(self.st == ByteState::Str && b == b'"')
        {
            return Some(self.fail(
                ErrorKind::StringTooLong,
                off,
                "string exceeds max_string_bytes",
            ));
        }
        None
    }

    /// A non-plain byte inside a string.
    #[inline(always)]
    fn string_byte(&mut self, b: u8, off: u64) -> Out {
        match b {
            b'"' => {
                self.str_limit = u64::MAX;
                self.check_at = self.value_limit.min(self.str_limit);
                if self.in_key {
                    self.st = ByteState::Colon;
                    Ok(None)
                } else {
                    Ok(self.value_done(off + 1, false))
                }
            }
            b'\\' => {
                self.st = ByteState::Esc;
                Ok(None)
            }
            0x00..=0x1F => Err(self.fail(
                ErrorKind::ControlCharacter,
                off,
                "raw control character in string",
            )),
            _ => {
                let Some((need, lo, hi)) = utf8_lead(b) else {
                    return Err(self.fail(ErrorKind::InvalidUtf8, off, "invalid UTF-8 lead byte"));
                };
                self.st = ByteState::Utf8;
                self.utf8_need = need;
                self.utf8_lo = lo;
                self.utf8_hi = hi;
                Ok(None)
            }
        }
    }

    #[inline]
    fn hex_digit(&mut self, b: u8, off: u64) -> Out {
        let Some(d) = hex_val(b) else {
            return Err(self.fail(
                ErrorKind::InvalidEscape,
                off,
                "invalid hex digit in \\u escape",
            ));
        };
        self.hex = (self.hex << 4) | d;
        self.hex_n += 1;
        if self.hex_n < 4 {
            return Ok(None);
        }
        match after_unicode_escape(self.hex, self.low) {
            Ok(st) => {
                self.st = st;
                Ok(None)
            }
            Err(detail) => Err(self.fail(ErrorKind::InvalidEscape, off, detail)),
        }
    }

    /// A byte in a number state. `Ok(true)`: consumed; `Ok(false)`: the number ended
    /// before this byte.
    #[inline(always)]
    fn number_byte(&mut self, b: u8, off: u64) -> Result<bool, ErrorAt> {
        let next = match number_step(self.st, b) {
            NumStep::Next(st) => st,
            NumStep::End => {
                self.num_limit = u64::MAX;
                return Ok(false);
            }
            NumStep::Bad(detail) => {
                return Err(self.fail(ErrorKind::InvalidNumber, off, detail));
            }
        };
        if off >= self.value_limit {
            return Err(self.fail(
                ErrorKind::ValueTooLarge,
                off,
                "value exceeds max_value_bytes",
            ));
        }
        if off >= self.num_limit {
            return Err(self.fail(
                ErrorKind::NumberTooLong,
                off,
                "number exceeds max_number_bytes",
            ));
        }
        self.st = next;
        Ok(true)
    }

    /// End of stream. A complete top-level number still open is returned as a value.
    pub(crate) fn finish(&mut self) -> Result<Option<(u64, u64)>, ErrorAt> {
        let end = self.pos;
        match self.st {
            ByteState::Start | ByteState::Top | ByteState::AfterScalar => Ok(None),
            ByteState::Dead => Err(ErrorAt {
                kind: ErrorKind::Syntax,
                offset: end,
                detail: "splitter already failed",
            }),
            ByteState::NumZero | ByteState::NumInt | ByteState::NumFrac | ByteState::NumExp
                if self.depth == 0 =>
            {
                self.st = ByteState::Top;
                self.values += 1;
                self.value_limit = u64::MAX;
                self.check_at = self.value_limit.min(self.str_limit);
                Ok(Some((self.value_start, end)))
            }
            ByteState::Bom1 | ByteState::Bom2 => Err(self.fail(
                ErrorKind::Truncated,
                end,
                "stream ended inside a byte order mark",
            )),
            _ => {
                let detail = match self.lexical() {
                    Lexical::InString => "stream ended inside a string",
                    Lexical::InKey => "stream ended inside an object key",
                    Lexical::InNumber => "stream ended inside a number",
                    Lexical::InLiteral => "stream ended inside true, false or null",
                    _ => "stream ended inside a container",
                };
                Err(self.fail(ErrorKind::Truncated, end, detail))
            }
        }
    }
}

impl Machine {
    /// A chunk of at least a window that starts inside a string's content (the machine in
    /// [`ByteState::Str`], at a safe point): its string content read by the token path's scanner
    /// straight from the push, without entering the byte machine. Returns how many bytes
    /// were consumed (0 in any other state): the scan stops before the closing quote,
    /// before whatever the byte machine must look at itself (an escape or UTF-8 sequence
    /// cut by the chunk's end, a wrong byte), and before any byte at or past the value or
    /// string limit, so the byte machine takes the rest exactly as if it had read these
    /// bytes itself.
    #[inline]
    pub(crate) fn run_string(&mut self, input: &[u8]) -> usize {
        if self.st != ByteState::Str {
            return 0;
        }
        // Inside a string `check_at` is the lower of the value and string limits.
        let bound = (input.len() as u64).min(self.check_at.saturating_sub(self.pos)) as usize;
        if bound < 16 {
            return 0;
        }
        // 64 bytes or more into its content, a string is likely to go on for a while (a
        // file's contents, say): with a block of room, the scan starts with whole blocks.
        let long = bound >= 64 && {
            let start = self.str_limit - 1 - self.limits.max_string_bytes.min(self.str_limit - 1);
            self.pos.saturating_sub(start) > 64
        };
        let j = if long {
            continued_string_run(input, bound)
        } else {
            string_run(input, 0, bound)
        };
        self.pos += j as u64;
        #[cfg(test)]
        {
            self.examined += j as u64;
        }
        j
    }
}

/// A run of string content from the safe point `i` (with at least 16 bytes of `input`
/// before `end`), for the byte machine: the index of the closing quote, or of the safe
/// point where the byte machine must look itself. Out of line, so the byte loop stays
/// small.
#[inline(never)]
fn string_run(input: &[u8], i: usize, end: usize) -> usize {
    match scan_string::<true>(input, i, end) {
        StrEnd::Closed(q, _) | StrEnd::Stop(q) => q,
    }
}

/// [`string_run`] from a chunk's start inside a long string (at least a block before
/// `end`): straight to whole 64-byte blocks, since the content is likely to go on.
#[inline(never)]
fn continued_string_run(input: &[u8], end: usize) -> usize {
    match fast::scan_string_long::<true>(input, 0, 0, false, false, end) {
        StrEnd::Closed(q, _) | StrEnd::Stop(q) => q,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_chunked(input: &[u8], chunk: usize) -> (u64, usize) {
        let mut m = Machine::new(Mode::Any, Limits::default());
        let mut values = 0;
        for c in input.chunks(chunk) {
            let mut rest = c;
            loop {
                let (step, used) = m.feed(rest);
                rest = &rest[used..];
                match step {
                    Step::NeedMore => break,
                    Step::Value { .. } => values += 1,
                    Step::Fail(f) => panic!("unexpected failure {f:?}"),
                }
            }
        }
        assert_eq!(m.finish(), Ok(None));
        (m.examined, values)
    }

    /// Invariant 2 (linear work): a 1 MiB object fed one byte at a time examines each byte
    /// a small constant number of times.
    #[test]
    fn one_mib_object_in_one_byte_chunks_examines_each_byte_about_once() {
        let mut doc = String::from("{\"files\":[");
        let mut k = 0;
        while doc.len() < (1 << 20) {
            if k > 0 {
                doc.push(',');
            }
            doc.push_str(&format!(
                "{{\"path\":\"src/f{k}.rs\",\"n\":{k}.5e3,\"ok\":true,\"body\":\"fn main() {{ println!(\\\"hi \\u00e9 é\\\"); }}\\n\"}}"
            ));
            k += 1;
        }
        doc.push_str("]}");
        let bytes = doc.as_bytes();
        for chunk in [1, 7, 64, bytes.len()] {
            let (examined, values) = run_chunked(bytes, chunk);
            assert_eq!(values, 1);
            // Every byte once, plus at most one re-examination per number delimiter.
            assert!(
                examined <= bytes.len() as u64 * 11 / 10,
                "chunk {chunk}: examined {examined} for {} bytes",
                bytes.len()
            );
            assert!(examined >= bytes.len() as u64);
        }
    }

    #[test]
    fn depth_bits_survive_past_64_levels() {
        let mut m = Machine::new(Mode::Any, Limits::default());
        let mut doc = Vec::new();
        for d in 0..100 {
            doc.extend_from_slice(if d % 3 == 0 { b"{\"k\":" } else { b"[" });
        }
        assert_eq!(m.feed(&doc).0, Step::NeedMore);
        assert_eq!(m.depth(), 100);
        for d in 0..100 {
            let want = if d % 3 == 0 {
                Container::Object
            } else {
                Container::Array
            };
            assert_eq!(m.container(d), Some(want), "level {d}");
        }
        assert_eq!(m.container(100), None);
    }
}
