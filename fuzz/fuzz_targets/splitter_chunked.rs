//! Oracle: the splitter gives the same values and error (kind, offset and message) whether
//! the input is pushed whole, cut at the fuzzer's points, or fed as slices; the reference
//! machine agrees, under the default limits or small ones the fuzzer picks (a limit's
//! bound falls inside the fast paths' blocks: a string's backslash as the last byte before
//! it, say); and whenever serde_json accepts the whole input as a stream of values under
//! the default limits, the values are equal.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::json::reference::Reference;
use toolstream::json::{Limits, Mode, Splitter};

#[derive(Arbitrary, Debug)]
struct Input {
    data: Vec<u8>,
    cuts: Vec<u16>,
    any: bool,
    slices: bool,
    /// Small limits (depth, value, string, number), or the defaults when `None`.
    limits: Option<(u8, u16, u8, u8)>,
}

type Outcome = (
    Vec<(u64, u64, Vec<u8>)>,
    Option<(toolstream::json::ErrorKind, u64)>,
    Option<&'static str>,
);

fn run(mode: Mode, limits: Limits, data: &Bytes, cuts: &[usize], slices: bool) -> Outcome {
    let mut s = Splitter::with_limits(mode, limits);
    let mut out = Vec::new();
    let mut prev = 0;
    let mut err = None;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        let c = c.clamp(prev, data.len());
        let before = out.len();
        let r = if slices {
            s.push_slice(&data[prev..c], &mut out)
        } else {
            s.push(data.slice(prev..c), &mut out)
        };
        // Emit on close: a value comes out of the push that delivers its last byte (a
        // top-level number, with no closing byte, may come with a later one).
        for v in &out[before..] {
            let number = matches!(v.bytes()[0], b'-' | b'0'..=b'9');
            assert!((v.end() as usize > prev || number) && v.end() as usize <= c);
        }
        // Reading the state now and then (which reads any bytes that wait) changes nothing.
        if c % 7 == 3 {
            let _ = s.state().depth();
        }
        if let Err(e) = r {
            err = Some(e);
            break;
        }
        prev = c;
    }
    if err.is_none() {
        match s.finish() {
            Ok(v) => out.extend(v),
            Err(e) => err = Some(e),
        }
    }
    (
        out.into_iter()
            .map(|v| (v.start(), v.end(), v.bytes().to_vec()))
            .collect(),
        err.as_ref().map(|e| (e.kind(), e.offset())),
        err.as_ref().map(|e| e.detail()),
    )
}

fuzz_target!(|input: Input| {
    let mode = if input.any { Mode::Any } else { Mode::Objects };
    let data = Bytes::from(input.data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let limits = match input.limits {
        None => Limits::default(),
        Some((depth, value, string, number)) => Limits::default()
            .max_depth(u32::from(depth % 40) + 1)
            .max_value_bytes(u64::from(value) + 1)
            .max_string_bytes(u64::from(string) + 1)
            .max_number_bytes(u64::from(number % 64) + 1),
    };
    let whole = run(mode, limits, &data, &[], false);
    assert_eq!(
        run(mode, limits, &data, &cuts, input.slices),
        whole,
        "chunking changed the result"
    );
    let (spans, error) = Reference::split(mode, limits, &data);
    let reference: Vec<(u64, u64, Vec<u8>)> = spans
        .into_iter()
        .map(|(s, e)| (s, e, data[s as usize..e as usize].to_vec()))
        .collect();
    assert_eq!(
        (reference, error),
        (whole.0.clone(), whole.1),
        "fast path and reference disagree"
    );
    if mode == Mode::Any && input.limits.is_none() && !data.starts_with(&[0xEF]) {
        let mut theirs = Vec::new();
        for v in serde_json::Deserializer::from_slice(&data).into_iter::<serde_json::Value>() {
            match v {
                Ok(v) => theirs.push(v),
                Err(_) => return,
            }
        }
        assert!(
            whole.1.is_none(),
            "serde_json accepts what the splitter rejects"
        );
        let ours: Vec<serde_json::Value> = whole
            .0
            .iter()
            .map(|(_, _, b)| serde_json::from_slice(b).expect("emitted values parse"))
            .collect();
        assert_eq!(ours, theirs, "values differ from serde_json");
    }
});
