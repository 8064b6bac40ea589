//! `json::Preview`: the live view of a value in progress, against the reference (which reads
//! every prefix again from its first byte) at every byte, at random chunkings, and against
//! serde_json once each value completes.

use crate::common;

use proptest::prelude::*;
use serde_json::{json, Value as Json};
use toolstream::json::{reference, Change, ErrorKind, Limits, Mode, PathStep, Preview};

/// Push `text` cut at `cuts`; after every push the view (or the value it completed) must be
/// what the reference reads from the bytes so far. Returns the completed values and the end.
fn run_checked(text: &[u8], cuts: &[usize]) -> Vec<Json> {
    let mut p = Preview::new(Mode::Any);
    let mut done = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&text.len())) {
        let c = c.clamp(prev, text.len());
        p.push(&text[prev..c], &mut done).expect("valid JSON");
        prev = c;
        let want = reference::preview(&text[..c]);
        let got = if done.is_empty() {
            p.partial().cloned()
        } else {
            assert!(p.partial().is_none(), "a completed value left a view");
            done.last().cloned()
        };
        assert_eq!(
            got,
            want,
            "after {c} bytes of {:?}",
            String::from_utf8_lossy(text)
        );
    }
    if let Some(last) = p.finish().expect("one complete value") {
        done.push(last);
    }
    done
}

/// `a` is a prefix of `b` in the sense the docs give: every member and element shown is
/// equal to the final one, except that the last one begun may be a prefix of it.
fn is_prefix(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::String(x), Json::String(y)) => y.starts_with(x.as_str()),
        (Json::Array(x), Json::Array(y)) => {
            x.len() <= y.len()
                && x.iter().zip(y).enumerate().all(|(i, (p, q))| {
                    if i + 1 == x.len() {
                        is_prefix(p, q)
                    } else {
                        p == q
                    }
                })
        }
        (Json::Object(x), Json::Object(y)) => {
            let unequal = x.iter().filter(|(k, v)| y.get(*k) != Some(v)).count();
            unequal <= 1
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| is_prefix(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn a_tool_call_streamed_in_fragments() {
    let fragments: &[&[u8]] = &[
        b"{\"ci",
        b"ty\": \"Par",
        b"is\", \"days\": [1",
        b", 2], \"units\": \"c\\u00",
        b"e9\", \"ok\": tr",
        b"ue}",
    ];
    let mut p = Preview::new(Mode::Objects);
    let mut done = Vec::new();
    let mut views = Vec::new();
    for f in fragments {
        p.push(f, &mut done).unwrap();
        views.push(p.partial().cloned());
    }
    assert_eq!(
        views,
        [
            Some(json!({})),
            Some(json!({"city": "Par"})),
            Some(json!({"city": "Paris", "days": []})),
            Some(json!({"city": "Paris", "days": [1, 2], "units": "c"})),
            Some(json!({"city": "Paris", "days": [1, 2], "units": "cé"})),
            None,
        ]
    );
    assert_eq!(
        done,
        [json!({"city": "Paris", "days": [1, 2], "units": "cé", "ok": true})]
    );
}

#[test]
fn cut_escapes_and_utf8_wait_for_the_rest() {
    // "é" as raw UTF-8 (C3 A9) and "😀" as a surrogate pair, cut at every byte.
    let text = "{\"a\":\"x\u{e9}y\\ud83d\\ude00z\\n\"}".as_bytes();
    for k in 0..=text.len() {
        run_checked(text, &[k]);
    }
    let ones: Vec<usize> = (1..text.len()).collect();
    assert_eq!(run_checked(text, &ones), [json!({"a": "xéy😀z\n"})]);
}

#[test]
fn numbers_and_literals_show_once_complete() {
    let mut p = Preview::new(Mode::Any);
    let mut done = Vec::new();
    p.push(b"[12", &mut done).unwrap();
    assert_eq!(p.partial(), Some(&json!([])));
    p.push(b"3, nul", &mut done).unwrap();
    assert_eq!(p.partial(), Some(&json!([123])));
    p.push(b"l, -0.5e", &mut done).unwrap();
    assert_eq!(p.partial(), Some(&json!([123, null])));
    p.push(b"1]", &mut done).unwrap();
    assert_eq!(done, [json!([123, null, -0.5e1])]);
    // A number at the top level ends with the byte after it, or with the input.
    p.push(b" 7", &mut done).unwrap();
    assert_eq!(p.partial(), None);
    assert_eq!(p.finish().unwrap(), Some(json!(7)));
}

#[test]
fn concatenated_values_each_come_out() {
    let mut p = Preview::new(Mode::Objects);
    let mut done = Vec::new();
    p.push(b"\xEF\xBB\xBF{\"a\":1}{\"b\":", &mut done).unwrap();
    assert_eq!(done, [json!({"a": 1})]);
    assert_eq!(p.partial(), Some(&json!({})));
    p.push(b"[\"x\"]}\n", &mut done).unwrap();
    assert_eq!(done, [json!({"a": 1}), json!({"b": ["x"]})]);
    assert_eq!(p.finish().unwrap(), None);
}

#[test]
fn a_repeated_key_replaces_as_serde_json_does() {
    let text = br#"{"a":"first","a":"sec"#;
    let mut p = Preview::new(Mode::Objects);
    p.push(text, &mut Vec::new()).unwrap();
    assert_eq!(p.partial(), Some(&json!({"a": "sec"})));
    let mut done = Vec::new();
    p.push(b"ond\"}", &mut done).unwrap();
    let serde: Json = serde_json::from_slice(br#"{"a":"first","a":"second"}"#).unwrap();
    assert_eq!(done, [serde]);
}

#[test]
fn invalid_input_stops_at_the_splitters_error_and_keeps_what_came_before() {
    let mut p = Preview::new(Mode::Objects);
    let mut done = Vec::new();
    p.push(br#"{"a":"ok","b":[1,"#, &mut done).unwrap();
    let e = p.push(br#"2,]}"#, &mut done).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (ErrorKind::Syntax, 19));
    // The bytes before the bad one went in: `2` completed at the comma.
    assert_eq!(p.partial(), Some(&json!({"a": "ok", "b": [1, 2]})));
    // Fused: later pushes change nothing and give the same error.
    let again = p.push(b"\"c\"", &mut done).unwrap_err();
    assert_eq!(again, e);
    assert_eq!(p.partial(), Some(&json!({"a": "ok", "b": [1, 2]})));

    // A value that is not an object, in Mode::Objects.
    let mut p = Preview::new(Mode::Objects);
    let e = p.push(b"[1]", &mut done).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (ErrorKind::NotAnObject, 0));
    assert_eq!(p.partial(), None);

    // Truncated at the end: the view is what arrived.
    let mut p = Preview::new(Mode::Objects);
    p.push(br#"{"path":"src/m"#, &mut done).unwrap();
    assert_eq!(p.partial(), Some(&json!({"path": "src/m"})));
    assert_eq!(p.finish().unwrap_err().kind(), ErrorKind::Truncated);
}

#[test]
fn limits_are_the_splitters() {
    let mut p = Preview::with_limits(Mode::Any, Limits::default().max_depth(2));
    let e = p.push(b"[[[1]]]", &mut Vec::new()).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (ErrorKind::DepthLimit, 2));
    assert_eq!(p.partial(), Some(&json!([[]])));
}

/// Values for the property test: strings with quotes, backslashes, control characters,
/// non-ASCII and astral characters; numbers of every form.
fn arb_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-z\"\\\\/\u{1}\n\té€😀 ]{0,12}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec(("[a-z\"é😀\\\\]{0,6}", inner), 0..6)
                .prop_map(|kv| Json::Object(kv.into_iter().collect())),
        ]
    })
}

