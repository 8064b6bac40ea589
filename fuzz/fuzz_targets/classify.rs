//! Arbitrary status, headers and body: the classifier never panics and always answers with
//! one of the documented reasons, with flags consistent with the action.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use toolstream::classify::{
    classify_http, classify_stream_error, classify_transport, Action, HttpFailure, Phase, Policy,
    Provider, Reason,
};

#[derive(Arbitrary, Debug)]
struct Input {
    status: u16,
    provider: u8,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    attempt: u8,
    after: bool,
}

fuzz_target!(|input: Input| {
    let policy = Policy::default();
    let provider = Provider::ALL[input.provider as usize % Provider::ALL.len()];
    let headers: Vec<(&str, &str)> = input
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let v = classify_http(
        &HttpFailure {
            provider,
            status: input.status,
            headers: &headers,
            body: &input.body,
            attempt: input.attempt as u32,
        },
        &policy,
    );
    assert!(Reason::ALL.contains(&v.reason));
    assert_eq!(v.should_compress, v.action == Action::Compress);
    // The provider's own figure is reported as it is; a rate limit whose wait is over the
    // budget is then never a plain retry.
    if v.reason == Reason::RateLimit && v.retry_after.is_some_and(|d| d > policy.wait_budget) {
        assert_ne!(v.action, Action::Retry);
    }
    let phase = if input.after {
        Phase::AfterOutput
    } else {
        Phase::BeforeOutput
    };
    let s = classify_stream_error(provider, &input.body, phase, input.attempt as u32, &policy);
    assert!(Reason::ALL.contains(&s.reason));
    if input.after {
        assert_eq!(s.action, Action::Surface);
    }
    let t = classify_transport(
        &String::from_utf8_lossy(&input.body),
        input.attempt as u32,
        &policy,
    );
    assert!(Reason::ALL.contains(&t.reason));
});
