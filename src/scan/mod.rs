//! Byte classification: the only module with `unsafe` code.
//!
//! `classify` turns a 64-byte block into bitmasks (bit `i` stands for byte `i`): quotes,
//! backslashes, control bytes, non-ASCII bytes, structural bytes and whitespace. On x86_64
//! it uses AVX2 or SSE2, chosen once at run time and cached in an atomic, and on a CPU with
//! AVX-512 (F and BW) AVX-512 classifiers for the string, escape, scalar and bracket classes (one
//! register and mask compares per block instead of two halves and a movemask per class;
//! the rest stays AVX2's); on little-endian
//! aarch64, NEON (part of its baseline); everywhere else, and with
//! `--cfg toolstream_disable_simd`, a portable scalar path. On an x86_64 machine the NEON
//! path is tested by running the whole suite for aarch64 under qemu-user (see CONTRIBUTING.md).
//! Miri checks every SIMD path for undefined behaviour: SSE2, AVX2 and AVX-512 natively (built
//! with `-C target-feature=+avx2,+popcnt,+pclmulqdq,+avx512f,+avx512bw`, since miri has no
//! CPU to ask), NEON by
//! interpreting the aarch64 target. Every implementation is tested against `classify_scalar` on all 256 byte
//! values at every position of a block.
//!
//! `escaped` and `prefix_xor` are the two bit tricks that let a block classifier carry
//! string state across blocks (and across chunks): which bytes follow an odd run of
//! backslashes, and which bytes lie between unescaped quotes.

#![deny(clippy::undocumented_unsafe_blocks)]

/// `simd::$f(...)` where this build has a SIMD implementation (x86_64; little-endian
/// aarch64), else the portable `$scalar`. The conditions live here and on the `mod` and
/// `use` lines below.
macro_rules! simd_or {
    ($f:ident($($arg:expr),*), $scalar:expr) => {{
        #[cfg(any(
            all(target_arch = "x86_64", not(toolstream_disable_simd)),
            all(target_arch = "aarch64", target_endian = "little", not(toolstream_disable_simd))
        ))]
        {
            simd::$f($($arg),*)
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", not(toolstream_disable_simd)),
            all(target_arch = "aarch64", target_endian = "little", not(toolstream_disable_simd))
        )))]
        {
            $scalar
        }
    }};
}

#[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
mod x86;
#[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
use x86 as simd;

#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    not(toolstream_disable_simd)
))]
mod neon;
#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    not(toolstream_disable_simd)
))]
use neon as simd;

/// The classes of the 64 bytes of a block, one bit per byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// `"`
    pub(crate) quote: u64,
    /// `\`
    pub(crate) backslash: u64,
    /// `0x00..=0x1F`
    pub(crate) control: u64,
    /// `0x80..=0xFF`
    pub(crate) non_ascii: u64,
    /// `{ } [ ] : ,`
    pub(crate) structural: u64,
    /// space, tab, LF, CR
    pub(crate) whitespace: u64,
}

/// The classes a string scan needs, one bit per byte of a 64-byte block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StrMasks {
    /// `"`
    pub(crate) quote: u64,
    /// `\`
    pub(crate) backslash: u64,
    /// `0x00..=0x1F`
    pub(crate) control: u64,
    /// `0x80..=0xFF`
    pub(crate) non_ascii: u64,
}

impl From<Masks> for StrMasks {
    fn from(m: Masks) -> Self {
        StrMasks {
            quote: m.quote,
            backslash: m.backslash,
            control: m.control,
            non_ascii: m.non_ascii,
        }
    }
}

/// The classes a structural tracker needs (strings and nesting), one bit per byte of a
/// 64-byte block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BracketMasks {
    /// `"`
    pub(crate) quote: u64,
    /// `\`
    pub(crate) backslash: u64,
    /// `{`, `[`
    pub(crate) open: u64,
    /// `}`, `]`
    pub(crate) close: u64,
}

