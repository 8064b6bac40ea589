use super::portable::{
    bracket_masks_scalar, classify_scalar, escape_masks_scalar, non_digits16_scalar,
    number_masks16_scalar, probe16_scalar, quotes16_scalar, scalar_masks_scalar,
};
use super::*;

/// The next value of a xorshift generator (the tests' deterministic randomness).
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn implementations(block: &[u8; 64]) -> Vec<(&'static str, Masks)> {
    #[allow(unused_mut)]
    let mut v = vec![("dispatch", classify(block))];
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    v.extend(x86::both(block));
    v
}

fn string_implementations(block: &[u8; 64]) -> Vec<(&'static str, StrMasks)> {
    #[allow(unused_mut)]
    let mut v = vec![("dispatch", string_masks(block))];
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    v.extend(x86::string_both(block));
    v
}

fn bracket_implementations(block: &[u8; 64]) -> Vec<(&'static str, BracketMasks)> {
    #[allow(unused_mut)]
    let mut v = vec![("dispatch", bracket_masks(block))];
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    v.extend(x86::bracket_both(block));
    v
}

/// Positions of a 64-byte block to test at: all of them, or under miri (which runs the SIMD
/// paths slowly) the first and last byte of every 8-byte group, which
/// covers every lane boundary of the 16- and 32-byte vectors and of the bit weights.
fn positions() -> Vec<usize> {
    if cfg!(miri) {
        (0..64).filter(|p| p % 8 == 0 || p % 8 == 7).collect()
    } else {
        (0..64).collect()
    }
}

/// Byte values to put at each position: all 256, or under miri (which is there to catch
/// undefined behaviour, and runs the SIMD paths slowly; the exhaustive comparison runs
/// natively and, for NEON, under qemu) each class the classifiers tell apart and both edges
/// of every range they test.
fn byte_values() -> Vec<u8> {
    if cfg!(miri) {
        b"\x00\x09\x0A\x0D\x1F\x20\"+,-./09:Ea[\\]e{}\x7F\x80\xBF\xC0\xFF".to_vec()
    } else {
        (0..=255).collect()
    }
}

/// The string classifier and the 16-byte probe against the scalar classifier: every byte
/// value at every position, on several fillers.
#[test]
fn string_masks_and_probe_agree_with_the_scalar_classifier() {
    // Under miri (which runs the SIMD paths slowly) one filler keeps it short.
    let fillers: &[u8] = if cfg!(miri) {
        b"a"
    } else {
        &[b'a', 0x00, 0xFF, b'"', b'\\']
    };
    for &filler in fillers {
        for b in byte_values() {
            for pos in positions() {
                let mut block = [filler; 64];
                block[pos] = b;
                let want = classify_scalar(&block);
                for (name, got) in string_implementations(&block) {
                    assert_eq!(
                        got,
                        StrMasks::from(want),
                        "{name}: byte {b:#04x} at {pos} on filler {filler:#04x}"
                    );
                }
                if pos < 16 {
                    let head: &[u8; 16] = block[..16].try_into().unwrap();
                    let stops = (want.quote | want.backslash | want.control) as u32 & 0xFFFF;
                    let wide = want.non_ascii as u32 & 0xFFFF;
                    assert_eq!(probe16(head), (stops, wide), "probe: {b:#04x} at {pos}");
                    assert_eq!(probe16_scalar(head), (stops, wide), "scalar probe");
                    let quotes = want.quote as u32 & 0xFFFF;
                    assert_eq!(quotes16(head), quotes, "quotes: {b:#04x} at {pos}");
                    assert_eq!(quotes16_scalar(head), quotes, "scalar quotes");
                }
            }
        }
    }
}

