//! x86_64: AVX-512 (BW) or AVX2 (detected at run time), else SSE2 (always present on
//! x86_64). The AVX-512 tier has its own classifiers where one 64-byte register and mask
//! compares save most of the work (the scalar classes, the string and escape classes);
//! everything else it runs as AVX2, which every AVX-512 CPU has.

use std::arch::x86_64::*;
use std::sync::atomic::{AtomicU8, Ordering};

use super::{
    BlockFn, Blocks, BracketMasks, EscMasks, Masks, NumMasks, ScalarMasks, StrMasks, Track,
};

const UNKNOWN: u8 = 0;
const SSE2: u8 = 1;
const AVX2: u8 = 2;
/// AVX2 and AVX-512F/BW: above `AVX2`, so `choice() >= AVX2` holds for both.
const AVX512: u8 = 3;

/// The detected implementation, cached after the first call.
static CHOICE: AtomicU8 = AtomicU8::new(UNKNOWN);

#[inline(always)]
fn choice() -> u8 {
    let c = CHOICE.load(Ordering::Relaxed);
    if c != UNKNOWN {
        return c;
    }
    // (Every CPU with AVX2 has POPCNT and PCLMULQDQ; the AVX2 tracker counts brackets
    // with the one and takes the prefix XOR of quotes with the other.)
    let c = if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("pclmulqdq")
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
            AVX512
        } else {
            AVX2
        }
    } else {
        SSE2
    };
    CHOICE.store(c, Ordering::Relaxed);
    c
}

pub(super) fn implementation() -> &'static str {
    match choice() {
        AVX512 => "avx512",
        AVX2 => "avx2",
        _ => "sse2",
    }
}

/// A block's masks from a classifier of 32-byte lanes (`K` masks of 32 bits each):
/// bytes 0..32 give bits 0..32, bytes 32..64 bits 32..64. Every AVX2 classifier is this
/// with its own lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn by_halves<const K: usize>(block: &[u8; 64], lanes: impl Fn(__m256i) -> [u64; K]) -> [u64; K] {
    let p = block.as_ptr() as *const __m256i;
    // SAFETY: `block` is 64 bytes; the two unaligned 32-byte loads read bytes 0..32 and
    // 32..64 of it.
    let (lo, hi) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
    let (l, h) = (lanes(lo), lanes(hi));
    std::array::from_fn(|k| l[k] | (h[k] << 32))
}

/// [`by_halves`] for a classifier of 16-byte lanes (SSE2): lane `j` gives bits
/// `16j..16j+16`.
#[inline]
#[target_feature(enable = "sse2")]
fn by_quarters<const K: usize>(block: &[u8; 64], lanes: impl Fn(__m128i) -> [u64; K]) -> [u64; K] {
    let p = block.as_ptr() as *const __m128i;
    let mut out = [0u64; K];
    for lane in 0..4 {
        // SAFETY: `block` is 64 bytes; lane `j` reads bytes 16j..16j+16 unaligned.
        let x = unsafe { _mm_loadu_si128(p.add(lane)) };
        let m = lanes(x);
        for k in 0..K {
            out[k] |= (m[k] & 0xFFFF) << (16 * lane);
        }
    }
    out
}

#[allow(dead_code)] // see `scan::classify`
#[inline]
pub(super) fn classify(block: &[u8; 64]) -> Masks {
    if choice() >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2 support.
        unsafe { classify_avx2(block) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { classify_sse2(block) }
    }
}

/// The six class masks of 16 or 32 bytes, as movemask bits.
macro_rules! lane_masks {
    ($x:expr, $set1:ident, $cmpeq:ident, $max:ident, $or:ident, $movemask:ident) => {{
        let x = $x;
        macro_rules! eq {
            ($c:expr) => {
                $cmpeq(x, $set1($c as i8))
            };
        }
        let quote = $movemask(eq!(b'"')) as u32 as u64;
        let backslash = $movemask(eq!(b'\\')) as u32 as u64;
        // x <= 0x1F  <=>  max(x, 0x1F) == 0x1F (unsigned).
        let control = $movemask($cmpeq($max(x, $set1(0x1F)), $set1(0x1F))) as u32 as u64;
        let non_ascii = $movemask(x) as u32 as u64;
        let structural = $movemask($or(
            $or($or(eq!(b'{'), eq!(b'}')), $or(eq!(b'['), eq!(b']'))),
            $or(eq!(b':'), eq!(b',')),
        )) as u32 as u64;
        let whitespace =
            $movemask($or($or(eq!(b' '), eq!(b'\t')), $or(eq!(b'\n'), eq!(b'\r')))) as u32 as u64;
        [quote, backslash, control, non_ascii, structural, whitespace]
    }};
}

