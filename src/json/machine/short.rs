//! The short-chunk path of the [`Machine`]: tiny chunks (argument deltas of a few bytes)
//! consumed in one tight loop, with no call and no [`Step`](super::Step) to hand back.
//!
//! [`Machine::run_short`] takes the transitions that happen inside a top-level value and
//! that cannot end it or fail: string content (plain bytes, simple and `\u` escapes, UTF-8
//! sequences), the closing quote of a nested string, numbers up to the byte after them,
//! literals up to their last byte, whitespace, `:` and `,`, a nested container opened or
//! closed. At the first byte that needs more — one that could end the top-level value, a
//! wrong byte, a byte at or past a limit, anything outside a value — it stops *before* that
//! byte and leaves the machine exactly as the byte machine would have left it there, so the
//! byte machine takes over at that byte and every error, offset and value is its own.
//!
//! The checks are the byte machine's: each byte's offset stays below the value limit and,
//! in a string, the string limit (one bound for the loop, tightened when a string starts);
//! a number's bytes below the number limit; an opening bracket within the depth limit.

use super::{
    after_unicode_escape, hex_val, is_ws, number_step, utf8_lead, ByteState, Machine, NumStep,
    LITERALS, PLAIN, SIMPLE_ESCAPE,
};

impl Machine {
    /// Consume the longest prefix of `input` that stays inside the current top-level value
    /// on the transitions listed in the module comment, and return its length (0 when the
    /// machine is not inside a value, or is dead).
    #[inline(always)]
    pub(crate) fn run_short(&mut self, input: &[u8]) -> usize {
        let base = self.pos;
        // Every byte's offset must stay below `check_at` (the value limit and, inside a
        // string, the string limit).
        let lim = (input.len() as u64).min(self.check_at.saturating_sub(base)) as usize;
        // Cut at the bound, so that every index below `input.len()` is known to be in it.
        let mut input = &input[..lim];
        let mut st = self.st;
        let mut i = 0;
        // A state's method gives the next state, or `None` to stop before the byte.
        macro_rules! or_break {
            ($next:expr) => {
                match $next {
                    Some(next) => next,
                    None => break,
                }
            };
        }
        while i < input.len() {
            let b = input[i];
            let next = match st {
                ByteState::Str => {
                    if PLAIN[b as usize] {
                        i += 1;
                        while i < input.len() && PLAIN[input[i] as usize] {
                            i += 1;
                        }
                        continue;
                    }
                    or_break!(self.short_string_byte(b))
                }
                ByteState::Esc => or_break!(self.short_escape(b)),
                ByteState::Utf8 => or_break!(self.short_utf8(b)),
                ByteState::Hex => or_break!(self.short_hex(b)),
                ByteState::LowEsc if b == b'\\' => ByteState::LowU,
                ByteState::LowU if b == b'u' => self.start_hex(true),
                ByteState::Colon => match b {
                    b':' => ByteState::Value,
                    _ if is_ws(b) => st,
                    _ => break,
                },
                ByteState::ObjFirst | ByteState::Key if b == b'"' => {
                    self.in_key = true;
                    input = self.open_string(input, base, i);
                    ByteState::Str
                }
                ByteState::ObjFirst | ByteState::Key => or_break!(self.short_key(st, b)),
                ByteState::Value | ByteState::ArrFirst if b == b'"' => {
                    self.in_key = false;
                    input = self.open_string(input, base, i);
                    ByteState::Str
                }
                ByteState::Value | ByteState::ArrFirst => {
                    or_break!(self.short_value(st, b, base + i as u64))
                }
                ByteState::After => or_break!(self.short_after(b)),
                ByteState::Lit => or_break!(self.short_literal(b)),
                ByteState::NumInt | ByteState::NumFrac | ByteState::NumExp
                    if b.is_ascii_digit() =>
                {
                    // A digit run, every byte below the number limit too.
                    let nlim =
                        (input.len() as u64).min(self.num_limit.saturating_sub(base)) as usize;
                    let digits = &input[..nlim];
                    if i >= digits.len() {
                        break;
                    }
                    i += 1;
                    while i < digits.len() && digits[i].is_ascii_digit() {
                        i += 1;
                    }
                    continue;
                }
                _ if st.is_number() => match number_step(st, b) {
                    NumStep::Next(next) if base + (i as u64) < self.num_limit => next,
                    NumStep::End if self.depth > 0 => {
                        // The number ended before `b`, inside a container: `b` is examined
                        // again after it.
                        self.num_limit = u64::MAX;
                        st = ByteState::After;
                        continue;
                    }
                    _ => break,
                },
                _ => break,
            };
            st = next;
            i += 1;
        }
        self.st = st;
        self.pos = base + i as u64;
        #[cfg(test)]
        {
            self.examined += i as u64;
        }
        i
    }

    /// A byte inside a string that is not plain: the state after it, or `None` where the
    /// byte machine must look (a closing quote that may end the top-level value, a bad
    /// byte).
    #[inline(always)]
    fn short_string_byte(&mut self, b: u8) -> Option<ByteState> {
        match b {
            b'\\' => Some(ByteState::Esc),
            b'"' if self.in_key => {
                self.close_string();
                Some(ByteState::Colon)
            }
            b'"' if self.depth > 0 => {
                self.close_string();
                Some(ByteState::After)
            }
            _ => {
                let (need, lo, hi) = utf8_lead(b)?;
                self.utf8_need = need;
                self.utf8_lo = lo;
                self.utf8_hi = hi;
                Some(ByteState::Utf8)
            }
        }
    }

