//! The token-level path of the [`Machine`]: one dispatch per token instead of one per byte.
//!
//! [`Machine::fast`] runs while the machine sits *between tokens* (states `Top`, `Value`,
//! `ArrFirst`, `ObjFirst`, `Key`, `Colon`, `After`) and enough input is left. It reads a
//! whole token at a time — a string that closes within 32 bytes with simple escapes only
//! from one or two 16-byte probes ([`Machine::short_string`]), any other with
//! [`scan_string`] (16-byte probes for short ones,
//! 64-byte string masks with escapes checked in place for long ones, UTF-8 validated once),
//! a number from one look at its 16 bytes ([`scan_number`]: its grammar checked on masks,
//! without a branch per part), a run of numbers and `null`s in an array from one look at
//! its 64 bytes ([`scalar_run`]), a literal as one word, a structural byte with its
//! whitespace — and keeps the container stack exactly as the byte machine does. It dispatches
//! on the machine's state once, where it is entered; after that each transition (key, colon,
//! value, comma or close) runs straight on in code. The byte machine reads string runs with
//! the same [`scan_string`], from any safe point; a push that starts inside a string
//! already more than a block long goes straight to [`scan_string_long`]'s blocks.
//!
//! It is a *recogniser* only: it never reports an error itself. Whenever a token is not
//! plainly valid and complete inside the input and the limits — the input ends inside it,
//! a limit is near, a byte is wrong, a top-level value is not an object or an array — it
//! stops and hands the machine back in the exact state the byte machine would have had
//! there: at the token's first byte in the state before it, or, inside a string, at the
//! last point that is not inside an escape or a UTF-8 sequence (state `Str`). The byte
//! machine then goes on from there, so every error, offset, limit and partial state is the
//! byte machine's own. Handing over at a token's first byte re-reads at most that token's
//! bytes, once, and only when the input ends inside it (numbers and literals are bounded
//! by the number limit and 5 bytes; strings hand over at their last safe point, not at their
//! start).

use super::{is_ws, utf8_lead, ByteState, Machine, Step, HEX, SIMPLE_ESCAPE};
use crate::json::Mode;
use crate::scan;

/// Where a string scan stopped.
pub(in crate::json) enum StrEnd {
    /// The closing quote is at this index; the flag says whether the content has an
    /// escape.
    Closed(usize, bool),
    /// The byte machine must go on from this index, which is not inside an escape or a
    /// UTF-8 sequence.
    Stop(usize),
}

/// The four hex digits at `at` as a number, or `None` if one is not a hex digit: four
/// table lookups, one test (a loop comparing each byte with three ranges cost about three
/// times as much, out of line).
#[inline(always)]
fn hex4(input: &[u8], at: usize) -> Option<u32> {
    let Ok(&[a, b, c, d]) = <&[u8; 4]>::try_from(&input[at..at + 4]) else {
        unreachable!("4 bytes")
    };
    let (a, b, c, d) = (
        HEX[a as usize],
        HEX[b as usize],
        HEX[c as usize],
        HEX[d as usize],
    );
    if (a | b | c | d) & 0x80 != 0 {
        return None;
    }
    Some((a as u32) << 12 | (b as u32) << 8 | (c as u32) << 4 | d as u32)
}

/// A `\u` escape whose backslash is at `j`, entirely before `bound` and valid (a high
/// surrogate must be followed by an escaped low one): the index after it.
#[inline]
fn unicode_escape(input: &[u8], j: usize, bound: usize) -> Option<usize> {
    if bound - j < 6 {
        return None;
    }
    let cp = hex4(input, j + 2)?;
    match cp {
        0xD800..=0xDBFF => {
            if bound - j < 12 || input[j + 6] != b'\\' || input[j + 7] != b'u' {
                return None;
            }
            let low = hex4(input, j + 8)?;
            (0xDC00..=0xDFFF).contains(&low).then_some(j + 12)
        }
        0xDC00..=0xDFFF => None,
        _ => Some(j + 6),
    }
}

/// Scan string content from `from` (just after the opening quote, or a safe point) up to
/// `bound`, which no byte of the content may reach.
///
/// Where SIMD classifies blocks, content with a block or more of input before `bound` is
/// read in whole 64-byte blocks from its first byte ([`scan_string_long`], where the
/// classifiers inline and the escapes are checked from masks: cheaper than the windows'
/// stops, whose branches follow the data). Without SIMD, and for a run too short for a
/// block, the first 64 bytes are read in 16-byte windows: a window's quotes, backslashes and control bytes are taken in order; a simple
/// escape is checked where it stands and the window goes on after it, a `\u` escape (four
/// hex digits, surrogate pairing) is checked and the next window starts after it, and the
/// closing quote or any other stop ends the scan. The last window of a run
/// shorter than a whole number of windows reaches back over the bytes before it (those
/// of the run, or, for a run shorter than a window, the input's bytes before `from`),
/// so no run is read byte by byte unless the whole input before `bound` is shorter than
/// a window; longer strings go on in blocks. Non-ASCII bytes do not stop the scan: the content is validated
/// as UTF-8 once, at the end, if it had any (escapes are ASCII, so the raw content must be
/// valid UTF-8 as it stands).
///
/// `UTF8`: whether to validate UTF-8 (a caller that checked its whole text already need
/// not).
#[inline(always)]
pub(in crate::json) fn scan_string<const UTF8: bool>(
    input: &[u8],
    from: usize,
    bound: usize,
) -> StrEnd {
    let mut k = from;
    let mut escaped = false;
    // Whether a non-ASCII byte came before `k`.
    let mut wide = false;
    if scan::SIMD_SCALARS && bound - from >= 64 {
        return scan_string_long::<UTF8>(input, from, from, false, false, bound);
    }
    if bound < 16 {
        let (end, w) = tail(input, from, bound, escaped);
        return utf8_checked::<UTF8>(input, from, end, w != 0);
    }
    let end = loop {
        let room = bound - k;
        if room >= 64 && k - from >= 64 {
            return scan_string_long::<UTF8>(input, from, k, escaped, wide, bound);
        }
        if room == 0 {
            break StrEnd::Stop(k);
        }
        // A whole window at `k`, or the last 16 bytes before `bound` with the ones
        // before `k` masked off.
        let at = if room >= 16 { k } else { bound - 16 };
        let Ok(window) = <&[u8; 16]>::try_from(&input[at..at + 16]) else {
            unreachable!("16 bytes")
        };
        let (stops, w) = scan::probe16(window);
        let seen = !0u32 << (k - at);
        let (mut stops, w) = (stops & seen, w & seen);
        // The stops of this window in order: a simple escape inside it does not end it.
        let next = loop {
            let Some(p) = (stops != 0).then(|| stops.trailing_zeros() as usize) else {
                break Window::Done;
            };
            let q = at + p;
            match window[p] {
                b'"' => break Window::Quote(p),
                b'\\' if bound - q >= 2 => {
                    escaped = true;
                    let c = input[q + 1];
                    if SIMPLE_ESCAPE[c as usize] {
                        if p + 2 >= 16 {
                            break Window::Resume(p, q + 2);
                        }
                        stops &= !0 << (p + 2);
                        continue;
                    }
                    if c == b'u' {
                        if let Some(e) = unicode_escape(input, q, bound) {
                            break Window::Resume(p, e);
                        }
                    }
                    break Window::Stop(p);
                }
                _ => break Window::Stop(p),
            }
        };
        let before = |p: usize| w & ((1 << p) - 1) != 0;
        match next {
            Window::Done => {
                wide |= w != 0;
                k = at + 16;
            }
            Window::Resume(p, e) => {
                wide |= before(p);
                k = e;
            }
            Window::Quote(p) => {
                wide |= before(p);
                break StrEnd::Closed(at + p, escaped);
            }
            Window::Stop(p) => {
                wide |= before(p);
                break StrEnd::Stop(at + p);
            }
        }
    };
    utf8_checked::<UTF8>(input, from, end, wide)
}

