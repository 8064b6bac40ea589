//! AWS event stream framing: the checksum against published values, messages with every
//! header type at every split point, and every way a stream can be wrong.

use bytes::Bytes;
use proptest::prelude::*;
use toolstream::eventstream::{
    crc32, encode, frame, Decoder, ErrorKind, Finish, HeaderValue, Limits,
};

#[test]
fn crc32_is_the_gzip_one() {
    // The CRC-32 check value (of "123456789") and an empty input.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn encoding_matches_published_messages() {
    // Two messages published with an independent encoder (the Elixir `event_stream`
    // package's documentation): no headers, then one `content-type` header.
    let payload = br#"{"foo": "bar"}"#;
    let mut want = vec![0, 0, 0, 30, 0, 0, 0, 0, 186, 242, 246, 138];
    want.extend_from_slice(payload);
    want.extend_from_slice(&[174, 114, 88, 228]);
    assert_eq!(encode(&[], payload), want);
    let m = encode(&[("content-type", "application/json")], payload);
    assert_eq!(&m[..12], &[0, 0, 0, 62, 0, 0, 0, 32, 64, 93, 249, 70]);
    assert_eq!(&m[m.len() - 4..], &[111, 162, 191, 59]);
}

/// One message with a header of every type, written byte by byte.
fn every_header_type() -> Vec<u8> {
    let mut h = Vec::new();
    let name = |h: &mut Vec<u8>, n: &str, ty: u8| {
        h.push(n.len() as u8);
        h.extend_from_slice(n.as_bytes());
        h.push(ty);
    };
    name(&mut h, "t", 0);
    name(&mut h, "f", 1);
    name(&mut h, "byte", 2);
    h.push(0xFF);
    name(&mut h, "short", 3);
    h.extend_from_slice(&(-2i16).to_be_bytes());
    name(&mut h, "int", 4);
    h.extend_from_slice(&70000i32.to_be_bytes());
    name(&mut h, "long", 5);
    h.extend_from_slice(&(-5i64).to_be_bytes());
    name(&mut h, "bytes", 6);
    h.extend_from_slice(&3u16.to_be_bytes());
    h.extend_from_slice(&[0, 1, 2]);
    name(&mut h, ":event-type", 7);
    h.extend_from_slice(&5u16.to_be_bytes());
    h.extend_from_slice(b"chunk");
    name(&mut h, "ts", 8);
    h.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    name(&mut h, "id", 9);
    h.extend_from_slice(&[7; 16]);
    frame(&h, b"{\"x\":1}")
}

type Seen = (
    Vec<(u64, Vec<(Vec<u8>, HeaderValue)>, Vec<u8>)>,
    Option<(ErrorKind, u64)>,
);

fn run(input: &[u8], cuts: &[usize], limits: Limits) -> Seen {
    let input = Bytes::copy_from_slice(input);
    let mut d = Decoder::with_limits(limits);
    let mut out = Vec::new();
    let mut err = None;
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let c = c.clamp(prev, input.len());
        if let Err(e) = d.push(input.slice(prev..c), &mut out) {
            err = Some((e.kind(), e.offset()));
            break;
        }
        prev = c;
    }
    let msgs = out
        .iter()
        .map(|m| {
            let headers = m
                .headers()
                .iter()
                .map(|(n, v)| (n.to_vec(), v.clone()))
                .collect();
            (m.offset(), headers, m.payload().to_vec())
        })
        .collect();
    (msgs, err)
}

/// Whole, byte by byte and at every split point: the same result.
fn check(input: &[u8], limits: Limits) -> Seen {
    let whole = run(input, &[], limits);
    let ones: Vec<usize> = (1..input.len()).collect();
    assert_eq!(run(input, &ones, limits), whole, "1-byte pushes");
    for k in 0..=input.len() {
        assert_eq!(run(input, &[k], limits), whole, "split at {k}");
    }
    whole
}

#[test]
fn messages_at_every_split_point() {
    let mut stream = encode(
        &[(":event-type", "messageStart")],
        br#"{"role":"assistant"}"#,
    );
    let second = every_header_type();
    stream.extend_from_slice(&second);
    stream.extend_from_slice(&encode(&[], b""));
    let (msgs, err) = check(&stream, Limits::default());
    assert_eq!(err, None);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0].2, br#"{"role":"assistant"}"#);
    assert_eq!(msgs[1].0, 63);
    let h = &msgs[1].1;
    assert_eq!(h.len(), 10);
    assert_eq!(h[0], (b"t".to_vec(), HeaderValue::Bool(true)));
    assert_eq!(h[1].1, HeaderValue::Bool(false));
    assert_eq!(h[2].1, HeaderValue::Byte(-1));
    assert_eq!(h[3].1, HeaderValue::Short(-2));
    assert_eq!(h[4].1, HeaderValue::Int(70000));
    assert_eq!(h[5].1, HeaderValue::Long(-5));
    assert_eq!(h[6].1, HeaderValue::Bytes(Bytes::from_static(&[0, 1, 2])));
    assert_eq!(h[7].1, HeaderValue::String(Bytes::from_static(b"chunk")));
    assert_eq!(h[8].1, HeaderValue::Timestamp(1_700_000_000_000));
    assert_eq!(h[9].1, HeaderValue::Uuid([7; 16]));
    assert_eq!(msgs[1].2, b"{\"x\":1}");
    assert_eq!(msgs[2], (63 + second.len() as u64, vec![], vec![]));
}

