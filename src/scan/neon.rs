//! aarch64 (little-endian): NEON. NEON is part of the aarch64 baseline, so there is nothing
//! to detect at run time.
//!
//! NEON has no `movemask`. The comparison results (each lane 0x00 or 0xFF) are ANDed with
//! the bit weights 1, 2, 4, ..., 128 (repeated per 8 lanes) and summed by pairwise adds
//! until each byte holds the mask of 8 lanes: three `addp` rounds turn four 16-lane vectors
//! into the 64-bit mask of a block.

use std::arch::aarch64::*;

use super::{
    BlockFn, Blocks, BracketMasks, EscMasks, Masks, NumMasks, ScalarMasks, StrMasks, Track,
};

/// Lane `i` holds `1 << (i % 8)`.
#[inline]
#[target_feature(enable = "neon")]
fn weights() -> uint8x16_t {
    let w = vcreate_u8(0x8040_2010_0804_0201);
    vcombine_u8(w, w)
}

#[inline]
#[target_feature(enable = "neon")]
fn splat(b: u8) -> uint8x16_t {
    vdupq_n_u8(b)
}

/// The 64-bit mask of four comparison results (bit `i` for lane `i % 16` of vector
/// `i / 16`).
#[inline]
#[target_feature(enable = "neon")]
fn movemask64(v: [uint8x16_t; 4]) -> u64 {
    let w = weights();
    let a = vpaddq_u8(vandq_u8(v[0], w), vandq_u8(v[1], w));
    let b = vpaddq_u8(vandq_u8(v[2], w), vandq_u8(v[3], w));
    let s = vpaddq_u8(a, b);
    let s = vpaddq_u8(s, s);
    vgetq_lane_u64::<0>(vreinterpretq_u64_u8(s))
}

#[inline]
#[target_feature(enable = "neon")]
fn load16(bytes: &[u8; 16]) -> uint8x16_t {
    // SAFETY: `bytes` is 16 bytes: the 16-byte load (no alignment required) reads exactly
    // them.
    unsafe { vld1q_u8(bytes.as_ptr()) }
}

#[inline]
#[target_feature(enable = "neon")]
fn load64(block: &[u8; 64]) -> [uint8x16_t; 4] {
    let p = block.as_ptr();
    // SAFETY: `block` is 64 bytes; load `k` reads bytes 16k..16k+16 of it (no alignment
    // required).
    unsafe {
        [
            vld1q_u8(p),
            vld1q_u8(p.add(16)),
            vld1q_u8(p.add(32)),
            vld1q_u8(p.add(48)),
        ]
    }
}

pub(super) fn implementation() -> &'static str {
    "neon"
}

// The string scan takes its classifiers through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn string_masks(block: &[u8; 64]) -> StrMasks {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { string_masks_neon(block) }
}

#[inline]
#[target_feature(enable = "neon")]
fn string_masks_neon(block: &[u8; 64]) -> StrMasks {
    let v = load64(block);
    let (mut q, mut b, mut c, mut n) = (v, v, v, v);
    for k in 0..4 {
        q[k] = vceqq_u8(v[k], splat(b'"'));
        b[k] = vceqq_u8(v[k], splat(b'\\'));
        c[k] = vcltq_u8(v[k], splat(0x20));
        n[k] = vcgeq_u8(v[k], splat(0x80));
    }
    StrMasks {
        quote: movemask64(q),
        backslash: movemask64(b),
        control: movemask64(c),
        non_ascii: movemask64(n),
    }
}

/// [`super::with_blocks`]: NEON is the baseline, nothing to choose.
#[inline]
pub(super) fn with_blocks<R, F: BlockFn<R>>(f: F) -> R {
    f.call(NeonBlocks)
}

/// The NEON classifiers.
#[derive(Clone, Copy)]
struct NeonBlocks;

impl Blocks for NeonBlocks {
    const SIMD: bool = true;
    #[inline(always)]
    fn string_masks(self, block: &[u8; 64]) -> StrMasks {
        // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
        unsafe { string_masks_neon(block) }
    }
    #[inline(always)]
    fn escape_masks(self, block: &[u8; 64]) -> EscMasks {
        // SAFETY: as above.
        unsafe { escape_masks_neon(block) }
    }
    #[inline(always)]
    fn scalar_masks(self, block: &[u8; 64]) -> ScalarMasks {
        // SAFETY: as above.
        unsafe { scalar_masks_neon(block) }
    }
}

// The string scan takes its classifiers through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn escape_masks(block: &[u8; 64]) -> EscMasks {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { escape_masks_neon(block) }
}