/// The classes the check of a run of scalars in an array needs (numbers and `null`,
/// separated by commas and whitespace), one bit per byte of a 64-byte block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScalarMasks {
    /// `0..=9`
    pub(crate) digit: u64,
    /// `0`
    pub(crate) zero: u64,
    /// `.`
    pub(crate) dot: u64,
    /// `-`
    pub(crate) minus: u64,
    /// `+`
    pub(crate) plus: u64,
    /// `e`, `E`
    pub(crate) exp: u64,
    /// `,`
    pub(crate) comma: u64,
    /// space, tab, LF, CR
    pub(crate) whitespace: u64,
    /// `n`
    pub(crate) n: u64,
    /// `u`
    pub(crate) u: u64,
    /// `l`
    pub(crate) l: u64,
}

/// The classes the check of a block's escapes needs, one bit per byte of a 64-byte block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EscMasks {
    /// The bytes a simple escape ends with: `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`.
    pub(crate) simple: u64,
    /// `u`
    pub(crate) u: u64,
    /// Hex digits: `0..=9`, `a..=f`, `A..=F`.
    pub(crate) hex: u64,
    /// `d`, `D`: the first digit of every `\u` escape of a surrogate.
    pub(crate) d: u64,
}

/// The escape classes as one nibble lookup: a byte is in class `k` when bit `k` is set in
/// both `ESC_NIBBLES.0[low nibble]` and `ESC_NIBBLES.1[high nibble]`. Bits 0 to 4 are the
/// simple escapes (`"br` are low 2 with high 2, 6 or 7; `/` is F with 2; `\` C with 5;
/// `fn` 6 or E with 6; `t` 4 with 7), bits 5 and 6 the hex digits (`0-9`: 0 to 9 with 3;
/// `A-F`, `a-f`: 1 to 6 with 4 or 6), bit 7 `u` (5 with 7). Bytes from 0x80 have a high
/// nibble of 8 or more, whose entries are empty. Used by the classifiers with a table
/// lookup (AVX2, NEON); the tests check every byte against [`EscMasks`]'s definition.
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", not(toolstream_disable_simd)),
        all(
            target_arch = "aarch64",
            target_endian = "little",
            not(toolstream_disable_simd)
        )
    )),
    allow(dead_code)
)]
const ESC_NIBBLES: ([u8; 16], [u8; 16]) = {
    let (mut lo, mut hi) = ([0u8; 16], [0u8; 16]);
    lo[0x2] |= 1;
    hi[0x2] |= 1;
    hi[0x6] |= 1;
    hi[0x7] |= 1;
    lo[0xF] |= 2;
    hi[0x2] |= 2;
    lo[0xC] |= 4;
    hi[0x5] |= 4;
    lo[0x6] |= 8;
    lo[0xE] |= 8;
    hi[0x6] |= 8;
    lo[0x4] |= 16;
    hi[0x7] |= 16;
    let mut k = 0;
    while k <= 9 {
        lo[k] |= 32;
        k += 1;
    }
    hi[0x3] |= 32;
    let mut k = 1;
    while k <= 6 {
        lo[k] |= 64;
        k += 1;
    }
    hi[0x4] |= 64;
    hi[0x6] |= 64;
    lo[0x5] |= 128;
    hi[0x7] |= 128;
    (lo, hi)
};

/// The escape classes of a 64-byte block, with the best implementation this CPU has.
/// Without SIMD the string scan checks each escape byte by byte instead (a portable
/// classifier costs more per block than the escapes in it), so the portable one is for
/// the tests.
// The string scan takes its classifiers through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(crate) fn escape_masks(block: &[u8; 64]) -> EscMasks {
    simd_or!(escape_masks(block), portable::escape_masks_scalar(block))
}

/// A block classifier for code compiled for its CPU's features: [`with_blocks`] hands one
/// to a [`BlockFn`], whose body then inlines the classifiers (no dispatch and no call per
/// block, the vector constants loaded once).
pub(crate) trait Blocks: Copy {
    /// Whether the classifiers are SIMD ones (else portable, and costly per block).
    const SIMD: bool;
    /// [`string_masks`].
    fn string_masks(self, block: &[u8; 64]) -> StrMasks;
    /// [`escape_masks`].
    fn escape_masks(self, block: &[u8; 64]) -> EscMasks;
    /// [`scalar_masks`].
    fn scalar_masks(self, block: &[u8; 64]) -> ScalarMasks;
}

