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
    after_unicode_escape, hex_val, is_ws, number_step, utf8_lead, Machine, NumStep, St, LITERALS,
    PLAIN, SIMPLE_ESCAPE,
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
        while i < input.len() {
            let b = input[i];
            match st {
                St::Str => {
                    if PLAIN[b as usize] {
                        i += 1;
                        while i < input.len() && PLAIN[input[i] as usize] {
                            i += 1;
                        }
                        continue;
                    }
                    match b {
                        b'\\' => st = St::Esc,
                        b'"' if self.in_key => {
                            st = St::Colon;
                            self.close_string();
                        }
                        b'"' if self.depth > 0 => {
                            st = St::After;
                            self.close_string();
                        }
                        _ => match utf8_lead(b) {
                            Some((need, lo, hi)) => {
                                st = St::Utf8;
                                self.utf8_need = need;
                                self.utf8_lo = lo;
                                self.utf8_hi = hi;
                            }
                            None => break,
                        },
                    }
                }
                St::Esc => {
                    if SIMPLE_ESCAPE[b as usize] {
                        st = St::Str;
                    } else if b == b'u' {
                        st = St::Hex;
                        self.hex = 0;
                        self.hex_n = 0;
                        self.low = false;
                    } else {
                        break;
                    }
                }
                St::Utf8 => {
                    if b < self.utf8_lo || b > self.utf8_hi {
                        break;
                    }
                    self.utf8_need -= 1;
                    self.utf8_lo = 0x80;
                    self.utf8_hi = 0xBF;
                    if self.utf8_need == 0 {
                        st = St::Str;
                    }
                }
                St::Hex => {
                    let Some(d) = hex_val(b) else { break };
                    let hex = (self.hex << 4) | d;
                    if self.hex_n < 3 {
                        self.hex_n += 1;
                    } else {
                        let Ok(next) = after_unicode_escape(hex, self.low) else {
                            break;
                        };
                        st = next;
                        self.hex_n = 4;
                    }
                    self.hex = hex;
                }
                St::LowEsc if b == b'\\' => st = St::LowU,
                St::LowU if b == b'u' => {
                    st = St::Hex;
                    self.hex = 0;
                    self.hex_n = 0;
                    self.low = true;
                }
                St::Colon => match b {
                    b':' => st = St::Value,
                    _ if is_ws(b) => {}
                    _ => break,
                },
                St::ObjFirst | St::Key => match b {
                    b'"' => {
                        st = St::Str;
                        self.in_key = true;
                        input = self.open_string(input, base, i);
                    }
                    b'}' if st == St::ObjFirst && self.depth > 1 => {
                        self.depth -= 1;
                        st = St::After;
                    }
                    _ if is_ws(b) => {}
                    _ => break,
                },
                St::Value | St::ArrFirst => match b {
                    b'"' => {
                        st = St::Str;
                        self.in_key = false;
                        input = self.open_string(input, base, i);
                    }
                    b'1'..=b'9' | b'0' | b'-' => {
                        st = match b {
                            b'-' => St::NumMinus,
                            b'0' => St::NumZero,
                            _ => St::NumInt,
                        };
                        self.num_limit =
                            (base + i as u64).saturating_add(self.limits.max_number_bytes);
                    }
                    b't' | b'f' | b'n' => {
                        st = St::Lit;
                        self.lit = match b {
                            b't' => 0,
                            b'f' => 1,
                            _ => 2,
                        };
                        self.lit_pos = 1;
                    }
                    b'{' | b'[' => {
                        if self.depth >= self.limits.max_depth {
                            break;
                        }
                        st = self.open_fast(b == b'{');
                    }
                    b']' if st == St::ArrFirst && self.depth > 1 => {
                        self.depth -= 1;
                        st = St::After;
                    }
                    _ if is_ws(b) => {}
                    _ => break,
                },
                St::After => match b {
                    b',' => {
                        st = if self.top_is_object() {
                            St::Key
                        } else {
                            St::Value
                        };
                    }
                    b'}' | b']' if self.depth > 1 && self.top_is_object() == (b == b'}') => {
                        self.depth -= 1;
                    }
                    _ if is_ws(b) => {}
                    _ => break,
                },
                St::Lit => {
                    let lit = LITERALS[self.lit as usize];
                    if b != lit[self.lit_pos as usize] {
                        break;
                    }
                    if self.lit_pos as usize + 1 == lit.len() {
                        if self.depth == 0 {
                            break;
                        }
                        st = St::After;
                    } else {
                        self.lit_pos += 1;
                    }
                }
                St::NumInt | St::NumFrac | St::NumExp if b.is_ascii_digit() => {
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
                    NumStep::Next(next) => {
                        if base + i as u64 >= self.num_limit {
                            break;
                        }
                        st = next;
                    }
                    NumStep::End if self.depth > 0 => {
                        // The number ended before `b`, inside a container: `b` is examined
                        // again after it.
                        self.num_limit = u64::MAX;
                        st = St::After;
                        continue;
                    }
                    _ => break,
                },
                _ => break,
            }
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
