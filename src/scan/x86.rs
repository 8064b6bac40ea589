//! x86_64: AVX2 (detected at run time) or SSE2 (always present on x86_64).

use std::arch::x86_64::*;
use std::sync::atomic::{AtomicU8, Ordering};

use super::Masks;

const UNKNOWN: u8 = 0;
const SSE2: u8 = 1;
const AVX2: u8 = 2;

/// The detected implementation, cached after the first call.
static CHOICE: AtomicU8 = AtomicU8::new(UNKNOWN);

#[inline]
fn choice() -> u8 {
    let c = CHOICE.load(Ordering::Relaxed);
    if c != UNKNOWN {
        return c;
    }
    let c = if std::is_x86_feature_detected!("avx2") {
        AVX2
    } else {
        SSE2
    };
    CHOICE.store(c, Ordering::Relaxed);
    c
}

pub(super) fn implementation() -> &'static str {
    if choice() == AVX2 {
        "avx2"
    } else {
        "sse2"
    }
}

#[inline]
pub(super) fn classify(block: &[u8; 64]) -> Masks {
    if choice() == AVX2 {
        // SAFETY: `choice()` returns AVX2 only when the CPU reported AVX2 support.
        unsafe { classify_avx2(block) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { classify_sse2(block) }
    }
}

/// The six class masks of 16 or 32 bytes, as movemask bits.
macro_rules! lane_masks {
    ($x:expr, $set1:ident, $cmpeq:ident, $max:ident, $or:ident, $movemask:ident, $ty:ty) => {{
        let x = $x;
        macro_rules! eq {
            ($c:expr) => {
                $cmpeq(x, $set1($c as i8))
            };
        }
        let quote = $movemask(eq!(b'"')) as u32 as $ty;
        let backslash = $movemask(eq!(b'\\')) as u32 as $ty;
        // x <= 0x1F  <=>  max(x, 0x1F) == 0x1F (unsigned).
        let control = $movemask($cmpeq($max(x, $set1(0x1F)), $set1(0x1F))) as u32 as $ty;
        let non_ascii = $movemask(x) as u32 as $ty;
        let structural = $movemask($or(
            $or($or(eq!(b'{'), eq!(b'}')), $or(eq!(b'['), eq!(b']'))),
            $or(eq!(b':'), eq!(b',')),
        )) as u32 as $ty;
        let whitespace =
            $movemask($or($or(eq!(b' '), eq!(b'\t')), $or(eq!(b'\n'), eq!(b'\r')))) as u32 as $ty;
        [quote, backslash, control, non_ascii, structural, whitespace]
    }};
}

#[target_feature(enable = "avx2")]
fn classify_avx2(block: &[u8; 64]) -> Masks {
    let p = block.as_ptr() as *const __m256i;
    // SAFETY: `block` is 64 bytes; the two unaligned 32-byte loads read bytes 0..32 and
    // 32..64 of it.
    let (lo, hi) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
    let l = lane_masks!(
        lo,
        _mm256_set1_epi8,
        _mm256_cmpeq_epi8,
        _mm256_max_epu8,
        _mm256_or_si256,
        _mm256_movemask_epi8,
        u64
    );
    let h = lane_masks!(
        hi,
        _mm256_set1_epi8,
        _mm256_cmpeq_epi8,
        _mm256_max_epu8,
        _mm256_or_si256,
        _mm256_movemask_epi8,
        u64
    );
    let j = |k: usize| l[k] | (h[k] << 32);
    Masks {
        quote: j(0),
        backslash: j(1),
        control: j(2),
        non_ascii: j(3),
        structural: j(4),
        whitespace: j(5),
    }
}

#[target_feature(enable = "sse2")]
fn classify_sse2(block: &[u8; 64]) -> Masks {
    let p = block.as_ptr() as *const __m128i;
    let mut out = [0u64; 6];
    for lane in 0..4 {
        // SAFETY: `block` is 64 bytes; lane `k` reads bytes 16k..16k+16 unaligned.
        let x = unsafe { _mm_loadu_si128(p.add(lane)) };
        let m = lane_masks!(
            x,
            _mm_set1_epi8,
            _mm_cmpeq_epi8,
            _mm_max_epu8,
            _mm_or_si128,
            _mm_movemask_epi8,
            u64
        );
        for k in 0..6 {
            out[k] |= (m[k] & 0xFFFF) << (16 * lane);
        }
    }
    Masks {
        quote: out[0],
        backslash: out[1],
        control: out[2],
        non_ascii: out[3],
        structural: out[4],
        whitespace: out[5],
    }
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