/// Code generic over a [`Blocks`] (a closure cannot be generic).
pub(crate) trait BlockFn<R> {
    /// Run with the classifier `b`.
    fn call<B: Blocks>(self, b: B) -> R;
}

/// Run `f` with the best classifier this CPU has, compiled for that CPU's features.
#[inline]
pub(crate) fn with_blocks<R, F: BlockFn<R>>(f: F) -> R {
    simd_or!(with_blocks(f), f.call(portable::Portable))
}

/// Whether this build classifies scalars with SIMD. The scalar-array path of the splitter
/// is only worth taking where it does: the portable classifier costs more per block than
/// the token path spends on the values in it.
pub(crate) const SIMD_SCALARS: bool = cfg!(any(
    all(target_arch = "x86_64", not(toolstream_disable_simd)),
    all(
        target_arch = "aarch64",
        target_endian = "little",
        not(toolstream_disable_simd)
    )
));

/// The scalar classes of a 64-byte block, with the best implementation this CPU has.
// The number arrays take their classifier through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(crate) fn scalar_masks(block: &[u8; 64]) -> ScalarMasks {
    simd_or!(scalar_masks(block), portable::scalar_masks_scalar(block))
}

/// The string classes of a 64-byte block, with the best implementation this CPU has
/// (fewer operations than [`classify`]).
// The string scan takes its classifiers through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(crate) fn string_masks(block: &[u8; 64]) -> StrMasks {
    simd_or!(string_masks(block), portable::classify_scalar(block).into())
}

/// The quotes, backslashes, opening and closing brackets of a 64-byte block, with the
/// best implementation this CPU has.
// The tracker calls each implementation's own classifier; this one is for the tests.
#[cfg(test)]
#[inline]
pub(crate) fn bracket_masks(block: &[u8; 64]) -> BracketMasks {
    simd_or!(bracket_masks(block), portable::bracket_masks_scalar(block))
}

/// A hint that the line at `p` will soon be used (written, where the splitter asks): the
/// CPU may fetch it into the caches ahead. A no-op where no SIMD implementation is built.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    // SAFETY: a prefetch is a hint: it reads nothing the program sees and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(all(target_arch = "x86_64", not(toolstream_disable_simd))))]
    let _ = p;
}

/// `bytes` appended to `buf`, as [`BytesMut::extend_from_slice`], with the copy of 16 to 64
/// bytes done inline by two overlapping copies of a fixed size, where `extend_from_slice`
/// calls the C library's `memcpy` for any length it cannot see: the splitter appends one
/// chunk of a tool call's deltas on every push, most of them 17 to 64 bytes.
#[inline(always)]
pub(crate) fn append_copy(buf: &mut bytes::BytesMut, bytes: &[u8]) {
    let n = bytes.len();
    if !(16..=64).contains(&n) {
        buf.extend_from_slice(bytes);
        return;
    }
    buf.reserve(n);
    let dst = bytes::BufMut::chunk_mut(buf).as_mut_ptr();
    let src = bytes.as_ptr();
    if n >= 32 {
        // SAFETY: `reserve(n)` left at least `n` bytes of spare capacity at `dst`; `src`
        // holds `n` bytes; 32 <= n, so both copies (bytes 0..32 and n-32..n) lie within
        // both, and the spare capacity cannot overlap the borrowed `bytes`.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, 32);
            std::ptr::copy_nonoverlapping(src.add(n - 32), dst.add(n - 32), 32);
        }
    } else {
        // SAFETY: as above, with 16 <= n < 32 and copies of 16 bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, 16);
            std::ptr::copy_nonoverlapping(src.add(n - 16), dst.add(n - 16), 16);
        }
    }
    // SAFETY: the `n` bytes after the buffer's end were all written just above.
    unsafe { bytes::BufMut::advance_mut(buf, n) };
}

/// `bytes` as text if they are UTF-8: an ASCII check first (a word at a time; most JSON
/// strings are ASCII, and std's UTF-8 check costs several times as much on the short
/// strings of stream events), the full check otherwise.
#[inline]
pub(crate) fn text(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    crate::provider::utf8(bytes).ok()
}