#[target_feature(enable = "avx2")]
fn classify_avx2(block: &[u8; 64]) -> Masks {
    masks_from(by_halves(block, |x| {
        lane_masks!(
            x,
            _mm256_set1_epi8,
            _mm256_cmpeq_epi8,
            _mm256_max_epu8,
            _mm256_or_si256,
            _mm256_movemask_epi8
        )
    }))
}

#[target_feature(enable = "sse2")]
fn classify_sse2(block: &[u8; 64]) -> Masks {
    masks_from(by_quarters(block, |x| {
        lane_masks!(
            x,
            _mm_set1_epi8,
            _mm_cmpeq_epi8,
            _mm_max_epu8,
            _mm_or_si128,
            _mm_movemask_epi8
        )
    }))
}

fn masks_from([quote, backslash, control, non_ascii, structural, whitespace]: [u64; 6]) -> Masks {
    Masks {
        quote,
        backslash,
        control,
        non_ascii,
        structural,
        whitespace,
    }
}

/// The string classes of a block (quote, backslash, control, non-ASCII), with the best
/// implementation this CPU has.
// The string scan takes its classifiers through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn string_masks(block: &[u8; 64]) -> StrMasks {
    if choice() == AVX512 {
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX-512F and BW.
        return unsafe { string_masks_avx512(block) };
    }
    if choice() >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2 support.
        unsafe { string_masks_avx2(block) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { string_masks_sse2(block) }
    }
}

/// The four string classes of 16 or 32 bytes, as movemask bits.
macro_rules! string_lanes {
    ($x:expr, $set1:ident, $cmpeq:ident, $max:ident, $movemask:ident) => {{
        let x = $x;
        [
            $movemask($cmpeq(x, $set1(b'"' as i8))) as u32 as u64,
            $movemask($cmpeq(x, $set1(b'\\' as i8))) as u32 as u64,
            $movemask($cmpeq($max(x, $set1(0x1F)), $set1(0x1F))) as u32 as u64,
            $movemask(x) as u32 as u64,
        ]
    }};
}

#[target_feature(enable = "avx2")]
fn string_masks_avx2(block: &[u8; 64]) -> StrMasks {
    str_masks_from(by_halves(block, |x| {
        string_lanes!(
            x,
            _mm256_set1_epi8,
            _mm256_cmpeq_epi8,
            _mm256_max_epu8,
            _mm256_movemask_epi8
        )
    }))
}

/// AVX-512: the block as one register, each class a mask compare.
#[target_feature(enable = "avx512f,avx512bw")]
fn string_masks_avx512(block: &[u8; 64]) -> StrMasks {
    let x = load64(block);
    StrMasks {
        quote: _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(b'"' as i8)),
        backslash: _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(b'\\' as i8)),
        control: _mm512_cmple_epu8_mask(x, _mm512_set1_epi8(0x1F)),
        non_ascii: _mm512_movepi8_mask(x),
    }
}

/// The block as one AVX-512 register.
#[inline]
#[target_feature(enable = "avx512f")]
fn load64(block: &[u8; 64]) -> __m512i {
    // SAFETY: `block` is 64 bytes; the unaligned load reads exactly them.
    unsafe { _mm512_loadu_si512(block.as_ptr() as *const __m512i) }
}

#[target_feature(enable = "sse2")]
fn string_masks_sse2(block: &[u8; 64]) -> StrMasks {
    str_masks_from(by_quarters(block, |x| {
        string_lanes!(
            x,
            _mm_set1_epi8,
            _mm_cmpeq_epi8,
            _mm_max_epu8,
            _mm_movemask_epi8
        )
    }))
}

fn str_masks_from([quote, backslash, control, non_ascii]: [u64; 4]) -> StrMasks {
    StrMasks {
        quote,
        backslash,
        control,
        non_ascii,
    }
}

/// [`super::with_blocks`]: `f` compiled for AVX2 where the CPU has it, else for SSE2.
#[inline]
pub(super) fn with_blocks<R, F: BlockFn<R>>(f: F) -> R {
    if choice() == AVX512 {
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX2, AVX-512F and
        // AVX-512BW.
        return unsafe { with_avx512(f) };
    }
    if choice() >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2 support.
        unsafe { with_avx2(f) }
    } else {
        f.call(Sse2Blocks)
    }
}

#[target_feature(enable = "avx2")]
fn with_avx2<R, F: BlockFn<R>>(f: F) -> R {
    f.call(Avx2Blocks(()))
}

#[target_feature(enable = "avx2,avx512f,avx512bw")]
fn with_avx512<R, F: BlockFn<R>>(f: F) -> R {
    f.call(Avx512Blocks(()))
}

/// The AVX-512 classifiers. Made only by [`with_avx512`], that is on a CPU with AVX2,
/// AVX-512F and AVX-512BW.
#[derive(Clone, Copy)]
struct Avx512Blocks(());

