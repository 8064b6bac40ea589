//! Property tests for the splitter:
//! (a) chunk invariance on valid and broken inputs cut at random points;
//! (b) every proper prefix of a valid value is "incomplete, no error";
//! (c) differential against serde_json's stream reader, both ways;
//! (d) the reference machine and the fast path agree (inside every check).

use crate::common;

use bytes::Bytes;
use common::{run_cuts, run_reference, Outcome};
use proptest::prelude::*;
use serde_json::Value as J;
use toolstream::json::{ErrorKind, Limits, Mode, Splitter};

/// A JSON value tree (kept small enough for serde_json's recursion limit).
fn arb_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        (-1e6f64..1e6).prop_map(J::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(J::from),
        "\\PC{0,12}".prop_map(J::String),
        // Long strings reach the 64-byte block path.
        "[a-z \"\\\\/é😀\t\n]{60,300}".prop_map(J::String),
        prop::collection::vec(any::<char>(), 0..6)
            .prop_map(|cs| J::String(cs.into_iter().collect())),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            prop::collection::vec(("\\PC{0,6}", inner), 0..6)
                .prop_map(|kv| J::Object(kv.into_iter().collect())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = J> {
    prop::collection::vec(("[a-z_]{0,8}", arb_value()), 0..6)
        .prop_map(|kv| J::Object(kv.into_iter().collect()))
}

/// Serialise with varied style, driven by `style` bytes: whitespace between tokens,
/// `\u` escapes (with surrogate pairs) for some characters, escaped solidus.
struct Writer<'a> {
    style: &'a [u8],
    k: usize,
    out: Vec<u8>,
}

impl Writer<'_> {
    fn pick(&mut self) -> u8 {
        let b = if self.style.is_empty() {
            0
        } else {
            self.style[self.k % self.style.len()]
        };
        self.k += 1;
        b
    }
    fn ws(&mut self) {
        match self.pick() % 8 {
            0 => self.out.push(b' '),
            1 => self.out.extend_from_slice(b"\n  "),
            2 => self.out.extend_from_slice(b"\r\n\t"),
            _ => {}
        }
    }
    fn string(&mut self, s: &str) {
        self.out.push(b'"');
        for c in s.chars() {
            let style = self.pick();
            match c {
                '"' => self.out.extend_from_slice(b"\\\""),
                '\\' => self.out.extend_from_slice(b"\\\\"),
                '/' if style.is_multiple_of(2) => self.out.extend_from_slice(b"\\/"),
                c if (c as u32) < 0x20 || style.is_multiple_of(5) => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        let hex = if style.is_multiple_of(3) {
                            format!("\\u{u:04X}")
                        } else {
                            format!("\\u{u:04x}")
                        };
                        self.out.extend_from_slice(hex.as_bytes());
                    }
                }
                c => {
                    let mut buf = [0u8; 4];
                    self.out
                        .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        self.out.push(b'"');
    }
    fn value(&mut self, v: &J) {
        match v {
            J::Array(items) => {
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.ws();
                    self.value(item);
                    self.ws();
                }
                self.out.push(b']');
            }
            J::Object(map) => {
                self.out.push(b'{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.ws();
                    self.string(k);
                    self.ws();
                    self.out.push(b':');
                    self.ws();
                    self.value(item);
                    self.ws();
                }
                self.out.push(b'}');
            }
            J::String(s) => self.string(s),
            other => self
                .out
                .extend_from_slice(serde_json::to_string(other).unwrap().as_bytes()),
        }
    }
}

fn write_stream(values: &[J], style: &[u8]) -> Vec<u8> {
    let mut w = Writer {
        style,
        k: 0,
        out: Vec::new(),
    };
    for v in values {
        w.ws();
        w.value(v);
        // Scalars at the top level need a delimiter; containers and strings do not.
        if !(v.is_object() || v.is_array() || v.is_string()) {
            w.out.push(b' ');
        }
    }
    w.ws();
    w.out
}

