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
    split_escaped(&escaped[1..escaped.len() - 1], n)
}

/// JSON string text in pieces of about `n` bytes, each whole characters and escapes (and
/// never between the two halves of a surrogate pair).
fn split_escaped(inner: &str, n: usize) -> Vec<String> {
    let b = inner.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let mut end = (at + n).min(b.len());
        // Not inside a character, between a backslash and what it escapes, nor inside
        // `\uXXXX`.
        while end < b.len() && !inner.is_char_boundary(end) {
            end += 1;
        }
        while end < b.len() && {
            let back = inner[..end]
                .bytes()
                .rev()
                .take_while(|&c| c == b'\\')
                .count();
            back % 2 == 1
                || inner[..end].rfind("\\u").is_some_and(|u| {
                    end - u < 6
                        || (end - u == 6 && inner[u + 2..end].starts_with(['d', 'D']) && {
                            // A high surrogate's escape: its pair follows.
                            matches!(
                                inner.as_bytes()[u + 3],
                                b'8' | b'9' | b'a' | b'b' | b'A' | b'B'
                            )
                        })
                })
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

/// Responses events written one after another, each with the next sequence number.
#[derive(Default)]
struct Events(String, usize);

impl Events {
    /// An event of type `ty` whose data holds `body`'s members after the type and the
    /// sequence number (`body` starts with a comma, or is empty).
    fn push(&mut self, ty: &str, body: &str) {
        let seq = self.1;
        self.0.push_str(&format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq}{body}}}\n\n"
        ));
        self.1 += 1;
    }
}