impl Blocks for Avx512Blocks {
    const SIMD: bool = true;
    #[inline(always)]
    fn string_masks(self, block: &[u8; 64]) -> StrMasks {
        // SAFETY: an `Avx512Blocks` exists only where the CPU reported AVX-512F and BW
        // (see the type).
        unsafe { string_masks_avx512(block) }
    }
    #[inline(always)]
    fn escape_masks(self, block: &[u8; 64]) -> EscMasks {
        // SAFETY: as above.
        unsafe { escape_masks_avx512(block) }
    }
    #[inline(always)]
    fn scalar_masks(self, block: &[u8; 64]) -> ScalarMasks {
        // SAFETY: as above.
        unsafe { scalar_masks_avx512(block) }
    }
}

/// The AVX2 classifiers. Made only by [`with_avx2`], that is on a CPU with AVX2.
#[derive(Clone, Copy)]
struct Avx2Blocks(());

impl Blocks for Avx2Blocks {
    const SIMD: bool = true;
    #[inline(always)]
    fn string_masks(self, block: &[u8; 64]) -> StrMasks {
        // SAFETY: an `Avx2Blocks` exists only where the CPU reported AVX2 (see the type).
        unsafe { string_masks_avx2(block) }
    }
    #[inline(always)]
    fn escape_masks(self, block: &[u8; 64]) -> EscMasks {
        // SAFETY: as above.
        unsafe { escape_masks_avx2(block) }
    }
    #[inline(always)]
    fn scalar_masks(self, block: &[u8; 64]) -> ScalarMasks {
        // SAFETY: as above.
        unsafe { scalar_masks_avx2(block) }
    }
}

/// The SSE2 classifiers (the x86_64 baseline).
#[derive(Clone, Copy)]
struct Sse2Blocks;

impl Blocks for Sse2Blocks {
    const SIMD: bool = true;
    #[inline(always)]
    fn string_masks(self, block: &[u8; 64]) -> StrMasks {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { string_masks_sse2(block) }
    }
    #[inline(always)]
    fn escape_masks(self, block: &[u8; 64]) -> EscMasks {
        // SAFETY: as above.
        unsafe { escape_masks_sse2(block) }
    }
    #[inline(always)]
    fn scalar_masks(self, block: &[u8; 64]) -> ScalarMasks {
        // SAFETY: as above.
        unsafe { scalar_masks_sse2(block) }
    }
}

/// The escape classes of a block, with the best implementation this CPU has.
// The string scan takes its classifiers through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn escape_masks(block: &[u8; 64]) -> EscMasks {
    if choice() == AVX512 {
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX-512F and BW.
        return unsafe { escape_masks_avx512(block) };
    }
    if choice() >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2 support.
        unsafe { escape_masks_avx2(block) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { escape_masks_sse2(block) }
    }
}

/// AVX2: the escape classes from one nibble lookup ([`super::ESC_NIBBLES`]) per byte.
#[target_feature(enable = "avx2")]
fn escape_masks_avx2(block: &[u8; 64]) -> EscMasks {
    let (lo, hi) = super::ESC_NIBBLES;
    // The table twice: `vpshufb` looks up within each 16-byte lane.
    let table = |t: [u8; 16]| {
        let t = u128::from_le_bytes(t) as i128;
        _mm256_set_epi64x((t >> 64) as i64, t as i64, (t >> 64) as i64, t as i64)
    };
    let (lo_t, hi_t) = (table(lo), table(hi));
    esc_masks_from(by_halves(block, |x| {
        let nibble = _mm256_set1_epi8(0x0F);
        let low = _mm256_and_si256(x, nibble);
        let high = _mm256_and_si256(_mm256_srli_epi16::<4>(x), nibble);
        let r = _mm256_and_si256(
            _mm256_shuffle_epi8(lo_t, low),
            _mm256_shuffle_epi8(hi_t, high),
        );
        let zero = _mm256_setzero_si256();
        let none_of = |bits: i8| {
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(
                _mm256_and_si256(r, _mm256_set1_epi8(bits)),
                zero,
            )) as u32
        };
        [
            !none_of(0x1F) as u64,
            // Bit 7 of the lookup, `u`, is the movemask's own bit.
            _mm256_movemask_epi8(r) as u32 as u64,
            !none_of(0x60) as u64,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(
                _mm256_or_si256(x, _mm256_set1_epi8(0x20)),
                _mm256_set1_epi8(b'd' as i8),
            )) as u32 as u64,
        ]
    }))
}

