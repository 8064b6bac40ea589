//! A rewriter's output does not depend on how the upstream's bytes were cut: the same
//! stream pushed whole, a byte at a time, or in chunks of any size gives the client the
//! same bytes. Calls streamed in many fragments (one object, objects glued across
//! fragments, a duplicate, broken JSON followed by more fragments), fragments of two calls
//! interleaved, of two choices, and text between them, on each API.

use bytes::{Bytes, BytesMut};
use toolstream::classify::Provider;
use toolstream::rewrite::{Api, Rewriter};

/// `text`, a JSON string's content, cut into pieces of `n` bytes (never inside an escape).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let escaped = serde_json::to_string(text).unwrap();
    let inner = &escaped[1..escaped.len() - 1];
    let b = inner.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let mut end = (at + n).min(b.len());
        // Not between a backslash and what it escapes, nor inside `\uXXXX`.
        while end < b.len() && {
            let back = inner[..end]
                .bytes()
                .rev()
                .take_while(|&c| c == b'\\')
                .count();
            back % 2 == 1 || inner[..end].rfind("\\u").is_some_and(|u| end - u < 6)
        } {
            end += 1;
        }
        out.push(inner[at..end].to_string());
        at = end;
    }
    out
}

/// The calls' arguments: one object, two glued across fragments, the same object twice
/// (a duplicate), and broken JSON with fragments after the break.
const ARGS: [&str; 4] = [
    r#"{"path":"src/main.rs","content":"fn main() {\n    println!(\"hi\");\n}\n","mode":420}"#,
    r#"{"cmd":"ls -la","cwd":"/tmp"}{"cmd":"cat \"a b\".txt","cwd":"/"}"#,
    r#"{"q":"caf\u00e9 \ud83d\ude00","n":[1,2.5e3,-0]}{"q":"caf\u00e9 \ud83d\ude00","n":[1,2.5e3,-0]}"#,
    r#"{"a":[1,2,}],"b":"after the break","c":{"d":true}}"#,
];