/// Whether `bytes` holds a `}` or a `]`: what a chunk must have to end a value while a
/// container is open. Cheaper than following the chunk ([`track`]), so asked first.
#[inline]
pub(crate) fn has_closer(bytes: &[u8]) -> bool {
    simd_or!(has_closer(bytes), portable::has_closer_scalar(bytes))
}

/// [`has_closer`] with each SIMD implementation's test of 16 bytes, its OR of two results
/// and its "any set" (all inlined): under 16 bytes, the portable test; else whole 64-byte
/// runs while more than 64 bytes are left, stopping at the first closer, then the 16
/// bytes that end the input and those before them.
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", not(toolstream_disable_simd)),
        all(
            target_arch = "aarch64",
            target_endian = "little",
            not(toolstream_disable_simd)
        )
    )),
    allow(dead_code)
)]
#[inline(always)]
fn has_closer_with<V: Copy>(
    bytes: &[u8],
    closers: impl Fn(&[u8; 16]) -> V,
    or: impl Fn(V, V) -> V,
    any: impl Fn(V) -> bool,
) -> bool {
    let n = bytes.len();
    if n < 16 {
        return portable::has_closer_scalar(bytes);
    }
    let at16 = |at: usize| {
        let Ok(w) = <&[u8; 16]>::try_from(&bytes[at..at + 16]) else {
            unreachable!("16 bytes")
        };
        closers(w)
    };
    let mut at = 0;
    while n - at > 64 {
        let a = or(at16(at), at16(at + 16));
        let b = or(at16(at + 32), at16(at + 48));
        if any(or(a, b)) {
            return true;
        }
        at += 64;
    }
    let mut found = at16(n - 16);
    while at + 16 < n {
        found = or(found, at16(at));
        at += 16;
    }
    any(found)
}

/// What a tracker of strings and nesting carries from byte to byte (see [`track`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Track {
    /// All ones when the next byte is inside a string, else zero.
    pub(crate) in_string: u64,
    /// 1 when the next byte is escaped (it follows a backslash that starts an escape).
    pub(crate) escape: u64,
    /// Containers open before the next byte.
    pub(crate) depth: u64,
}

/// Follow strings and nesting through `bytes`, 64 at a time, from `t`: the unescaped
/// quotes ([`escaped`], [`prefix_xor`]) say what is inside strings, and the brackets
/// outside them give the depth. Returns false (and leaves `t` anywhere) if the depth
/// falls to zero in `bytes`: the outermost container closes there. On valid JSON this is
/// exactly the grammar's view; on other bytes it is only bytes.
#[inline]
pub(crate) fn track(bytes: &[u8], t: &mut Track) -> bool {
    simd_or!(
        track(bytes, t),
        track_with(bytes, t, portable::bracket_masks_scalar, prefix_xor)
    )
}

/// [`track`] with a given bracket classifier and prefix XOR (inlined into each
/// implementation, so that `count_ones` is the CPU's own instruction where the
/// implementation enables it). The last block, under 64 bytes, is classified as the input's
/// last 64 bytes with the masks shifted down past the bytes already followed, or, in an
/// input shorter than a block, copied into a block padded with spaces.
#[inline(always)]
fn track_with(
    bytes: &[u8],
    t: &mut Track,
    masks: impl Fn(&[u8; 64]) -> BracketMasks,
    xor: impl Fn(u64) -> u64,
) -> bool {
    let tail = |rest: &[u8]| {
        if let Some(last) = bytes.last_chunk::<64>() {
            // `rest` (1 to 63 bytes) ends `bytes`: the bits of the bytes before it go.
            let m = masks(last);
            let s = 64 - rest.len();
            return BracketMasks {
                quote: m.quote >> s,
                backslash: m.backslash >> s,
                open: m.open >> s,
                close: m.close >> s,
            };
        }
        let mut last = [b' '; 64];
        last[..rest.len()].copy_from_slice(rest);
        masks(&last)
    };
    track_with_tail(bytes, t, &masks, tail, xor)
}