/// AVX-512: [`escape_masks_avx2`]'s nibble lookup on the whole block, the classes as
/// mask tests.
#[target_feature(enable = "avx512f,avx512bw")]
fn escape_masks_avx512(block: &[u8; 64]) -> EscMasks {
    let (lo, hi) = super::ESC_NIBBLES;
    // The table in each 16-byte lane: `vpshufb` looks up within lanes.
    let table = |t: [u8; 16]| {
        let t = u128::from_le_bytes(t) as i128;
        let (h, l) = ((t >> 64) as i64, t as i64);
        _mm512_set_epi64(h, l, h, l, h, l, h, l)
    };
    let x = load64(block);
    let nibble = _mm512_set1_epi8(0x0F);
    let low = _mm512_and_si512(x, nibble);
    let high = _mm512_and_si512(_mm512_srli_epi16::<4>(x), nibble);
    let r = _mm512_and_si512(
        _mm512_shuffle_epi8(table(lo), low),
        _mm512_shuffle_epi8(table(hi), high),
    );
    EscMasks {
        simple: _mm512_test_epi8_mask(r, _mm512_set1_epi8(0x1F)),
        // Bit 7 of the lookup, `u`, is the byte's sign.
        u: _mm512_movepi8_mask(r),
        hex: _mm512_test_epi8_mask(r, _mm512_set1_epi8(0x60)),
        d: _mm512_cmpeq_epi8_mask(
            _mm512_or_si512(x, _mm512_set1_epi8(0x20)),
            _mm512_set1_epi8(b'd' as i8),
        ),
    }
}

/// SSE2 (no byte shuffle): the escape classes by comparisons.
#[target_feature(enable = "sse2")]
fn escape_masks_sse2(block: &[u8; 64]) -> EscMasks {
    esc_masks_from(by_quarters(block, |x| {
        let eq = |c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
        let simple = _mm_or_si128(
            _mm_or_si128(
                _mm_or_si128(eq(b'"'), eq(b'\\')),
                _mm_or_si128(eq(b'/'), eq(b'b')),
            ),
            _mm_or_si128(
                _mm_or_si128(eq(b'f'), eq(b'n')),
                _mm_or_si128(eq(b'r'), eq(b't')),
            ),
        );
        // Unsigned ranges: `a <= y <= b` where max(y, a) == y and min(y, b) == y. ORed
        // with 0x20, `A..=F` give `a..=f`, and no other byte gives those.
        let within = |y: __m128i, a: u8, b: u8| {
            _mm_and_si128(
                _mm_cmpeq_epi8(_mm_max_epu8(y, _mm_set1_epi8(a as i8)), y),
                _mm_cmpeq_epi8(_mm_min_epu8(y, _mm_set1_epi8(b as i8)), y),
            )
        };
        let folded = _mm_or_si128(x, _mm_set1_epi8(0x20));
        let hex = _mm_or_si128(within(x, b'0', b'9'), within(folded, b'a', b'f'));
        let d = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'd' as i8));
        [simple, eq(b'u'), hex, d].map(|v| _mm_movemask_epi8(v) as u32 as u64)
    }))
}

fn esc_masks_from([simple, u, hex, d]: [u64; 4]) -> EscMasks {
    EscMasks { simple, u, hex, d }
}

/// The bracket classes of a block, with the best implementation this CPU has.
// The tracker calls each implementation's own classifier; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn bracket_masks(block: &[u8; 64]) -> BracketMasks {
    if choice() == AVX512 {
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX-512F and BW.
        return unsafe { bracket_masks_avx512(block) };
    }
    if choice() >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2 support.
        unsafe { bracket_masks_avx2(block) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { bracket_masks_sse2(block) }
    }
}

/// [`super::track`] with the best implementation this CPU has.
#[inline]
pub(super) fn track(bytes: &[u8], t: &mut Track) -> bool {
    let c = choice();
    if c == AVX512 {
        if bytes.len() <= 64 {
            // SAFETY: as for `track_avx512` below: the same features.
            return unsafe { track_one_avx512(bytes, t) };
        }
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX2, POPCNT,
        // PCLMULQDQ, AVX-512F and AVX-512BW.
        return unsafe { track_avx512(bytes, t) };
    }
    if c >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2, POPCNT and
        // PCLMULQDQ.
        unsafe { track_avx2(bytes, t) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { track_sse2(bytes, t) }
    }
}

#[target_feature(enable = "avx2,popcnt,pclmulqdq")]
fn track_avx2(bytes: &[u8], t: &mut Track) -> bool {
    super::track_with(bytes, t, |b| bracket_masks_avx2(b), |x| prefix_xor_clmul(x))
}

/// The last block's bytes come in by one masked load (no copy to a padded block, so no
/// 64-byte-aligned stack slot in the function either).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,avx512f,avx512bw")]
fn track_avx512(bytes: &[u8], t: &mut Track) -> bool {
    super::track_with_tail(
        bytes,
        t,
        |b| bracket_masks_avx512(b),
        |rest| bracket_masks_avx512_tail(rest),
        |x| prefix_xor_clmul(x),
    )
}

