//! Bedrock ConverseStream through the pipeline: framing failures, error messages, unknown
//! events, detection from the first byte.

use crate::common;

use bytes::Bytes;
use toolstream::assemble::Event;
use toolstream::eventstream::encode;
use toolstream::provider::Format;

fn ev(kind: &str, body: &str) -> Vec<u8> {
    encode(
        &[(":event-type", kind), (":message-type", "event")],
        body.as_bytes(),
    )
}

fn call_stream() -> Vec<u8> {
    let mut s = ev("messageStart", r#"{"role":"assistant"}"#);
    s.extend(ev(
        "contentBlockStart",
        r#"{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}"#,
    ));
    s.extend(ev(
        "contentBlockDelta",
        r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\":"}}}"#,
    ));
    s.extend(ev(
        "contentBlockDelta",
        r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"1}"}}}"#,
    ));
    s.extend(ev("contentBlockStop", r#"{"contentBlockIndex":0}"#));
    s
}

fn events(input: &[u8], chunk: usize) -> Vec<Event> {
    common::pipeline_events(None, &Bytes::copy_from_slice(input), chunk)
}

#[test]
fn detected_from_its_first_byte_at_every_chunk_size() {
    let mut s = call_stream();
    s.extend(ev("messageStop", r#"{"stopReason":"tool_use"}"#));
    let whole = events(&s, s.len());
    for chunk in [1, 2, 11, 12, 13, 64] {
        assert_eq!(events(&s, chunk), whole, "chunk {chunk}");
    }
    assert!(matches!(&whole[1], Event::ToolCall(c) if &c.arguments[..] == b"{\"a\":1}"));
    assert_eq!(whole.last(), Some(&Event::End { complete: true }));
    let mut p = toolstream::pipeline::Stream::new(None);
    p.push(Bytes::from_static(&[0]), &mut Vec::new());
    assert_eq!(p.format(), Some(Format::Bedrock));
}

#[test]
fn a_corrupted_message_is_reported_once_and_the_stream_is_incomplete() {
    let good = call_stream();
    let mut s = good.clone();
    let mut stop = ev("messageStop", r#"{"stopReason":"tool_use"}"#);
    let k = stop.len() - 6;
    stop[k] ^= 0x01; // inside the payload: the message checksum fails
    s.extend(stop);
    s.extend(ev("metadata", r#"{"usage":{}}"#));
    for chunk in [1, 7, s.len()] {
        let got = events(&s, chunk);
        let errors: Vec<&Event> = got
            .iter()
            .filter(|e| matches!(e, Event::ProviderError { .. }))
            .collect();
        assert_eq!(errors.len(), 1, "chunk {chunk}: {got:?}");
        let Event::ProviderError { message, .. } = errors[0] else {
            unreachable!()
        };
        assert_eq!(
            message,
            &format!(
                "event stream: message_checksum in the message at byte {}",
                good.len()
            )
        );
        // The call before it stands; the stream did not end properly.
        assert!(got.iter().any(|e| matches!(e, Event::ToolCall(_))));
        assert_eq!(got.last(), Some(&Event::End { complete: false }));
    }
}

#[test]
fn error_messages_exceptions_and_unknown_events() {
    let mut s = ev("messageStart", r#"{"role":"assistant"}"#);
    s.extend(ev("somethingNew", r#"{"x":1}"#));
    s.extend(encode(
        &[
            (":message-type", "error"),
            (":error-code", "InternalFailure"),
            (":error-message", "We had a problem"),
        ],
        b"",
    ));
    s.extend(encode(
        &[
            (":message-type", "exception"),
            (":exception-type", "modelStreamErrorException"),
        ],
        br#"{"message":"The model stream broke","originalStatusCode":500}"#,
    ));
    let got = events(&s, 5);
    let errors: Vec<(Option<u16>, String, serde_json::Value)> = got
        .iter()
        .filter_map(|e| match e {
            Event::ProviderError {
                status,
                message,
                body,
            } => Some((
                *status,
                message.clone(),
                serde_json::from_str(body).unwrap(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [
            (
                None,
                "We had a problem".to_string(),
                serde_json::json!({"code": "InternalFailure", "message": "We had a problem"})
            ),
            (
                Some(424),
                "The model stream broke".to_string(),
                serde_json::json!({"code": "modelStreamErrorException", "message": "The model stream broke"})
            ),
        ]
    );
    assert_eq!(got.last(), Some(&Event::End { complete: false }));
}

#[test]
fn invoke_chunks_carry_anthropic_or_nova_events_in_base64() {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let chunk = |inner: &str| ev("chunk", &format!(r#"{{"bytes":"{}"}}"#, b64(inner)));
    // Nova: Converse events, each wrapped in a one-member object.
    let mut s = chunk(r#"{"messageStart":{"role":"assistant"}}"#);
    s.extend(chunk(
        r#"{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"n1","name":"g"}}}}"#,
    ));
    s.extend(chunk(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"q\":2}"}}}}"#,
    ));
    s.extend(chunk(r#"{"contentBlockStop":{"contentBlockIndex":0}}"#));
    s.extend(chunk(r#"{"messageStop":{"stopReason":"tool_use"}}"#));
    let got = events(&s, 3);
    assert!(
        got.iter().any(
            |e| matches!(e, Event::ToolCall(c) if c.id == "n1" && &c.arguments[..] == b"{\"q\":2}")
        ),
        "{got:?}"
    );
    assert_eq!(got.last(), Some(&Event::End { complete: true }));
    // A chunk that is not base64 is an error event, and decoding goes on; what it carried
    // is lost, so the stream is not complete.
    let mut s = ev("chunk", r#"{"bytes":"not base64!"}"#);
    s.extend(chunk(r#"{"type":"message_stop"}"#));
    let got = events(&s, s.len());
    assert!(
        matches!(&got[0], Event::ProviderError { message, .. } if message.contains("not base64"))
    );
    assert_eq!(got.last(), Some(&Event::End { complete: false }));
}

#[test]
fn a_call_named_in_its_first_delta_instead_of_a_block_start() {
    let mut s = ev("messageStart", r#"{"role":"assistant"}"#);
    s.extend(ev(
        "contentBlockDelta",
        r#"{"contentBlockIndex":1,"delta":{"toolUse":{"name":"file_writer","toolUseId":"tooluse_123"}}}"#,
    ));
    for frag in [r#"{\""#, r#"path\": \"/mn"#, r#"t/a\"}"#] {
        s.extend(ev(
            "contentBlockDelta",
            &format!(r#"{{"contentBlockIndex":1,"delta":{{"toolUse":{{"input":"{frag}"}}}}}}"#),
        ));
    }
    s.extend(ev("contentBlockStop", r#"{"contentBlockIndex":1}"#));
    s.extend(ev("messageStop", r#"{"stopReason":"tool_use"}"#));
    let got = events(&s, 9);
    let call = got.iter().find_map(|e| match e {
        Event::ToolCall(c) => Some(c),
        _ => None,
    });
    let call = call.expect("a call");
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("tooluse_123", "file_writer")
    );
    assert_eq!(&call.arguments[..], br#"{"path": "/mnt/a"}"#);
    assert_eq!(got.last(), Some(&Event::End { complete: true }));
}