/// Every byte value at every position of a block, on several fillers, through every
/// implementation this CPU has, against the scalar reference.
#[test]
fn every_byte_value_at_every_position() {
    let fillers: &[u8] = if cfg!(miri) {
        b"a"
    } else {
        &[b'a', 0x00, 0xFF, b'"', b' ']
    };
    let values: Vec<u16> = (0..256).collect();
    for &filler in fillers {
        for &b in &values {
            for pos in positions() {
                let mut block = [filler; 64];
                block[pos] = b as u8;
                let want = classify_scalar(&block);
                for (name, got) in implementations(&block) {
                    assert_eq!(
                        got, want,
                        "{name}: byte {b:#04x} at {pos} on filler {filler:#04x}"
                    );
                }
            }
        }
    }
}

#[test]
fn random_blocks_agree() {
    let mut x = 0x1234_5678_9ABC_DEF0u64;
    for _ in 0..if cfg!(miri) { 8 } else { 20_000 } {
        let mut block = [0u8; 64];
        for b in block.iter_mut() {
            xorshift(&mut x);
            // Bias towards the interesting bytes.
            *b = match x % 8 {
                0 => b'"',
                1 => b'\\',
                2 => b"{}[]:, \t\n\r"[(x >> 8) as usize % 10],
                _ => (x >> 16) as u8,
            };
        }
        let want = classify_scalar(&block);
        for (name, got) in implementations(&block) {
            assert_eq!(got, want, "{name} on {block:?}");
        }
    }
}

/// The naive definition: a byte is escaped when an odd number of backslashes, counted
/// left to right as escaper/escaped pairs, precede it.
fn escaped_naive(input: &[u8]) -> Vec<bool> {
    let mut out = vec![false; input.len()];
    let mut escape_next = false;
    for (i, &b) in input.iter().enumerate() {
        if escape_next {
            out[i] = true;
            escape_next = false;
        } else if b == b'\\' {
            escape_next = true;
        }
    }
    out
}

fn escaped_blockwise(input: &[u8]) -> Vec<bool> {
    let mut out = Vec::new();
    let mut carry = 0;
    for chunk in input.chunks(64) {
        let mut block = [b'x'; 64];
        block[..chunk.len()].copy_from_slice(chunk);
        let m = classify(&block);
        let e = escaped(m.backslash, &mut carry);
        out.extend((0..chunk.len()).map(|i| (e >> i) & 1 == 1));
    }
    out
}