/// [`track_with`] with a classifier of the last block's bytes of its own (`tail`, given
/// fewer than 64 bytes: their masks, no bit set past them), for an implementation that can
/// read a partial block without copying it.
#[inline(always)]
fn track_with_tail(
    bytes: &[u8],
    t: &mut Track,
    masks: impl Fn(&[u8; 64]) -> BracketMasks,
    tail: impl Fn(&[u8]) -> BracketMasks,
    xor: impl Fn(u64) -> u64,
) -> bool {
    let mut blocks = bytes.chunks_exact(64);
    for block in blocks.by_ref() {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[b' '; 64]);
        if !track_block(masks(block), 64, t, &xor) {
            return false;
        }
    }
    let rest = blocks.remainder();
    if rest.is_empty() {
        return true;
    }
    track_block(tail(rest), rest.len(), t, &xor)
}

/// One block of [`track`] whose first `n` bytes are the input's (no class set past them:
/// padding spaces, bits shifted out, or bytes a masked load left zero).
#[inline(always)]
fn track_block(m: BracketMasks, n: usize, t: &mut Track, xor: impl Fn(u64) -> u64) -> bool {
    let mut carry = t.escape;
    // Computed even for a block with no backslash and no escape carried in (where it is
    // zero): in code, about every other block has one, and a branch on it mispredicted
    // more than the dozen instructions it skipped.
    let escaped = escaped(m.backslash, &mut carry);
    let inside = xor(m.quote & !escaped) ^ t.in_string;
    let (open, close) = (m.open & !inside, m.close & !inside);
    // Most blocks of string content have no bracket outside strings.
    if open | close != 0 {
        let closes = u64::from(close.count_ones());
        // The depth after any close is at least the depth before the block, plus the opens
        // before the first close, less every close: above zero, no close can end the value
        // (an edit list's `]}}` at depth four, with a `[` before it, needs no walk).
        let first_close = close & close.wrapping_neg();
        let opens_first = u64::from((open & first_close.wrapping_sub(1)).count_ones());
        if closes < t.depth + opens_first {
            t.depth = t.depth + u64::from(open.count_ones()) - closes;
        } else {
            // Closes enough to end the value, by the bound: whether the depth reaches zero
            // depends on their order, so each close is checked, the depth just after it counted
            // from the brackets up to it (an edit list closes four or five in a block at
            // depth three, and ends no value there). One test per close that is almost
            // never true, where a walk over all the brackets branched on each one's kind.
            let mut rest = close;
            while rest != 0 {
                // The bytes through the lowest close left.
                let through = rest ^ (rest - 1);
                let opens = u64::from((open & through).count_ones());
                if t.depth + opens <= u64::from((close & through).count_ones()) {
                    return false;
                }
                rest &= rest - 1;
            }
            t.depth = t.depth + u64::from(open.count_ones()) - closes;
        }
    }
    // The padding has no quotes, so the last byte's string state is bit 63's; but an
    // escape the last input byte starts falls on the first byte of the padding.
    t.escape = if n == 64 { carry } else { (escaped >> n) & 1 };
    t.in_string = ((inside as i64) >> 63) as u64;
    true
}

/// 16 bytes: the mask of quotes, backslashes and control bytes (bit `i` for byte `i`), and
/// the mask of non-ASCII bytes. The quick look at the start of a string: most keys and
/// short values end within 16 bytes.
#[inline]
pub(crate) fn probe16(bytes: &[u8; 16]) -> (u32, u32) {
    simd_or!(probe16(bytes), portable::probe16_scalar(bytes))
}

/// 16 bytes: the mask of quotes (bit `i` for byte `i`), what [`probe16`] finds among its
/// stops. Where the token path takes a short string's end from the quotes alone, the next
/// token waits for one comparison instead of three (the other stops are checked beside it).
#[inline]
pub(crate) fn quotes16(bytes: &[u8; 16]) -> u32 {
    simd_or!(quotes16(bytes), portable::quotes16_scalar(bytes))
}

/// 16 bytes: the mask of bytes that are not ASCII digits (bit `i` for byte `i`). Digit
/// runs of numbers are read 16 bytes at a time with it.
#[inline]
pub(crate) fn non_digits16(bytes: &[u8; 16]) -> u32 {
    simd_or!(non_digits16(bytes), portable::non_digits16_scalar(bytes))
}

