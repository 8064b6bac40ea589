//! Oracle: the SSE decoder gives the same items and end report however the input is cut.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::sse::{Decoder, Limits};

#[derive(Arbitrary, Debug)]
struct Input {
    data: Vec<u8>,
    cuts: Vec<u16>,
    small_limits: bool,
}

fuzz_target!(|input: Input| {
    let limits = if input.small_limits {
        Limits::default().max_line_bytes(16).max_event_bytes(48)
    } else {
        Limits::default()
    };
    let data = Bytes::from(input.data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let run = |cuts: &[usize]| {
        let mut d = Decoder::with_limits(limits);
        let mut items = Vec::new();
        let mut prev = 0;
        for &c in cuts.iter().chain(std::iter::once(&data.len())) {
            d.push(data.slice(prev..c.max(prev)), &mut items);
            assert!(d.buffered() as u64 <= limits.line_bytes() + limits.event_bytes());
            prev = c.max(prev);
        }
        let end = d.finish(&mut items);
        (items, end)
    };
    assert_eq!(run(&cuts), run(&[]), "chunking changed the result");
});
