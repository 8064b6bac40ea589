//! Oracle: `repair` on any bytes either refuses, with at most `MAX_REPAIRS` repairs tried,
//! or gives one strictly valid JSON object, at most six bytes out for a byte in (an
//! escape's growth), each repair naming the bytes at its offset; valid input comes out byte
//! for byte with no repairs; with every kind off nothing is repaired.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::json::{Mode, Splitter};
use toolstream::repair::{repair, RepairPolicy, MAX_REPAIRS};

fn one_object(b: &[u8]) -> bool {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(Bytes::copy_from_slice(b), &mut out).is_ok()
        && matches!(s.finish(), Ok(None))
        && out.len() == 1
}

fuzz_target!(|data: &[u8]| {
    let valid = one_object(data);
    match repair(data, RepairPolicy::all()) {
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