fn chat() -> String {
    let mut s = String::new();
    let env = r#""id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m""#;
    let mut chunk = |choice: u32, delta: String| {
        s.push_str(&format!(
            "data: {{{env},\"choices\":[{{\"index\":{choice},\"delta\":{delta},\"finish_reason\":null}}]}}\n\n"
        ));
    };
    chunk(0, r#"{"role":"assistant","content":"Let me look."}"#.into());
    // A glued call and a duplicate, each in a run of fragments, text after each.
    for (index, args) in [(3, ARGS[1]), (4, ARGS[2])] {
        for (i, piece) in pieces(args, 6).iter().enumerate() {
            let head = if i == 0 {
                format!(
                    r#""id":"call_{index}","type":"function","function":{{"name":"g","arguments":"{piece}"}}"#
                )
            } else {
                format!(r#""function":{{"arguments":"{piece}"}}"#)
            };
            chunk(
                0,
                format!(r#"{{"tool_calls":[{{"index":{index},{head}}}]}}"#),
            );
        }
        chunk(0, r#"{"content":"and then"}"#.into());
    }
    // Calls 0 and 1 of choice 0 interleaved, and choice 1's call beside them.
    let a = pieces(ARGS[0], 7);
    let b = pieces(ARGS[1], 5);
    let c = pieces(ARGS[2], 9);
    for i in 0..a.len().max(b.len()).max(c.len()) {
        for (choice, index, p, name) in [(0, 0, &a, "write"), (0, 1, &b, "sh"), (1, 0, &c, "q")] {
            let Some(piece) = p.get(i) else { continue };
            let head = if i == 0 {
                format!(
                    r#""id":"call_{choice}{index}","type":"function","function":{{"name":"{name}","arguments":"{piece}"}}"#
                )
            } else {
                format!(r#""function":{{"arguments":"{piece}"}}"#)
            };
            chunk(
                choice,
                format!(r#"{{"tool_calls":[{{"index":{index},{head}}}]}}"#),
            );
        }
    }
    // A broken call, alone, many fragments after the break.
    for (i, piece) in pieces(ARGS[3], 3).iter().enumerate() {
        let head = if i == 0 {
            format!(
                r#""id":"call_9","type":"function","function":{{"name":"f","arguments":"{piece}"}}"#
            )
        } else {
            format!(r#""function":{{"arguments":"{piece}"}}"#)
        };
        chunk(0, format!(r#"{{"tool_calls":[{{"index":2,{head}}}]}}"#));
    }
    for choice in 0..2 {
        s.push_str(&format!(
            "data: {{{env},\"choices\":[{{\"index\":{choice},\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
        ));
    }
    s.push_str("data: [DONE]\n\n");
    s
}

fn responses() -> String {
    let mut s = String::new();
    let mut seq = 0;
    let mut ev = |ty: &str, body: String| {
        s.push_str(&format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq}{body}}}\n\n"
        ));
        seq += 1;
    };
    ev(
        "response.created",
        r#","response":{"id":"resp_1","status":"in_progress","output":[]}"#.into(),
    );
    // Items 0 and 1 streamed one after the other, 2 and 3 interleaved.
    let item = |i: usize, args: &str| {
        let added = format!(
            r#","output_index":{i},"item":{{"id":"fc_{i}","type":"function_call","status":"in_progress","arguments":"","call_id":"call_{i}","name":"f{i}"}}"#
        );
        let deltas: Vec<String> = pieces(args, 4 + i)
            .into_iter()
            .map(|p| format!(r#","item_id":"fc_{i}","output_index":{i},"delta":"{p}""#))
            .collect();
        let json = serde_json::to_string(args).unwrap();
        let done = format!(r#","item_id":"fc_{i}","output_index":{i},"arguments":{json}"#);
        let item_done = format!(
            r#","output_index":{i},"item":{{"id":"fc_{i}","type":"function_call","status":"completed","arguments":{json},"call_id":"call_{i}","name":"f{i}"}}"#
        );
        (added, deltas, done, item_done)
    };
    for (i, args) in ARGS.iter().enumerate().take(2) {
        let (added, deltas, done, item_done) = item(i, args);
        ev("response.output_item.added", added);
        for d in deltas {
            ev("response.function_call_arguments.delta", d);
        }
        ev("response.function_call_arguments.done", done);
        ev("response.output_item.done", item_done);
    }
    let (a2, d2, n2, i2) = item(2, ARGS[2]);
    let (a3, d3, n3, i3) = item(3, ARGS[3]);
    ev("response.output_item.added", a2);
    ev("response.output_item.added", a3);
    for k in 0..d2.len().max(d3.len()) {
        if let Some(d) = d2.get(k) {
            ev("response.function_call_arguments.delta", d.clone());
        }
        if let Some(d) = d3.get(k) {
            ev("response.function_call_arguments.delta", d.clone());
        }
    }
    ev("response.function_call_arguments.done", n2);
    ev("response.output_item.done", i2);
    ev("response.function_call_arguments.done", n3);
    ev("response.output_item.done", i3);
    ev(
        "response.completed",
        r#","response":{"id":"resp_1","status":"completed","output":[]}"#.into(),
    );
    s
}

fn messages() -> String {
    let mut s = String::new();
    let mut ev = |ty: &str, data: String| s.push_str(&format!("event: {ty}\ndata: {data}\n\n"));
    ev(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}"#
            .into(),
    );
    ev(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .into(),
    );
    ev(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking."}}"#
            .into(),
    );
    ev(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    );
    for (i, args) in ARGS.iter().enumerate() {
        let index = i + 1;
        ev(
            "content_block_start",
            format!(
                r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"toolu_{index}","name":"f","input":{{}}}}}}"#
            ),
        );
        for p in pieces(args, 3 + i) {
            ev(
                "content_block_delta",
                format!(
                    r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":"{p}"}}}}"#
                ),
            );
        }
        ev(
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
        );
    }
    ev(
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#.into(),
    );
    ev("message_stop", r#"{"type":"message_stop"}"#.into());
    s
}

fn rewrite(api: Api, provider: Provider, stream: &[u8], size: usize) -> Vec<u8> {
    let mut r = Rewriter::new(api, provider, false, None);
    let mut out = BytesMut::new();
    for piece in stream.chunks(size) {
        r.push(Bytes::copy_from_slice(piece), &mut out);
    }
    let _ = r.finish(None, &mut out);
    out.to_vec()
}

#[test]
fn the_output_does_not_depend_on_the_chunking() {
    let cases = [
        (Api::Chat, Provider::Openai, chat()),
        (Api::Responses, Provider::Openai, responses()),
        (Api::Messages, Provider::Anthropic, messages()),
    ];
    let mut wrong = Vec::new();
    for (api, provider, stream) in cases {
        let b = stream.as_bytes();
        let whole = rewrite(api, provider, b, b.len());
        let text = String::from_utf8(whole.clone()).unwrap();
        // The rewriting happened: the glued call was split, the duplicate dropped, the
        // broken call annotated (not a comparison of nothing).
        assert!(
            text.contains("ls -la") && text.contains("cat \\\\\\\"a b"),
            "{api:?}: {text}"
        );
        assert!(text.contains(": toolstream"), "{api:?}: {text}");
        let sizes = (1..=200).chain([331, 1000, 4096, 16384]);
        for size in sizes {
            let got = rewrite(api, provider, b, size);
            if got != whole {
                wrong.push(format!(
                    "{api:?}: {size}-byte chunks give other bytes than the whole stream\n\
                     whole:\n{text}\n{size}:\n{}",
                    String::from_utf8_lossy(&got)
                ));
                break;
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