/// Write `v` as JSON text, choosing per character between the raw form and an escape
/// (`\uXXXX`, a surrogate pair for astral characters, `\/`), and whitespace between tokens.
fn write(v: &Json, choices: &mut impl Iterator<Item = u8>, out: &mut String) {
    let ws = |c: u8, out: &mut String| out.push_str([" ", "", "\n\t", "", " \r\n"][c as usize % 5]);
    match v {
        Json::String(s) => {
            out.push('"');
            for ch in s.chars() {
                let c = choices.next().unwrap_or(0);
                match ch {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' if c.is_multiple_of(2) => out.push_str("\\n"),
                    '/' if c.is_multiple_of(2) => out.push_str("\\/"),
                    '/' => out.push('/'),
                    c2 if (c2 as u32) < 0x20 || c.is_multiple_of(3) => {
                        let mut units = [0u16; 2];
                        for u in c2.encode_utf16(&mut units) {
                            out.push_str(&format!("\\u{:04x}", u));
                        }
                    }
                    c2 => out.push(c2),
                }
            }
            out.push('"');
        }
        Json::Array(items) => {
            out.push('[');
            ws(choices.next().unwrap_or(0), out);
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    ws(choices.next().unwrap_or(0), out);
                }
                write(x, choices, out);
                ws(choices.next().unwrap_or(1), out);
            }
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            ws(choices.next().unwrap_or(0), out);
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    ws(choices.next().unwrap_or(1), out);
                }
                write(&Json::String(k.clone()), choices, out);
                ws(choices.next().unwrap_or(1), out);
                out.push(':');
                ws(choices.next().unwrap_or(1), out);
                write(x, choices, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Byte by byte and at random cuts, the view after every push is the reference's
    /// reading of the bytes so far, each view is a prefix of the final value, and the
    /// completed value is serde_json's.
    #[test]
    fn every_view_is_the_references_and_a_prefix_of_the_end(
        v in arb_json(),
        choices in prop::collection::vec(any::<u8>(), 0..64),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        let mut text = String::new();
        write(&v, &mut choices.iter().copied().cycle(), &mut text);
        let text = text.as_bytes();
        let serde: Json = serde_json::from_slice(text).expect("the writer writes JSON");
        let ones: Vec<usize> = (1..text.len()).collect();
        prop_assert_eq!(run_checked(text, &ones), vec![serde.clone()]);
        let mut cuts: Vec<usize> = fracs.iter().map(|&f| f as usize * (text.len() + 1) / 65536).collect();
        cuts.sort_unstable();
        prop_assert_eq!(run_checked(text, &cuts), vec![serde.clone()]);
        for k in 0..text.len() {
            if let Some(view) = reference::preview(&text[..k]) {
                prop_assert!(is_prefix(&view, &serde), "{:?} is not a prefix of {:?}", view, serde);
            }
        }
    }
}

