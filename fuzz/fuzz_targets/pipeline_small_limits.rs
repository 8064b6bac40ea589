//! Bytes through the whole pipeline with tiny limits (depth 8, line 64 B, event 256 B,
//! value 128 B, 4 calls): never panics; buffered memory stays under the limits and the
//! peak allocation under a constant times the input plus the limits (a counting
//! allocator); the events keep the oracle's properties (calls + failures = calls started,
//! no call without a name, no dropped byte without an event, an end that tells the truth);
//! and cutting the input differently gives the same events, the same turn to send back and
//! the same views of the calls' arguments.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::assemble::Policy;
use toolstream::json::Limits;
use toolstream::sse;
use toolstream_fuzz::alloc::Counting;

#[global_allocator]
static ALLOC: Counting = Counting;

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
    // Framing line + event; 4 calls of at most 128 bytes each (+1 for the byte that
    // failed) in their splitters, behind their previews, in their failures and as their
    // first object (kept for duplicates), and 8 bytes per later object hashed; 128 bytes of
    // reasoning details; the payloads held before the format is known (the event limit);
    // the whitespace held before the framing is (64 KiB).
    let bound = 64 + 2 * 256 + 4 * 4 * 129 + 4 * 8 + 128 + (64 << 10);
    toolstream_fuzz::check_pipeline(&data, &cuts, policy, framing, bound);
});