/// How [`scan_string`] leaves a window (`usize`: the index in the window).
enum Window {
    /// No stop left in it.
    Done,
    /// An escape that starts here is valid and ends at the input index given.
    Resume(usize, usize),
    /// The closing quote.
    Quote(usize),
    /// A byte the byte machine must look at itself.
    Stop(usize),
}

/// `end` as it stands when the content from `from` has no non-ASCII byte (`wide` false)
/// or need not be checked; else the content up to `end` validated as UTF-8, and `end`
/// moved back to the first bad or incomplete sequence, if any.
#[inline(always)]
fn utf8_checked<const UTF8: bool>(input: &[u8], from: usize, end: StrEnd, wide: bool) -> StrEnd {
    if !UTF8 || !wide {
        return end;
    }
    let upto = match end {
        StrEnd::Closed(q, _) | StrEnd::Stop(q) => q,
    };
    match utf8_invalid(&input[from..upto]) {
        None => end,
        // The first bad or incomplete sequence starts at a byte >= 0x80, never inside an
        // escape: a safe point.
        Some(at) => StrEnd::Stop(from + at),
    }
}

/// Where `content` stops being valid UTF-8 (the start of its first bad or incomplete
/// sequence), if it does. Out of line: most strings have no non-ASCII byte to check.
#[inline(never)]
fn utf8_invalid(content: &[u8]) -> Option<usize> {
    // Short content: its few sequences, found from a mask. simdutf8 answers valid/invalid
    // fast on longer content; std finds where it went wrong.
    if content.len() < 64 {
        return utf8_short(content).err();
    }
    #[cfg(not(any(toolstream_disable_simd, miri)))]
    if simdutf8::basic::from_utf8(content).is_ok() {
        return None;
    }
    std::str::from_utf8(content).err().map(|e| e.valid_up_to())
}

/// Short string content (under a block) validated as UTF-8: `Err` with the index of the
/// first bad or incomplete sequence (as `std`'s `valid_up_to`). The non-ASCII bytes are
/// found as one mask (16-byte probes), and only the sequences they start are read, each
/// checked from its lead byte's length and first-continuation range ([`utf8_lead`]):
/// short content has a non-ASCII letter or two, if any, and `std::str::from_utf8` spent
/// about three times the instructions on such content.
#[inline]
fn utf8_short(s: &[u8]) -> Result<(), usize> {
    let n = s.len();
    debug_assert!(n < 64);
    let mut wide = 0u64;
    if n >= 16 {
        // Windows from the start; the last reaches back to end at `n` (bits set twice
        // are the same bytes).
        let mut k = 0;
        while k < n {
            let at = k.min(n - 16);
            let Ok(window) = <&[u8; 16]>::try_from(&s[at..at + 16]) else {
                unreachable!("16 bytes")
            };
            wide |= (scan::probe16(window).1 as u64) << at;
            k = at + 16;
        }
    } else {
        for (p, &b) in s.iter().enumerate() {
            wide |= ((b >> 7) as u64) << p;
        }
    }
    utf8_sequences(s, wide)
}

/// [`utf8_short`] given the mask of `s`'s non-ASCII bytes (`s` under 64 bytes): each
/// sequence checked from its lead byte.
#[inline(always)]
fn utf8_sequences(s: &[u8], mut wide: u64) -> Result<(), usize> {
    let n = s.len();
    while wide != 0 {
        let i = wide.trailing_zeros() as usize;
        let Some((more, lo, hi)) = utf8_lead(s[i]) else {
            return Err(i);
        };
        let more = more as usize;
        if n - i <= more
            || !(lo..=hi).contains(&s[i + 1])
            || s[i + 2..i + 1 + more].iter().any(|&c| c & 0xC0 != 0x80)
        {
            return Err(i);
        }
        // `i + more < n < 64`.
        wide &= !(((2u64 << more) - 1) << i);
    }
    Ok(())
}

/// String content from `j` to `bound`, byte by byte (an input shorter than a window):
/// where it ends, and whether it had a non-ASCII byte (nonzero). `escaped`: whether the
/// content before `j` had an escape.
#[inline]
fn tail(input: &[u8], mut j: usize, bound: usize, mut escaped: bool) -> (StrEnd, u64) {
    let mut wide = 0u64;
    while j < bound {
        match input[j] {
            b'"' => return (StrEnd::Closed(j, escaped), wide),
            b'\\' => {
                escaped = true;
                if bound - j < 2 {
                    return (StrEnd::Stop(j), wide);
                }
                let c = input[j + 1];
                if SIMPLE_ESCAPE[c as usize] {
                    j += 2;
                } else if c == b'u' {
                    match unicode_escape(input, j, bound) {
                        Some(k) => j = k,
                        None => return (StrEnd::Stop(j), wide),
                    }
                } else {
                    return (StrEnd::Stop(j), wide);
                }
            }
            0x00..=0x1F => return (StrEnd::Stop(j), wide),
            b => {
                wide |= (b >> 7) as u64;
                j += 1;
            }
        }
    }
    (StrEnd::Stop(bound), wide)
}

/// [`scan_string`] for content with a block or more of input (and, for a push that starts inside a long
/// string, from the push's first byte):
/// whole 64-byte blocks ([`LongScan::block`]), and the last bytes before `bound`, fewer
/// than a block, as the block that ends at `bound`, its masks shifted past the bytes
/// already read (the caller's input has a block or more before `bound`).
///
/// The content starts at `from`; the scan starts at `at`, a safe point: the bytes from `from`
/// to `at` were read already and are plain, simple escapes or checked `\u` escapes
/// (`escaped` says whether there were escapes, `wide_before` whether any was non-ASCII).
///
/// The blocks run compiled for the CPU's best classifier ([`scan::with_blocks`]), so the
/// classifiers inline into the loop.
#[inline(never)]
pub(in crate::json) fn scan_string_long<const UTF8: bool>(
    input: &[u8],
    from: usize,
    at: usize,
    escaped: bool,
    wide_before: bool,
    bound: usize,
) -> StrEnd {
    scan::with_blocks(LongRun::<UTF8> {
        input,
        from,
        at,
        escaped,
        wide_before,
        bound,
    })
}

/// [`scan_string_long`]'s arguments; its loop, with the classifier [`scan::with_blocks`]
/// hands it.
struct LongRun<'a, const UTF8: bool> {
    input: &'a [u8],
    from: usize,
    at: usize,
    escaped: bool,
    wide_before: bool,
    bound: usize,
}