/// [`track_avx512`] of at most 64 bytes (a chunk of tool-call arguments as it comes): one
/// masked load and one block, no loop over blocks and no separate last block.
#[target_feature(enable = "avx2,popcnt,pclmulqdq,avx512f,avx512bw")]
fn track_one_avx512(bytes: &[u8], t: &mut Track) -> bool {
    let n = bytes.len();
    debug_assert!(n <= 64);
    if n == 0 {
        return true;
    }
    // One bit for each of the `n` (1 to 64) bytes.
    let k = u64::MAX >> (64 - n);
    // SAFETY: the mask has a bit for each of the `n` bytes of `bytes` and no other, so the
    // load reads only bytes of `bytes`; masked-out bytes are not accessed (they raise no
    // fault) and come back as zero, which is none of the classes.
    let x = unsafe { _mm512_maskz_loadu_epi8(k, bytes.as_ptr() as *const i8) };
    super::track_block(bracket_masks_avx512_of(x), n, t, |x| prefix_xor_clmul(x))
}

#[target_feature(enable = "sse2")]
fn track_sse2(bytes: &[u8], t: &mut Track) -> bool {
    super::track_with(bytes, t, |b| bracket_masks_sse2(b), super::prefix_xor)
}

/// [`super::prefix_xor`] as one carry-less multiplication by all ones: bit `i` of the
/// product is the XOR of bits `0..=i` of `x` (three instructions instead of twelve).
#[inline]
#[target_feature(enable = "pclmulqdq")]
fn prefix_xor_clmul(x: u64) -> u64 {
    let product = _mm_clmulepi64_si128::<0>(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1));
    _mm_cvtsi128_si64(product) as u64
}

/// The carry-less prefix XOR where this CPU has it (the AVX2 path's), for the tests.
#[cfg(test)]
pub(super) fn prefix_xor_fast(x: u64) -> Option<u64> {
    // SAFETY: `choice()` returns AVX2 or above only when the CPU reported PCLMULQDQ among others.
    (choice() >= AVX2).then(|| unsafe { prefix_xor_clmul(x) })
}

#[cfg(test)]
pub(super) fn track_both(bytes: &[u8], t: Track) -> Vec<(&'static str, bool, Track)> {
    let mut v = Vec::new();
    let mut s = t;
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let held = unsafe { track_sse2(bytes, &mut s) };
    v.push(("sse2", held, s));
    if choice() >= AVX2 {
        let mut s = t;
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2, POPCNT and
        // PCLMULQDQ.
        let held = unsafe { track_avx2(bytes, &mut s) };
        v.push(("avx2", held, s));
    }
    if choice() == AVX512 {
        let mut s = t;
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX2, POPCNT,
        // PCLMULQDQ, AVX-512F and AVX-512BW.
        let held = unsafe { track_avx512(bytes, &mut s) };
        v.push(("avx512", held, s));
    }
    v
}

/// [`super::has_closer`]: SSE2 (the baseline) is enough, and inlines with no dispatch.
#[inline]
pub(super) fn has_closer(bytes: &[u8]) -> bool {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe { has_closer_sse2(bytes) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn has_closer_sse2(bytes: &[u8]) -> bool {
    // ORed with 0x20, `]` and `}` both give `}`, and no other byte does.
    super::has_closer_with(
        bytes,
        |w| {
            _mm_cmpeq_epi8(
                _mm_or_si128(load16(w), _mm_set1_epi8(0x20)),
                _mm_set1_epi8(b'}' as i8),
            )
        },
        |a, b| _mm_or_si128(a, b),
        |v| _mm_movemask_epi8(v) != 0,
    )
}

/// The four bracket classes of 16 or 32 bytes, as movemask bits. ORed with 0x20, `[` and
/// `{` both give `{`, `]` and `}` both give `}`, and no other byte gives either.
macro_rules! bracket_lanes {
    ($x:expr, $set1:ident, $cmpeq:ident, $or:ident, $movemask:ident) => {{
        let x = $x;
        let folded = $or(x, $set1(0x20));
        [
            $movemask($cmpeq(x, $set1(b'"' as i8))) as u32 as u64,
            $movemask($cmpeq(x, $set1(b'\\' as i8))) as u32 as u64,
            $movemask($cmpeq(folded, $set1(b'{' as i8))) as u32 as u64,
            $movemask($cmpeq(folded, $set1(b'}' as i8))) as u32 as u64,
        ]
    }};
}

#[target_feature(enable = "avx2")]
fn bracket_masks_avx2(block: &[u8; 64]) -> BracketMasks {
    bracket_masks_from(by_halves(block, |x| {
        bracket_lanes!(
            x,
            _mm256_set1_epi8,
            _mm256_cmpeq_epi8,
            _mm256_or_si256,
            _mm256_movemask_epi8
        )
    }))
}

/// AVX-512: the block as one register, each class a mask compare.
#[target_feature(enable = "avx512f,avx512bw")]
fn bracket_masks_avx512(block: &[u8; 64]) -> BracketMasks {
    bracket_masks_avx512_of(load64(block))
}

/// [`bracket_masks_avx512`] of fewer than 64 bytes, read by a masked load: the bytes past
/// them read as zero, which is none of the classes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn bracket_masks_avx512_tail(rest: &[u8]) -> BracketMasks {
    debug_assert!(rest.len() < 64);
    let k = (1u64 << (rest.len() & 63)) - 1;
    // SAFETY: the mask has a bit for each of the first `rest.len()` (< 64) bytes and no
    // other, so the load reads only bytes of `rest`; masked-out bytes are not accessed (they
    // raise no fault) and come back as zero.
    let x = unsafe { _mm512_maskz_loadu_epi8(k, rest.as_ptr() as *const i8) };
    bracket_masks_avx512_of(x)
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn bracket_masks_avx512_of(x: __m512i) -> BracketMasks {
    let eq = |v: __m512i, c: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8));
    // ORed with 0x20, `[` and `{` both give `{`, `]` and `}` both `}`; no other byte does.
    let folded = _mm512_or_si512(x, _mm512_set1_epi8(0x20));
    BracketMasks {
        quote: eq(x, b'"'),
        backslash: eq(x, b'\\'),
        open: eq(folded, b'{'),
        close: eq(folded, b'}'),
    }
}