/// The escape classes from one nibble lookup ([`super::ESC_NIBBLES`]) per byte.
#[inline]
#[target_feature(enable = "neon")]
fn escape_masks_neon(block: &[u8; 64]) -> EscMasks {
    let v = load64(block);
    let (lo, hi) = super::ESC_NIBBLES;
    let (lo_t, hi_t) = (load16(&lo), load16(&hi));
    let (mut simple, mut u, mut hex, mut d) = (v, v, v, v);
    for k in 0..4 {
        let x = v[k];
        let r = vandq_u8(
            vqtbl1q_u8(lo_t, vandq_u8(x, splat(0x0F))),
            vqtbl1q_u8(hi_t, vshrq_n_u8::<4>(x)),
        );
        simple[k] = vtstq_u8(r, splat(0x1F));
        u[k] = vtstq_u8(r, splat(0x80));
        hex[k] = vtstq_u8(r, splat(0x60));
        d[k] = vceqq_u8(vorrq_u8(x, splat(0x20)), splat(b'd'));
    }
    EscMasks {
        simple: movemask64(simple),
        u: movemask64(u),
        hex: movemask64(hex),
        d: movemask64(d),
    }
}

#[inline]
pub(super) fn track(bytes: &[u8], t: &mut Track) -> bool {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { track_neon(bytes, t) }
}

#[target_feature(enable = "neon")]
fn track_neon(bytes: &[u8], t: &mut Track) -> bool {
    super::track_with(bytes, t, |b| bracket_masks_neon(b), super::prefix_xor)
}

// The tracker calls each implementation's own classifier; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn bracket_masks(block: &[u8; 64]) -> BracketMasks {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { bracket_masks_neon(block) }
}

#[inline]
#[target_feature(enable = "neon")]
fn bracket_masks_neon(block: &[u8; 64]) -> BracketMasks {
    let v = load64(block);
    let (mut q, mut b, mut o, mut c) = (v, v, v, v);
    for k in 0..4 {
        // ORed with 0x20, `[` and `{` both give `{`, `]` and `}` both give `}`, and no
        // other byte gives either.
        let folded = vorrq_u8(v[k], splat(0x20));
        q[k] = vceqq_u8(v[k], splat(b'"'));
        b[k] = vceqq_u8(v[k], splat(b'\\'));
        o[k] = vceqq_u8(folded, splat(b'{'));
        c[k] = vceqq_u8(folded, splat(b'}'));
    }
    BracketMasks {
        quote: movemask64(q),
        backslash: movemask64(b),
        open: movemask64(o),
        close: movemask64(c),
    }
}

#[allow(dead_code)] // see `scan::classify`
#[inline]
pub(super) fn classify(block: &[u8; 64]) -> Masks {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { classify_neon(block) }
}

#[allow(dead_code)]
#[target_feature(enable = "neon")]
fn classify_neon(block: &[u8; 64]) -> Masks {
    let v = load64(block);
    let s = string_masks_neon(block);
    let (mut st, mut ws) = (v, v);
    for k in 0..4 {
        let x = v[k];
        let brackets = vorrq_u8(
            vorrq_u8(vceqq_u8(x, splat(b'{')), vceqq_u8(x, splat(b'}'))),
            vorrq_u8(vceqq_u8(x, splat(b'[')), vceqq_u8(x, splat(b']'))),
        );
        let punct = vorrq_u8(vceqq_u8(x, splat(b':')), vceqq_u8(x, splat(b',')));
        st[k] = vorrq_u8(brackets, punct);
        ws[k] = vorrq_u8(
            vorrq_u8(vceqq_u8(x, splat(b' ')), vceqq_u8(x, splat(b'\t'))),
            vorrq_u8(vceqq_u8(x, splat(b'\n')), vceqq_u8(x, splat(b'\r'))),
        );
    }
    Masks {
        quote: s.quote,
        backslash: s.backslash,
        control: s.control,
        non_ascii: s.non_ascii,
        structural: movemask64(st),
        whitespace: movemask64(ws),
    }
}

/// [`super::has_closer`].
#[inline]
pub(super) fn has_closer(bytes: &[u8]) -> bool {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { has_closer_neon(bytes) }
}

#[inline]
#[target_feature(enable = "neon")]
fn has_closer_neon(bytes: &[u8]) -> bool {
    // ORed with 0x20, `]` and `}` both give `}`, and no other byte does.
    super::has_closer_with(
        bytes,
        |w| vceqq_u8(vorrq_u8(load16(w), splat(0x20)), splat(b'}')),
        |a, b| vorrq_u8(a, b),
        |v| vmaxvq_u8(v) != 0,
    )
}

/// 16 bytes: the mask of quotes, backslashes and control bytes, and the mask of non-ASCII
/// bytes.
#[inline]
pub(super) fn probe16(bytes: &[u8; 16]) -> (u32, u32) {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { probe16_neon(bytes) }
}