/// Push `text` cut at `cuts` with [`Preview::push_changes`]; after every push, the changes
/// applied in order to the view the earlier ones built must give the view (or, once the
/// value completed, the value). Returns the completed values.
fn run_changes(text: &[u8], cuts: &[usize]) -> Vec<Json> {
    let mut p = Preview::new(Mode::Any);
    let (mut done, mut changes) = (Vec::new(), Vec::new());
    let mut view: Option<Json> = None;
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&text.len())) {
        let c = c.clamp(prev, text.len());
        let before = done.len();
        p.push_changes(&text[prev..c], &mut done, &mut changes)
            .expect("valid JSON");
        prev = c;
        for ch in changes.drain(..) {
            if let Change::Set { path, .. } = &ch {
                if path.is_empty() {
                    view = None;
                }
            }
            ch.apply(&mut view);
        }
        if done.len() > before {
            assert_eq!(
                view.as_ref(),
                done.last(),
                "the changes built the completed value"
            );
            // Between values now: the next value's changes start from the root.
            view = None;
        } else {
            assert_eq!(view.as_ref(), p.partial(), "the changes built the view");
        }
    }
    // A top-level number completes only at the end.
    done.extend(p.finish().expect("valid JSON"));
    done
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The changes a push reports, applied in order, give the view after it, byte by byte
    /// and at random cuts; the last ones complete serde_json's value.
    #[test]
    fn the_changes_applied_in_order_give_the_view(
        v in arb_json(),
        choices in prop::collection::vec(any::<u8>(), 0..64),
        fracs in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        let mut text = String::new();
        write(&v, &mut choices.iter().copied().cycle(), &mut text);
        let text = text.as_bytes();
        let serde: Json = serde_json::from_slice(text).expect("the writer writes JSON");
        let ones: Vec<usize> = (1..text.len()).collect();
        prop_assert_eq!(run_changes(text, &ones), vec![serde.clone()]);
        let mut cuts: Vec<usize> = fracs.iter().map(|&f| f as usize * (text.len() + 1) / 65536).collect();
        cuts.sort_unstable();
        prop_assert_eq!(run_changes(text, &cuts), vec![serde]);
    }
}

/// A long string in small deltas: each push reports only the text it added, at the
/// string's path (the cost of a change is the delta's, not the string's).
#[test]
fn a_growing_string_is_reported_as_its_appends() {
    let text = format!(r#"{{"path":"a.rs","content":"{}"}}"#, "x".repeat(4096));
    let mut p = Preview::new(Mode::Objects);
    let (mut done, mut changes) = (Vec::new(), Vec::new());
    let mut appended = 0;
    for (i, d) in text.as_bytes().chunks(16).enumerate() {
        p.push_changes(d, &mut done, &mut changes).unwrap();
        for ch in changes.drain(..) {
            if let Change::Append { path, text } = ch {
                if *path == [PathStep::Key("content".into())] {
                    assert!(text.len() <= 16, "push {i} reported {} bytes", text.len());
                    appended += text.len();
                }
            }
        }
    }
    assert_eq!(appended, 4096);
    assert_eq!(done.len(), 1);
}

/// The conformance suite's accepted files: whole and byte by byte, the completed value is
/// serde_json's; its refused files are refused with an error, never a panic.
#[test]
fn conformance_suite() {
    let dir = common::data_dir("JSONTestSuite/test_parsing");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&path).unwrap();
        let run = |cut_every: usize| {
            let mut p = Preview::new(Mode::Any);
            let mut done = Vec::new();
            for piece in text.chunks(cut_every.max(1)) {
                p.push(piece, &mut done)?;
            }
            if let Some(v) = p.finish()? {
                done.push(v);
            }
            Ok::<_, toolstream::json::Error>(done)
        };
        let (whole, ones) = (run(text.len()), run(1));
        assert_eq!(whole, ones, "{name}");
        if name.starts_with("y_") {
            let values = whole.unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Ok(serde) = serde_json::from_slice::<Json>(&text) {
                assert_eq!(values, [serde], "{name}");
                checked += 1;
            }
        } else if name.starts_with("n_") {
            assert!(
                whole.is_err() || whole.as_ref().is_ok_and(|v| v.len() != 1),
                "{name}"
            );
        }
    }
    assert!(checked > 90, "only {checked} files checked");
}