#[target_feature(enable = "sse2")]
fn bracket_masks_sse2(block: &[u8; 64]) -> BracketMasks {
    bracket_masks_from(by_quarters(block, |x| {
        bracket_lanes!(
            x,
            _mm_set1_epi8,
            _mm_cmpeq_epi8,
            _mm_or_si128,
            _mm_movemask_epi8
        )
    }))
}

fn bracket_masks_from([quote, backslash, open, close]: [u64; 4]) -> BracketMasks {
    BracketMasks {
        quote,
        backslash,
        open,
        close,
    }
}

/// The scalar classes of a block, with the best implementation this CPU has.
// The number arrays take their classifier through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn scalar_masks(block: &[u8; 64]) -> ScalarMasks {
    if choice() == AVX512 {
        // SAFETY: `choice()` returns AVX512 only when the CPU reported AVX-512F and BW.
        return unsafe { scalar_masks_avx512(block) };
    }
    if choice() >= AVX2 {
        // SAFETY: `choice()` returns AVX2 or above only when the CPU reported AVX2 support.
        unsafe { scalar_masks_avx2(block) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { scalar_masks_sse2(block) }
    }
}

/// The eleven scalar classes of 16 bytes (SSE2; AVX2 has its own, with a byte shuffle), as
/// movemask bits, in the order of [`ScalarMasks`]'s fields.
macro_rules! scalar_lanes {
    ($x:expr, $set1:ident, $cmpeq:ident, $min:ident, $max:ident, $and:ident, $or:ident, $movemask:ident) => {{
        let x = $x;
        macro_rules! eq {
            ($c:expr) => {
                $cmpeq(x, $set1($c as i8))
            };
        }
        macro_rules! m {
            ($v:expr) => {
                $movemask($v) as u32 as u64
            };
        }
        // Unsigned: x >= '0' where max(x, '0') == x, x <= '9' where min(x, '9') == x.
        let digit = $and(
            $cmpeq($max(x, $set1(b'0' as i8)), x),
            $cmpeq($min(x, $set1(b'9' as i8)), x),
        );
        [
            m!(digit),
            m!(eq!(b'0')),
            m!(eq!(b'.')),
            m!(eq!(b'-')),
            m!(eq!(b'+')),
            // `e` and `E` differ only in bit 0x20.
            m!($cmpeq($or(x, $set1(0x20)), $set1(b'e' as i8))),
            m!(eq!(b',')),
            m!($or($or(eq!(b' '), eq!(b'\t')), $or(eq!(b'\n'), eq!(b'\r')))),
            m!(eq!(b'n')),
            m!(eq!(b'u')),
            m!(eq!(b'l')),
        ]
    }};
}

fn scalar_masks_from(m: [u64; 11]) -> ScalarMasks {
    ScalarMasks {
        digit: m[0],
        zero: m[1],
        dot: m[2],
        minus: m[3],
        plus: m[4],
        exp: m[5],
        comma: m[6],
        whitespace: m[7],
        n: m[8],
        u: m[9],
        l: m[10],
    }
}

/// The whitespace byte whose low nibble is the index, for a whitespace test by one byte
/// shuffle: a byte is whitespace when the entry its low nibble names is the byte itself.
/// Space, tab, LF and CR have the low nibbles 0, 9, A and D; every other entry is 0xFF,
/// which no byte below 0x80 is, and a byte from 0x80 looks up 0 (the shuffle's rule for
/// an index with its high bit set), which it is not.
const WS_BY_LOW_NIBBLE: [u8; 16] = {
    let mut ws = [0xFFu8; 16];
    ws[0x0] = b' ';
    ws[0x9] = b'\t';
    ws[0xA] = b'\n';
    ws[0xD] = b'\r';
    ws
};

