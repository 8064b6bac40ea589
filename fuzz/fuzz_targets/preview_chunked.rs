//! Oracle: `json::Preview`, fed the input at the fuzzer's cuts, shows after every push what
//! the reference (`json::reference::preview`, reading the bytes so far from the first) shows
//! of the first value; it completes the values the splitter completes, each equal to
//! serde_json's reading of its bytes; its error is the splitter's; and nothing panics.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use toolstream::json::{reference, Mode, Preview, Splitter};

#[derive(Arbitrary, Debug)]
struct Input {
    data: Vec<u8>,
    cuts: Vec<u16>,
    any: bool,
}

fuzz_target!(|input: Input| {
    let mode = if input.any { Mode::Any } else { Mode::Objects };
    let data = &input.data[..];
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let mut p = Preview::new(mode);
    let mut done = Vec::new();
    let mut error = None;
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        let c = c.clamp(prev, data.len());
        let r = p.push(&data[prev..c], &mut done);
        let good = match &r {
            Ok(()) => c,
            Err(e) => e.offset() as usize,
        };
        if done.is_empty() {
            assert_eq!(
                p.partial().cloned(),
                reference::preview(&data[..good]),
                "view after {good} bytes"
            );
        }
        if let Err(e) = r {
            error = Some(e);
            break;
        }
        prev = c;
    }
    let end = match error {
        Some(e) => Err(e),
        None => p.finish().map(|last| done.extend(last)),
    };
    // The same values and error as the splitter pushed the whole input.
    let mut s = Splitter::new(mode);
    let mut values = Vec::new();
    let split = s
        .push_slice(data, &mut values)
        .and_then(|()| s.finish().map(|last| values.extend(last)));
    let key = |r: &Result<(), toolstream::json::Error>| {
        r.as_ref().map_err(|e| (e.kind(), e.offset())).copied()
    };
    assert_eq!(
        key(&end),
        key(&split),
        "preview and splitter end differently"
    );
    assert_eq!(done.len(), values.len(), "a different number of values");
    for (v, raw) in done.iter().zip(&values) {
        let serde: serde_json::Value = match serde_json::from_slice(raw.bytes()) {
            Ok(x) => x,
            // serde_json refuses some numbers the grammar allows (out of f64 range).
            Err(_) => continue,
        };
        assert_eq!(v, &serde, "a completed value differs from serde_json's");
    }
});
