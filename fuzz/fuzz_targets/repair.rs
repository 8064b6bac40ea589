//! Oracle: `repair` on any bytes either refuses, with at most `MAX_REPAIRS` repairs tried,
//! or gives one strictly valid JSON object, at most six bytes out for a byte in (an
//! escape's growth), each repair naming the bytes at its offset; valid input comes out byte
//! for byte with no repairs; with every kind off nothing is repaired; the peak allocation
//! at most a constant times the input (a counting allocator).
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::json::{Mode, Splitter};
use toolstream::repair::{repair, RepairPolicy, MAX_REPAIRS};
use toolstream_fuzz::alloc::{measure, Counting};

#[global_allocator]
static ALLOC: Counting = Counting;

fn one_object(b: &[u8]) -> bool {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(Bytes::copy_from_slice(b), &mut out).is_ok()
        && matches!(s.finish(), Ok(None))
        && out.len() == 1
}

fuzz_target!(|data: &[u8]| {
    let valid = one_object(data);
    let (result, peak, _) = measure(|| repair(data, RepairPolicy::all()));
    // The input's copies (the strict checks', the writer's), the output (an escape's
    // growth), and a report of a few hundred bytes per repair (a `Repair` and its
    // strings, the list doubling), at most one repair per byte: a constant times the input.
    assert!(
        peak <= 320 * data.len() + (64 << 10),
        "peak {peak} bytes for {} bytes in",
        data.len()
    );
    match result {
        Ok(r) => {
            assert!(
                one_object(&r.arguments),
                "not one object: {:?}",
                String::from_utf8_lossy(&r.arguments)
            );
            assert!(r.repairs.len() <= MAX_REPAIRS);
            assert!(
                r.arguments.len() <= data.len() * 6 + 8,
                "grew past an escape's growth"
            );
            if valid {
                assert_eq!(&r.arguments[..], data);
                assert!(r.repairs.is_empty());
            }
            for rep in &r.repairs {
                assert!(
                    data[rep.offset..].starts_with(rep.replaced.as_bytes()),
                    "{rep:?} does not name its bytes"
                );
            }
        }
        Err(e) => {
            assert!(!valid, "valid input refused: {e:?}");
            assert!(e.tried.len() <= MAX_REPAIRS);
        }
    }
    match repair(data, RepairPolicy::default()) {
        Ok(r) => assert!(valid && r.repairs.is_empty()),
        Err(_) => assert!(!valid),
    }
});