impl<const UTF8: bool> scan::BlockFn<StrEnd> for LongRun<'_, UTF8> {
    #[inline(always)]
    fn call<B: scan::Blocks>(self, b: B) -> StrEnd {
        let LongRun {
            input,
            from,
            at,
            escaped,
            wide_before,
            bound,
        } = self;
        let mut j = at;
        let mut st = LongScan {
            saw_escape: escaped,
            wide_from: if wide_before { from } else { usize::MAX },
            utf8: UTF8,
            carry: 0,
            skip_u: usize::MAX,
        };
        let content = &input[..bound];
        let end = loop {
            // One bounds test a block for both "a block is left" and the slice's own.
            let Some(Ok(block)) = content.get(j..j + 64).map(<&[u8; 64]>::try_from) else {
                let left = bound - j;
                break if left == 0 {
                    // A backslash that ended the last block starts an escape the input cuts
                    // short.
                    StrEnd::Stop(j - st.carry as usize)
                } else {
                    // The last bytes: the 64 before `bound`, the masks shifted so that bit 0
                    // is byte `j` (the bytes before it were read already).
                    let Ok(block) = <&[u8; 64]>::try_from(&input[bound - 64..bound]) else {
                        unreachable!("64 bytes")
                    };
                    st.block(b, input, j, block, 64 - left, bound)
                        .unwrap_or(StrEnd::Stop(bound))
                };
            };
            if let Some(end) = st.block(b, input, j, block, 0, bound) {
                break end;
            }
            j += 64;
        };
        // The run of content with non-ASCII bytes that the end closes, if any (the last
        // block's non-ASCII bytes may all lie past the end: then there is none).
        let upto = match end {
            StrEnd::Closed(q, _) | StrEnd::Stop(q) => q,
        };
        let wide_from = st.wide_from;
        utf8_checked::<UTF8>(input, wide_from, end, wide_from < upto)
    }
}

/// What [`scan_string_long`] carries from block to block.
struct LongScan {
    /// Whether the content so far had an escape.
    saw_escape: bool,
    /// Where the run of content with non-ASCII bytes not yet validated as UTF-8 begins
    /// (`usize::MAX`: none). A block of ASCII bytes alone closes the run, which is then
    /// validated at once (no sequence crosses into an ASCII byte, so the run stands on its
    /// own): a long string's ASCII stretches (code, escapes) are not read a second time.
    wide_from: usize,
    /// Whether to validate UTF-8 at all (see [`scan_string`]).
    utf8: bool,
    /// 1 when the next block's first byte is escaped (see [`scan::escaped`]).
    carry: u64,
    /// The `u` of a low-surrogate escape already checked with its high half.
    skip_u: usize,
}

impl LongScan {
    /// One block of string content: `block`'s bytes from `shift` on (all 64 but for the
    /// last bytes before `bound`), which stand at `input[j..]`. `None` when the string
    /// goes on after the block; else where the scan ends: the closing quote, a byte that
    /// is wrong, or a backslash whose escape the input cuts short.
    ///
    /// The escaped bytes (found with [`scan::escaped`], carried from block to block) are
    /// checked in place, so a block only stops the scan at its closing quote or at a byte
    /// that is wrong. Where SIMD classifies them ([`scan::escape_masks`]), the simple
    /// escapes and the `\u` escapes of no surrogate whose four hex digits are in the
    /// block are checked from masks together; the rest one by one.
    #[inline(always)]
    fn block<B: scan::Blocks>(
        &mut self,
        b: B,
        input: &[u8],
        j: usize,
        block: &[u8; 64],
        shift: usize,
        bound: usize,
    ) -> Option<StrEnd> {
        let len = 64 - shift;
        // Bit `p` of each mask stands for byte `j + p`, clear past `len`.
        let m = b.string_masks(block);
        let (quote, backslash, control) =
            (m.quote >> shift, m.backslash >> shift, m.control >> shift);
        let wide = m.non_ascii >> shift;
        if wide != 0 {
            if self.wide_from == usize::MAX {
                self.wide_from = j + wide.trailing_zeros() as usize;
            }
        } else if self.wide_from != usize::MAX && self.utf8 {
            // Every byte of this block is ASCII: the run before it ends at `j`.
            let run = self.wide_from;
            self.wide_from = usize::MAX;
            if let Some(at) = utf8_invalid(&input[run..j]) {
                // The first bad or incomplete sequence: a safe point, before this block.
                return Some(StrEnd::Stop(run + at));
            }
        }
        if (quote | backslash | control | self.carry) == 0 {
            return None;
        }
        let esc = scan::escaped(backslash, &mut self.carry);
        let stops = (quote | control) & !esc;
        let first = stops.trailing_zeros() as usize; // 64 when none
        let below = if first == 64 { !0 } else { (1u64 << first) - 1 };
        self.saw_escape |= backslash & below != 0;
        let mut e = esc & below;
        if B::SIMD && e != 0 {
            let x = b.escape_masks(block);
            let (simple, u, hex, d) = (
                x.simple >> shift,
                x.u >> shift,
                x.hex >> shift,
                x.d >> shift,
            );
            // Bit `p`: bytes `p..p + 4` are hex digits (in the block).
            let hex4 = hex & (hex >> 1) & (hex >> 2) & (hex >> 3);
            // A `\u` whose four digits follow in the block and do not start with `d`
            // (so no surrogate) is valid; so is a simple escape. A bit past `len` (the
            // byte after a backslash that ends the block's bytes) is in neither.
            e &= !(simple | (u & (hex4 >> 1) & !(d >> 1)));
        }
        while e != 0 {
            let p = e.trailing_zeros() as usize;
            e &= e - 1;
            // `q - 1` is the backslash (in the previous block when `p` is 0).
            let q = j + p;
            if p >= len {
                // The byte after a backslash that ends a short last block: the byte
                // machine takes the backslash.
                return Some(StrEnd::Stop(q - 1));
            }
            let c = input[q];
            if SIMPLE_ESCAPE[c as usize] {
                continue;
            }
            if c != b'u' {
                return Some(StrEnd::Stop(q - 1));
            }
            if q == self.skip_u {
                continue;
            }
            match unicode_escape(input, q - 1, bound) {
                Some(k) if k - (q - 1) == 12 => self.skip_u = q + 6,
                Some(_) => {}
                None => return Some(StrEnd::Stop(q - 1)),
            }
        }
        (first < 64).then(|| {
            if input[j + first] == b'"' {
                StrEnd::Closed(j + first, self.saw_escape)
            } else {
                StrEnd::Stop(j + first)
            }
        })
    }
}

/// The bytes that may go on with a number after its integer part: digits, `.`, `e`, `E`,
/// `+`, `-`. Any other byte ends it (whether that byte may follow is not the number's
/// business).
static NUMBER_GOES_ON: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = b'0';
    while b <= b'9' {
        t[b as usize] = true;
        b += 1;
    }
    t[b'.' as usize] = true;
    t[b'e' as usize] = true;
    t[b'E' as usize] = true;
    t[b'+' as usize] = true;
    t[b'-' as usize] = true;
    t
};

