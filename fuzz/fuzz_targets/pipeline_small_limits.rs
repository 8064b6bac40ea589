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
    // Framing line + event, 4 calls of at most 128 bytes each (+1 for the byte that
    // failed) in their splitters and as many behind their previews, and 128 bytes of
    // reasoning details.
    let bound = 64 + 256 + 2 * 4 * 129 + 128;
    let run = |cuts: &[usize]| toolstream_fuzz::run_pipeline(&data, cuts, policy, framing, bound);
    assert_eq!(run(&cuts), run(&[]), "chunking changed the result");
});