#[inline]
#[target_feature(enable = "neon")]
fn probe16_neon(bytes: &[u8; 16]) -> (u32, u32) {
    let x = load16(bytes);
    let stops = vorrq_u8(
        vorrq_u8(vceqq_u8(x, splat(b'"')), vceqq_u8(x, splat(b'\\'))),
        vcltq_u8(x, splat(0x20)),
    );
    let wide = vcgeq_u8(x, splat(0x80));
    let w = weights();
    // Lanes 0..8: pairs of `stops`, 8..16: pairs of `wide`; then quads; then octets.
    let s = vpaddq_u8(vandq_u8(stops, w), vandq_u8(wide, w));
    let s = vpaddq_u8(s, s);
    let s = vpaddq_u8(s, s);
    let m = vgetq_lane_u32::<0>(vreinterpretq_u32_u8(s));
    (m & 0xFFFF, m >> 16)
}

/// Lanes holding an ASCII digit (all ones), the others zero.
#[inline]
#[target_feature(enable = "neon")]
fn digits(x: uint8x16_t) -> uint8x16_t {
    // Unsigned: x - '0' <= 9 exactly for the digits.
    vcleq_u8(vsubq_u8(x, splat(b'0')), splat(9))
}

/// 16 bytes: the mask of bytes that are not ASCII digits.
#[inline]
pub(super) fn non_digits16(bytes: &[u8; 16]) -> u32 {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { non_digits16_neon(bytes) }
}

/// 16 bytes: the mask of quotes.
#[inline]
pub(super) fn quotes16(bytes: &[u8; 16]) -> u32 {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { quotes16_neon(bytes) }
}

#[inline]
#[target_feature(enable = "neon")]
fn quotes16_neon(bytes: &[u8; 16]) -> u32 {
    movemask16(vceqq_u8(load16(bytes), splat(b'"')))
}

#[inline]
#[target_feature(enable = "neon")]
fn non_digits16_neon(bytes: &[u8; 16]) -> u32 {
    movemask16(vmvnq_u8(digits(load16(bytes))))
}

/// The 16-bit mask of one comparison result (bit `i` for lane `i`).
#[inline]
#[target_feature(enable = "neon")]
fn movemask16(v: uint8x16_t) -> u32 {
    let s = vandq_u8(v, weights());
    let s = vpaddq_u8(s, s);
    let s = vpaddq_u8(s, s);
    let s = vpaddq_u8(s, s);
    vgetq_lane_u16::<0>(vreinterpretq_u16_u8(s)) as u32
}

/// 16 bytes: digits, dots, exponent letters and signs, as one 64-bit mask of four
/// comparison results.
#[inline]
pub(super) fn number_masks16(bytes: &[u8; 16]) -> NumMasks {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { number_masks16_neon(bytes) }
}

#[inline]
#[target_feature(enable = "neon")]
fn number_masks16_neon(bytes: &[u8; 16]) -> NumMasks {
    let x = load16(bytes);
    let digit = digits(x);
    let dot = vceqq_u8(x, splat(b'.'));
    // `e` and `E` differ only in bit 0x20.
    let exp = vceqq_u8(vorrq_u8(x, splat(0x20)), splat(b'e'));
    let sign = vorrq_u8(vceqq_u8(x, splat(b'+')), vceqq_u8(x, splat(b'-')));
    let m = movemask64([digit, dot, exp, sign]);
    NumMasks {
        digit: m as u32 & 0xFFFF,
        dot: (m >> 16) as u32 & 0xFFFF,
        exp: (m >> 32) as u32 & 0xFFFF,
        sign: (m >> 48) as u32,
    }
}

/// The scalar classes of a block.
// The number arrays take their classifier through `with_blocks`; this one is for the tests.
#[cfg(test)]
#[inline]
pub(super) fn scalar_masks(block: &[u8; 64]) -> ScalarMasks {
    // SAFETY: NEON is part of the aarch64 baseline: every aarch64 CPU has it.
    unsafe { scalar_masks_neon(block) }
}

#[inline]
#[target_feature(enable = "neon")]
fn scalar_masks_neon(block: &[u8; 64]) -> ScalarMasks {
    let v = load64(block);
    // The mask of one lane-wise class over the four vectors.
    macro_rules! class {
        (|$x:ident| $e:expr) => {{
            let f = |$x: uint8x16_t| $e;
            movemask64([f(v[0]), f(v[1]), f(v[2]), f(v[3])])
        }};
    }
    macro_rules! eq {
        ($c:expr) => {
            class!(|x| vceqq_u8(x, splat($c)))
        };
    }
    ScalarMasks {
        digit: class!(|x| digits(x)),
        zero: eq!(b'0'),
        dot: eq!(b'.'),
        minus: eq!(b'-'),
        plus: eq!(b'+'),
        // `e` and `E` differ only in bit 0x20.
        exp: class!(|x| vceqq_u8(vorrq_u8(x, splat(0x20)), splat(b'e'))),
        comma: eq!(b','),
        whitespace: class!(|x| vorrq_u8(
            vorrq_u8(vceqq_u8(x, splat(b' ')), vceqq_u8(x, splat(b'\t'))),
            vorrq_u8(vceqq_u8(x, splat(b'\n')), vceqq_u8(x, splat(b'\r'))),
        )),
        n: eq!(b'n'),
        u: eq!(b'u'),
        l: eq!(b'l'),
    }
}