/// AVX-512: the block as one register, each class a mask compare (whitespace as one
/// lookup: the byte its low nibble names, if any, compared with the byte itself).
#[target_feature(enable = "avx512f,avx512bw")]
fn scalar_masks_avx512(block: &[u8; 64]) -> ScalarMasks {
    let x = load64(block);
    let eq = |c: u8| _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(c as i8));
    let ws = u128::from_le_bytes(WS_BY_LOW_NIBBLE) as i128;
    let (h, l) = ((ws >> 64) as i64, ws as i64);
    let named = _mm512_shuffle_epi8(_mm512_set_epi64(h, l, h, l, h, l, h, l), x);
    ScalarMasks {
        // Unsigned: `x - '0'` at most 9.
        digit: _mm512_cmple_epu8_mask(
            _mm512_sub_epi8(x, _mm512_set1_epi8(b'0' as i8)),
            _mm512_set1_epi8(9),
        ),
        zero: eq(b'0'),
        dot: eq(b'.'),
        minus: eq(b'-'),
        plus: eq(b'+'),
        // `e` and `E` differ only in bit 0x20.
        exp: _mm512_cmpeq_epi8_mask(
            _mm512_or_si512(x, _mm512_set1_epi8(0x20)),
            _mm512_set1_epi8(b'e' as i8),
        ),
        comma: eq(b','),
        whitespace: _mm512_cmpeq_epi8_mask(named, x),
        n: eq(b'n'),
        u: eq(b'u'),
        l: eq(b'l'),
    }
}

/// AVX2: the classes of `scalar_lanes!`, the digits as one unsigned range test (`x - '0'` at
/// most 9) and the whitespace as one lookup (as [`scalar_masks_avx512`]'s): 14 fewer
/// instructions a block than the SSE2 forms of those two, which have no byte shuffle.
#[target_feature(enable = "avx2")]
fn scalar_masks_avx2(block: &[u8; 64]) -> ScalarMasks {
    let ws = u128::from_le_bytes(WS_BY_LOW_NIBBLE) as i128;
    let (h, l) = ((ws >> 64) as i64, ws as i64);
    // The table twice: `vpshufb` looks up within each 16-byte lane.
    let ws_t = _mm256_set_epi64x(h, l, h, l);
    scalar_masks_from(by_halves(block, |x| {
        let m = |v: __m256i| _mm256_movemask_epi8(v) as u32 as u64;
        let eq = |c: u8| m(_mm256_cmpeq_epi8(x, _mm256_set1_epi8(c as i8)));
        let d = _mm256_sub_epi8(x, _mm256_set1_epi8(b'0' as i8));
        [
            m(_mm256_cmpeq_epi8(
                _mm256_min_epu8(d, _mm256_set1_epi8(9)),
                d,
            )),
            eq(b'0'),
            eq(b'.'),
            eq(b'-'),
            eq(b'+'),
            // `e` and `E` differ only in bit 0x20.
            m(_mm256_cmpeq_epi8(
                _mm256_or_si256(x, _mm256_set1_epi8(0x20)),
                _mm256_set1_epi8(b'e' as i8),
            )),
            eq(b','),
            m(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(ws_t, x), x)),
            eq(b'n'),
            eq(b'u'),
            eq(b'l'),
        ]
    }))
}

#[target_feature(enable = "sse2")]
fn scalar_masks_sse2(block: &[u8; 64]) -> ScalarMasks {
    scalar_masks_from(by_quarters(block, |x| {
        scalar_lanes!(
            x,
            _mm_set1_epi8,
            _mm_cmpeq_epi8,
            _mm_min_epu8,
            _mm_max_epu8,
            _mm_and_si128,
            _mm_or_si128,
            _mm_movemask_epi8
        )
    }))
}

/// 16 bytes: the mask of quotes, backslashes and control bytes, and the mask of non-ASCII
/// bytes. SSE2 only (the x86_64 baseline), so it inlines into any caller.
#[inline]
pub(super) fn probe16(bytes: &[u8; 16]) -> (u32, u32) {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe { probe16_sse2(bytes) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn probe16_sse2(bytes: &[u8; 16]) -> (u32, u32) {
    let x = load16(bytes);
    let q = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
    let b = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
    let c = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
    let stops = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c)) as u32;
    (stops & 0xFFFF, _mm_movemask_epi8(x) as u32 & 0xFFFF)
}

/// The 16 bytes as one vector (unaligned load).
#[inline]
#[target_feature(enable = "sse2")]
fn load16(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: `bytes` is 16 bytes: the unaligned 16-byte load reads exactly them.
    unsafe { _mm_loadu_si128(bytes.as_ptr() as *const __m128i) }
}

