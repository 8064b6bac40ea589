//! One call from what a gateway holds to a decision: a pipeline event, a header map, an
//! HTTP client's error chain; and the `Display` and `Serialize` forms of what comes out.

use bytes::Bytes;
use std::fmt;
use toolstream::assemble::{DropReason, Dropped, Event};
use toolstream::classify::{
    classify_error, classify_event, classify_response, Action, Phase, Policy, Provider, Reason,
};
use toolstream::pipeline::Stream;
use toolstream::provider::Format;

/// An error with a chain of causes, as an HTTP client builds it.
#[derive(Debug)]
struct Chain(&'static str, Option<Box<Chain>>);

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Chain {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.1.as_deref().map(|c| c as _)
    }
}

fn chain(messages: &[&'static str]) -> Chain {
    let mut next = None;
    for m in messages.iter().rev() {
        next = Some(Box::new(Chain(m, next)));
    }
    *next.unwrap()
}

#[test]
fn an_error_chain_is_decided_by_its_innermost_known_cause() {
    let p = Policy::default();
    let cases: &[(&[&str], Reason)] = &[
        // reqwest → hyper-util → io, as reqwest 0.12 prints them.
        (
            &[
                "error sending request for url (http://127.0.0.1:9/v1/chat/completions)",
                "client error (Connect)",
                "tcp connect error",
                "Connection refused (os error 111)",
            ],
            Reason::Connection,
        ),
        (
            &[
                "error sending request for url (https://api.openai.com/v1)",
                "operation timed out",
            ],
            Reason::Timeout,
        ),
        (
            &[
                "error decoding response body",
                "request or response body error",
                "error reading a body from connection",
                "unexpected end of file",
            ],
            Reason::StreamInterrupted,
        ),
        // The outer messages alone, when the causes say nothing a rule knows.
        (
            &["error decoding response body", "odd"],
            Reason::StreamInterrupted,
        ),
        (
            &["error sending request for url (http://x/)", "odd"],
            Reason::Connection,
        ),
        (&["client error (Connect)", "odd"], Reason::Connection),
        (&["something odd", "odder"], Reason::Unknown),
    ];
    for (messages, reason) in cases {
        let v = classify_error(&chain(messages), 0, &p);
        assert_eq!(v.reason, *reason, "{messages:?}: {v}");
        assert_eq!(v.message, messages.join(": "));
    }
    // A plain io::Error is a chain of one.
    let io = std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "connection reset by peer",
    );
    assert_eq!(classify_error(&io, 0, &p).reason, Reason::Connection);
}

#[test]
fn headers_come_from_any_collection_of_pairs() {
    let p = Policy::default();
    let body = br#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}"#;
    // Owned strings, as a map of a client would hold them.
    let owned: Vec<(String, String)> = vec![("Retry-After".into(), "7".into())];
    let v = classify_response(Provider::Openai, 429, owned, body, 0, &p);
    assert_eq!(v.reason, Reason::RateLimit);
    assert_eq!(v.retry_after, Some(std::time::Duration::from_secs(7)));
    // Byte values (an http::HeaderValue is bytes); one that is not UTF-8 is skipped.
    let bytes: [(&str, &[u8]); 2] = [("x-junk", b"\xff\xfe"), ("retry-after", b"3")];
    let v = classify_response(Provider::Openai, 429, bytes, body, 0, &p);
    assert_eq!(v.retry_after, Some(std::time::Duration::from_secs(3)));
    // No headers at all.
    let none: [(&str, &str); 0] = [];
    let v = classify_response(Provider::Openai, 429, none, body, 0, &p);
    assert_eq!((v.reason, v.retry_after), (Reason::RateLimit, None));
}

fn events(stream: &[u8]) -> Vec<Event> {
    let mut s = Stream::new(None);
    let mut out = Vec::new();
    s.push(Bytes::copy_from_slice(stream), &mut out);
    s.finish(&mut out);
    out
}

