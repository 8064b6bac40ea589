//! Bytes through the whole pipeline with tiny limits (depth 8, line 64 B, event 256 B,
//! value 128 B, 4 calls): never panics, buffered memory stays under the limits, and cutting
//! the input differently gives the same events, the same turn to send back and the same
//! views of the calls' arguments.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::assemble::Policy;
use toolstream::json::Limits;
use toolstream::pipeline::Stream;
use toolstream::replay::Turn;
use toolstream::sse;

#[derive(Arbitrary, Debug)]
struct Input {
    data: Vec<u8>,
    cuts: Vec<u16>,
}

fuzz_target!(|input: Input| {
    let policy = Policy {
        json: Limits::default().max_depth(8).max_value_bytes(128),
        max_calls: 4,
        preview: true,
        ..Policy::default()
    };
    let framing = sse::Limits::default()
        .max_line_bytes(64)
        .max_event_bytes(256);
    let data = Bytes::from(input.data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let run = |cuts: &[usize]| {
        let mut s = Stream::with_limits(None, policy, framing);
        let mut out = Vec::new();
        let mut prev = 0;
        for &c in cuts.iter().chain(std::iter::once(&data.len())) {
            s.push(data.slice(prev..c.max(prev)), &mut out);
            // Framing line + event, 4 calls of at most 128 bytes each (+1 for the byte
            // that failed) in their splitters and as many behind their previews, and 128
            // bytes of reasoning details.
            assert!(
                s.buffered() <= 64 + 256 + 2 * 4 * 129 + 128,
                "buffered {}",
                s.buffered()
            );
            prev = c.max(prev);
        }
        // The views of the calls still open at the end do not depend on the chunking.
        let views: Vec<_> = (0..4).map(|i| s.preview(i).cloned()).collect();
        let format = s.format();
        s.finish(&mut out);
        let turn = format.map(|f| {
            let mut t = Turn::new(f);
            for e in &out {
                t.push(e);
            }
            t.to_json()
        });
        (out, turn, views)
    };
    assert_eq!(run(&cuts), run(&[]), "chunking changed the result");
});
