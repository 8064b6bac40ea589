//! The block (SIMD) string path against the reference machine: every seed, padded with
//! 0..=515 filler bytes before it and a few sizes after it, and the mirror (a few sizes
//! before, 0..=515 after), so that each seed byte lands on every position of a 64-byte block
//! and every tail length runs. Run in CI both with the
//! SIMD path and with `--cfg toolstream_disable_simd`.

use crate::common;

use bytes::Bytes;
use common::{run_cuts, run_reference};
use toolstream::json::{Limits, Mode};

/// String contents (the bytes between the quotes), valid and invalid.
const SEEDS: &[&[u8]] = &[
    b"",
    b"abc",
    b"a\\\"b",
    b"\\\\",
    b"\\\\\\\"",
    b"\\\\\\\\\"",
    b"\\n\\t\\r\\b\\f\\/",
    b"\\u00e9\\u00E9",
    b"\\ud83d\\ude00",
    "é😀 – ü".as_bytes(),
    "日本語のテキスト".as_bytes(),
    b"\\x",
    b"\\ud800",
    b"\\ud800\\u0041",
    b"\\udc00",
    b"\\u12",
    b"\\u12G4",
    b"tab\there",
    b"\x01",
    b"\x1f",
    b"\x7f",
    b"\xFF",
    b"\xC0\x80",
    b"\xE2\x82",
    b"\xED\xA0\x80",
    b"\xF4\x90\x80\x80",
    b"\\",
    b"\\\\\\",
    b"a\"b",
    b"\\\"\\\"\\\"",
    // For the escape masks: a `d` that is no surrogate, the highest pair, a lone low
    // half, hex-like bytes after the four digits, digits cut by the quote, a bad digit,
    // an escaped backslash before a plain `u`, a capital `U`, a wrong simple escape.
    b"\\uD123\\ud7ff",
    b"\\uDBFF\\uDFFF",
    b"\\udfff",
    b"\\u0041BCDEF",
    b"\\u004",
    b"\\uabcg",
    b"\\\\u0041",
    b"\\U0041",
    b"\\a",
    b"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9x",
    // For the short strings' masks, where a control byte stands in for a backslash: one
    // right before a quote, one after a backslash, one before a simple escape.
    b"\x01\"",
    b"\\\x01\"",
    b"\x05\\n",
];

fn check(input: Vec<u8>, cuts: &[&[usize]]) {
    let input = Bytes::from(input);
    let want = run_reference(Mode::Objects, Limits::default(), &input);
    for c in cuts {
        let got = run_cuts(Mode::Objects, Limits::default(), &input, c);
        assert_eq!(
            got.without_detail(),
            want,
            "cuts {c:?} on {}",
            common::show(&input)
        );
    }
}

fn padded(filler: &[u8], left: usize, seed: &[u8], right: usize) -> Vec<u8> {
    let mut v = b"{\"k\":\"".to_vec();
    for _ in 0..left {
        v.extend_from_slice(filler);
    }
    v.extend_from_slice(seed);
    for _ in 0..right {
        v.extend_from_slice(filler);
    }
    v.extend_from_slice(b"\"}");
    v
}

/// Padding lengths: `0..=max`, or under miri (which runs the SIMD paths slowly) the lengths around every 16-byte lane and 64-byte block boundary up to
/// 130.
fn pads(max: usize) -> Vec<usize> {
    if cfg!(miri) {
        [
            0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 127, 128, 129,
        ]
        .into_iter()
        .filter(|&p| p <= max)
        .collect()
    } else {
        (0..=max).collect()
    }
}

#[test]
fn seeds_padded_to_every_block_position() {
    for seed in SEEDS {
        for left in pads(515) {
            for right in [0, 1, 63, 64, 65] {
                let input = padded(b"a", left, seed, right);
                let mid = input.len() / 2;
                check(input, &[&[], &[mid], &[64, 128, 192]]);
            }
        }
    }
}

/// The mirror of the test above: filler after the seed of every length up to 515, so each
/// seed byte ends every tail length and every block position counted from the end.
#[test]
fn seeds_padded_on_the_right_to_every_length() {
    for seed in SEEDS {
        for right in pads(515) {
            for left in [0, 1, 63, 64, 65] {
                let input = padded(b"a", left, seed, right);
                let mid = input.len() / 2;
                check(input, &[&[], &[mid]]);
            }
        }
    }
}