/// A number starting at `i`: the index of the byte after it, when the number is plainly
/// valid and that byte is inside the input and cannot continue or spoil it.
///
/// A number that ends inside the 16 bytes from `i` is read from one look at them
/// ([`number_in_window`]); a longer one, or one too near `lim`, byte run by byte run
/// ([`scan_number_runs`], which gives the same answer for every input). Inlined always:
/// the token path's reads of it are on its hottest path.
#[inline(always)]
pub(in crate::json) fn scan_number(input: &[u8], i: usize, lim: usize) -> Option<usize> {
    // One bounds test for both "16 bytes are left" and the slice's own.
    if let Some(Ok(window)) = input[..lim].get(i..i + 16).map(<&[u8; 16]>::try_from) {
        match number_in_window(window) {
            Window16::Number(len) => return Some(i + len),
            Window16::Invalid => return None,
            Window16::Longer => {}
        }
    }
    scan_number_runs(input, i, lim)
}

/// What [`number_in_window`] saw.
#[derive(Debug, PartialEq, Eq)]
enum Window16 {
    /// A plainly valid number of this many bytes, followed by a byte that cannot go on
    /// with it.
    Number(usize),
    /// Not a plainly valid number: the byte machine must read it.
    Invalid,
    /// The bytes a number is made of fill the window: it says nothing.
    Longer,
}

/// A number at the start of `window`, checked from the window's digit, dot, exponent and
/// sign masks at once: its length is the run of such bytes, and its grammar
/// (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`) holds when, within that run, at most
/// a `-` at the start, one `.`, one exponent letter after the dot, and one sign right after
/// the letter stand among the digits, and the integer part, the fraction and the exponent
/// each start with a digit (the integer part with no other digit after a `0`). One branch
/// on the verdict instead of one per part: the parts a number has are as unpredictable as
/// the data.
#[inline(always)]
fn number_in_window(window: &[u8; 16]) -> Window16 {
    if let Some(verdict) = short_integer(window) {
        return verdict;
    }
    let scan::NumMasks {
        digit,
        dot,
        exp,
        sign,
    } = scan::number_masks16(window);
    let len = (!(digit | dot | exp | sign)).trailing_zeros();
    if len >= 16 {
        return Window16::Longer;
    }
    let marks = (dot | exp | sign) & ((1 << len) - 1);
    if marks & !1 == 0 {
        // An integer (most numbers in tool arguments): digits, after a minus when bit 0
        // is set (a minus, not one of the other marks), the first not a `0` unless it is
        // the only one.
        let (s, len) = (marks as usize, len as usize);
        return if len > s && (s == 0 || window[0] == b'-') && (window[s] != b'0' || len == s + 1) {
            Window16::Number(len)
        } else {
            Window16::Invalid
        };
    }
    // The integer part's first byte: after a leading minus, if any.
    let s = (window[0] == b'-') as u32;
    let exp_sign = sign & !s;
    let not_digit = !digit;
    // Every rule as bits that must be clear up to the byte after the number (the bytes
    // past it are not the number's), joined without branches — and without a comparison
    // per rule, which the compiler would turn into population counts.
    let bad = (not_digit >> s & 1) // the integer part starts with a digit,
        | (((window[s as usize] == b'0') as u32) & (digit >> (s + 1)) & 1) // not `0` and a digit;
        | (dot & dot.wrapping_sub(1)) // at most one dot
        | (exp & exp.wrapping_sub(1)) // and one exponent letter,
        | (dot & !exp.wrapping_sub(1)) // the dot before the letter,
        | (exp_sign & !(exp << 1)) // a sign only right after the letter;
        | ((dot << 1) & not_digit) // a digit after the dot
        | (((exp | exp_sign) << 1) & !exp_sign & not_digit); // and after the letter and sign.
    if bad & ((2 << len) - 1) == 0 {
        Window16::Number(len as usize)
    } else {
        Window16::Invalid
    }
}

/// The common number, an integer of 1 to 7 digits, from one word: its verdict, or `None`
/// when the window starts otherwise (a minus, eight digits, or digits that a fraction, an
/// exponent or a sign goes on with), for the masks to decide.
///
/// The first 8 bytes as one little-endian word; a byte is a digit when, XORed with `0`,
/// it is below 10: adding `0x76` to its low 7 bits sets the high bit exactly when they
/// are 10 or more (no carry leaves the byte), and the XOR's own high bit marks the rest.
#[inline(always)]
fn short_integer(window: &[u8; 16]) -> Option<Window16> {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let Ok(head) = <[u8; 8]>::try_from(&window[..8]) else {
        unreachable!("8 bytes")
    };
    let v = u64::from_le_bytes(head) ^ 0x3030_3030_3030_3030;
    let non_digit = (((v & LOW7) + 0x7676_7676_7676_7676) | v) & !LOW7;
    let len = (non_digit.trailing_zeros() / 8) as usize; // 8 when all are digits
    if len == 0 || len == 8 || NUMBER_GOES_ON[window[len] as usize] {
        return None;
    }
    Some(if window[0] == b'0' && len > 1 {
        Window16::Invalid
    } else {
        Window16::Number(len)
    })
}

/// [`scan_number`] for any number: its integer part, fraction and exponent each read as a
/// run of digits.
#[inline(always)]
fn scan_number_runs(input: &[u8], i: usize, lim: usize) -> Option<usize> {
    let digits = |mut j: usize| {
        // Sixteen at a time while that many bytes are left, then one by one.
        while lim - j >= 16 {
            let Ok(window) = <&[u8; 16]>::try_from(&input[j..j + 16]) else {
                unreachable!("16 bytes")
            };
            let stop = scan::non_digits16(window);
            if stop != 0 {
                return j + stop.trailing_zeros() as usize;
            }
            j += 16;
        }
        while j < lim && input[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut j = i;
    if input[j] == b'-' {
        j += 1;
    }
    match input.get(j) {
        Some(b'0') => j += 1,
        Some(b'1'..=b'9') => j = digits(j + 1),
        _ => return None,
    }
    // The byte after the integer part: most often one that ends the number.
    if j >= lim {
        return None;
    }
    let mut c = input[j];
    if !NUMBER_GOES_ON[c as usize] {
        return Some(j);
    }
    if c == b'.' {
        let k = digits(j + 1);
        if k == j + 1 || k >= lim {
            return None;
        }
        j = k;
        c = input[j];
    }
    if c | 0x20 == b'e' {
        let mut k = j + 1;
        if k < lim && matches!(input[k], b'+' | b'-') {
            k += 1;
        }
        let m = digits(k);
        if m == k || m >= lim {
            return None;
        }
        j = m;
        c = input[j];
    }
    // The delimiter must be a byte the byte machine would also take as the end of the
    // number (not a digit after a leading zero, a second '.', ...).
    if NUMBER_GOES_ON[c as usize] {
        return None;
    }
    Some(j)
}

/// Segmented fill: bit `p` of the result is set when some bit `q <= p` of `a` is set and
/// every byte in `q + 1..=p` is one of `through`.
#[inline(always)]
fn fill(a: u64, through: u64) -> u64 {
    let (mut x, mut g) = (a, through);
    x |= (x << 1) & g;
    g &= g << 1;
    x |= (x << 2) & g;
    g &= g << 2;
    x |= (x << 4) & g;
    g &= g << 4;
    x |= (x << 8) & g;
    g &= g << 8;
    x |= (x << 16) & g;
    g &= g << 16;
    x | ((x << 32) & g)
}

/// Scalars in an array, from the value at `i` (its first byte a digit, `-` or `n`; at
/// least 32 bytes of input from `i`, of which 64 are read, the input's end standing in for
/// a byte no scalar has when fewer are left): numbers and `null`s, separated by commas
/// with any whitespace around them, checked together from one look at the 64-byte block
/// ([`scan::scalar_masks`]), each rule of the grammar as bits that must be clear, without
/// a branch per value. `Some((j, close))` when at least one value is plainly valid and
/// complete: `j` is just after the last comma of the valid run (`close` false: a value
/// comes next), or the index of the array's `]` right after the last value (`close` true).
/// `None` when the first value is not plainly valid and complete inside the block: the
/// token path reads it. Numbers of 64 bytes or more never pass here, so the caller need
/// only check that the number limit is at least 64.
///
/// Bit `p` stands for byte `i + p`; `x << 1` asks about the byte before. A value is a run
/// of scalar bytes (digits, `.`, `-`, `+`, `e`, `E`, `n`, `u`, `l`); every check of a value
/// sets bits no later than the byte just after its run, so a value whose bits are clear up
/// to the comma after it is valid whatever follows.
///
/// A block whose run ends at a comma with a scalar right after it goes on to the next
/// block at once, while 32 bytes are left: the blocks run in one loop compiled for the
/// CPU's best classifier ([`scan::with_blocks`]), so the classifier inlines into it and its
/// constants are set up once per run of blocks, not once per block.
#[inline(never)]
fn scalar_run(input: &[u8], i: usize) -> Option<(usize, bool)> {
    scan::with_blocks(ScalarRun { input, i })
}

/// [`scalar_run`]'s arguments; its loop, with the classifier [`scan::with_blocks`] hands it.
struct ScalarRun<'a> {
    input: &'a [u8],
    i: usize,
}

impl scan::BlockFn<Option<(usize, bool)>> for ScalarRun<'_> {
    #[inline(always)]
    fn call<B: scan::Blocks>(self, b: B) -> Option<(usize, bool)> {
        let ScalarRun { input, mut i } = self;
        let mut last = None;
        loop {
            match scalar_block(b, input, i) {
                None => return last,
                // (32 bytes left and a scalar's first byte, in one bounds test.)
                Some((j, false))
                    if matches!(input.get(j..j + 32), Some([b'-' | b'0'..=b'9' | b'n', ..])) =>
                {
                    last = Some((j, false));
                    i = j;
                }
                end => return end,
            }
        }
    }
}