/// The bytes a number is made of, one bit per byte of a 16-byte window (bit `i` for byte
/// `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NumMasks {
    /// `0..=9`
    pub(crate) digit: u32,
    /// `.`
    pub(crate) dot: u32,
    /// `e`, `E`
    pub(crate) exp: u32,
    /// `+`, `-`
    pub(crate) sign: u32,
}

/// 16 bytes: where the digits, dots, exponent letters and signs are. A number starting
/// in the window is read and checked from these four masks at once.
#[inline]
pub(crate) fn number_masks16(bytes: &[u8; 16]) -> NumMasks {
    simd_or!(
        number_masks16(bytes),
        portable::number_masks16_scalar(bytes)
    )
}

/// The portable implementations: the fallback where there is no SIMD path, and the reference
/// every SIMD path is tested against (so unused outside the tests where SIMD is on).
#[cfg_attr(
    any(
        all(target_arch = "x86_64", not(toolstream_disable_simd)),
        all(
            target_arch = "aarch64",
            target_endian = "little",
            not(toolstream_disable_simd)
        )
    ),
    allow(dead_code)
)]
mod portable {
    use super::{Blocks, BracketMasks, EscMasks, Masks, NumMasks, ScalarMasks, StrMasks};

    /// The portable [`has_closer`](super::has_closer). ORed with 0x20, `]` and `}` both
    /// give `}`, and no other byte does.
    pub(crate) fn has_closer_scalar(bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| b | 0x20 == b'}')
    }

    /// The portable classifiers as a [`Blocks`].
    #[derive(Clone, Copy)]
    pub(crate) struct Portable;

    impl Blocks for Portable {
        const SIMD: bool = false;
        #[inline(always)]
        fn string_masks(self, block: &[u8; 64]) -> StrMasks {
            classify_scalar(block).into()
        }
        #[inline(always)]
        fn escape_masks(self, block: &[u8; 64]) -> EscMasks {
            escape_masks_scalar(block)
        }
        #[inline(always)]
        fn scalar_masks(self, block: &[u8; 64]) -> ScalarMasks {
            scalar_masks_scalar(block)
        }
    }

    /// The portable [`escape_masks`](super::escape_masks), from the definition.
    pub(crate) fn escape_masks_scalar(block: &[u8; 64]) -> EscMasks {
        let mut m = EscMasks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            if matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') {
                m.simple |= bit;
            }
            if b == b'u' {
                m.u |= bit;
            }
            if b.is_ascii_hexdigit() {
                m.hex |= bit;
            }
            if b == b'd' || b == b'D' {
                m.d |= bit;
            }
        }
        m
    }

    /// The portable [`bracket_masks`](super::bracket_masks).
    pub(crate) fn bracket_masks_scalar(block: &[u8; 64]) -> BracketMasks {
        let mut m = BracketMasks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => m.quote |= bit,
                b'\\' => m.backslash |= bit,
                b'{' | b'[' => m.open |= bit,
                b'}' | b']' => m.close |= bit,
                _ => {}
            }
        }
        m
    }

    /// The portable [`scalar_masks`](super::scalar_masks).
    pub(crate) fn scalar_masks_scalar(block: &[u8; 64]) -> ScalarMasks {
        let mut m = ScalarMasks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            let class = match b {
                b'0' => {
                    m.zero |= bit;
                    &mut m.digit
                }
                b'1'..=b'9' => &mut m.digit,
                b'.' => &mut m.dot,
                b'-' => &mut m.minus,
                b'+' => &mut m.plus,
                b'e' | b'E' => &mut m.exp,
                b',' => &mut m.comma,
                b' ' | b'\t' | b'\n' | b'\r' => &mut m.whitespace,
                b'n' => &mut m.n,
                b'u' => &mut m.u,
                b'l' => &mut m.l,
                _ => continue,
            };
            *class |= bit;
        }
        m
    }

    /// The portable [`number_masks16`](super::number_masks16).
    pub(crate) fn number_masks16_scalar(bytes: &[u8; 16]) -> NumMasks {
        let mut m = NumMasks::default();
        for (i, &b) in bytes.iter().enumerate() {
            let bit = 1 << i;
            match b {
                b'0'..=b'9' => m.digit |= bit,
                b'.' => m.dot |= bit,
                b'e' | b'E' => m.exp |= bit,
                b'+' | b'-' => m.sign |= bit,
                _ => {}
            }
        }
        m
    }

    /// The portable [`non_digits16`](super::non_digits16).
    pub(crate) fn quotes16_scalar(bytes: &[u8; 16]) -> u32 {
        let mut m = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'"' {
                m |= 1 << i;
            }
        }
        m
    }

    pub(crate) fn non_digits16_scalar(bytes: &[u8; 16]) -> u32 {
        let mut m = 0;
        for (i, b) in bytes.iter().enumerate() {
            if !b.is_ascii_digit() {
                m |= 1 << i;
            }
        }
        m
    }

    /// The portable [`probe16`](super::probe16).
    pub(crate) fn probe16_scalar(bytes: &[u8; 16]) -> (u32, u32) {
        let (mut stops, mut wide) = (0, 0);
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'"' || b == b'\\' || b < 0x20 {
                stops |= 1 << i;
            }
            if b >= 0x80 {
                wide |= 1 << i;
            }
        }
        (stops, wide)
    }

    /// The portable reference classifier.
    pub(crate) fn classify_scalar(block: &[u8; 64]) -> Masks {
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => m.quote |= bit,
                b'\\' => m.backslash |= bit,
                b'{' | b'}' | b'[' | b']' | b':' | b',' => m.structural |= bit,
                _ => {}
            }
            if b < 0x20 {
                m.control |= bit;
            }
            if b >= 0x80 {
                m.non_ascii |= bit;
            }
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                m.whitespace |= bit;
            }
        }
        m
    }
}