#[test]
fn every_failure_event_gets_a_verdict_and_nothing_else_does() {
    let p = Policy::default();
    let before = Phase::BeforeOutput;
    // A call whose arguments are broken JSON, then [DONE]: the model's output.
    let evs = events(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":tru}\"}}]}}]}\n\ndata: [DONE]\n\n");
    let verdicts: Vec<_> = evs
        .iter()
        .filter_map(|e| classify_event(e, Provider::Openai, before, 0, &p))
        .collect();
    assert_eq!(verdicts.len(), 1, "{evs:?}");
    assert_eq!(verdicts[0].reason, Reason::ModelOutput);
    assert_eq!(verdicts[0].action, Action::RetryWithFeedback);
    assert!(verdicts[0].feedback.as_deref().unwrap().contains("`f`"));

    // An error the provider sent in the stream: by the provider named, in the phase.
    let evs = events(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    let v: Vec<_> = evs
        .iter()
        .filter_map(|e| classify_event(e, Format::Anthropic.into(), before, 0, &p))
        .collect();
    assert_eq!(v[0].reason, Reason::Overloaded, "{evs:?}");
    assert_eq!(v[0].action, Action::Retry);
    let after = classify_event(&evs[0], Provider::Anthropic, Phase::AfterOutput, 0, &p).unwrap();
    assert_eq!(after.action, Action::Surface);
    // ... and the end of that stream, which never completed.
    assert_eq!(v.last().unwrap().rule, "stream.incomplete");

    // Bytes the stream lost.
    let d = Event::Dropped(Dropped {
        reason: DropReason::Cut,
        offset: 10,
        bytes: 5,
    });
    let v = classify_event(&d, Provider::Openai, before, 0, &p).unwrap();
    assert_eq!(
        (v.reason, v.action),
        (Reason::StreamInterrupted, Action::Retry)
    );
    assert!(v.message.contains("cut"), "{}", v.message);

    // A whole, clean stream: no verdict at all.
    let evs = events(include_bytes!(
        "../examples/captures/openai-parallel-calls.sse"
    ));
    assert!(evs
        .iter()
        .all(|e| classify_event(e, Provider::Openai, before, 0, &p).is_none()));
}

#[test]
fn each_format_maps_to_the_provider_that_speaks_it() {
    assert_eq!(Provider::from(Format::OpenAiChat), Provider::Openai);
    assert_eq!(Provider::from(Format::OpenAiResponses), Provider::Openai);
    assert_eq!(Provider::from(Format::Anthropic), Provider::Anthropic);
    assert_eq!(Provider::from(Format::Gemini), Provider::Gemini);
    assert_eq!(Provider::from(Format::Ollama), Provider::Ollama);
    assert_eq!(Provider::from(Format::Bedrock), Provider::Bedrock);
}

#[test]
fn failures_and_verdicts_read_as_one_line() {
    let evs = events(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":tru}\"}}]}}]}\n\ndata: [DONE]\n\n");
    let f = evs
        .iter()
        .find_map(|e| match e {
            Event::ToolCallFailed(f) => Some(f),
            _ => None,
        })
        .unwrap();
    let text = f.to_string();
    assert!(
        text.starts_with("tool call #0 f (id c1) failed: syntax at byte 8: invalid literal"),
        "{text}"
    );
    // Usable as an error.
    let e: &dyn std::error::Error = f;
    assert_eq!(e.to_string(), text);
    let v = classify_response(
        Provider::Openai,
        429,
        [("retry-after", "2")],
        br#"{"error":{"message":"Slow down"}}"#,
        0,
        &Policy::default(),
    );
    assert_eq!(
        v.to_string(),
        format!(
            "rate_limit → retry (after 2000ms): Slow down [rule {}]",
            v.rule
        )
    );
}

#[test]
fn events_and_verdicts_serialise_as_the_cli_prints_them() {
    let evs = events(include_bytes!(
        "../examples/captures/openai-parallel-calls.sse"
    ));
    let call = evs
        .iter()
        .find(|e| matches!(e, Event::ToolCall(_)))
        .unwrap();
    let j = serde_json::to_value(call).unwrap();
    assert_eq!(j["type"], "tool_call");
    assert_eq!(j["name"], "get_weather");
    assert!(j["arguments"].is_object(), "{j}");
    assert_eq!(
        serde_json::to_value(evs.last().unwrap()).unwrap(),
        serde_json::json!({"type": "end", "complete": true})
    );
    let started = evs
        .iter()
        .find(|e| matches!(e, Event::CallStarted { .. }))
        .unwrap();
    assert_eq!(
        serde_json::to_value(started).unwrap()["type"],
        "call_started"
    );
    let v = classify_response(
        Provider::Openai,
        500,
        [("a", "b")],
        b"",
        0,
        &Policy::default(),
    );
    let j = serde_json::to_value(&v).unwrap();
    assert_eq!(j["reason"], "server_error");
    assert_eq!(j["action"], "retry");
    assert_eq!(j["retry_after_ms"], serde_json::Value::Null);
    assert_eq!(j.as_object().unwrap().len(), 11);
}
