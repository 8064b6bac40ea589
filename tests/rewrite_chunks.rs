//! No rewriter keeps a chunk past its push: what it holds (a call's events until the call
//! ends, the stream's last event until the body ends, the last event it forwarded) is its
//! own copy, not a slice of the chunk. A slice would keep the whole chunk alive, and with
//! it the reader's buffer, which an HTTP client then cannot reuse for its next read: a
//! proxy would allocate a buffer a read and hold one a stream.

use bytes::{Bytes, BytesMut};
use toolstream::classify::Provider;
use toolstream::rewrite::{Api, Rewriter};

/// A Responses stream: a call whose events are held while it streams (its item added,
/// its deltas, done, item done), an event type no table knows, text, and the end.
fn responses() -> String {
    let mut s = String::new();
    let mut seq = 0;
    let mut ev = |ty: &str, body: &str| {
        s.push_str(&format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq}{body}}}\n\n"
        ));
        seq += 1;
    };
    ev(
        "response.created",
        r#","response":{"id":"resp_1","status":"in_progress","output":[]}"#,
    );
    ev("response.vendor_thing", r#","x":1"#);
    ev(
        "response.output_item.added",
        r#","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_1","name":"f"}"#,
    );
    for piece in [r#"{\"a\""#, r#":[1,2,"#, r#"3]}"#] {
        ev(
            "response.function_call_arguments.delta",
            &format!(r#","item_id":"fc_1","output_index":0,"delta":"{piece}""#),
        );
    }
    let args = r#""{\"a\":[1,2,3]}""#;
    ev(
        "response.function_call_arguments.done",
        &format!(r#","item_id":"fc_1","output_index":0,"arguments":{args}"#),
    );
    ev(
        "response.output_item.done",
        &format!(
            r#","output_index":0,"item":{{"id":"fc_1","type":"function_call","arguments":{args},"call_id":"call_1","name":"f"}}"#
        ),
    );
    ev(
        "response.output_text.delta",
        r#","output_index":1,"content_index":0,"delta":"hi""#,
    );
    ev(
        "response.completed",
        r#","response":{"id":"resp_1","status":"completed","output":[]}"#,
    );
    s
}

/// Chat completions: glued calls (written anew at the end) and the end.
const CHAT: &str = concat!(
    r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","#,
    r#""function":{"name":"f","arguments":"{\"x\":1}"}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":2}"}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    "\n\ndata: [DONE]\n\n"
);

/// Anthropic Messages: a `tool_use` block streamed in two pieces, the stop events.
const MESSAGES: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}"#,
    "\n\nevent: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{}}}"#,
    "\n\nevent: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"x\":"}}"#,
    "\n\nevent: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
    "\n\nevent: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\nevent: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
    "\n\nevent: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n"
);

#[test]
fn no_rewriter_keeps_a_chunk_past_its_push() {
    let responses = responses();
    let cases = [
        (Api::Chat, Provider::Openai, CHAT),
        (Api::Messages, Provider::Anthropic, MESSAGES),
        (Api::Responses, Provider::Openai, responses.as_str()),
    ];
    for (api, provider, stream) in cases {
        for size in (1..=600).chain([4096]) {
            let mut r = Rewriter::new(api, provider, false, None);
            let mut out = BytesMut::new();
            for (n, piece) in stream.as_bytes().chunks(size).enumerate() {
                let chunk = Bytes::from(piece.to_vec());
                let mine = chunk.clone();
                r.push(chunk, &mut out);
                assert!(
                    mine.is_unique(),
                    "{api:?}, {size}-byte chunks: chunk {n} is still referenced after its push"
                );
            }
            let _ = r.finish(None, &mut out);
            let text = String::from_utf8(out.to_vec()).unwrap();
            // The rewriting happened (not a test of nothing).
            assert!(text.contains("\"f\""), "{api:?} {size}: {text}");
        }
    }
}