#[derive(Clone, Debug)]
enum Mutation {
    None,
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![
        prop::sample::select(
            b"{}[]\":,\\ -+.0123456789eEtfnu\t\n\r\x00\x1f\x7f\x80\xc3\xed\xf0\xff".to_vec()
        ),
        any::<u8>(),
    ];
    prop_oneof![
        2 => Just(Mutation::None),
        1 => (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        1 => (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => any::<usize>().prop_map(Mutation::Delete),
    ]
}

fn mutate(mut input: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let n = input.len();
    match *m {
        Mutation::None => {}
        Mutation::Replace(i, b) if n > 0 => input[i % n] = b,
        Mutation::Insert(i, b) => input.insert(i % (n + 1), b),
        Mutation::Delete(i) if n > 0 => {
            input.remove(i % n);
        }
        _ => {}
    }
    input
}

/// Token soup: short sequences of JSON-ish tokens, to reach odd corners quickly.
fn arb_soup() -> impl Strategy<Value = Vec<u8>> {
    let tokens: Vec<&'static [u8]> = vec![
        b"{",
        b"}",
        b"[",
        b"]",
        b":",
        b",",
        b" ",
        b"\n",
        b"\"",
        b"\"a\"",
        b"\"\\u00e9\"",
        b"\\",
        b"\\u",
        b"d800",
        b"\\udc00",
        b"\"\\ud83d\\ude00\"",
        b"1",
        b"0",
        b"-",
        b".5",
        b"e3",
        b"E+",
        b"true",
        b"false",
        b"null",
        b"tru",
        b"\xc3\xa9",
        b"\xed\xa0\x80",
        b"\x01",
        b"x",
        b"12",
        b"\"k\":",
    ];
    prop::collection::vec(prop::sample::select(tokens), 0..24).prop_map(|ts| ts.concat())
}

/// Cut points from random fractions.
fn cuts_of(len: usize, fracs: &[u16]) -> Vec<usize> {
    let mut cuts: Vec<usize> = fracs
        .iter()
        .map(|&f| (f as usize * (len + 1)) / 65536)
        .collect();
    cuts.sort_unstable();
    cuts
}

fn assert_invariant(mode: Mode, input: &[u8], fracs: &[u16]) -> Outcome {
    let bytes = Bytes::copy_from_slice(input);
    let whole = run_cuts(mode, Limits::default(), &bytes, &[]);
    let reference = run_reference(mode, Limits::default(), input);
    assert_eq!(
        whole.without_detail(),
        reference,
        "reference vs fast on {:?}",
        common::show(input)
    );
    let cut = run_cuts(
        mode,
        Limits::default(),
        &bytes,
        &cuts_of(input.len(), fracs),
    );
    assert_eq!(
        cut,
        whole,
        "random cuts {fracs:?} on {:?}",
        common::show(input)
    );
    whole
}

/// serde_json's verdict on a stream: its values, or None if it rejects the stream.
/// `Err(())` when serde_json rejects for a reason outside RFC 8259 validity (a number out
/// of f64 range), where the two are allowed to differ.
fn serde_stream(input: &[u8]) -> Result<Option<Vec<J>>, ()> {
    let mut values = Vec::new();
    for item in serde_json::Deserializer::from_slice(input).into_iter::<J>() {
        match item {
            Ok(v) => values.push(v),
            Err(e) if e.to_string().contains("out of range") => return Err(()),
            Err(e) if e.to_string().contains("recursion limit") => return Err(()),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(values))
}

fn differential(input: &[u8], ours: &Outcome) {
    let Ok(theirs) = serde_stream(input) else {
        return;
    };
    match theirs {
        Some(values) => {
            assert_eq!(
                ours.error,
                None,
                "serde_json accepts {:?}",
                common::show(input)
            );
            let parsed: Vec<J> = ours
                .values
                .iter()
                .map(|(_, _, b)| serde_json::from_slice(b).expect("emitted values parse"))
                .collect();
            assert_eq!(parsed, values, "values differ on {:?}", common::show(input));
        }
        None => assert!(
            ours.error.is_some(),
            "serde_json rejects but we accept {:?}",
            common::show(input)
        ),
    }
}

/// 512 cases by default; `PROPTEST_CASES=N` for a longer run.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// (a)+(c)+(d) on streams of any values, possibly broken by one mutation.
    #[test]
    fn any_values_chunk_invariant_and_match_serde(
        values in prop::collection::vec(arb_value(), 0..4),
        style in prop::collection::vec(any::<u8>(), 0..16),
        m in arb_mutation(),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        let input = mutate(write_stream(&values, &style), &m);
        let ours = assert_invariant(Mode::Any, &input, &fracs);
        if matches!(m, Mutation::None) {
            prop_assert_eq!(ours.error, None);
            prop_assert_eq!(ours.values.len(), values.len());
        }
        differential(&input, &ours);
    }

    /// (a)+(d) in Objects mode, on glued objects, possibly broken.
    #[test]
    fn glued_objects_chunk_invariant(
        values in prop::collection::vec(arb_object(), 0..5),
        style in prop::collection::vec(any::<u8>(), 0..16),
        m in arb_mutation(),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        let input = mutate(write_stream(&values, &style), &m);
        let ours = assert_invariant(Mode::Objects, &input, &fracs);
        if matches!(m, Mutation::None) {
            prop_assert_eq!(ours.error, None);
            let parsed: Vec<J> = ours.values.iter().map(|(_, _, b)| serde_json::from_slice(b).unwrap()).collect();
            prop_assert_eq!(parsed, values);
        }
    }

    /// (a)+(c)+(d) on token soup: both directions of the serde_json differential.
    #[test]
    fn token_soup_matches_serde(
        input in arb_soup(),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        let ours = assert_invariant(Mode::Any, &input, &fracs);
        differential(&input, &ours);
    }

    /// (a)+(d) on arbitrary bytes.
    #[test]
    fn random_bytes_chunk_invariant(
        input in prop::collection::vec(any::<u8>(), 0..64),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        assert_invariant(Mode::Any, &input, &fracs);
        assert_invariant(Mode::Objects, &input, &fracs);
    }

    /// (a) with small limits of every kind, on chunks of a fixed small size (the sizes the
    /// short-chunk path takes, and a few above): both entry points agree with the
    /// reference machine, errors and offsets included.
    #[test]
    fn small_limits_at_small_chunks_match_the_reference(
        values in prop::collection::vec(arb_value(), 1..4),
        style in prop::collection::vec(any::<u8>(), 0..16),
        m in arb_mutation(),
        depth in 1u32..5,
        value_bytes in 1u64..160,
        string_bytes in 1u64..24,
        number_bytes in 1u64..10,
        chunk in 1usize..20,
    ) {
        let input = mutate(write_stream(&values, &style), &m);
        let limits = Limits::default()
            .max_depth(depth)
            .max_value_bytes(value_bytes)
            .max_string_bytes(string_bytes)
            .max_number_bytes(number_bytes);
        let want = run_reference(Mode::Any, limits, &input);
        let bytes = Bytes::from(input);
        let cuts: Vec<usize> = (chunk..bytes.len()).step_by(chunk).collect();
        for slices in [false, true] {
            let got = common::run_cuts_with(Mode::Any, limits, &bytes, &cuts, slices);
            prop_assert_eq!(&got.without_detail(), &want, "chunk {} slices {} on {:?}", chunk, slices, common::show(&bytes));
        }
    }

    /// (b) Every proper prefix of a valid object is "incomplete, no error": pushes
    /// succeed, nothing is emitted, and finish() reports a truncation.
    #[test]
    fn every_proper_prefix_is_incomplete(
        value in arb_object(),
        style in prop::collection::vec(any::<u8>(), 0..16),
    ) {
        let mut w = Writer { style: &style, k: 0, out: Vec::new() };
        w.value(&value);
        let input = Bytes::from(w.out);
        for k in 1..input.len() {
            let mut s = Splitter::new(Mode::Objects);
            let mut out = Vec::new();
            prop_assert!(s.push(input.slice(..k), &mut out).is_ok());
            prop_assert!(out.is_empty());
            let e = s.finish().unwrap_err();
            prop_assert_eq!(e.kind(), ErrorKind::Truncated);
            prop_assert_eq!(e.offset(), k as u64);
            prop_assert_eq!(&e.raw()[..], &input[..k]);
        }
    }

    /// (b) in Any mode: a proper prefix never emits or fails while pushing; at finish it is
    /// truncated unless the prefix is itself a complete number.
    #[test]
    fn every_proper_prefix_is_incomplete_any(value in arb_value()) {
        let mut w = Writer { style: &[], k: 0, out: Vec::new() };
        w.value(&value);
        let input = Bytes::from(w.out);
        for k in 1..input.len() {
            let mut s = Splitter::new(Mode::Any);
            let mut out = Vec::new();
            prop_assert!(s.push(input.slice(..k), &mut out).is_ok());
            prop_assert!(out.is_empty());
            match s.finish() {
                Ok(Some(v)) => {
                    prop_assert!(value.is_number());
                    prop_assert_eq!(&v.bytes()[..], &input[..k]);
                }
                Ok(None) => prop_assert!(false, "a proper prefix cannot end cleanly"),
                Err(e) => prop_assert_eq!(e.kind(), ErrorKind::Truncated),
            }
        }
    }
}