/// One block of [`scalar_run`], from the value at `i`.
#[inline(always)]
fn scalar_block<B: scan::Blocks>(b: B, input: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut padded = [0xFF; 64];
    let block = match <&[u8; 64]>::try_from(input.get(i..i + 64).unwrap_or_default()) {
        Ok(block) => block,
        Err(_) => {
            // A chunk's last bytes: a value they cut short is not taken (no comma or `]`
            // follows it in the block), and the byte machine reads it with the next push.
            let rest = &input[i..];
            padded[..rest.len()].copy_from_slice(rest);
            &padded
        }
    };
    let m = b.scalar_masks(block);
    let sc = m.digit | m.dot | m.minus | m.plus | m.exp | m.n | m.u | m.l;
    // The first byte that is neither a scalar's, a comma nor whitespace (64: none).
    let other = (!(sc | m.comma | m.whitespace)).trailing_zeros();
    let starts = sc & !(sc << 1);
    let ends = sc & !(sc >> 1);
    // Bytes whose last byte before, whitespace aside, ends a value / is a comma. Most
    // arrays have no whitespace to look through.
    let (after_value, after_comma) = if m.whitespace == 0 {
        (ends << 1, m.comma << 1)
    } else {
        (
            fill(ends, m.whitespace) << 1,
            fill(m.comma, m.whitespace) << 1,
        )
    };
    let null = starts & m.n;
    let number = starts & (m.digit | m.minus);
    let letters = null | (null << 1) | (null << 2) | (null << 3);
    let lead_minus = number & m.minus;
    let int = (number & m.digit) | (lead_minus << 1);
    let exp_sign = (m.minus | m.plus) & (m.exp << 1);
    let mut bad = (m.comma & !after_value) // a comma after a value,
        | (starts & !1 & !after_comma) // a value after a comma;
        // A value is a number or null (one that starts with another scalar byte breaks
        // that byte's own rule below):
        | ((null << 1) & !m.u) | ((null << 2) & !m.l) | ((null << 3) & !m.l) | ((null << 4) & sc)
        | ((m.n | m.u | m.l) & !letters) // (its letters nowhere else),
        | (m.minus & !(number | (m.exp << 1))) // a minus leads or follows the letter,
        | (m.plus & !(m.exp << 1)) // a plus follows it;
        | ((lead_minus << 1) & !m.digit) // the integer part starts with a digit,
        | (((int & m.zero) << 1) & m.digit) // no digit after a leading `0`;
        | (m.dot & !(m.digit << 1)) | ((m.dot << 1) & !m.digit) // digits around a dot,
        | (m.exp & !(m.digit << 1)) // a digit before the letter
        | ((m.exp << 1) & !(m.digit | m.minus | m.plus)) // and a digit or sign after it,
        | ((exp_sign << 1) & !m.digit); // and a digit after that sign.
    let marks = m.dot | m.exp;
    // In one value, no dot after a dot or the letter, no second letter. Adding a run's
    // marks to the scalar mask carries from its first mark through the end of the run
    // (and out of it, onto a byte that is not a scalar's): the bits it clears are the
    // run from that mark, and a later mark of the same run is set again by its own add.
    let from_first = |x: u64| sc & !sc.wrapping_add(x);
    let first = from_first(marks);
    let later = marks & !first;
    if later != 0 {
        // A later mark may only be the letter, second, after a dot.
        let third = later & !from_first(later);
        let after_letter = later & from_first(marks & first & m.exp);
        bad |= (later & m.dot) | third | after_letter;
    }
    let first_bad = bad.trailing_zeros();
    if other < 64
        && block[other as usize] == b']'
        && first_bad > other
        && (after_value >> other) & 1 != 0
    {
        return Some((i + other as usize, true));
    }
    // The common block: every value up to the last comma before `other` valid. The end
    // is found from the commas alone, so the next block's load waits for them only, not
    // for the rules (which a predicted branch checks beside it).
    let commas = m.comma & 1u64.checked_shl(other).map_or(!0, |b| b - 1);
    if commas != 0 {
        let last = 63 - commas.leading_zeros();
        // Bits `0..=last` (all 64 when `last` is 63).
        if bad & (2u64 << last).wrapping_sub(1) == 0 {
            return Some((i + last as usize + 1, false));
        }
    }
    let upto = other.min(first_bad);
    let commas = m.comma & 1u64.checked_shl(upto).map_or(!0, |b| b - 1);
    if commas == 0 {
        return None;
    }
    Some((i + 64 - commas.leading_zeros() as usize, false))
}

/// Where the token-level path hands back: the index the byte machine goes on from (a
/// completed top-level value is in [`Tokens::done`]). One word, so that every `?` on the
/// way out moves a register, not a [`Step`].
type Exit = usize;