/// Lanes holding an ASCII digit (all ones), the others zero.
#[inline]
#[target_feature(enable = "sse2")]
fn digits(x: __m128i) -> __m128i {
    // Unsigned: x >= '0' where max(x, '0') == x, x <= '9' where min(x, '9') == x.
    let ge = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(b'0' as i8)), x);
    let le = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(b'9' as i8)), x);
    _mm_and_si128(ge, le)
}

/// 16 bytes: digits, dots, exponent letters and signs. SSE2 only, like [`probe16`].
#[inline]
pub(super) fn number_masks16(bytes: &[u8; 16]) -> NumMasks {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe { number_masks16_sse2(bytes) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn number_masks16_sse2(bytes: &[u8; 16]) -> NumMasks {
    let x = load16(bytes);
    let mask = |v| _mm_movemask_epi8(v) as u32 & 0xFFFF;
    // `e` and `E` differ only in bit 0x20.
    let lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
    let plus = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'+' as i8));
    let minus = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'-' as i8));
    NumMasks {
        digit: mask(digits(x)),
        dot: mask(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'.' as i8))),
        exp: mask(_mm_cmpeq_epi8(lower, _mm_set1_epi8(b'e' as i8))),
        sign: mask(_mm_or_si128(plus, minus)),
    }
}

/// 16 bytes: the mask of bytes that are not ASCII digits. SSE2 only, like [`probe16`].
#[inline]
pub(super) fn non_digits16(bytes: &[u8; 16]) -> u32 {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe { non_digits16_sse2(bytes) }
}

/// 16 bytes: the mask of quotes.
#[inline]
pub(super) fn quotes16(bytes: &[u8; 16]) -> u32 {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
    unsafe { quotes16_sse2(bytes) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn quotes16_sse2(bytes: &[u8; 16]) -> u32 {
    let x = load16(bytes);
    _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8))) as u32 & 0xFFFF
}

#[inline]
#[target_feature(enable = "sse2")]
fn non_digits16_sse2(bytes: &[u8; 16]) -> u32 {
    let x = load16(bytes);
    !(_mm_movemask_epi8(digits(x)) as u32) & 0xFFFF
}

#[cfg(test)]
pub(super) fn string_both(block: &[u8; 64]) -> Vec<(&'static str, StrMasks)> {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let mut v = vec![("sse2", unsafe { string_masks_sse2(block) })];
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 support was just checked.
        v.push(("avx2", unsafe { string_masks_avx2(block) }));
    }
    if has_avx512() {
        // SAFETY: AVX-512F and BW support was just checked.
        v.push(("avx512", unsafe { string_masks_avx512(block) }));
    }
    v
}

#[cfg(test)]
pub(super) fn escape_both(block: &[u8; 64]) -> Vec<(&'static str, EscMasks)> {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let mut v = vec![("sse2", unsafe { escape_masks_sse2(block) })];
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 support was just checked.
        v.push(("avx2", unsafe { escape_masks_avx2(block) }));
    }
    if has_avx512() {
        // SAFETY: AVX-512F and BW support was just checked.
        v.push(("avx512", unsafe { escape_masks_avx512(block) }));
    }
    v
}

#[cfg(test)]
pub(super) fn bracket_both(block: &[u8; 64]) -> Vec<(&'static str, BracketMasks)> {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let mut v = vec![("sse2", unsafe { bracket_masks_sse2(block) })];
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 support was just checked.
        v.push(("avx2", unsafe { bracket_masks_avx2(block) }));
    }
    if has_avx512() {
        // SAFETY: AVX-512F and BW support was just checked.
        v.push(("avx512", unsafe { bracket_masks_avx512(block) }));
    }
    v
}

#[cfg(test)]
pub(super) fn both(block: &[u8; 64]) -> Vec<(&'static str, Masks)> {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let mut v = vec![("sse2", unsafe { classify_sse2(block) })];
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 support was just checked.
        v.push(("avx2", unsafe { classify_avx2(block) }));
    }
    v
}

#[cfg(test)]
pub(super) fn scalar_both(block: &[u8; 64]) -> Vec<(&'static str, ScalarMasks)> {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let mut v = vec![("sse2", unsafe { scalar_masks_sse2(block) })];
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 support was just checked.
        v.push(("avx2", unsafe { scalar_masks_avx2(block) }));
    }
    if has_avx512() {
        // SAFETY: AVX-512F and BW support was just checked.
        v.push(("avx512", unsafe { scalar_masks_avx512(block) }));
    }
    v
}

/// Whether the CPU has what the AVX-512 classifiers need (for the tests, which run every
/// implementation the CPU has).
#[cfg(test)]
pub(super) fn has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
}