/// Found by the `preview_chunked` fuzz target: a number at the top level ended by a byte the
/// splitter refuses is still a value the splitter emitted, so the preview completes it too.
#[test]
fn a_top_level_number_ended_by_a_bad_byte_is_complete() {
    let mut p = Preview::new(Mode::Any);
    let mut done = Vec::new();
    let e = p.push(b"-2\xE9\"", &mut done).unwrap_err();
    assert_eq!(e.offset(), 2);
    assert_eq!(done, [json!(-2)]);
    assert_eq!(p.partial(), None);
}

/// Found by the `preview_chunked` fuzz target: a number the grammar allows but serde_json
/// cannot hold (beyond f64's range) shows as null, in its place, and what follows goes on.
#[test]
fn a_number_beyond_f64_is_null_in_its_place() {
    let text = b"[1e400, -2e999, 3]";
    let ones: Vec<usize> = (1..text.len()).collect();
    assert_eq!(run_checked(text, &ones), [json!([null, null, 3])]);
    assert!(serde_json::from_slice::<Json>(text).is_err());
}

/// Found by the `preview_chunked` fuzz target (in the reference): a byte order mark cut
/// short shows nothing, as a whole one does.
#[test]
fn a_byte_order_mark_cut_short_shows_nothing() {
    for bom in [&b"\xEF"[..], b"\xEF\xBB", b"\xEF\xBB\xBF", b"\xEF\xBB\xBF "] {
        assert_eq!(reference::preview(bom), None, "{bom:?}");
        let mut p = Preview::new(Mode::Objects);
        p.push(bom, &mut Vec::new()).unwrap();
        assert_eq!(p.partial(), None);
    }
    let text = b"\xEF\xBB\xBF{\"a\":[true]}";
    let ones: Vec<usize> = (1..text.len()).collect();
    assert_eq!(run_checked(text, &ones), [json!({"a": [true]})]);
}

/// Every shipped capture through the pipeline with previews on, at 1, 7 and 64-byte
/// pushes: the events are those of the pipeline without previews, and every view of a
/// call's arguments shown along the way is a prefix of an object the call then produced
/// (or of a call that failed).
#[test]
fn shipped_captures_views_are_prefixes_of_the_calls_that_follow() {
    use bytes::Bytes;
    use std::collections::BTreeMap;
    use toolstream::assemble::{Event, Policy};
    use toolstream::pipeline::Stream;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/captures");
    let mut views_checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "sse" | "ndjson" | "eventstream") {
            continue;
        }
        let input = Bytes::from(std::fs::read(&path).unwrap());
        for chunk in [1, 7, 64] {
            let policy = Policy {
                preview: true,
                ..Policy::default()
            };
            let mut s = Stream::with_policy(None, policy);
            let mut events = Vec::new();
            let mut views: Vec<(u32, Json)> = Vec::new();
            let mut i = 0;
            while i < input.len() {
                let j = (i + chunk).min(input.len());
                s.push(input.slice(i..j), &mut events);
                i = j;
                let slots = events
                    .iter()
                    .filter(|e| matches!(e, Event::CallStarted { .. }))
                    .count() as u32;
                for k in 0..slots {
                    if let Some(v) = s.preview(k) {
                        views.push((k, v.clone()));
                    }
                }
            }
            s.finish(&mut events);
            assert_eq!(
                events,
                common::pipeline_events(None, &input, chunk),
                "{} at {chunk}: previews changed the events",
                path.display()
            );
            let mut made: BTreeMap<u32, Vec<Json>> = BTreeMap::new();
            let mut failed = Vec::new();
            for e in &events {
                match e {
                    Event::ToolCall(c) => made
                        .entry(c.index)
                        .or_default()
                        .push(serde_json::from_slice(&c.arguments).unwrap()),
                    Event::ToolCallFailed(f) => failed.push(f.index),
                    _ => {}
                }
            }
            for (k, view) in &views {
                let ok = failed.contains(k)
                    || made
                        .get(k)
                        .is_some_and(|calls| calls.iter().any(|c| is_prefix(view, c)));
                assert!(ok, "{} at {chunk}: view {view} of #{k}", path.display());
                views_checked += 1;
            }
        }
    }
    assert!(views_checked > 100, "only {views_checked} views checked");
}