/// The token-level path's cursor: the machine, the input and the token at hand. Each
/// method reads one kind of token and moves on, or returns the [`Exit`] to hand back with.
struct Tokens<'m, 'a> {
    m: &'m mut Machine,
    whole: &'a [u8],
    /// The input cut at `lim`: no byte at or past it is read (the input's end, or the value
    /// limit).
    input: &'a [u8],
    lim: usize,
    base: u64,
    i: usize,
    /// Where the path was entered (for the tests' count of bytes examined).
    entry: usize,
    /// The state to hand back in at the token at hand (kept only for that).
    st: ByteState,
    /// The byte at `i`, not whitespace.
    b: u8,
    /// Whether the innermost open container is an object (meaningful at depth > 0).
    object: bool,
    /// The top-level value completed, when the path hands back after one.
    done: Option<Step>,
    /// Scalars in a row in the innermost array: the block path is tried from the fourth
    /// (it costs more than the two or three values of a short array such as `[12,4]`), or
    /// at once when the path is entered inside an array (a chunk of a long one). It wraps
    /// rather than panic past 2^32 (it only steers which path reads the values).
    scalars: u32,
}

impl Machine {
    /// The token-level path (see the module comment), from index `i` of `input`, whose
    /// byte 0 is at absolute offset `base`. The machine must be in a between-tokens state.
    /// Returns a completed top-level value, or `None` when it handed the machine back (its
    /// state saved, `pos` not updated) at the returned index.
    pub(super) fn fast(&mut self, whole: &[u8], base: u64, i: usize) -> (Option<Step>, usize) {
        let st = self.st;
        let lim = if st == ByteState::Top {
            whole.len()
        } else {
            self.value_limit
                .saturating_sub(base)
                .min(whole.len() as u64) as usize
        };
        let object = self.depth > 0 && self.top_is_object();
        let mut t = Tokens {
            m: self,
            whole,
            input: &whole[..lim],
            lim,
            base,
            i,
            entry: i,
            st,
            b: 0,
            object,
            done: None,
            scalars: 0,
        };
        match t.run() {
            Ok(never) => match never {},
            Err(at) => (t.done, at),
        }
    }
}

impl Tokens<'_, '_> {
    /// Enter where the machine is, then read tokens until one hands back.
    #[inline(always)]
    fn run(&mut self) -> Result<std::convert::Infallible, Exit> {
        self.b = self.next(self.st)?;
        let mut value = self.enter()?;
        // The transitions a valid text takes (key, colon, value, comma or close) run
        // straight on in code; `st` is only kept for where the path hands back.
        self.scalars = if self.m.depth > 0 && !self.object {
            3
        } else {
            0
        };
        // The longest number the limit and the input allow (`lim` is set for good here).
        let num_max = self.m.limits.max_number_bytes.min(self.lim as u64) as usize;
        loop {
            if value {
                if let Some(next) = self.value(num_max)? {
                    value = next;
                    continue;
                }
            }
            self.after_value()?;
            value = true;
        }
    }

    /// Hand the machine back at `at` in state `st`; `seen` is how far this path read
    /// (bytes it read past `at` will be examined again).
    #[inline(always)]
    fn stop<T>(&mut self, st: ByteState, at: usize, _seen: usize) -> Result<T, Exit> {
        self.m.st = st;
        #[cfg(test)]
        {
            self.m.examined += _seen.max(at).saturating_sub(self.entry) as u64;
        }
        Err(at)
    }

    /// The next byte that is not whitespace, with `i` moved onto it; hand back in state
    /// `st` when the input (or the value limit) runs out first. A byte above the space is
    /// taken as it stands (compact JSON never pays for the whitespace loop).
    #[inline(always)]
    fn next(&mut self, st: ByteState) -> Result<u8, Exit> {
        match self.input.get(self.i) {
            Some(&b) if b > b' ' => Ok(b),
            _ => {
                while self.i < self.lim && is_ws(self.input[self.i]) {
                    self.i += 1;
                }
                if self.i >= self.lim {
                    return self.stop(st, self.i, self.i);
                }
                Ok(self.input[self.i])
            }
        }
    }

    /// Where the path was entered: on to a value's first byte (`true`) or past a value.
    #[inline(always)]
    fn enter(&mut self) -> Result<bool, Exit> {
        let (b, i, st) = (self.b, self.i, self.st);
        match st {
            ByteState::Top => {
                let ok = match b {
                    b'{' => true,
                    b'[' => self.m.mode == Mode::Any,
                    _ => false,
                };
                if !ok || self.m.limits.max_value_bytes == 0 {
                    return self.stop(ByteState::Top, i, i);
                }
                let off = self.base + i as u64;
                let m = &mut *self.m;
                m.value_start = off;
                m.value_limit = off.saturating_add(m.limits.max_value_bytes);
                m.check_at = m.value_limit.min(m.str_limit);
                self.lim = m
                    .value_limit
                    .saturating_sub(self.base)
                    .min(self.whole.len() as u64) as usize;
                self.input = &self.whole[..self.lim];
                self.open()
            }
            ByteState::ObjFirst | ByteState::ArrFirst
                if b == if self.object { b'}' } else { b']' } =>
            {
                self.close()?;
                Ok(false)
            }
            ByteState::ObjFirst | ByteState::Key => {
                self.key(st)?;
                Ok(true)
            }
            ByteState::Colon => {
                if b != b':' {
                    return self.stop(st, i, i);
                }
                self.i += 1;
                self.st = ByteState::Value;
                self.b = self.next(ByteState::Value)?;
                Ok(true)
            }
            ByteState::Value | ByteState::ArrFirst => Ok(true),
            ByteState::After => Ok(false),
            _ => self.stop(st, i, i),
        }
    }

    /// A key whose opening quote should be `b`, at `i`, in state `st` (`ObjFirst` or
    /// `Key`), then its colon: `b` becomes the first byte of the value after it, `st`
    /// `Value`.
    #[inline(always)]
    fn key(&mut self, st: ByteState) -> Result<(), Exit> {
        if self.b != b'"' {
            return self.stop(st, self.i, self.i);
        }
        self.string(true)?;
        // (Compact JSON's colon right after the key, without `next`'s test.)
        if self.input.get(self.i) != Some(&b':') && self.next(ByteState::Colon)? != b':' {
            return self.stop(ByteState::Colon, self.i, self.i);
        }
        self.i += 1;
        self.st = ByteState::Value;
        self.b = self.next(ByteState::Value)?;
        Ok(())
    }

    /// The string whose opening quote is at `i`, with `i` moved past it.
    #[inline(always)]
    fn string(&mut self, key: bool) -> Result<(), Exit> {
        let (input, i, lim) = (self.input, self.i, self.lim);
        self.i = match self.m.quick_string(input, i, lim) {
            Some(j) => j,
            None => match self.m.fast_string(input, self.base, i, lim, key) {
                Ok(j) => j,
                Err(at) => return self.stop(ByteState::Str, at, lim.min(at + 12)),
            },
        };
        Ok(())
    }

    /// Open the container whose byte `b` is at `i` (the depth limit was checked), and go on
    /// to its first value (`true`: `b` is that value's first byte, `st` its state) or, when
    /// it is empty, close it (`false`: a value just ended).
    #[inline(always)]
    fn open(&mut self) -> Result<bool, Exit> {
        self.object = self.b == b'{';
        self.st = self.m.open_fast(self.object);
        self.i += 1;
        self.b = self.next(self.st)?;
        if self.b == if self.object { b'}' } else { b']' } {
            self.close()?;
            return Ok(false);
        }
        if self.object {
            self.key(ByteState::ObjFirst)?;
        }
        Ok(true)
    }