fn responses() -> String {
    let mut events = Events::default();
    let mut ev = |ty: &str, body: String| events.push(ty, &body);
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
    events.0
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

/// Each event of `stream` (events end with a blank line; the stream's own have LF line
/// ends) from the fifth on, every `every`-th, laid out anew by `f` (given the event
/// without its blank line; it returns the event with its end).
fn relaid(stream: &str, every: usize, f: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    for (i, event) in stream.split_terminator("\n\n").enumerate() {
        if i >= 4 && i % every == 0 {
            out.push_str(&f(event));
        } else {
            out.push_str(event);
            out.push_str("\n\n");
        }
    }
    out
}

/// A run of a call's fragments is read from the chunk it came in (no event made of each)
/// only where the framing would read the same events: every other layout of the same
/// events, and events that only look alike, give the client the same bytes whole and cut
/// anywhere (in pieces of one byte, nothing is whole in a chunk). Where the layout keeps
/// the events' meaning, the client gets what it gets from the plain stream.
#[test]
fn fragments_read_from_the_chunk_are_the_framings_events() {
    type Relay = fn(&str) -> String;
    let same_meaning: [(&str, Relay); 7] = [
        ("CRLF", |e| format!("{}\r\n\r\n", e.replace('\n', "\r\n"))),
        ("CR", |e| format!("{}\r\r", e.replace('\n', "\r"))),
        ("no space", |e| {
            format!(
                "{}\n\n",
                e.replace("data: ", "data:").replace("event: ", "event:")
            )
        }),
        ("id line", |e| format!("id: 7\n{e}\n\n")),
        ("retry line", |e| format!("retry: 10\n{e}\n\n")),
        ("blank line after", |e| format!("{e}\n\n\n")),
        ("unknown field", |e| format!("x-note: 1\n{e}\n\n")),
    ];
    let other_meaning: [(&str, Relay); 9] = [
        ("a byte after the payload", |e| format!("{e}x\n\n")),
        ("two data lines", |e| {
            // Split after the first comma, outside any string (the envelope's first
            // member is a short string): the payload gains a line end as whitespace,
            // which the client gets as it came where the event goes out as it came.
            match e.find(",\"") {
                Some(c) => format!("{}\ndata: {}\n\n", &e[..=c], &e[c + 1..]),
                None => format!("{e}\n\n"),
            }
        }),
        ("two spaces", |e| {
            format!("{}\n\n", e.replace("data: ", "data:  "))
        }),
        ("trailing space", |e| format!("{e} \n\n")),
        ("comment inside", |e| format!(": keep\n{e}\n\n")),
        ("event type", |e| match e.strip_prefix("event: ") {
            Some(rest) => format!("event: x.{rest}\n\n"),
            None => format!("event: message\n{e}\n\n"),
        }),
        ("no event line", |e| match e.split_once('\n') {
            Some((_, data)) if e.starts_with("event:") => format!("{data}\n\n"),
            _ => format!("{e}\n\n"),
        }),
        ("control byte", |e| {
            format!("{}\n\n", e.replacen("\":\"", "\":\"\u{1}", 1))
        }),
        ("bare continuation", |e| {
            // The second half on a line of its own that is no `data:` field.
            match e.find(",\"") {
                Some(c) => format!("{}\n{}\n\n", &e[..=c], &e[c + 1..]),
                None => format!("{e}\n\n"),
            }
        }),
    ];
    let bases = [
        (Api::Chat, chat(), &[1, 2, 5][..]),
        (Api::Responses, responses(), &[1, 2, 5]),
        (Api::Chat, chat_stream_of(&long_call()), &[7]),
    ];
    let mut wrong = Vec::new();
    for (api, base, everys) in &bases {
        let plain = rewrite(*api, Provider::Openai, base.as_bytes(), base.len());
        let relays = same_meaning
            .iter()
            .map(|r| (r, true))
            .chain(other_meaning.iter().map(|r| (r, false)));
        for ((name, f), keeps) in relays {
            for &every in *everys {
                let stream = relaid(base, every, f);
                let b = stream.as_bytes();
                let whole = rewrite(*api, Provider::Openai, b, b.len());
                if keeps && whole != plain {
                    wrong.push(format!(
                        "{api:?}, {name} every {every}: not the plain stream's output\n{}\n---\n{}",
                        String::from_utf8_lossy(&whole),
                        String::from_utf8_lossy(&plain)
                    ));
                }
                for size in [1, 2, 3, 7, 13, 64, 331, 4096] {
                    if rewrite(*api, Provider::Openai, b, size) != whole {
                        wrong.push(format!("{api:?}, {name} every {every}: {size}-byte pieces"));
                        break;
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// A call whose arguments stream in more fragments than a run holds back at once (64
/// KiB), with escapes of every kind.
fn long_call() -> String {
    let line = "fn f() { println!(\"\\u{e9} caf\u{e9} \u{1f600}\\t\"); }\n";
    serde_json::json!({ "path": "a.rs", "content": line.repeat(1500) }).to_string()
}

/// A chat stream of one call with `args`, in 16-byte fragments.
fn chat_stream_of(args: &str) -> String {
    chat_stream_of_pieces(&pieces(args, 16))
}

/// A chat stream of one call whose arguments' JSON string text comes in `pieces`.
fn chat_stream_of_pieces(pieces: &[String]) -> String {
    let env = r#""id":"chatcmpl-2","object":"chat.completion.chunk","created":2,"model":"m""#;
    let mut s = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        let head = if i == 0 {
            format!(
                r#""id":"call_1","type":"function","function":{{"name":"w","arguments":"{piece}"}}"#
            )
        } else {
            format!(r#""function":{{"arguments":"{piece}"}}"#)
        };
        s.push_str(&format!(
            "data: {{{env},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,{head}}}]}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    s.push_str(&format!(
        "data: {{{env},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\ndata: [DONE]\n\n"
    ));
    s
}

/// A call's arguments go out as the escaper writes them, whatever escapes the upstream
/// chose for them (`\u` escapes of ASCII, of `é`, a surrogate pair, `\/`), on every way a
/// fragment takes (read from the chunk, through the decoder): the bytes the client gets
/// from the stream escaped as serde_json escapes.
#[test]
fn arguments_go_out_as_the_escaper_writes_them_whatever_the_upstream_escaped() {
    let line = r#"café 😀 A \"q\" \\ x/y\n\t "#.repeat(6);
    let args = format!(r#"{{"path":"src/a/b.rs","text":"{line}"}}"#);
    let canonical = chat_stream_of(&args);
    let escaped = serde_json::to_string(&args).unwrap();
    let other = escaped[1..escaped.len() - 1]
        .replace('/', "\\/")
        .replace('é', "\\u00e9")
        .replace('A', "\\u0041")
        .replace('😀', "\\ud83d\\ude00");
    let b = canonical.as_bytes();
    let want = rewrite(Api::Chat, Provider::Openai, b, b.len());
    let text = String::from_utf8(want.clone()).unwrap();
    assert!(
        text.contains(r#"src/a/b.rs\",\"text\":\"café 😀 A \\\"q\\\" \\\\ x/y\\n"#),
        "{text}"
    );
    for n in [16, 5, 40] {
        let stream = chat_stream_of_pieces(&split_escaped(&other, n));
        assert!(stream.contains("\\/") && stream.contains("\\u00e9"));
        let b = stream.as_bytes();
        for size in [b.len(), 1, 7, 64, 331, 4096] {
            let got = rewrite(Api::Chat, Provider::Openai, b, size);
            assert!(
                got == want,
                "{n}-byte fragments, {size}-byte pieces:\n{}\n---\n{text}",
                String::from_utf8_lossy(&got)
            );
        }
    }
}

/// A payload template learned from events whose data spans two lines holds a line end;
/// an event laid out as those were but with its second line no `data:` field is, to the
/// framing, a payload cut short (undecodable) and a field it ignores. Read from the chunk
/// as the template's bytes, it would be one more fragment of the call.
#[test]
fn a_template_with_a_line_end_is_not_read_across_lines() {
    let base = chat_stream_of(
        r#"{"cmd":"ls -la /tmp/some/where/else && cat the/file/there.txt","cwd":"/"}"#,
    );
    let events: Vec<&str> = base.split_terminator("\n\n").collect();
    assert!(events.len() > 6, "{base}");
    let mut stream = String::new();
    for (i, e) in events.iter().enumerate() {
        let cut = e.find(",\"finish_reason\"").map(|c| c + 1);
        match cut {
            // The fragments after the first on two data lines, the fifth's second line
            // bare.
            Some(c) if (1..events.len() - 2).contains(&i) => {
                let field = if i == 5 { "" } else { "data: " };
                stream.push_str(&format!("{}\n{field}{}\n\n", &e[..c], &e[c..]));
            }
            _ => stream.push_str(&format!("{e}\n\n")),
        }
    }
    let b = stream.as_bytes();
    let whole = rewrite(Api::Chat, Provider::Openai, b, b.len());
    let text = String::from_utf8_lossy(&whole);
    // The framing's reading: the fifth event is cut short, and the call is not whole.
    assert!(text.contains("could not decode"), "{text}");
    for size in [1, 2, 5, 64] {
        let got = rewrite(Api::Chat, Provider::Openai, b, size);
        assert_eq!(String::from_utf8_lossy(&got), text, "{size}-byte pieces");
    }
}

/// An argument fragment over the framing's line limit (8 MiB), in a run of the call's
/// fragments and whole in the chunk, is dropped as the framing drops it: said, and the
/// call failed, whole or cut.
#[test]
fn a_fragment_over_the_line_limit_is_dropped_in_a_run_too() {
    let base = chat_stream_of(
        r#"{"cmd":"ls -la /tmp/some/where/else && cat the/file/there.txt","cwd":"/"}"#,
    );
    let events: Vec<&str> = base.split_terminator("\n\n").collect();
    let mut stream = String::new();
    for (i, e) in events.iter().enumerate() {
        stream.push_str(e);
        stream.push_str("\n\n");
        if i == 3 {
            // The fourth event again with 9 MiB more in its fragment (spaces: JSON text
            // outside a string, so the call's arguments would stay valid).
            let at = e.find("\"arguments\":\"").unwrap() + 13;
            stream.push_str(&format!(
                "{}{}{}\n\n",
                &e[..at],
                " ".repeat(9 << 20),
                &e[at..]
            ));
        }
    }
    let b = stream.as_bytes();
    let whole = rewrite(Api::Chat, Provider::Openai, b, b.len());
    let text = String::from_utf8_lossy(&whole);
    assert!(
        text.contains("dropped an event over the size limit"),
        "{}",
        &text[..2000.min(text.len())]
    );
    let end = &text[text.len().saturating_sub(1500)..];
    assert!(
        end.contains("kind=interrupted") && end.contains("stream_interrupted"),
        "{end}"
    );
    let cut = rewrite(Api::Chat, Provider::Openai, b, 64 << 10);
    assert!(whole == cut, "64 KiB pieces give other bytes");
}

/// A Responses stream of one call whose deltas carry `pieces` and whose `done` event and
/// item carry `done` (JSON string text, both).
fn responses_stream_of_pieces(pieces: &[String], done: &str) -> String {
    let mut events = Events::default();
    let mut ev = |ty: &str, body: String| events.push(ty, &body);
    ev(
        "response.output_item.added",
        r#","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"w"}"#.into(),
    );
    for p in pieces {
        ev(
            "response.function_call_arguments.delta",
            format!(r#","item_id":"fc_1","output_index":0,"delta":"{p}""#),
        );
    }
    ev(
        "response.function_call_arguments.done",
        format!(r#","item_id":"fc_1","output_index":0,"arguments":"{done}""#),
    );
    ev(
        "response.output_item.done",
        format!(
            r#","output_index":0,"item":{{"id":"fc_1","type":"function_call","status":"completed","arguments":"{done}","call_id":"call_1","name":"w"}}"#
        ),
    );
    ev(
        "response.completed",
        r#","response":{"id":"resp_1","status":"completed","output":[]}"#.into(),
    );
    events.0
}

/// `events` without their sequence numbers' digits.
fn unnumbered(events: &str) -> String {
    let mut out = String::new();
    for (i, part) in events.split("\"sequence_number\":").enumerate() {
        if i > 0 {
            out.push_str("\"sequence_number\":");
        }
        out.push_str(part.trim_start_matches(|c: char| c.is_ascii_digit()));
    }
    out
}

/// A Responses call whose deltas the upstream escaped otherwise than its `done` event
/// (`\u` escapes of ASCII, of `é`, a surrogate pair, `\/`; in the deltas or in `done`), on
/// every way a delta takes (read from the chunk, through the decoder, read whole): the
/// decoder finds them the same text, and the client gets the call as from a stream
/// escaped one way throughout, with no word of a disagreement. A `done` of other text is
/// told.
#[test]
fn a_responses_call_escaped_otherwise_in_its_deltas_than_in_its_done_agrees() {
    let line = r#"café 😀 A \"q\" \\ x/y\n\t "#.repeat(6);
    let args = format!(r#"{{"path":"src/a/b.rs","text":"{line}"}}"#);
    let escaped = serde_json::to_string(&args).unwrap();
    let canonical = &escaped[1..escaped.len() - 1];
    let other = canonical
        .replace('/', "\\/")
        .replace('é', "\\u00e9")
        .replace('A', "\\u0041")
        .replace('😀', "\\ud83d\\ude00");
    let disagreement = ": toolstream error";
    let plain = responses_stream_of_pieces(&split_escaped(canonical, 16), canonical);
    let b = plain.as_bytes();
    let want = rewrite(Api::Responses, Provider::Openai, b, b.len());
    let text = String::from_utf8(want.clone()).unwrap();
    assert!(
        !text.contains(disagreement) && text.contains("response.output_item.done"),
        "{text}"
    );
    let wrong = responses_stream_of_pieces(
        &split_escaped(canonical, 16),
        &canonical.replace("src", "srd"),
    );
    let b = wrong.as_bytes();
    let told = String::from_utf8(rewrite(Api::Responses, Provider::Openai, b, b.len())).unwrap();
    assert!(told.contains(disagreement), "{told}");
    for n in [16, 5, 40] {
        for (deltas, done) in [(other.as_str(), canonical), (canonical, other.as_str())] {
            let stream = responses_stream_of_pieces(&split_escaped(deltas, n), done);
            let b = stream.as_bytes();
            for size in [b.len(), 1, 7, 64, 331, 4096] {
                let got = rewrite(Api::Responses, Provider::Openai, b, size);
                let got = String::from_utf8_lossy(&got);
                assert!(
                    !got.contains(disagreement) && got.contains("response.output_item.done"),
                    "{n}-byte deltas, {size}-byte pieces:\n{got}"
                );
                if done == canonical {
                    // The deltas joined from `done`'s text: the plain stream's bytes, but
                    // for the sequence numbers (the deltas are more or fewer).
                    assert!(
                        unnumbered(&got) == unnumbered(&text),
                        "{n}-byte deltas, {size}-byte pieces:\n{got}"
                    );
                }
            }
        }
    }
}