#[test]
fn a_message_inside_a_chunk_is_zero_copy() {
    let chunk = Bytes::from(encode(&[(":event-type", "x")], b"payload"));
    let mut d = Decoder::new();
    let mut out = Vec::new();
    d.push(chunk.clone(), &mut out).unwrap();
    let p = out[0].payload();
    assert_eq!(
        p.as_ptr() as usize,
        chunk.as_ptr() as usize + chunk.len() - 4 - 7
    );
    assert_eq!(out[0].str_header(":event-type"), Some(&b"x"[..]));
    assert_eq!(d.buffered(), 0);
    assert!(d.finish().is_ok());
}

#[test]
fn every_wrong_stream_fails_at_its_message_and_fuses() {
    let good = encode(&[(":event-type", "a")], b"{}");
    let n = good.len() as u64;
    let with = |bad: Vec<u8>| {
        let mut s = good.clone();
        s.extend_from_slice(&bad);
        s
    };
    // A prelude byte changed: its CRC no longer matches.
    let mut bad = good.clone();
    bad[3] ^= 1;
    assert_eq!(
        check(&with(bad), Limits::default()).1,
        Some((ErrorKind::PreludeChecksum, n))
    );
    // A payload byte changed: the message CRC.
    let mut bad = good.clone();
    let k = bad.len() - 5;
    bad[k] ^= 0x20;
    assert_eq!(
        check(&with(bad), Limits::default()).1,
        Some((ErrorKind::MessageChecksum, n))
    );
    // Lengths that cannot be, with a right prelude CRC.
    let prelude = |total: u32, headers: u32| {
        let mut m = total.to_be_bytes().to_vec();
        m.extend_from_slice(&headers.to_be_bytes());
        let c = crc32(&m);
        m.extend_from_slice(&c.to_be_bytes());
        m.extend_from_slice(&[0; 8]);
        m
    };
    assert_eq!(
        check(&with(prelude(15, 0)), Limits::default()).1,
        Some((ErrorKind::Length, n))
    );
    assert_eq!(
        check(&with(prelude(20, 5)), Limits::default()).1,
        Some((ErrorKind::Length, n))
    );
    // Over the limit: refused from its prelude, before anything is buffered.
    let small = Limits::default().max_message_bytes(64);
    assert_eq!(
        check(&with(prelude(65, 0)), small).1,
        Some((ErrorKind::TooLarge, n))
    );
    // A header that runs past the headers section (type 7, length 200).
    let m = frame(&[1, b'a', 7, 0, 200, b'x', b'y'], b"");
    assert_eq!(
        check(&with(m.clone()), Limits::default()).1,
        Some((ErrorKind::Header, n))
    );
    // An unknown value type.
    let m2 = frame(&[1, b'a', 10, 0, 0], b"");
    assert_eq!(
        check(&with(m2), Limits::default()).1,
        Some((ErrorKind::Header, n))
    );

    // Fused: the same error again, and finish says so.
    let mut bad = good.clone();
    bad[0] ^= 0x80;
    let mut d = Decoder::new();
    let e = d.push(Bytes::from(bad), &mut Vec::new()).unwrap_err();
    assert_eq!(d.push(Bytes::from(good.clone()), &mut Vec::new()), Err(e));
    assert_eq!(d.finish(), Err(Finish::Failed(e)));
}

#[test]
fn a_stream_that_ends_inside_a_message_is_incomplete() {
    let m = encode(&[(":event-type", "a")], b"{}");
    for cut in 1..m.len() {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        d.push(Bytes::copy_from_slice(&m[..cut]), &mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(d.buffered(), cut);
        match d.finish() {
            Err(Finish::Incomplete(i)) => assert_eq!((i.offset, i.bytes), (0, cut)),
            other => panic!("{other:?}"),
        }
    }
}

proptest! {
    /// Random messages, random cuts: the same messages as pushed whole, each as encoded;
    /// and any byte of the stream changed is caught (by a checksum, a length or a header
    /// check) or leaves the messages before it intact.
    #[test]
    fn random_messages_any_cuts(
        msgs in prop::collection::vec(
            (prop::collection::vec(("[a-z:-]{1,12}", "[ -~]{0,20}"), 0..4),
             prop::collection::vec(any::<u8>(), 0..64)),
            0..6),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
        flip in any::<(u16, u8)>(),
    ) {
        let mut stream = Vec::new();
        for (h, p) in &msgs {
            let h: Vec<(&str, &str)> = h.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            stream.extend_from_slice(&encode(&h, p));
        }
        let mut cuts: Vec<usize> = fracs.iter().map(|&f| f as usize * (stream.len() + 1) / 65536).collect();
        cuts.sort_unstable();
        let whole = run(&stream, &[], Limits::default());
        prop_assert_eq!(&run(&stream, &cuts, Limits::default()), &whole);
        prop_assert_eq!(whole.1, None);
        prop_assert_eq!(whole.0.len(), msgs.len());
        for ((_, h, p), (wh, wp)) in whole.0.iter().zip(&msgs) {
            prop_assert_eq!(p, wp);
            let names: Vec<Vec<u8>> = h.iter().map(|(n, _)| n.clone()).collect();
            let want: Vec<Vec<u8>> = wh.iter().map(|(n, _)| n.as_bytes().to_vec()).collect();
            prop_assert_eq!(names, want);
        }
        if !stream.is_empty() {
            let k = flip.0 as usize % stream.len();
            let mut bad = stream.clone();
            bad[k] ^= flip.1 | 1;
            let (got, err) = run(&bad, &cuts, Limits::default());
            prop_assert!(err.is_some(), "a changed byte went unnoticed");
            // The messages before the changed one are all there, unchanged.
            let before = whole.0.iter().take_while(|m| {
                let end = whole.0.iter().find(|n| n.0 > m.0).map_or(stream.len() as u64, |n| n.0);
                end as usize <= k
            }).count();
            prop_assert_eq!(&got[..], &whole.0[..before]);
        }
    }
}