    /// Close the innermost container, whose closing byte is at `i`; hand back the
    /// top-level value it completes.
    #[inline(always)]
    fn close(&mut self) -> Result<(), Exit> {
        self.i += 1;
        if let Some(step) = self.m.close(self.base + self.i as u64) {
            let (step, at) = self.m.fast_done(step, self.i, self.entry);
            self.done = step;
            return Err(at);
        }
        self.object = self.m.top_is_object();
        Ok(())
    }

    /// A value at `i`, whose first byte is `b`, in state `st` (`Value`, or `ArrFirst` for
    /// an array's first). `None` when it was read whole (a comma or close comes next), or
    /// `Some(value)` to go on with `value` as [`Tokens::open`] gives it (a container was
    /// opened), or `Some(true)` when a run of scalars ended before a value. Numbers and
    /// nulls in an array are taken a block at a time where SIMD classifies them.
    #[inline(always)]
    fn value(&mut self, num_max: usize) -> Result<Option<bool>, Exit> {
        let (b, i, st) = (self.b, self.i, self.st);
        if scan::SIMD_SCALARS
            && self.scalars >= 3
            && !self.object
            && matches!(b, b'-' | b'0'..=b'9' | b'n')
            && self.lim - i >= 32
            && self.m.limits.max_number_bytes >= 64
        {
            if let Some((j, close)) = scalar_run(self.input, i) {
                self.i = j;
                self.st = ByteState::Value;
                if close {
                    return Ok(None);
                }
                self.b = self.next(ByteState::Value)?;
                return Ok(Some(true));
            }
        }
        match b {
            b'"' => {
                self.scalars = 0;
                self.string(false)?;
            }
            b'{' | b'[' => {
                if self.m.depth >= self.m.limits.max_depth {
                    return self.stop(st, i, i);
                }
                self.scalars = 0;
                return self.open().map(Some);
            }
            b'-' | b'0'..=b'9' => {
                self.scalars = self.scalars.wrapping_add(1);
                match scan_number(self.input, i, self.lim) {
                    Some(j) if j - i <= num_max => self.i = j,
                    _ => return self.stop(st, i, self.lim.min(i + num_max + 1)),
                }
            }
            b't' | b'f' | b'n' => match literal_len(self.input, i, self.lim, b) {
                Ok(len) => {
                    self.i += len;
                    self.scalars = self.scalars.wrapping_add(1);
                }
                Err(len) => return self.stop(st, i, self.lim.min(i + len)),
            },
            _ => return self.stop(st, i, i),
        }
        Ok(None)
    }

    /// After a value: a comma and what follows it (a key and its colon in an object), or
    /// as many closing bytes as come.
    #[inline(always)]
    fn after_value(&mut self) -> Result<(), Exit> {
        loop {
            let c = self.next(ByteState::After)?;
            if c == b',' {
                self.i += 1;
                if self.object {
                    // Compact JSON's key quote right after the comma, without the
                    // whitespace test of `next`.
                    self.b = match self.input.get(self.i) {
                        Some(b'"') => b'"',
                        _ => self.next(ByteState::Key)?,
                    };
                    return self.key(ByteState::Key);
                }
                self.st = ByteState::Value;
                self.b = self.next(ByteState::Value)?;
                return Ok(());
            }
            if c != if self.object { b'}' } else { b']' } {
                return self.stop(ByteState::After, self.i, self.i);
            }
            self.close()?;
            self.scalars = 0;
        }
    }
}