#[test]
fn seeds_padded_with_non_ascii_and_escapes() {
    for seed in SEEDS {
        for left in pads(260).into_iter().filter(|p| cfg!(miri) || p % 3 == 0) {
            check(padded("é".as_bytes(), left, seed, 40), &[&[]]);
            check(padded(b"\\n", left, seed, 40), &[&[]]);
            check(padded(b"\\\\", left, seed, 40), &[&[], &[100]]);
        }
    }
}

#[test]
fn limits_inside_long_strings_are_exact() {
    // 1..=18 covers the inline look at strings of up to 16 bytes on either side of
    // its limit check.
    for max in (1u64..=18).chain([31, 32, 33, 63, 64, 65, 100, 127, 128, 200]) {
        let limits = Limits::default().max_string_bytes(max);
        for len in [
            max as usize - 1,
            max as usize,
            max as usize + 1,
            max as usize + 70,
        ] {
            let input = Bytes::from(padded(b"a", len, b"", 0));
            let want = run_reference(Mode::Objects, limits, &input);
            assert_eq!(
                run_cuts(Mode::Objects, limits, &input, &[]).without_detail(),
                want,
                "max {max} len {len}"
            );
        }
        let limits = Limits::default().max_value_bytes(max + 8);
        for len in [
            max as usize - 1,
            max as usize,
            max as usize + 1,
            max as usize + 70,
        ] {
            let input = Bytes::from(padded(b"a", len, "é".as_bytes(), 0));
            let want = run_reference(Mode::Objects, limits, &input);
            assert_eq!(
                run_cuts(Mode::Objects, limits, &input, &[]).without_detail(),
                want,
                "value max {max} len {len}"
            );
        }
    }
}

/// A chunk that continues a string already more than a block long is read in whole blocks
/// from its start, and its last bytes (fewer than a block) as the block that ends at the
/// chunk's end, shifted past the bytes already read. Each seed at every place in that last
/// block, at the chunk's very end and cut inside it (the next chunk taking the rest).
#[test]
fn seeds_at_the_end_of_a_chunk_that_continues_a_long_string() {
    let step = if cfg!(miri) { 13 } else { 1 };
    for seed in SEEDS {
        let input = padded(b"a", 200, seed, 100);
        // The seed starts at 206; the second chunk starts 80 bytes into the string.
        for end in (130..=206 + seed.len() + 70).step_by(step) {
            check(input.clone(), &[&[86, end], &[86, end, end + 1]]);
        }
    }
}

/// The string limit inside a chunk that continues a long string: the scan's bound is the
/// limit, not the chunk's end, wherever the chunk ends.
#[test]
fn string_limits_in_chunks_that_continue_a_long_string() {
    let step = if cfg!(miri) { 17 } else { 1 };
    for max in [100u64, 127, 128, 129, 200] {
        let limits = Limits::default().max_string_bytes(max);
        for len in [max as usize, max as usize + 1, max as usize + 70] {
            let input = Bytes::from(padded(b"\\n", len / 2, b"", 0));
            let want = run_reference(Mode::Objects, limits, &input);
            for end in (80..input.len()).step_by(step) {
                assert_eq!(
                    run_cuts(Mode::Objects, limits, &input, &[76, end]).without_detail(),
                    want,
                    "max {max} len {len} cut at 76 and {end}"
                );
            }
        }
    }
}

#[test]
fn the_implementation_in_use_is_reported() {
    let name = toolstream::scan::implementation();
    let expected: &[&str] = if cfg!(toolstream_disable_simd) {
        &["scalar"]
    } else if cfg!(target_arch = "x86_64") {
        &["avx512", "avx2", "sse2"]
    } else if cfg!(target_arch = "aarch64") {
        &["neon"]
    } else {
        &["scalar"]
    };
    assert!(
        expected.contains(&name),
        "{name}, expected one of {expected:?}"
    );
    eprintln!("scan implementation: {name}");
}