    /// After `\\`.
    #[inline(always)]
    fn short_escape(&mut self, b: u8) -> Option<ByteState> {
        if SIMPLE_ESCAPE[b as usize] {
            Some(ByteState::Str)
        } else if b == b'u' {
            Some(self.start_hex(false))
        } else {
            None
        }
    }

    /// A `\\u` escape begins (`low`: the second of a surrogate pair).
    #[inline(always)]
    fn start_hex(&mut self, low: bool) -> ByteState {
        self.hex = 0;
        self.hex_n = 0;
        self.low = low;
        ByteState::Hex
    }

    /// A continuation byte of a UTF-8 sequence.
    #[inline(always)]
    fn short_utf8(&mut self, b: u8) -> Option<ByteState> {
        if b < self.utf8_lo || b > self.utf8_hi {
            return None;
        }
        self.utf8_need -= 1;
        self.utf8_lo = 0x80;
        self.utf8_hi = 0xBF;
        Some(if self.utf8_need == 0 {
            ByteState::Str
        } else {
            ByteState::Utf8
        })
    }

    /// A hex digit of a `\\u` escape.
    #[inline(always)]
    fn short_hex(&mut self, b: u8) -> Option<ByteState> {
        let d = hex_val(b)?;
        let hex = (self.hex << 4) | d;
        let next = if self.hex_n < 3 {
            self.hex_n += 1;
            ByteState::Hex
        } else {
            let next = after_unicode_escape(hex, self.low).ok()?;
            self.hex_n = 4;
            next
        };
        self.hex = hex;
        Some(next)
    }

    /// Where a key may come (not its opening quote): an empty nested object's close, or
    /// whitespace.
    #[inline(always)]
    fn short_key(&mut self, st: ByteState, b: u8) -> Option<ByteState> {
        match b {
            b'}' if st == ByteState::ObjFirst && self.depth > 1 => {
                self.depth -= 1;
                Some(ByteState::After)
            }
            _ if is_ws(b) => Some(st),
            _ => None,
        }
    }

    /// Where a value may come (not a string's opening quote), at offset `off`: a number,
    /// a literal or a container begins, an empty nested array closes, or whitespace.
    #[inline(always)]
    fn short_value(&mut self, st: ByteState, b: u8, off: u64) -> Option<ByteState> {
        match b {
            b'1'..=b'9' | b'0' | b'-' => {
                self.num_limit = off.saturating_add(self.limits.max_number_bytes);
                Some(match b {
                    b'-' => ByteState::NumMinus,
                    b'0' => ByteState::NumZero,
                    _ => ByteState::NumInt,
                })
            }
            b't' | b'f' | b'n' => {
                self.lit = match b {
                    b't' => 0,
                    b'f' => 1,
                    _ => 2,
                };
                self.lit_pos = 1;
                Some(ByteState::Lit)
            }
            b'{' | b'[' if self.depth < self.limits.max_depth => Some(self.open_fast(b == b'{')),
            b']' if st == ByteState::ArrFirst && self.depth > 1 => {
                self.depth -= 1;
                Some(ByteState::After)
            }
            _ if is_ws(b) => Some(st),
            _ => None,
        }
    }

    /// After a value inside a container: a comma, a nested container's close, or
    /// whitespace.
    #[inline(always)]
    fn short_after(&mut self, b: u8) -> Option<ByteState> {
        match b {
            b',' => Some(if self.top_is_object() {
                ByteState::Key
            } else {
                ByteState::Value
            }),
            b'}' | b']' if self.depth > 1 && self.top_is_object() == (b == b'}') => {
                self.depth -= 1;
                Some(ByteState::After)
            }
            _ if is_ws(b) => Some(ByteState::After),
            _ => None,
        }
    }

    /// Inside a literal: its next byte, up to its last, which only a nested literal takes
    /// here (a top-level one ends its value).
    #[inline(always)]
    fn short_literal(&mut self, b: u8) -> Option<ByteState> {
        let lit = LITERALS[self.lit as usize];
        if b != lit[self.lit_pos as usize] {
            return None;
        }
        if self.lit_pos as usize + 1 == lit.len() {
            return (self.depth > 0).then_some(ByteState::After);
        }
        self.lit_pos += 1;
        Some(ByteState::Lit)
    }

    /// A string opened at `input[i]` (the caller set `in_key`): set its limit and return
    /// the input cut at the loop's new bound.
    #[inline(always)]
    fn open_string<'a>(&mut self, input: &'a [u8], base: u64, i: usize) -> &'a [u8] {
        let off = base + i as u64;
        self.str_limit = off.saturating_add(1 + self.limits.max_string_bytes);
        self.check_at = self.value_limit.min(self.str_limit);
        &input[..(input.len() as u64).min(self.check_at - base) as usize]
    }

    /// A string closed (not at the top level).
    #[inline(always)]
    fn close_string(&mut self) {
        self.str_limit = u64::MAX;
        self.check_at = self.value_limit;
    }
}