/// The literal (`true`, `false`, `null`) whose first byte `b` is at `i`: `Ok(len)` when it
/// is there whole below `lim`, else `Err(len)`. Compared as one 4-byte word (and the `e` of
/// `false`), not with a call to `memcmp`.
#[inline(always)]
fn literal_len(input: &[u8], i: usize, lim: usize, b: u8) -> Result<usize, usize> {
    let (head, len) = match b {
        b't' => (*b"true", 4),
        b'f' => (*b"fals", 5),
        _ => (*b"null", 4),
    };
    let word = |at: usize| {
        input
            .get(at..at + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map(u32::from_ne_bytes)
    };
    if lim - i >= len
        && word(i) == Some(u32::from_ne_bytes(head))
        && (len == 4 || input[i + 4] == b'e')
    {
        Ok(len)
    } else {
        Err(len)
    }
}

impl Machine {
    /// The common short string, looked at inline: when the string whose opening quote is
    /// at `i` closes within the 16 bytes after it, all plain ASCII and inside the string
    /// limit, the index after its closing quote. Else `None` (nothing changed):
    /// [`Machine::fast_string`] reads it.
    #[inline(always)]
    fn quick_string(&self, input: &[u8], i: usize, lim: usize) -> Option<usize> {
        // One bounds test for both "17 bytes are left" and the slice's own.
        let window: &[u8; 16] = input[..lim].get(i + 1..i + 17)?.try_into().ok()?;
        let (stops, wide) = scan::probe16(window);
        // The end from the first quote alone (the same vector compare as the probe's), so
        // the next token's bytes wait for that compare only; that no other stop and no
        // non-ASCII byte comes first is a branch beside it. 32 when there is no quote.
        let p = scan::quotes16(window).trailing_zeros() as usize;
        // `p` content bytes: the last at offset `p` past the quote, which must stay
        // below the string limit (`1 + max_string_bytes` past the quote).
        if p < 16
            && (stops | wide) & ((1 << p) - 1) == 0
            && p as u64 <= self.limits.max_string_bytes
        {
            return Some(i + p + 2);
        }
        self.short_string(input, i, lim, stops, wide)
    }

    /// [`Machine::quick_string`] for a string that closes within the 32 bytes after its
    /// opening quote at `i`, whose escapes are all simple ones and whose content is valid
    /// UTF-8 and inside the string limit: the index after its closing quote. `stops` and
    /// `wide` are the first 16 bytes' probe. Else `None`: [`Machine::fast_string`] reads
    /// it (a `\u` escape, a control byte, a longer string). Inlined: a call costs more
    /// than its setup, as every vector constant of the token loop is loaded again after it.
    ///
    /// The end is found from masks: the escaped bytes are those after an odd run of
    /// backslashes ([`scan::escaped`]), and the end is the first quote not among them, so
    /// the next token waits for a few bit operations, not for a walk over the escapes in
    /// order. The walk is still there, beside it, for the check: each escape before the end
    /// is a backslash and a simple escape. Control bytes are taken for backslashes in the
    /// masks (the probe has them together): one changes what follows it only, and one
    /// before the end fails the check, as a control byte or as a wrong escape.
    #[inline(always)]
    fn short_string(
        &self,
        input: &[u8],
        i: usize,
        lim: usize,
        stops: u32,
        wide: u32,
    ) -> Option<usize> {
        // The 32 bytes after the quote and the one after them: the byte a backslash
        // escapes is read even when the backslash is the 32nd. (One bounds test.)
        let bytes: &[u8; 33] = input[..lim].get(i + 1..i + 34)?.try_into().ok()?;
        let (Ok(first), Ok(second)) = (
            <&[u8; 16]>::try_from(&bytes[..16]),
            <&[u8; 16]>::try_from(&bytes[16..32]),
        ) else {
            unreachable!("16 bytes")
        };
        let (s1, w1) = scan::probe16(second);
        let quotes = scan::quotes16(first) | scan::quotes16(second) << 16;
        let others = (stops | s1 << 16) & !quotes;
        // Most strings have no two backslashes in a row: then each escapes the byte after it.
        let escaped = if others & (others << 1) == 0 {
            others << 1
        } else {
            scan::escaped(u64::from(others), &mut 0) as u32
        };
        let p = (quotes & !escaped).trailing_zeros() as usize;
        if p >= 32 {
            return None;
        }
        let before = (1u32 << p) - 1;
        // The escapes before the end, each by its backslash at `k` (the byte it escapes,
        // `k + 1`, comes before the end too, which is not escaped).
        let mut escapes = others & !escaped & before;
        while escapes != 0 {
            let k = escapes.trailing_zeros() as usize;
            if bytes[k] != b'\\' || !SIMPLE_ESCAPE[bytes[k + 1] as usize] {
                return None;
            }
            escapes &= escapes - 1;
        }
        let wide = (wide | w1 << 16) & before;
        let content = &bytes[..p];
        (p as u64 <= self.limits.max_string_bytes
            && (wide == 0 || utf8_sequences(content, u64::from(wide)).is_ok()))
        .then_some(i + p + 2)
    }

    /// A string (a key when `key`) whose opening quote is at `i`: `Ok` with the index after
    /// its closing quote when the whole string is valid, inside the input and inside the
    /// string limit; else `Err` with the last safe point, where the byte machine must go on
    /// (the string's state is then set as the byte machine sets it).
    #[inline]
    fn fast_string(
        &mut self,
        input: &[u8],
        base: u64,
        i: usize,
        lim: usize,
        key: bool,
    ) -> Result<usize, usize> {
        // No content byte may reach the string limit; its closing quote may sit on it.
        let limit = (base + i as u64).saturating_add(1 + self.limits.max_string_bytes);
        let bound = limit.saturating_sub(base).min(lim as u64) as usize;
        match scan_string::<true>(input, i + 1, bound) {
            StrEnd::Closed(q, _) => Ok(q + 1),
            StrEnd::Stop(j) if j == bound && j < lim && input[j] == b'"' => Ok(j + 1),
            StrEnd::Stop(j) => {
                self.in_key = key;
                self.str_limit = limit;
                self.check_at = self.value_limit.min(self.str_limit);
                Err(j)
            }
        }
    }

    /// Push one container level (the depth limit was checked).
    #[inline]
    pub(super) fn push_level(&mut self, object: bool) {
        let level = self.depth as usize;
        let mask = 1u64 << (level % 64);
        // The stack has a word for every level below `level` (and maybe more, from deeper
        // containers closed since): a new word is needed only at a multiple of 64 never
        // reached before. (One length test, no bounds check after it.)
        match self.stack.get_mut(level / 64) {
            Some(word) if object => *word |= mask,
            Some(word) => *word &= !mask,
            None => self.stack.push(if object { mask } else { 0 }),
        }
        self.depth += 1;
    }

    /// Open a container (the depth limit was checked): the state after its opening byte.
    #[inline]
    pub(super) fn open_fast(&mut self, object: bool) -> ByteState {
        self.push_level(object);
        if object {
            ByteState::ObjFirst
        } else {
            ByteState::ArrFirst
        }
    }

    /// Close the innermost container; `end` is the offset just past its closing byte.
    #[inline]
    fn close(&mut self, end: u64) -> Option<Step> {
        self.depth -= 1;
        self.value_done(end, false)
    }

    #[inline]
    fn fast_done(&mut self, step: Step, i: usize, _entry: usize) -> (Option<Step>, usize) {
        #[cfg(test)]
        {
            self.examined += (i - _entry) as u64;
        }
        (Some(step), i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short-content UTF-8 check against `std`: every sequence of up to four bytes
    /// drawn from the bytes where UTF-8's rules change, after and before ASCII runs that
    /// put it at each place of a probe window and near the content's ends.
    #[test]
    fn short_utf8_agrees_with_std() {
        let edges = [
            0x41u8, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
            0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ];
        let mut checked = 0u64;
        let (mut seq, mut content) = (Vec::new(), Vec::new());
        for len in 1..=4u32 {
            for mut k in 0..edges.len().pow(len) {
                seq.clear();
                for _ in 0..len {
                    seq.push(edges[k % edges.len()]);
                    k /= edges.len();
                }
                for before in [0, 1, 7, 8, 13, 15, 16, 17, 31, 47] {
                    for after in [0, 1, 3, 9, 14] {
                        // One buffer for all (an allocation each cost most of the
                        // test's time under qemu, where CI runs it for NEON).
                        content.clear();
                        content.resize(before, b'a');
                        content.extend_from_slice(&seq);
                        content.resize(content.len() + after, b'z');
                        if content.len() >= 64 {
                            continue;
                        }
                        let want = std::str::from_utf8(&content).err().map(|e| e.valid_up_to());
                        assert_eq!(utf8_short(&content).err(), want, "{content:x?}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000_000, "{checked}");
        // A sequence at each place of a longer run of them.
        for n in 0..=31 {
            let mut content = "é".repeat(n).into_bytes();
            assert_eq!(utf8_short(&content), Ok(()));
            if let Some(last) = content.last_mut() {
                *last = b'x';
                assert_eq!(utf8_short(&content), Err(2 * n - 2));
            }
        }
    }

    /// The one-look number check against the run-by-run one (itself checked against the
    /// byte machine and serde_json by the splitter's tests), on every string of up to six
    /// bytes over the bytes that matter to a number, followed by each kind of delimiter and
    /// padded to a window or cut short of one.
    #[test]
    fn window_numbers_match_the_runs() {
        let alphabet = b"019-+.eE";
        let mut checked = 0;
        for len in 1..=6u32 {
            for mut k in 0..alphabet.len().pow(len) {
                let mut text = Vec::new();
                for _ in 0..len {
                    text.push(alphabet[k % alphabet.len()]);
                    k /= alphabet.len();
                }
                for tail in [&b","[..], b"]", b" ", b"x", b"0123456789012345"] {
                    let mut input = text.clone();
                    input.extend_from_slice(tail);
                    input.resize(input.len().max(20), b' ');
                    for lim in [input.len(), text.len() + 1, text.len()] {
                        let want = scan_number_runs(&input, 0, lim);
                        assert_eq!(
                            scan_number(&input[..lim], 0, lim),
                            want,
                            "{:?} up to {lim}",
                            String::from_utf8_lossy(&input)
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 3_000_000);
        // Long runs fill the window and go to the runs.
        let long = b"-1234567890.123456789e+12,      ";
        assert_eq!(
            number_in_window(long[..16].try_into().unwrap()),
            Window16::Longer
        );
        assert_eq!(scan_number(long, 0, long.len()), Some(25));
        // Each kind of verdict, by hand.
        let w = |s: &str| -> [u8; 16] {
            let mut w = [b' '; 16];
            w[..s.len()].copy_from_slice(s.as_bytes());
            w
        };
        assert_eq!(number_in_window(&w("-0.5e-3,")), Window16::Number(7));
        assert_eq!(number_in_window(&w("12E4]")), Window16::Number(4));
        for bad in [
            "01", "-", "1.", "1e", "1e+", ".5", "-.5", "1.e5", "1e5.2", "+1", "1-2", "1..2", "1ee2",
        ] {
            assert_eq!(number_in_window(&w(bad)), Window16::Invalid, "{bad}");
        }
    }
}
