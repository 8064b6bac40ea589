//! One `data:` payload of an OpenAI chat stream, decoded by the one-pass cursor decoder
//! (a fresh one, and one that has just read another payload, so that its remembered
//! envelope prefix is exercised) and by the serde decoder it replaced (its oracle). When
//! both accept, the deltas must be equal; when serde rejects, the cursor must too (unless
//! serde's reason is a repeated key, which JSON allows); when only the cursor rejects, the
//! payload must not be strictly valid JSON (serde does not check the surrogates of strings
//! it skips) or must have an array where the chunk has an object (serde reads a struct from
//! an array). The first payload with one of its strings replaced by the second is also
//! read by the Anthropic and OpenAI Responses decoders, which must read it from their
//! templates as they would whole; for the Responses decoder a non-negative integer of the
//! first payload may be the one replaced (a template's integer gap).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolstream::json::reference::Reference;
use toolstream::json::{Limits, Mode};
use toolstream::provider::openai_chat::{decode_reference, Decoder};
use toolstream::provider::Delta;
use toolstream::provider::{anthropic, openai_responses};

fn undecodable(d: &[Delta]) -> bool {
    matches!(d, [Delta::Undecodable { message, .. }] if message.starts_with("undecodable payload"))
}

/// Objects where a chat chunk has objects (serde_derive also takes a struct from an array).
fn object_shaped(v: &serde_json::Value) -> bool {
    let obj_or_null = |v: Option<&serde_json::Value>,
                       inner: &dyn Fn(&serde_json::Value) -> bool| {
        v.is_none_or(|v| v.is_null() || (v.is_object() && inner(v)))
    };
    let arr_or_null = |v: Option<&serde_json::Value>, each: &dyn Fn(&serde_json::Value) -> bool| {
        v.is_none_or(|v| match v {
            serde_json::Value::Null => true,
            serde_json::Value::Array(items) => items.iter().all(|i| i.is_object() && each(i)),
            _ => true,
        })
    };
    let call = |c: &serde_json::Value| obj_or_null(c.get("function"), &|_| true);
    let message = |m: &serde_json::Value| arr_or_null(m.get("tool_calls"), &call);
    let choice = |c: &serde_json::Value| obj_or_null(c.get("delta"), &message);
    v.is_object()
        && arr_or_null(v.get("choices"), &choice)
        && obj_or_null(v.get("x_groq"), &|_| true)
}

fn check(payload: &[u8], ours: &[Delta]) {
    let mut theirs = Vec::new();
    decode_reference(payload, &mut theirs);
    match (undecodable(ours), undecodable(&theirs)) {
        (false, false) => assert_eq!(ours, &theirs[..]),
        (true, true) => {}
        (true, false) => {
            let trimmed = payload.trim_ascii();
            let (spans, error) = Reference::split(Mode::Any, Limits::default(), trimmed);
            let valid = spans.len() == 1 && error.is_none();
            let shaped = serde_json::from_slice(trimmed).is_ok_and(|v| object_shaped(&v));
            assert!(
                !(valid && shaped),
                "cursor rejected a valid payload: {ours:?} / {theirs:?}"
            );
        }
        (false, true) => {
            let Delta::Undecodable { message, .. } = &theirs[0] else {
                unreachable!()
            };
            assert!(
                message.contains("duplicate field"),
                "serde rejected, the cursor accepted: {ours:?} / {theirs:?}"
            );
        }
    }
}

/// The spans of the string tokens of `p` (quotes included), by a plain lexer.
fn strings(p: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < p.len() {
        if p[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < p.len() && p[i] != b'"' {
            i += if p[i] == b'\\' { 2 } else { 1 };
        }
        if i >= p.len() {
            break;
        }
        i += 1;
        spans.push((start, i));
    }
    spans
}

fuzz_target!(|data: &[u8]| {
    // The input is one payload, or two separated by a NUL (the first primes the decoder).
    let (first, second) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let mut d = Decoder::default();
    let mut ours = Vec::new();
    d.decode(first, &mut ours);
    check(first, &ours);
    if let Some(second) = second {
        ours.clear();
        d.decode(second, &mut ours);
        check(second, &ours);
        // The first payload with one of its string tokens (picked by the second's length)
        // replaced by the second, read by a decoder that has just read the first: the same
        // bytes around a new string, as in a stream, which it reads from its template when
        // that token was the text or the arguments.
        let spans = strings(first);
        if !spans.is_empty() {
            let (a, b) = spans[second.len() % spans.len()];
            let mut v = first[..a].to_vec();
            v.extend_from_slice(second);
            v.extend_from_slice(&first[b..]);
            let mut d = Decoder::default();
            for p in [first, first, &v[..]] {
                ours.clear();
                d.decode(p, &mut ours);
                check(p, &ours);
            }
            // The same three as Anthropic events.
            against_whole(
                b"content_block_delta",
                [first, first, &v[..]],
                anthropic::Decoder::decode,
                anthropic::Decoder::forget_template,
            );
        }
        // As OpenAI Responses events, with a string or a digit run of the first payload
        // replaced by the second.
        let mut spans = strings(first);
        spans.extend(digit_runs(first));
        if !spans.is_empty() {
            let (a, b) = spans[second.len() % spans.len()];
            let mut v = first[..a].to_vec();
            v.extend_from_slice(second);
            v.extend_from_slice(&first[b..]);
            against_whole(
                b"response.function_call_arguments.delta",
                [first, first, &v[..]],
                openai_responses::Decoder::decode,
                openai_responses::Decoder::forget_template,
            );
        }
    }
});

/// A decoder's `decode` for one event (its type, its payload).
type DecodeEvent<D> = fn(&mut D, Option<&[u8]>, &[u8], &mut Vec<Delta>);

/// The `payloads` as events of type `event`, read by one decoder that keeps templates and,
/// each, by one in the same state made to read it whole: the same deltas.
fn against_whole<D: Default>(
    event: &[u8],
    payloads: [&[u8]; 3],
    decode: DecodeEvent<D>,
    forget_template: fn(&mut D),
) {
    let mut d = D::default();
    let mut whole = D::default();
    for p in payloads {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        decode(&mut d, Some(event), p, &mut x);
        forget_template(&mut whole);
        decode(&mut whole, Some(event), p, &mut y);
        assert_eq!(x, y);
    }
}

/// The spans of the digit runs of `p` outside string tokens (by the same plain lexer).
fn digit_runs(p: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    let mut strings = strings(p).into_iter().peekable();
    while i < p.len() {
        if let Some(&(a, b)) = strings.peek() {
            if i >= a {
                i = i.max(b);
                strings.next();
                continue;
            }
        }
        if p[i].is_ascii_digit() {
            let start = i;
            while i < p.len() && p[i].is_ascii_digit() {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}
