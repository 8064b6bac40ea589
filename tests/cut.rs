//! A stream cut off by a dropped connection: at every byte of every shipped capture, the
//! cut is reported as what it is (`Dropped` with reason `cut`, when it fell inside an
//! event), never as an error the provider sent, and the stream is complete only if
//! nothing was lost.

use bytes::Bytes;
use std::path::Path;
use toolstream::assemble::{DropReason, Event};
use toolstream::pipeline::Stream;

fn run(bytes: &[u8]) -> Vec<Event> {
    let mut s = Stream::new(None);
    let mut out = Vec::new();
    s.push(Bytes::copy_from_slice(bytes), &mut out);
    s.finish(&mut out);
    out
}

fn provider_errors(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::ProviderError { .. }))
        .count()
}

#[test]
fn a_cut_is_never_a_provider_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/captures");
    let mut checked = 0;
    let mut cuts = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "sse" | "ndjson" | "eventstream") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        // Errors the provider really sent are in the whole stream too.
        let whole = run(&bytes);
        let sent = provider_errors(&whole);
        for n in 1..bytes.len() {
            let events = run(&bytes[..n]);
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                provider_errors(&events) <= sent,
                "{name} cut at {n}: {events:?}"
            );
            // Complete only if nothing but usage was lost: a format without a terminal
            // marker (Gemini) cut before the blank line after its last event, or Bedrock
            // cut between `messageStop` and the `metadata` that trails it.
            if events.last() == Some(&Event::End { complete: true }) {
                let no_usage = |v: &[Event]| {
                    v.iter()
                        .filter(|e| !matches!(e, Event::Usage { .. }))
                        .cloned()
                        .collect::<Vec<_>>()
                };
                assert_eq!(no_usage(&events), no_usage(&whole), "{name} cut at {n}");
            }
            let cut: Vec<_> = events
                .iter()
                .filter_map(|e| match e {
                    Event::Dropped(d) if d.reason == DropReason::Cut => Some(d),
                    _ => None,
                })
                .collect();
            assert!(cut.len() <= 1, "{name} cut at {n}: {events:?}");
            if let Some(d) = cut.first() {
                cuts += 1;
                assert!(d.offset + d.bytes <= n as u64, "{name} cut at {n}: {d:?}");
                assert!(d.bytes > 0, "{name} cut at {n}: {d:?}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} captures");
    assert!(cuts > 1000, "only {cuts} cuts reported");
}

#[test]
fn a_cut_inside_an_sse_event_is_reported_with_its_offset_and_bytes() {
    let event = br#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{\"a\":"}}]}}]}"#;
    let whole = [&event[..], b"\n\n"].concat();
    let next = br#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#;
    let stream = [&whole[..], &next[..40]].concat();
    let events = run(&stream);
    assert!(
        events.contains(&Event::Dropped(toolstream::assemble::Dropped {
            reason: DropReason::Cut,
            offset: whole.len() as u64,
            bytes: 40 - 6,
        })),
        "{events:?}"
    );
    assert_eq!(provider_errors(&events), 0, "{events:?}");
    // The open call lost its end: interrupted, not the model's truncation.
    assert!(
        events.iter().any(|e| matches!(e, Event::ToolCallFailed(f)
            if f.kind == toolstream::assemble::FailureKind::Interrupted)),
        "{events:?}"
    );
}

#[test]
fn an_error_cut_before_its_blank_line_is_still_delivered() {
    let stream = br#"data: {"error":{"message":"overloaded","code":529}}"#;
    let events = run(stream);
    assert_eq!(provider_errors(&events), 1, "{events:?}");
    assert!(
        !events.iter().any(|e| matches!(e, Event::Dropped(_))),
        "{events:?}"
    );
}

#[test]
fn a_bad_line_that_is_not_the_last_is_still_undecodable() {
    let stream = b"{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":false}\n{\"model\":\n{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"x\"},\"done\":false}\n{\"mo";
    let events = run(stream);
    // The second line is complete and bad: undecodable, reported as it is. The last is cut.
    assert_eq!(provider_errors(&events), 1, "{events:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Dropped(d) if d.reason == DropReason::Cut)),
        "{events:?}"
    );
}