#[test]
fn escaped_matches_the_naive_definition_across_blocks() {
    let mut x = 0xDEAD_BEEF_u64;
    for len in [1usize, 2, 63, 64, 65, 127, 128, 129, 200, 640] {
        for _ in 0..if cfg!(miri) { 2 } else { 400 } {
            let input: Vec<u8> = (0..len)
                .map(|_| {
                    xorshift(&mut x);
                    if x.is_multiple_of(3) {
                        b'a'
                    } else if x.is_multiple_of(7) {
                        b'"'
                    } else {
                        b'\\'
                    }
                })
                .collect();
            assert_eq!(
                escaped_blockwise(&input),
                escaped_naive(&input),
                "{:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }
    // Runs of every length ending exactly at, and straddling, the block boundary.
    for run in 0..140 {
        for start in 0..70 {
            let mut input = vec![b'a'; start];
            input.extend(std::iter::repeat_n(b'\\', run));
            input.extend_from_slice(b"\"a\\\\\"b");
            assert_eq!(
                escaped_blockwise(&input),
                escaped_naive(&input),
                "run {run} at {start}"
            );
        }
    }
}

/// The carry-less prefix XOR (x86_64's AVX2 path) against the shifts, on every single
/// bit, every pair of bits and random words.
#[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
#[test]
fn prefix_xor_by_clmul_agrees_with_the_shifts() {
    let mut words: Vec<u64> = vec![0, !0, 0x5555_5555_5555_5555];
    for a in 0..64 {
        words.push(1 << a);
        for b in (a + 1..64).step_by(if cfg!(miri) { 13 } else { 1 }) {
            words.push(1 << a | 1 << b);
        }
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..if cfg!(miri) { 50 } else { 100_000 } {
        xorshift(&mut x);
        words.push(x);
    }
    if x86::prefix_xor_fast(0).is_none() {
        eprintln!("SKIPPED: this CPU has no AVX2 path, so no carry-less prefix XOR to test");
        return;
    }
    for w in words {
        assert_eq!(x86::prefix_xor_fast(w), Some(prefix_xor(w)), "{w:#x}");
    }
}

#[test]
fn prefix_xor_marks_the_inside_of_strings() {
    let mut x = 0x0123_4567_u64;
    for _ in 0..1000 {
        xorshift(&mut x);
        let mut acc = false;
        let mut want = 0u64;
        for i in 0..64 {
            acc ^= (x >> i) & 1 == 1;
            want |= (acc as u64) << i;
        }
        assert_eq!(prefix_xor(x), want);
    }
}

/// The digit probe: every byte value at every position of a window, on digit and
/// non-digit fillers, against `u8::is_ascii_digit` (and the portable version likewise).
#[test]
fn non_digit_probe_agrees_with_is_ascii_digit() {
    let fillers: &[u8] = if cfg!(miri) {
        b"7a"
    } else {
        &[b'7', b'a', b'/', b':', 0x00, 0xFF]
    };
    for &filler in fillers {
        for b in byte_values() {
            for pos in positions().into_iter().filter(|&p| p < 16) {
                let mut window = [filler; 16];
                window[pos] = b;
                let want = window
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.is_ascii_digit())
                    .fold(0u32, |m, (i, _)| m | 1 << i);
                assert_eq!(
                    non_digits16(&window),
                    want,
                    "{b:#04x} at {pos} on {filler:#04x}"
                );
                assert_eq!(non_digits16_scalar(&window), want, "scalar");
            }
        }
    }
}

/// The number classes: every byte value at every position of a window, on fillers from each
/// class and outside them, against a `match` on the byte (and the portable version likewise).
#[test]
fn number_masks_agree_with_a_match_on_each_byte() {
    let fillers: &[u8] = if cfg!(miri) {
        b"7e"
    } else {
        b"7.eE+-a/:\x00\xFF\xC5\x65"
    };
    for &filler in fillers {
        for b in byte_values() {
            for pos in positions().into_iter().filter(|&p| p < 16) {
                let mut window = [filler; 16];
                window[pos] = b;
                let mut want = NumMasks::default();
                for (i, c) in window.iter().enumerate() {
                    let class = match c {
                        b'0'..=b'9' => &mut want.digit,
                        b'.' => &mut want.dot,
                        b'e' | b'E' => &mut want.exp,
                        b'+' | b'-' => &mut want.sign,
                        _ => continue,
                    };
                    *class |= 1 << i;
                }
                assert_eq!(
                    number_masks16(&window),
                    want,
                    "{b:#04x} at {pos} on {filler:#04x}"
                );
                assert_eq!(number_masks16_scalar(&window), want, "scalar");
            }
        }
    }
}

fn scalar_implementations(block: &[u8; 64]) -> Vec<(&'static str, ScalarMasks)> {
    #[allow(unused_mut)]
    let mut v = vec![("dispatch", scalar_masks(block))];
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    v.extend(x86::scalar_both(block));
    v
}

/// The scalar classes: every byte value at every position of a block, on fillers from
/// each class and outside them, through every implementation, against the portable one;
/// and the portable one against its definition, byte by byte.
#[test]
fn scalar_masks_agree_with_a_match_on_each_byte() {
    // Under miri, which is there for undefined behaviour in the SIMD paths (and runs them
    // slowly), one filler and no check of the portable classifier against its definition.
    let fillers: &[u8] = if cfg!(miri) {
        b"7"
    } else {
        b"70.-+eE, \tnulx]\x00\xFF\xEE"
    };
    type Class = (&'static str, fn(&ScalarMasks) -> u64, &'static [u8]);
    let classes: [Class; 11] = [
        ("digit", |m| m.digit, b"0123456789"),
        ("zero", |m| m.zero, b"0"),
        ("dot", |m| m.dot, b"."),
        ("minus", |m| m.minus, b"-"),
        ("plus", |m| m.plus, b"+"),
        ("exp", |m| m.exp, b"eE"),
        ("comma", |m| m.comma, b","),
        ("whitespace", |m| m.whitespace, b" \t\n\r"),
        ("n", |m| m.n, b"n"),
        ("u", |m| m.u, b"u"),
        ("l", |m| m.l, b"l"),
    ];
    for &filler in fillers {
        for b in byte_values() {
            for pos in positions() {
                let mut block = [filler; 64];
                block[pos] = b;
                let want = scalar_masks_scalar(&block);
                for (name, get, members) in classes.iter().filter(|_| !cfg!(miri)) {
                    let mut bits = 0u64;
                    for (i, c) in block.iter().enumerate() {
                        if members.contains(c) {
                            bits |= 1 << i;
                        }
                    }
                    assert_eq!(get(&want), bits, "portable {name}: {b:#04x} at {pos}");
                }
                for (name, got) in scalar_implementations(&block) {
                    assert_eq!(got, want, "{name}: {b:#04x} at {pos} on {filler:#04x}");
                }
            }
        }
    }
}

fn escape_implementations(block: &[u8; 64]) -> Vec<(&'static str, EscMasks)> {
    #[allow(unused_mut)]
    let mut v = vec![("dispatch", escape_masks(block))];
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    v.extend(x86::escape_both(block));
    v
}

/// The escape classes (the nibble lookups of AVX2 and NEON, SSE2's comparisons) against
/// the portable definition: every byte value at every position of a block, on fillers
/// from each class and outside them.
#[test]
fn escape_masks_agree_with_the_definition() {
    let fillers: &[u8] = if cfg!(miri) {
        b"u"
    } else {
        b"u\"0aFgdD\x00\xFF"
    };
    let mut compared = 0;
    for &filler in fillers {
        for b in byte_values() {
            for pos in positions() {
                let mut block = [filler; 64];
                block[pos] = b;
                let want = escape_masks_scalar(&block);
                for (name, got) in escape_implementations(&block) {
                    assert_eq!(got, want, "{name}: {b:#04x} at {pos} on {filler:#04x}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 0);
    // The definition itself, on the bytes it names.
    let mut block = [b'x'; 64];
    block[..21].copy_from_slice(b"\"\\/bfnrtu09afAFdDgG:U");
    let m = escape_masks_scalar(&block);
    assert_eq!(m.simple, 0xFF | 1 << 12);
    assert_eq!(m.u, 1 << 8);
    assert_eq!(m.hex, 1 << 3 | 1 << 4 | 0xFF << 9);
    assert_eq!(m.d, 1 << 15 | 1 << 16);
}

/// The SIMD implementations the tests above compare with the scalar reference: on x86_64,
/// SSE2 always, AVX2 and AVX-512 where the CPU has them. Under miri, which has no CPU to
/// ask, AVX2 and AVX-512 are there when the build enables them (`-C
/// target-feature=+avx2,+popcnt,+pclmulqdq,+avx512f,+avx512bw`, as CI's miri step does),
/// and this test makes sure that step cannot pass without running both.
#[test]
fn the_simd_implementations_compared_are_the_expected_ones() {
    let names: Vec<&str> = implementations(&[b'a'; 64])
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    eprintln!("compared with the scalar reference: {names:?}");
    assert_eq!(names[0], "dispatch");
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    {
        assert!(names.contains(&"sse2"), "{names:?}");
        let avx2 = std::is_x86_feature_detected!("avx2");
        assert_eq!(names.contains(&"avx2"), avx2, "{names:?}");
        if cfg!(all(miri, target_feature = "avx2")) {
            assert!(avx2, "miri built with AVX2 does not report it");
            // The dispatch (and the tracker's AVX2 path) also needs POPCNT and PCLMULQDQ.
            assert_ne!(
                x86::implementation(),
                "sse2",
                "miri built with AVX2 but without POPCNT or PCLMULQDQ"
            );
        }
        // The AVX-512 tier has its own string, escape, scalar and bracket classifiers (the
        // rest is AVX2's): each is compared wherever the CPU has it, and the dispatch takes it.
        let avx512 = x86::has_avx512();
        let block = [b'a'; 64];
        let has = |names: Vec<&str>| names.contains(&"avx512");
        let first = |v: Vec<(&'static str, StrMasks)>| v.into_iter().map(|(n, _)| n).collect();
        assert_eq!(has(first(string_implementations(&block))), avx512);
        let names = escape_implementations(&block).into_iter().map(|(n, _)| n);
        assert_eq!(has(names.collect()), avx512);
        let names = scalar_implementations(&block).into_iter().map(|(n, _)| n);
        assert_eq!(has(names.collect()), avx512);
        let names = bracket_implementations(&block).into_iter().map(|(n, _)| n);
        assert_eq!(has(names.collect()), avx512);
        if avx512 && x86::implementation() != "sse2" {
            assert_eq!(x86::implementation(), "avx512");
        }
        if cfg!(all(miri, target_feature = "avx2")) {
            assert!(
                avx512,
                "miri built with AVX2 but not AVX-512F and BW (CI's miri step enables all)"
            );
        }
    }
}

/// The bracket classifier against the portable one, and the portable one against the
/// definition: every byte value at every position, on several fillers.
#[test]
fn bracket_masks_agree_with_the_scalar_classifier() {
    let fillers: &[u8] = if cfg!(miri) {
        b"a"
    } else {
        &[b'a', 0x00, 0xFF, b'"', b'\\', b'{', b']']
    };
    for &filler in fillers {
        for b in byte_values() {
            for pos in positions() {
                let mut block = [filler; 64];
                block[pos] = b;
                let want = bracket_masks_scalar(&block);
                let bits = |f: fn(u8) -> bool| {
                    (0..64).fold(0u64, |m, i| m | (u64::from(f(block[i])) << i))
                };
                assert_eq!(
                    want,
                    BracketMasks {
                        quote: bits(|x| x == b'"'),
                        backslash: bits(|x| x == b'\\'),
                        open: bits(|x| x == b'{' || x == b'['),
                        close: bits(|x| x == b'}' || x == b']'),
                    }
                );
                for (name, got) in bracket_implementations(&block) {
                    assert_eq!(
                        got, want,
                        "{name}: byte {b:#04x} at {pos} on filler {filler:#04x}"
                    );
                }
            }
        }
    }
}

/// [`track`]'s definition, one byte at a time: an unescaped backslash escapes the next byte,
/// an unescaped quote toggles the string state, and a bracket outside strings moves the
/// depth; false where a close brings the depth to zero or below.
fn track_by_bytes(bytes: &[u8], t: &mut Track) -> bool {
    let mut escape = t.escape == 1;
    let mut inside = t.in_string != 0;
    let mut depth = t.depth as i64;
    for &b in bytes {
        let escaped = escape;
        escape = !escaped && b == b'\\';
        if b == b'"' && !escaped {
            inside = !inside;
        } else if !inside && (b == b'{' || b == b'[') {
            depth += 1;
        } else if !inside && (b == b'}' || b == b']') {
            depth -= 1;
            if depth <= 0 {
                return false;
            }
        }
    }
    *t = Track {
        in_string: if inside { u64::MAX } else { 0 },
        escape: u64::from(escape),
        depth: depth as u64,
    };
    true
}

/// Every tracker this build has (the dispatch, each x86_64 implementation, the portable
/// one) against the byte walk, from `start` over `bytes`: whether the value may end there,
/// and where each stands after the bytes when it may not. Returns the walk's answer.
fn check_track(bytes: &[u8], start: Track) -> bool {
    let mut want = start;
    let want_held = track_by_bytes(bytes, &mut want);
    let mut got = Vec::new();
    let mut t = start;
    got.push(("dispatch", track(bytes, &mut t), t));
    let mut t = start;
    let held = track_with(bytes, &mut t, bracket_masks_scalar, prefix_xor);
    got.push(("portable", held, t));
    #[cfg(all(target_arch = "x86_64", not(toolstream_disable_simd)))]
    got.extend(x86::track_both(bytes, start));
    for (name, held, t) in got {
        assert_eq!(held, want_held, "{name}: {start:?} {bytes:?}");
        if held {
            assert_eq!(t, want, "{name}: {start:?} {bytes:?}");
        }
    }
    want_held
}

/// [`check_track`] on `rounds` random inputs of up to `max_len` bytes (each byte drawn by
/// `byte` from a random word) from random string states and depths below `max_depth`:
/// how many the walk held and how many it ended.
fn random_track_cases(
    seed: u64,
    rounds: usize,
    max_len: usize,
    max_depth: u64,
    byte: impl Fn(u64) -> u8,
) -> (usize, usize) {
    let mut x = seed;
    let (mut held, mut ended) = (0, 0);
    for round in 0..if cfg!(miri) { 4 } else { rounds } {
        let len = if cfg!(miri) {
            70
        } else {
            round % (max_len + 1)
        };
        let bytes: Vec<u8> = (0..len).map(|_| byte(xorshift(&mut x))).collect();
        let r = xorshift(&mut x);
        let start = Track {
            in_string: if r & 1 == 1 { u64::MAX } else { 0 },
            escape: (r >> 1) & 1,
            depth: (r >> 8) % max_depth,
        };
        if check_track(&bytes, start) {
            held += 1;
        } else {
            ended += 1;
        }
    }
    (held, ended)
}

/// Every tracker against the byte walk, on random bytes dense in brackets, quotes and
/// backslashes, from depths near the number of closes a block holds, so that the depth
/// often comes close to zero and sometimes reaches it.
#[test]
fn track_agrees_with_a_byte_walk() {
    let (held, ended) = random_track_cases(0x9E37_79B9_7F4A_7C15, 4000, 199, 12, |r| match r % 8 {
        0..=2 => b"{}[]"[(r >> 8) as usize % 4],
        3 => b'"',
        4 => b'\\',
        _ => b'a' + (r >> 16) as u8 % 26,
    });
    // Both outcomes are exercised.
    assert!(cfg!(miri) || (ended > 500 && held > 500), "{ended} {held}");
}

/// Every tracker against the byte walk, on random bytes of every value, dense in quotes
/// and backslashes, from depths up to 40, at every length up to five blocks.
#[test]
fn track_implementations_agree() {
    random_track_cases(0x2545_F491_4F6C_DD1D, 3000, 320, 40, |r| match r % 4 {
        0 => b"\"\\{}[]"[(r >> 8) as usize % 6],
        1 => b'\\',
        _ => (r >> 16) as u8,
    });
}

/// The closer test against its definition (the bytes `}` and `]`) and the portable one:
/// every byte value at every position of inputs from 16 to 200 bytes (under miri, lengths
/// either side of the vector and run boundaries, a few places, and the bytes that border
/// the two), on fillers with and without the other bracket bytes.
#[test]
fn has_closer_agrees_with_the_definition() {
    let lengths: Vec<usize> = if cfg!(miri) {
        vec![16, 17, 48, 64, 65, 129]
    } else {
        (16..=200).collect()
    };
    let values = if cfg!(miri) {
        b"\x00 |[\\]{}\x7C\x7E\xDD\xFD\xFF".to_vec()
    } else {
        (0..=255).collect()
    };
    let fillers: &[u8] = if cfg!(miri) { b"a[" } else { b"a{[" };
    for &filler in fillers {
        for &n in &lengths {
            let mut bytes = vec![filler; n];
            assert!(!has_closer(&bytes), "{n} bytes of {filler}");
            assert!(!portable::has_closer_scalar(&bytes));
            let places: Vec<usize> = if cfg!(miri) {
                let mut v = vec![0, 15, 16, n / 2, n - 17.min(n), n - 1];
                v.retain(|&p| p < n);
                v
            } else {
                (0..n).collect()
            };
            // One buffer, each byte put back after its values (a copy per case cost most
            // of the test's time under qemu, where CI runs it for NEON).
            for &p in &places {
                for &b in &values {
                    bytes[p] = b;
                    let want = b == b'}' || b == b']';
                    assert_eq!(has_closer(&bytes), want, "{b:#x} at {p} of {n}");
                    assert_eq!(portable::has_closer_scalar(&bytes), want);
                }
                bytes[p] = filler;
            }
        }
    }
}

/// The classifiers `with_blocks` hands out (AVX-512 or AVX2 where the CPU has it, else
/// SSE2; NEON; the portable ones) against the scalar ones, on blocks with every byte value
/// at each position: the path the long string scan and the number arrays run on.
#[test]
fn with_blocks_classifiers_agree() {
    struct Compare<'a>(&'a [[u8; 64]]);
    impl BlockFn<usize> for Compare<'_> {
        fn call<B: Blocks>(self, b: B) -> usize {
            for block in self.0 {
                assert_eq!(
                    b.string_masks(block),
                    StrMasks::from(classify_scalar(block)),
                    "{block:x?}"
                );
                assert_eq!(
                    b.escape_masks(block),
                    escape_masks_scalar(block),
                    "{block:x?}"
                );
                assert_eq!(
                    b.scalar_masks(block),
                    scalar_masks_scalar(block),
                    "{block:x?}"
                );
            }
            self.0.len()
        }
    }
    let mut blocks = Vec::new();
    for v in byte_values() {
        for pos in positions() {
            let mut block = [b'.'; 64];
            block[..14].copy_from_slice(b"u0\"\\dD/f9aF\x00\xFFx");
            block[63] = b'\\';
            block[pos] = v;
            blocks.push(block);
        }
    }
    assert_eq!(with_blocks(Compare(&blocks)), blocks.len());
}

/// A prefetch is a hint: no address makes it fault (the splitter asks for lines past its
/// buffer's end, which may lie past the allocation).
#[test]
fn prefetch_never_faults() {
    let v = [0u8; 64];
    for p in [
        v.as_ptr(),
        v.as_ptr().wrapping_add(1 << 30),
        std::ptr::null(),
        usize::MAX as *const u8,
    ] {
        super::prefetch(p);
    }
    assert_eq!(v.iter().map(|&b| u32::from(b)).sum::<u32>(), 0);
}

/// `append_copy` against the plain definition (the bytes before, then the chunk), at every
/// length around its inline copies, into buffers with no spare room, exactly enough, more
/// than enough, and one that shares its allocation with a value split off it.
#[test]
fn append_copy() {
    let mut x = 0x9e37_79b9_7f4a_7c15;
    for n in 0..=80usize {
        let chunk: Vec<u8> = (0..n).map(|_| xorshift(&mut x) as u8).collect();
        // Under miri (slow), fewer of the buffers' states.
        let prefixes: &[usize] = if cfg!(miri) {
            &[0, 33]
        } else {
            &[0, 1, 15, 16, 31, 33, 64, 100]
        };
        for &prefix in prefixes {
            let before: Vec<u8> = (0..prefix).map(|_| xorshift(&mut x) as u8).collect();
            let spares = [0usize, n.saturating_sub(1), n, n + 7, 256];
            for &spare in if cfg!(miri) {
                &spares[..3]
            } else {
                &spares[..]
            } {
                for shared in [false, true] {
                    let mut buf = bytes::BytesMut::with_capacity(prefix + spare + 8);
                    buf.extend_from_slice(&[0xAA; 8]);
                    let kept = if shared {
                        Some(buf.split_to(8).freeze())
                    } else {
                        buf.clear();
                        None
                    };
                    buf.extend_from_slice(&before);
                    super::append_copy(&mut buf, &chunk);
                    let mut want = before.clone();
                    want.extend_from_slice(&chunk);
                    assert_eq!(&buf[..], &want[..], "n={n} prefix={prefix} spare={spare}");
                    if let Some(k) = kept {
                        assert_eq!(&k[..], &[0xAA; 8], "the value split off is untouched");
                    }
                }
            }
        }
    }
}