/// Classify a 64-byte block with the best implementation this CPU has.
// The splitter's string scans use the narrower `string_masks`; the six-class classifier is
// tested against the scalar reference, and finds what a JSON string's writer escapes.
#[inline]
pub(crate) fn classify(block: &[u8; 64]) -> Masks {
    simd_or!(classify(block), portable::classify_scalar(block))
}

/// Which implementation the block classifier uses on this machine: `"avx512"`, `"avx2"`, `"sse2"`,
/// `"neon"` or `"scalar"`.
pub fn implementation() -> &'static str {
    simd_or!(implementation(), "scalar")
}

/// Bytes escaped by a backslash: those that follow an odd-length run of backslashes
/// (counting, for a run that began in an earlier block, from the run's true start).
///
/// `carry` is 1 when byte 0 of this block is escaped by a run that ended the previous
/// block; on return it says the same of the next block.
///
/// How: inside a run of backslashes the escapers and the escaped alternate, starting with
/// an escaper, so a byte in or just after a run is escaped exactly when its position has
/// the other parity from the run's first backslash. Adding the run starts to the
/// backslash mask turns each run into a carry that ripples to the byte after it; XOR with
/// the mask then gives the run plus that byte. Doing this separately for runs that start
/// on even and on odd positions gives each byte its run's parity.
#[inline]
pub(crate) fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let carry_in = *carry & 1;
    // A backslash escaped from the previous block is not part of a run here.
    let bs = backslash & !carry_in;
    let starts = bs & !(bs << 1);
    let span_from_even = (starts & EVEN).wrapping_add(bs) ^ bs;
    let (sum_odd, overflow) = (starts & !EVEN).overflowing_add(bs);
    let span_from_odd = sum_odd ^ bs;
    // A run that started on an odd position and reaches bit 63 has odd length through
    // the end of the block: byte 0 of the next block is escaped.
    *carry = overflow as u64;
    (span_from_even & !EVEN) | (span_from_odd & EVEN) | carry_in
}

/// Prefix XOR: bit `i` of the result is the XOR of bits `0..=i` of `x`. Applied to the
/// unescaped quotes, it marks the bytes inside strings (opening quote included).
#[inline]
pub(crate) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests;
