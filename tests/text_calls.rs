//! `text_calls`: calls written into the assistant's text, per family, from each model's
//! documented format (the chat templates' tool-call blocks), each case whole, one
//! character at a time and cut at every character boundary: the same calls, failures and
//! text every time, and every byte of input out once.

use bytes::Bytes;
use proptest::prelude::*;
use toolstream::assemble::{Event, FailureKind, Policy};
use toolstream::pipeline::Stream;
use toolstream::provider::FinishReason;
use toolstream::text_calls::{Extractor, Family, Piece, Tools, MAX_CHOICES};

/// The pieces for `input` pushed in the deltas `cuts` gives (character offsets), text
/// pieces joined (a consumer sees text in whatever deltas it came).
fn run(family: Option<Family>, tools: &Tools, input: &str, cuts: &[usize]) -> Vec<Piece> {
    let mut x = Extractor::new(family, tools.clone());
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = input.char_indices().collect();
    let at = |k: usize| chars.get(k).map_or(input.len(), |c| c.0);
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&chars.len())) {
        let c = c.clamp(prev, chars.len());
        x.push(&input[at(prev)..at(c)], &mut out);
        prev = c;
    }
    x.finish(&mut out);
    let mut joined: Vec<Piece> = Vec::new();
    for p in out {
        match (joined.last_mut(), p) {
            (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
            (_, Piece::Text(b)) if b.is_empty() => {}
            (_, p) => joined.push(p),
        }
    }
    joined
}

/// The bytes the pieces account for: the text, and each call's or failure's markup. For
/// a call the markup is not kept, so the check is that text + raw failures never exceed the
/// input and every text piece is a substring of it in order.
fn text_of(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.as_str(),
            Piece::Failed { raw, .. } => raw.as_str(),
            Piece::Call { .. } => "",
        })
        .collect()
}

/// `input` gives `want` whole, one character at a time and cut at every character
/// boundary.
fn check(family: Option<Family>, tools: &Tools, input: &str, want: &[Piece]) {
    let n = input.chars().count();
    assert_eq!(run(family, tools, input, &[]), want, "whole: {input:?}");
    let ones: Vec<usize> = (1..n).collect();
    assert_eq!(
        run(family, tools, input, &ones),
        want,
        "char by char: {input:?}"
    );
    for k in 1..n {
        assert_eq!(
            run(family, tools, input, &[k]),
            want,
            "cut at {k}: {input:?}"
        );
    }
}

fn text(s: &str) -> Piece {
    Piece::Text(s.into())
}

fn call(name: &str, arguments: &str) -> Piece {
    Piece::Call {
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn tools() -> Tools {
    Tools::from_request(&serde_json::json!({
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
            {"type": "function", "function": {"name": "write_file", "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}
        ]
    }))
}

// ---- Hermes / Qwen 2.5 and 3: `<tool_call>` JSON `</tool_call>` ----

#[test]
fn hermes_single_call() {
    check(
        None,
        &tools(),
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
        &[call("get_weather", r#"{"city": "Paris"}"#)],
    );
}

#[test]
fn hermes_parallel_calls_after_text_and_text_after() {
    check(
        Some(Family::Hermes),
        &tools(),
        "Checking both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\nDone.",
        &[
            text("Checking both.\n"),
            call("get_weather", r#"{"city": "Paris"}"#),
            text("\n"),
            call("get_weather", r#"{"city": "Oslo"}"#),
            text("\nDone."),
        ],
    );
}

#[test]
fn hermes_marker_inside_a_string_value_is_the_value() {
    check(
        None,
        &tools(),
        r#"<tool_call>{"name": "write_file", "arguments": {"path": "a.md", "content": "use <tool_call> and [TOOL_CALLS]"}}</tool_call>"#,
        &[call(
            "write_file",
            r#"{"path": "a.md", "content": "use <tool_call> and [TOOL_CALLS]"}"#,
        )],
    );
}

#[test]
fn hermes_closing_tag_inside_a_json_string_is_the_strings() {
    check(
        None,
        &tools(),
        r#"<tool_call>{"name": "write_file", "arguments": {"content": "a</tool_call>b"}} </tool_call>!"#,
        &[
            call("write_file", r#"{"content": "a</tool_call>b"}"#),
            text("!"),
        ],
    );
}

#[test]
fn an_undeclared_name_stays_text() {
    let input = r#"Sure: <tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call> ok"#;
    check(None, &tools(), input, &[text(input)]);
    // No tools declared: nothing is promoted.
    check(None, &Tools::default(), input, &[text(input)]);
}

#[test]
fn look_alike_markup_is_text() {
    for input in [
        "a < b and [1, 2] and <tool and [TOOL",
        "<tool_calls> is not <tool_call",
        "the tag <tool_call/> alone",
        "[TOOL_CALL] and <|python|>",
    ] {
        check(None, &tools(), input, &[text(input)]);
    }
}

#[test]
fn a_truncated_call_is_a_failure_and_the_text_before_is_kept() {
    let input = "Writing. <tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a";
    check(
        None,
        &tools(),
        input,
        &[
            text("Writing. "),
            Piece::Failed {
                name: "write_file".into(),
                kind: FailureKind::Truncated,
                message: "the text ended inside the call".into(),
                raw: input["Writing. ".len()..].into(),
            },
        ],
    );
}

#[test]
fn broken_arguments_of_a_declared_tool_are_a_failure() {
    let call_text =
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Paris",}}</tool_call>"#;
    check(
        None,
        &tools(),
        &format!("x{call_text}y"),
        &[
            text("x"),
            Piece::Failed {
                name: "get_weather".into(),
                kind: FailureKind::Syntax,
                message: "the call is not one JSON object".into(),
                raw: call_text.into(),
            },
            text("y"),
        ],
    );
}

#[test]
fn arguments_as_a_string_of_json_are_read_once() {
    check(
        None,
        &tools(),
        r#"<tool_call>{"name": "get_weather", "arguments": "{\"city\": \"Lima\"}"}</tool_call>"#,
        &[call("get_weather", r#"{"city": "Lima"}"#)],
    );
}

// ---- Qwen3-Coder: XML parameters, typed by the schema ----

#[test]
fn qwen3_coder_parameters_are_typed_by_the_schema() {
    check(
        Some(Family::Qwen3Coder),
        &tools(),
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        &[call("get_weather", r#"{"city":"Paris","days":3}"#)],
    );
    // A string parameter stays a string, even one that reads as a number.
    check(
        None,
        &tools(),
        "<tool_call><function=write_file><parameter=path>42</parameter><parameter=content>x</parameter></function></tool_call>",
        &[call("write_file", r#"{"path":"42","content":"x"}"#)],
    );
    // XML has no escapes: a closing tag inside a value ends the markup there. The call is
    // then cut short (a failure of a declared tool) and what follows is text.
    let cut = "<tool_call><function=write_file><parameter=content>a</tool_call>";
    check(
        None,
        &tools(),
        &format!("{cut} b</parameter></function></tool_call>"),
        &[
            Piece::Failed {
                name: "write_file".into(),
                kind: FailureKind::Syntax,
                message: "a parameter without </parameter>".into(),
                raw: cut.into(),
            },
            text(" b</parameter></function></tool_call>"),
        ],
    );
}

#[test]
fn qwen3_coder_multiline_value_and_an_undeclared_function() {
    check(
        None,
        &tools(),
        "<tool_call>\n<function=write_file>\n<parameter=path>\nmain.rs\n</parameter>\n<parameter=content>\nfn main() {\n    println!(\"<hi>\");\n}\n</parameter>\n</function>\n</tool_call>",
        &[call(
            "write_file",
            r#"{"path":"main.rs","content":"fn main() {\n    println!(\"<hi>\");\n}"}"#,
        )],
    );
    let undeclared =
        "<tool_call><function=shell><parameter=cmd>ls</parameter></function></tool_call>";
    check(None, &tools(), undeclared, &[text(undeclared)]);
}

// ---- Mistral: `[TOOL_CALLS]` ----

#[test]
fn mistral_json_array_of_parallel_calls() {
    check(
        Some(Family::Mistral),
        &tools(),
        r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "arguments": {"city": "Rome"}}] after"#,
        &[
            call("get_weather", r#"{"city": "Paris"}"#),
            call("get_weather", r#"{"city": "Rome"}"#),
            text(" after"),
        ],
    );
}

#[test]
fn mistral_name_and_args_form() {
    check(
        None,
        &tools(),
        r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 2}"#,
        &[call("get_weather", r#"{"city": "Paris", "days": 2}"#)],
    );
    // One undeclared call in the array: the whole markup stays text.
    let mixed = r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {}}, {"name": "rm", "arguments": {}}]"#;
    check(None, &tools(), mixed, &[text(mixed)]);
}

// ---- Llama 3.1–3.3: `<|python_tag|>` ----

#[test]
fn llama_python_tag_with_parameters() {
    check(
        Some(Family::Llama),
        &tools(),
        r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}"#,
        &[call("get_weather", r#"{"city": "Paris"}"#)],
    );
    // Code after the tag (the built-in code interpreter) is not a call: text.
    let code = "<|python_tag|>print(\"hi\")";
    check(Some(Family::Llama), &tools(), code, &[text(code)]);
}

#[test]
fn a_family_only_finds_its_own_markers() {
    let input = r#"<|python_tag|>{"name": "get_weather", "parameters": {}}"#;
    check(Some(Family::Hermes), &tools(), input, &[text(input)]);
}

#[test]
fn a_call_over_the_size_limit_is_a_failure_and_the_text_goes_on() {
    let big = "x".repeat(toolstream::text_calls::MAX_CALL_BYTES + 10);
    let input =
        format!("<tool_call>{{\"name\": \"write_file\", \"arguments\": {{\"content\": \"{big}");
    let out = run(None, &tools(), &input, &[]);
    assert!(
        matches!(&out[..], [Piece::Failed { name, raw, kind: FailureKind::Limit, .. }, Piece::Text(rest)]
            if name == "write_file"
                && raw.len() == toolstream::text_calls::MAX_CALL_BYTES + 1
                && raw.len() + rest.len() == input.len()),
        "{:?}",
        out.iter()
            .map(|p| format!("{p:?}").chars().take(80).collect::<String>())
            .collect::<Vec<_>>()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random text with random markup (whole calls, broken ones, look-alikes) at random
    /// cuts: the same pieces as whole, and the text pieces and failures are the input with
    /// the calls' markup taken out (nothing lost, nothing added).
    #[test]
    fn random_text_and_markup_at_random_cuts(
        parts in prop::collection::vec(prop_oneof![
            "[a-z <>\\[\\]{}\"é😀\n]{0,12}",
            Just(r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>"#.to_string()),
            Just(r#"<tool_call>{"name": "nope", "arguments": {}}</tool_call>"#.to_string()),
            Just("<tool_call><function=get_weather><parameter=days>2</parameter></function></tool_call>".to_string()),
            Just(r#"[TOOL_CALLS][{"name": "get_weather", "arguments": {}}]"#.to_string()),
            Just(r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "x"}}"#.to_string()),
            Just("<tool_call>{\"name\": \"get_weather\", \"arguments\": {".to_string()),
            Just("<tool_".to_string()),
            Just("[TOOL_CALLS]".to_string()),
            Just("<tool_call>get_weather\n<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>".to_string()),
            Just("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>".to_string()),
            Just("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>".to_string()),
            Just("<｜DSML｜tool_calls><｜DSML｜invoke name=\"get_weather\"></｜DSML｜invoke></｜DSML｜tool_calls>".to_string()),
            Just("<minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"days\">1</parameter></invoke></minimax:tool_call>".to_string()),
            Just("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>".to_string()),
            Just("<|channel|>commentary to=functions.".to_string()),
            Just("<｜DSML｜".to_string()),
            Just("[get_weather(city='x', days=[1, {\"a\": None}])]".to_string()),
            Just("[get_weather(".to_string()),
            Just("<|python_start|>[write_file(path=\"a]\")]<|python_end|>".to_string()),
            Just("<|START_ACTION|>{\"tool_name\": \"get_weather\", \"parameters\": {}}<|END_ACTION|>".to_string()),
            Just("<|START_ACTION|>{\"tool_name\": ".to_string()),
            Just("<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>".to_string()),
            Just("<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {}}]".to_string()),
            Just("<longcat_tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</longcat_tool_call>".to_string()),
            Just("<seed:tool_call><function=get_weather></function></seed:tool_call>".to_string()),
            Just("<|action_start|><|plugin|>{\"name\": \"get_weather\", \"parameters\": {}}<|action_end|>".to_string()),
            Just("<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_calls>".to_string()),
            Just("<tool_calls".to_string()),
            Just("<|tool_call>call:get_weather{city:<|\"|>x}<tool_call|><|\"|>,days:2}<tool_call|>".to_string()),
            Just("<|tool_call>call:get_weather{".to_string()),
            Just("<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': ']'}}]".to_string()),
            Just("<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{}}<|end_message|>".to_string()),
            Just("<function_calls>\nget_weather(days=2)\n</function_calls>".to_string()),
            Just("<function_call> {\"name\": \"get_weather\", \"arguments\": {}}".to_string()),
            Just("<|open|>tools<|sep|><|open|>call tool=\"get_weather\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>".to_string()),
            Just("<tool_calls:ab><tool_call:ab>get_weather<arg_key:ab>days</arg_key:ab><arg_value:ab>1</arg_value:ab></tool_call:ab></tool_calls:ab>".to_string()),
        ], 0..8),
        cuts in prop::collection::vec(0usize..400, 0..12),
    ) {
        let input: String = parts.concat();
        let mut cuts = cuts;
        cuts.sort_unstable();
        let whole = run(None, &tools(), &input, &[]);
        prop_assert_eq!(&run(None, &tools(), &input, &cuts), &whole);
        // Text and failures come out in order and are pieces of the input; with the calls'
        // markup they make it up whole.
        let kept = text_of(&whole);
        prop_assert!(kept.len() <= input.len());
        let calls = whole.iter().filter(|p| matches!(p, Piece::Call { .. })).count();
        if calls == 0 {
            prop_assert_eq!(kept, input);
        }
    }
}

/// A JSON payload that turns out not to be JSON ends at its closing tag, and the splitter's
/// error is seen in the delta that holds the bad byte even when earlier deltas let the
/// splitter wait (its bytes unread): the same failure at every cut.
#[test]
fn broken_json_payload_ends_at_its_closing_tag_at_every_cut() {
    let input = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {<tool_call><function=get_weather><parameter=days>2</parameter></function></tool_call> after";
    let expected = vec![
        Piece::Failed {
            name: "get_weather".into(),
            kind: FailureKind::Syntax,
            message: "the call is not one JSON object".into(),
            raw: input[..input.len() - " after".len()].into(),
        },
        Piece::Text(" after".into()),
    ];
    let n = input.chars().count();
    for k in 0..=n {
        assert_eq!(run(None, &tools(), input, &[k]), expected, "cut at {k}");
    }
    let bytes: Vec<usize> = (1..n).collect();
    assert_eq!(
        run(None, &tools(), input, &bytes),
        expected,
        "one char at a time"
    );
}

/// A call over the limit is the limit's failure whether it came in one delta (its end then
/// in hand) or in many (the limit passed before its end came).
#[test]
fn a_whole_call_over_the_limit_fails_the_same_in_one_delta_or_many() {
    let big = "x".repeat(toolstream::text_calls::MAX_CALL_BYTES + (1 << 19));
    let input = format!(
        "<tool_call>{{\"name\": \"write_file\", \"arguments\": {{\"content\": \"{big}\"}}}}</tool_call> tail"
    );
    let whole = run(None, &tools(), &input, &[]);
    assert!(
        matches!(&whole[0], Piece::Failed { kind: FailureKind::Limit, raw, .. }
            if raw.len() == toolstream::text_calls::MAX_CALL_BYTES + 1),
        "{:?}",
        format!("{:?}", whole[0])
            .chars()
            .take(120)
            .collect::<String>()
    );
    let cuts: Vec<usize> = (1..input.len() / 65536).map(|k| k * 65536).collect();
    assert_eq!(run(None, &tools(), &input, &cuts), whole);
}

// ---- In the pipeline: `Stream::with_text_calls` and `inspect --text-calls`. ----

fn sse_of_content(pieces: &[&str], finish: &str) -> Vec<u8> {
    let mut s = String::new();
    for p in pieces {
        let delta = serde_json::json!({"choices": [{"index": 0, "delta": {"content": p}}]});
        s.push_str(&format!("data: {delta}\n\n"));
    }
    let last = serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
    s.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    s.into_bytes()
}

fn pipeline(input: &[u8], tools: &Tools, chunk: usize, policy: Policy) -> Vec<Event> {
    let mut s = Stream::with_policy(None, policy).with_text_calls(None, tools.clone());
    let mut out = Vec::new();
    let step = if chunk == 0 {
        input.len().max(1)
    } else {
        chunk
    };
    for piece in input.chunks(step) {
        s.push(Bytes::copy_from_slice(piece), &mut out);
    }
    s.finish(&mut out);
    out
}

/// The shipped sample (Qwen 2.5 served without a tool parser: its calls in the content)
/// gives the events of its hand-written expected file through `inspect --text-calls auto
/// --tools request.json`, at every chunk size.
#[test]
fn inspect_text_calls_on_the_shipped_sample() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/text-calls");
    let sample = dir.join("qwen-hermes-calls-in-content.sse");
    let expected =
        std::fs::read_to_string(dir.join("qwen-hermes-calls-in-content.expected.jsonl")).unwrap();
    let want: Vec<serde_json::Value> = expected
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut first: Option<Vec<serde_json::Value>> = None;
    for chunk in ["1", "7", "64", "0"] {
        let mut cmd = crate::common::cli(env!("CARGO_BIN_EXE_toolstream"));
        cmd.args(["inspect", "--json", "--text-calls", "auto", "--tools"])
            .arg(dir.join("request.json"))
            .arg(&sample);
        if chunk != "0" {
            cmd.args(["--chunk", chunk]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let first = first.get_or_insert_with(|| got.clone());
        assert_eq!(&got, first, "chunk {chunk}");
        let got = crate::common::mask_made_ids(&got);
        assert_eq!(got, want, "chunk {chunk}");
    }
    // Without --tools there is no allow-list: refused, not everything promoted.
    let out = crate::common::cli(env!("CARGO_BIN_EXE_toolstream"))
        .args(["inspect", "--text-calls", "auto"])
        .arg(&sample)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Without --text-calls the markup is text, and the finish is the provider's.
    let out = crate::common::cli(env!("CARGO_BIN_EXE_toolstream"))
        .args(["inspect", "--json"])
        .arg(&sample)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains("tool_call\",") && text.contains("\"reason\":\"stop\""),
        "{text}"
    );
}

/// An undeclared tool's call stays text, byte for byte, and the finish stays `stop`.
#[test]
fn pipeline_undeclared_call_stays_text() {
    let input = sse_of_content(
        &[
            "Sure. <tool_call>{\"name\": \"rm_rf\", ",
            "\"arguments\": {}}</tool_call>",
        ],
        "stop",
    );
    let events = pipeline(&input, &tools(), 5, Policy::default());
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            Event::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        text,
        "Sure. <tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>"
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::ToolCall(_) | Event::CallStarted { .. })));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Finish {
            reason: FinishReason::Stop,
            ..
        }
    )));
}

/// A model that writes hundreds of calls into its text gets the policy's call limit, as
/// structured calls do: every call started ends as a call or a failure, one failure says
/// the limit, and each call has a name and its own id.
#[test]
fn pipeline_text_calls_count_against_the_call_limit() {
    let one =
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}}</tool_call>";
    let many = one.repeat(300);
    let input = sse_of_content(&[&many], "stop");
    let policy = Policy {
        max_calls: 128,
        ..Policy::default()
    };
    let events = pipeline(&input, &tools(), 4096, policy);
    let started = events
        .iter()
        .filter(|e| matches!(e, Event::CallStarted { .. }))
        .count();
    let calls: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFailed(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(started, 128);
    assert_eq!(calls.len(), 128);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].kind, FailureKind::Limit);
    let ids: std::collections::HashSet<_> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 128);
    assert!(calls.iter().all(|c| c.name == "get_weather"));
}

/// A stream naming a new choice in every chunk: the text of the first [`MAX_CHOICES`]
/// choices is read for calls, the text of the others passes on untouched (one extractor per
/// chunk would cost a search over all of them per delta), and no byte is lost.
#[test]
fn choices_past_the_bound_keep_their_text() {
    let one = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>";
    let n = 3000;
    let mut s = String::new();
    for c in 0..n {
        let delta = serde_json::json!({"choices": [{"index": c, "delta": {"content": one}}]});
        s.push_str(&format!("data: {delta}\n\n"));
    }
    s.push_str("data: [DONE]\n\n");
    let policy = Policy {
        max_calls: 10_000,
        ..Policy::default()
    };
    let events = pipeline(s.as_bytes(), &tools(), 4096, policy);
    let calls = events
        .iter()
        .filter(|e| matches!(e, Event::ToolCall(_)))
        .count();
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, MAX_CHOICES);
    assert_eq!(texts.len(), n - MAX_CHOICES);
    assert!(texts.iter().all(|t| *t == one));
}

/// A call cut off by the end of the stream is a failure with its bytes (kind truncated),
/// and the stream's own calls and the text calls share one numbering.
#[test]
fn pipeline_truncated_text_call_and_shared_numbering() {
    let mut input = Vec::new();
    let structured = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_a", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}}]});
    input.extend_from_slice(format!("data: {structured}\n\n").as_bytes());
    input.extend_from_slice(&sse_of_content(
        &["<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a"],
        "length",
    ));
    for chunk in [1, 3, 64, 0] {
        let events = pipeline(&input, &tools(), chunk, Policy::default());
        let starts: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                Event::CallStarted { index, .. } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(starts, [0, 1], "chunk {chunk}");
        let failed = events.iter().find_map(|e| match e {
            Event::ToolCallFailed(f) => Some(f),
            _ => None,
        });
        let f = failed.expect("the cut call fails");
        assert_eq!(
            (f.index, f.kind, f.name.as_str()),
            (1, FailureKind::Truncated, "write_file")
        );
        assert_eq!(
            &f.raw[..],
            b"<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a"
        );
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::ToolCall(c) if c.id == "call_a")));
        // Cut by the output limit: the finish stays `length`, never `tool_calls`.
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Finish {
                reason: FinishReason::Length,
                ..
            }
        )));
    }
}

// ---- The section and tag families. Each case is checked for its family and for auto. ----

fn check_family(family: Family, input: &str, want: &[Piece]) {
    check(Some(family), &tools(), input, want);
    check(None, &tools(), input, want);
}

fn failed(name: &str, kind: FailureKind, message: &str, raw: &str) -> Piece {
    Piece::Failed {
        name: name.into(),
        kind,
        message: message.into(),
        raw: raw.into(),
    }
}

#[test]
fn glm45_calls() {
    let one = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";
    check_family(
        Family::Glm45,
        one,
        &[call("get_weather", r#"{"city":"Paris","days":3}"#)],
    );
    // Parallel, after text and with text after; a string parameter stays a string.
    let two =
        "<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>007</arg_value>\n</tool_call>";
    check_family(
        Family::Glm45,
        &format!("Let me see.\n{one}\n{two} done"),
        &[
            text("Let me see.\n"),
            call("get_weather", r#"{"city":"Paris","days":3}"#),
            text("\n"),
            call("write_file", r#"{"path":"007"}"#),
            text(" done"),
        ],
    );
    // An undeclared function stays text; a parameter named twice is a failure.
    let undeclared = "<tool_call>rm\n<arg_key>p</arg_key>\n<arg_value>/</arg_value>\n</tool_call>";
    check_family(Family::Glm45, undeclared, &[text(undeclared)]);
    let twice = "<tool_call>get_weather\n<arg_key>city</arg_key><arg_value>a</arg_value><arg_key>city</arg_key><arg_value>b</arg_value></tool_call>";
    check_family(
        Family::Glm45,
        twice,
        &[failed(
            "get_weather",
            FailureKind::Syntax,
            "a parameter is given twice",
            twice,
        )],
    );
}

#[test]
fn kimi_k2_sections() {
    let input = "I'll look.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.write_file:1<|tool_call_argument_begin|>{\"path\": \"<|tool_call_end|>.txt\"}<|tool_call_end|><|tool_calls_section_end|>";
    // A closing token inside a string ends that call there (the format has no escapes):
    // the second call's arguments are then not JSON, so the section is one failure.
    check_family(
        Family::Kimi,
        input,
        &[
            text("I'll look."),
            failed(
                "get_weather",
                FailureKind::Syntax,
                "the arguments are not one JSON object",
                &input["I'll look.".len()..],
            ),
        ],
    );
    let ok = "<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\n<|tool_call_begin|>functions.write_file:1<|tool_call_argument_begin|>{\"path\": \"a.txt\"}<|tool_call_end|>\n<|tool_calls_section_end|> after";
    check_family(
        Family::Kimi,
        ok,
        &[
            call("get_weather", r#"{"city": "Paris"}"#),
            call("write_file", r#"{"path": "a.txt"}"#),
            text(" after"),
        ],
    );
    // Cut off by the end of the text: a failure with its bytes.
    let cut = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\"";
    check_family(
        Family::Kimi,
        cut,
        &[failed(
            "get_weather",
            FailureKind::Truncated,
            "the text ended inside the call",
            cut,
        )],
    );
}

#[test]
fn deepseek_v3_and_v31_sections() {
    let v3 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    check_family(
        Family::DeepSeek,
        &format!("Checking.{v3}"),
        &[
            text("Checking."),
            call("get_weather", r#"{"city": "Paris"}"#),
        ],
    );
    let v31 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Oslo\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>{\"path\": \"x\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    check_family(
        Family::DeepSeek,
        v31,
        &[
            call("get_weather", r#"{"city": "Oslo"}"#),
            call("write_file", r#"{"path": "x"}"#),
        ],
    );
    // Broken arguments of a declared tool: a failure with the markup.
    let bad = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": Oslo}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    check_family(
        Family::DeepSeek,
        bad,
        &[failed(
            "get_weather",
            FailureKind::Syntax,
            "the arguments are not one JSON object",
            bad,
        )],
    );
}

#[test]
fn deepseek_dsml_and_minimax_invoke_blocks() {
    let v4 = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">杭州</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">5</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
    check_family(
        Family::DeepSeek,
        v4,
        &[call("get_weather", r#"{"city":"杭州","days":5}"#)],
    );
    // V3.2's block, unmarked parameters typed by the schema, two invokes.
    let v32 = "<｜DSML｜function_calls><｜DSML｜invoke name=\"get_weather\"><｜DSML｜parameter name=\"days\">2</｜DSML｜parameter></｜DSML｜invoke><｜DSML｜invoke name=\"write_file\"><｜DSML｜parameter name=\"path\">12</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>";
    check_family(
        Family::DeepSeek,
        v32,
        &[
            call("get_weather", r#"{"days":2}"#),
            call("write_file", r#"{"path":"12"}"#),
        ],
    );
    let mm = "Sure.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>";
    check_family(
        Family::MiniMax,
        mm,
        &[
            text("Sure.\n"),
            call("get_weather", r#"{"city":"Paris","days":3}"#),
        ],
    );
    // One undeclared invoke keeps the whole block as text (nothing of it runs).
    let mixed = "<minimax:tool_call><invoke name=\"get_weather\"></invoke><invoke name=\"rm\"></invoke></minimax:tool_call>";
    check_family(Family::MiniMax, mixed, &[text(mixed)]);
    // Look-alike markup that is no block: text.
    let prose = "Use <minimax:tool-call> or <｜DSML｜x> in docs.";
    check_family(Family::MiniMax, prose, &[text(prose)]);
}

#[test]
fn gpt_oss_harmony_calls() {
    let a = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
    check_family(
        Family::GptOss,
        a,
        &[call("get_weather", r#"{"city":"Paris"}"#)],
    );
    let b = "<|start|>assistant to=functions.write_file<|channel|>commentary json<|message|>{\"path\": \"a\"}<|call|>";
    check_family(
        Family::GptOss,
        &format!("{a}{b} tail"),
        &[
            call("get_weather", r#"{"city":"Paris"}"#),
            call("write_file", r#"{"path": "a"}"#),
            text(" tail"),
        ],
    );
    // The analysis channel is no call: text.
    let analysis = "<|channel|>analysis<|message|>Need weather.<|end|>";
    check_family(Family::GptOss, analysis, &[text(analysis)]);
}

#[test]
fn every_family_has_a_name_and_is_found_by_it() {
    for f in Family::ALL {
        assert_eq!(Family::from_name(f.name()), Some(*f));
    }
    assert_eq!(Family::ALL.len(), 26);
}

/// The cheapest hostile calls the extractor meets: a call of many parameters (one check per
/// parameter, not one per pair), many `<` and `[` that begin no marker, and openers with
/// nothing after them, each in one-character deltas. Counted, not timed: the output must
/// account for every byte.
#[test]
fn hostile_markup_is_handled_whole() {
    let mut many = String::from("<tool_call><function=write_file>");
    for k in 0..30_000 {
        many.push_str(&format!("<parameter=p{k}>x</parameter>"));
    }
    many.push_str("</function></tool_call>");
    let out = run(None, &tools(), &many, &[]);
    assert!(matches!(&out[..], [Piece::Call { name, arguments }]
        if name == "write_file" && arguments.matches("\"x\"").count() == 30_000));
    let noise = "<[ a<b [c] <tool_cal [TOOL_CALL ".repeat(4_000);
    let cuts: Vec<usize> = (1..noise.chars().count()).collect();
    assert_eq!(run(None, &tools(), &noise, &cuts), [text(&noise)]);
    let openers = "[TOOL_CALLS]".repeat(2_000);
    let out = run(None, &tools(), &openers, &cuts[..openers.len() - 1]);
    assert_eq!(text_of(&out), openers);
    // Pythonic: a call of 30 000 keywords and a dict of 30 000 keys (one check each), a
    // list nested past the reader's depth (a failure, not a deep recursion), and `[` with a
    // declared name's beginning over and over, one character at a time.
    let mut kw = String::from("[write_file(");
    let mut dict = String::from("[write_file(content={");
    for k in 0..30_000 {
        kw.push_str(&format!("p{k}='x', "));
        dict.push_str(&format!("'k{k}': 1, "));
    }
    kw.push_str(")]");
    dict.push_str("})]");
    let out = run(None, &tools(), &kw, &[]);
    assert!(
        matches!(&out[..], [Piece::Call { arguments, .. }] if arguments.matches("\"x\"").count() == 30_000)
    );
    let out = run(None, &tools(), &dict, &[]);
    assert!(
        matches!(&out[..], [Piece::Call { arguments, .. }] if arguments.matches(":1").count() == 30_000)
    );
    // A value nested past the reader's depth: one syntax failure, not a deep recursion.
    let fails_by_depth = |text: &str| {
        let out = run(None, &tools(), text, &[]);
        assert!(
            matches!(
                &out[..],
                [Piece::Failed {
                    kind: FailureKind::Syntax,
                    ..
                }]
            ),
            "{:?}",
            &out.first()
        );
    };
    let deep = format!(
        "[write_file(content={}{})]",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    fails_by_depth(&deep);
    // Gemma 4: a value nested past the reader's depth (a failure, not a deep recursion),
    // and 30 000 parameters (one check each).
    let deep = format!(
        "<|tool_call>call:write_file{{content:{}{}}}<tool_call|>",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    fails_by_depth(&deep);
    let mut wide = String::from("<|tool_call>call:write_file{");
    for k in 0..30_000 {
        wide.push_str(&format!("p{k}:<|\"|>x<|\"|>,"));
    }
    wide.push_str("last:1}<tool_call|>");
    let out = run(None, &tools(), &wide, &[]);
    assert!(
        matches!(&out[..], [Piece::Call { arguments, .. }] if arguments.matches("\"x\"").count() == 30_000)
    );
    let prefixes = "[get_weathe ".repeat(3_000);
    let cuts: Vec<usize> = (1..prefixes.len()).collect();
    assert_eq!(run(None, &tools(), &prefixes, &cuts), [text(&prefixes)]);
}

/// The markup of a call still open in the text counts in what the pipeline holds.
#[test]
fn pipeline_buffered_counts_the_open_call_markup() {
    let markup = "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"";
    let body = "x".repeat(10_000);
    let mut s = Stream::new(None).with_text_calls(None, tools());
    let mut out = Vec::new();
    let input = sse_of_content(&[markup, &body], "stop");
    // Everything but the finish: the call is open.
    let cut = input.windows(6).position(|w| w == b"finish").unwrap();
    s.push(Bytes::copy_from_slice(&input[..cut]), &mut out);
    assert!(
        s.buffered() >= markup.len() + body.len(),
        "{}",
        s.buffered()
    );
}

// ---- Llama 3.2 and 4, pythonic: `[f(a=1), g()]` ----

#[test]
fn pythonic_calls() {
    // The format and values of the server parsers' tests: keyword arguments of Python
    // literals, read into JSON in the order written.
    let one = "[get_weather(city='San Francisco', days=3)]";
    check_family(
        Family::Pythonic,
        one,
        &[call("get_weather", r#"{"city":"San Francisco","days":3}"#)],
    );
    let types = "[write_file(path=\"a.txt\", content={'k': [1, -2.5, .5, True, False, None, (1, 2)], \"e\": {}}), get_weather()]";
    check_family(
        Family::Pythonic,
        &format!("Sure.\n{types}\nDone."),
        &[
            text("Sure.\n"),
            call(
                "write_file",
                r#"{"path":"a.txt","content":{"k":[1,-2.5,0.5,true,false,null,[1,2]],"e":{}}}"#,
            ),
            call("get_weather", "{}"),
            text("\nDone."),
        ],
    );
    // Escapes, and brackets inside strings.
    let escaped = r#"[get_weather(city='Martha\'s ] Vineyard', days=1)]"#;
    check_family(
        Family::Pythonic,
        escaped,
        &[call(
            "get_weather",
            r#"{"city":"Martha's ] Vineyard","days":1}"#,
        )],
    );
    // Llama 4 wraps the list in python_start/python_end.
    let wrapped = "<|python_start|>[get_weather(city=\"Oslo\")]<|python_end|>";
    check_family(
        Family::Pythonic,
        wrapped,
        &[call("get_weather", r#"{"city":"Oslo"}"#)],
    );
}

#[test]
fn pythonic_look_alikes_undeclared_and_broken() {
    // Markdown links, lists and undeclared names stay text; so does a declared name that
    // is not called.
    for plain in [
        "See [the docs](https://x.y) and [1, 2] or [get_weather] or [a(b=1)].",
        "[rm_rf(path='/')]",
        "[get_weathe(city='x')]",
    ] {
        check_family(Family::Pythonic, plain, &[text(plain)]);
    }
    // A declared tool called with a positional argument, a duplicate keyword, an
    // expression: failures with their bytes.
    for (bad, why) in [
        (
            "[get_weather('Paris')]",
            "a positional argument, not a keyword",
        ),
        (
            "[get_weather(city='a', city='b')]",
            "a keyword argument given twice",
        ),
        ("[get_weather(days=1+1)]", "a value that is not a literal"),
        ("[get_weather(city=x)]", "a value that is not a literal"),
    ] {
        let message = pythonic_message(bad);
        assert_eq!(message, why, "{bad}");
        check_family(
            Family::Pythonic,
            &format!("x {bad} y"),
            &[
                text("x "),
                failed("get_weather", FailureKind::Syntax, why, bad),
                text(" y"),
            ],
        );
    }
    // Cut off by the end of the text: truncated, every byte kept.
    let cut = "Now [get_weather(city='Par";
    check_family(
        Family::Pythonic,
        cut,
        &[
            text("Now "),
            failed(
                "get_weather",
                FailureKind::Truncated,
                "the text ended inside the call",
                "[get_weather(city='Par",
            ),
        ],
    );
    // In auto mode too.
    check(
        None,
        &tools(),
        "[get_weather(city='x')]",
        &[call("get_weather", r#"{"city":"x"}"#)],
    );
}

fn pythonic_message(bad: &str) -> String {
    let mut x = Extractor::new(Some(Family::Pythonic), tools());
    let mut out = Vec::new();
    x.push(bad, &mut out);
    x.finish(&mut out);
    match &out[..] {
        [Piece::Failed { message, .. }] => message.clone(),
        other => panic!("{other:?}"),
    }
}

/// Whitespace between a marker and its JSON gives the same result however the deltas
/// come: after `<tool_call>` any amount, after Mistral's `[TOOL_CALLS]` or `[ARGS]` up to a
/// name's length (past it the markup fails, whole as at every cut). (At 91c7367 the whole text was
/// read past the bound while one-byte deltas failed it, and each delta re-read all the
/// whitespace after `[ARGS]` or after a closed `<tool_call>` object: 200 000 one-byte
/// deltas took 20 s, 0.006 s now.)
#[test]
fn whitespace_after_a_marker_is_bounded_the_same_at_every_cut() {
    let t = tools();
    let ok = "{\"city\":\"Paris\"}";
    for family in [Family::Hermes, Family::Mistral] {
        // `<tool_call>` reads its whitespace once, through the call's search position, so
        // any amount is allowed; the JSON families' own bound is MAX_NAME_BYTES.
        for (n, read) in [(8, true), (300, family == Family::Hermes)] {
            let ws = " ".repeat(n);
            let input = match family {
                Family::Hermes => format!(
                    "<tool_call>{ws}{{\"name\":\"get_weather\",\"arguments\":{ok}}}</tool_call>"
                ),
                _ => format!("[TOOL_CALLS]get_weather[ARGS]{ws}{ok}"),
            };
            let whole = run(Some(family), &t, &input, &[]);
            let ones: Vec<usize> = (1..input.chars().count()).collect();
            assert_eq!(
                run(Some(family), &t, &input, &ones),
                whole,
                "{family:?} {n}"
            );
            let called = whole.iter().any(|p| matches!(p, Piece::Call { .. }));
            assert_eq!(called, read, "{family:?} {n}: {whole:?}");
        }
    }
    // After the `[TOOL_CALLS]` marker itself.
    for (n, read) in [(8, true), (300, false)] {
        let input = format!(
            "[TOOL_CALLS]{}[{{\"name\":\"get_weather\",\"arguments\":{ok}}}]",
            " ".repeat(n)
        );
        let whole = run(Some(Family::Mistral), &t, &input, &[]);
        let ones: Vec<usize> = (1..input.chars().count()).collect();
        assert_eq!(run(Some(Family::Mistral), &t, &input, &ones), whole, "{n}");
        let called = whole.iter().any(|p| matches!(p, Piece::Call { .. }));
        assert_eq!(called, read, "[TOOL_CALLS] {n}: {whole:?}");
    }
    // Whitespace after the closed object, a delta at a time, before the closing tag.
    let input = format!(
        "<tool_call>{{\"name\":\"get_weather\",\"arguments\":{ok}}}{}</tool_call>",
        " ".repeat(20_000)
    );
    let cuts: Vec<usize> = (50..input.len()).collect();
    assert_eq!(
        run(Some(Family::Hermes), &t, &input, &cuts),
        [call("get_weather", ok)]
    );
}

/// MiniMax's `<invoke>` with many parameters and a long run of whitespace after them:
/// each parameter no longer trims the whitespace at the end (8 000 parameters and 480 KB
/// of spaces took 3.8 s at 91c7367, 0.006 s now).
#[test]
fn many_parameters_before_trailing_whitespace_are_read_once() {
    let t = Tools::from_names(["f"]);
    let mut body = String::from("<minimax:tool_call>\n<invoke name=\"f\">\n");
    for i in 0..8000 {
        body.push_str(&format!("<parameter name=\"p{i}\">1</parameter>"));
    }
    body.push_str(&" ".repeat(480_000));
    body.push_str("</invoke>\n</minimax:tool_call>");
    let out = run(Some(Family::MiniMax), &t, &body, &[]);
    let Some(Piece::Call { arguments, .. }) = out.first() else {
        panic!("{:?}", &out[..out.len().min(2)]);
    };
    assert!(arguments.starts_with("{\"p0\":") && arguments.contains("\"p7999\":"));
}

// ---- The families added from the peers' lists (formats from each model's chat template
// and the vLLM and tool-parser test inputs) ----

#[test]
fn cohere_action_blocks_object_and_array() {
    // Command R7B / A: `tool_name` and `parameters`, one object or an array.
    let one = "Let me look.\n<|START_ACTION|>\n{\"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n<|END_ACTION|>";
    for family in [None, Some(Family::Cohere)] {
        check(
            family,
            &tools(),
            one,
            &[
                text("Let me look.\n"),
                call("get_weather", r#"{"city": "Paris"}"#),
            ],
        );
    }
    let many = "<|START_ACTION|>[\n {\"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}},\n {\"tool_name\": \"write_file\", \"parameters\": {\"path\": \"a\"}}\n]<|END_ACTION|>";
    check(
        None,
        &tools(),
        many,
        &[
            call("get_weather", r#"{"city": "Oslo"}"#),
            call("write_file", r#"{"path": "a"}"#),
        ],
    );
    // No parameters: `{}`. The closing marker inside a string is the string's.
    check(
        None,
        &tools(),
        r#"<|START_ACTION|>{"tool_name": "get_weather"}<|END_ACTION|>"#,
        &[call("get_weather", "{}")],
    );
    check(
        None,
        &tools(),
        r#"<|START_ACTION|>{"tool_name": "write_file", "parameters": {"content": "say <|END_ACTION|> please"}}<|END_ACTION|>."#,
        &[
            call("write_file", r#"{"content": "say <|END_ACTION|> please"}"#),
            text("."),
        ],
    );
    // Broken JSON of a declared tool: a failure, whole, up to the closing marker.
    let broken = r#"<|START_ACTION|>{"tool_name": "get_weather", "parameters": {}<|END_ACTION|>"#;
    let got = run(None, &tools(), &format!("{broken}ok"), &[]);
    assert!(
        matches!(&got[..], [Piece::Failed { name, raw, .. }, Piece::Text(t)] if name == "get_weather" && raw == broken && t == "ok"),
        "{got:?}"
    );
}

#[test]
fn step3_steptml_invokes() {
    let input = "Sure.\n<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\">\n<steptml:parameter name=\"city\">Tokyo</steptml:parameter>\n<steptml:parameter name=\"days\">3</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"write_file\">\n<steptml:parameter name=\"path\">100</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>";
    for family in [None, Some(Family::Step3)] {
        check(
            family,
            &tools(),
            input,
            &[
                text("Sure.\n"),
                // Typed by the schema: `days` is an integer, `path` a string even when it
                // reads as a number.
                call("get_weather", r#"{"city":"Tokyo","days":3}"#),
                call("write_file", r#"{"path":"100"}"#),
            ],
        );
    }
    // DeepSeek's section marker differs by its `▁`: not Step 3's.
    let deepseek = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Rome\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    check(Some(Family::Step3), &tools(), deepseek, &[text(deepseek)]);
}

#[test]
fn granite_longcat_seed_internlm_and_tool_calls_tags() {
    let t = tools();
    let cases: [(Family, &str, Vec<Piece>); 6] = [
        (
            Family::Granite,
            "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Quito\"}}] after",
            vec![
                call("get_weather", r#"{"city": "Lima"}"#),
                call("get_weather", r#"{"city": "Quito"}"#),
                text(" after"),
            ],
        ),
        (
            Family::LongCat,
            "<longcat_tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pune\"}}</longcat_tool_call>",
            vec![call("get_weather", r#"{"city": "Pune"}"#)],
        ),
        (
            Family::SeedOss,
            "Ok.<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nSeoul\n</parameter>\n<parameter=days>2</parameter>\n</function>\n</seed:tool_call>",
            vec![text("Ok."), call("get_weather", r#"{"city":"Seoul","days":2}"#)],
        ),
        (
            Family::InternLm,
            "Let me see.<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Hanoi\"}}<|action_end|>",
            vec![text("Let me see."), call("get_weather", r#"{"city": "Hanoi"}"#)],
        ),
        (
            // Jamba 1.5 and Hunyuan-A13B: one array.
            Family::Jamba,
            "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\"}}]</tool_calls>",
            vec![call("get_weather", r#"{"city": "Bern"}"#)],
        ),
        (
            // MiniMax-M1: one object a line.
            Family::Jamba,
            "<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Baku\"}}\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_calls>",
            vec![
                call("get_weather", r#"{"city": "Baku"}"#),
                call("write_file", r#"{"path": "b"}"#),
            ],
        ),
    ];
    for (family, input, want) in cases {
        check(Some(family), &t, input, &want);
        check(None, &t, input, &want);
    }
    // A call to a tool nobody declared, in each: text, byte for byte.
    for input in [
        "<|tool_call|>[{\"name\": \"rm\", \"arguments\": {}}]",
        "<longcat_tool_call>{\"name\": \"rm\", \"arguments\": {}}</longcat_tool_call>",
        "<seed:tool_call><function=rm></function></seed:tool_call>",
        "<|action_start|><|plugin|>{\"name\": \"rm\", \"parameters\": {}}<|action_end|>",
        "<tool_calls>[{\"name\": \"rm\", \"arguments\": {}}]</tool_calls>",
        "<|START_ACTION|>{\"tool_name\": \"rm\"}<|END_ACTION|>",
    ] {
        check(None, &t, input, &[text(input)]);
    }
}

#[test]
fn family_names_and_the_peers_aliases() {
    assert_eq!(Family::from_name("hunyuan_a13b"), Some(Family::Jamba));
    assert_eq!(Family::from_name("minimax"), Some(Family::Jamba));
    assert_eq!(Family::from_name("nope"), None);
}

#[test]
fn llama_parallel_calls_joined_by_semicolons() {
    // Llama 3's JSON calls, several in one message: `{...}; {...}`.
    let input = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}";
    check(
        Some(Family::Llama),
        &tools(),
        input,
        &[
            call("get_weather", r#"{"city": "Paris"}"#),
            call("get_weather", r#"{"city": "Rome"}"#),
        ],
    );
    // Text after the last one; a `;` followed by text ends the calls before it.
    check(
        None,
        &tools(),
        &format!("{input} \nDone."),
        &[
            call("get_weather", r#"{"city": "Paris"}"#),
            call("get_weather", r#"{"city": "Rome"}"#),
            text(" \nDone."),
        ],
    );
    let semicolon_text = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {}}; and then";
    check(
        None,
        &tools(),
        semicolon_text,
        &[call("get_weather", "{}"), text("; and then")],
    );
    // A `;` at the very end, or whitespace, is text after the call.
    check(
        None,
        &tools(),
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {}};  ",
        &[call("get_weather", "{}"), text(";  ")],
    );
    // A broken second object: the markup fails whole (fail-closed), up to the bad byte.
    let broken = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {}};{\"name\": x}";
    let got = run(None, &tools(), broken, &[]);
    assert!(
        matches!(&got[0], Piece::Failed { name, .. } if name == "get_weather"),
        "{got:?}"
    );
}

#[test]
fn python_literals_stand_for_a_declared_boolean_or_null() {
    let tools = Tools::from_request(&serde_json::json!({"tools": [
        {"type": "function", "function": {"name": "set", "parameters": {"type": "object",
            "properties": {"on": {"type": "boolean"}, "off": {"type": "boolean"},
                "none": {"type": "null"}, "name": {"type": "string"}}}}}
    ]}));
    check(
        Some(Family::MiniMax),
        &tools,
        "<minimax:tool_call><invoke name=\"set\"><parameter name=\"on\">True</parameter><parameter name=\"off\">false</parameter><parameter name=\"none\">None</parameter><parameter name=\"name\">True</parameter></invoke></minimax:tool_call>",
        &[call("set", r#"{"on":true,"off":false,"none":null,"name":"True"}"#)],
    );
}

#[test]
fn llama_json_with_no_marker_when_the_family_is_named() {
    // Llama 3.1-3.3's JSON tool calling: the message is the JSON object itself.
    let input = "\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
    check(
        Some(Family::Llama),
        &tools(),
        input,
        &[text("\n"), call("get_weather", r#"{"city": "Paris"}"#)],
    );
    let two = "{\"name\": \"get_weather\", \"parameters\": {}}; {\"name\": \"write_file\", \"parameters\": {\"path\": \"a\"}}";
    check(
        Some(Family::Llama),
        &tools(),
        two,
        &[
            call("get_weather", "{}"),
            call("write_file", r#"{"path": "a"}"#),
        ],
    );
    // `{` is no marker auto can tell from an answer written in JSON: auto leaves it.
    check(None, &tools(), input, &[text(input)]);
    // Only at the start of the message; JSON that is no call is text.
    let later = "Here: {\"name\": \"get_weather\", \"parameters\": {}}";
    check(Some(Family::Llama), &tools(), later, &[text(later)]);
    let answer = "{\"city\": \"Paris\", \"temperature\": 21} is the answer";
    check(Some(Family::Llama), &tools(), answer, &[text(answer)]);
    let undeclared = "{\"name\": \"rm\", \"parameters\": {}}";
    check(
        Some(Family::Llama),
        &tools(),
        undeclared,
        &[text(undeclared)],
    );
}

#[test]
fn json_and_phi4_mini_messages_when_named() {
    let t = tools();
    // xLAM and any model told to answer in JSON: one call, or an array.
    let one = " {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}";
    check(
        Some(Family::Json),
        &t,
        one,
        &[text(" "), call("get_weather", r#"{"city": "Oslo"}"#)],
    );
    let many = "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"write_file\", \"parameters\": {\"path\": \"x\"}}]\nDone.";
    check(
        Some(Family::Json),
        &t,
        many,
        &[
            call("get_weather", r#"{"city": "Oslo"}"#),
            call("write_file", r#"{"path": "x"}"#),
            text("\nDone."),
        ],
    );
    // Phi-4-mini: `functools` and the array.
    let phi = "functools[{\"name\": \"get_weather\", \"arguments\": {\"days\": 2}}]";
    check(
        Some(Family::Phi4Mini),
        &t,
        phi,
        &[call("get_weather", r#"{"days": 2}"#)],
    );
    // Neither is read by auto, nor later in a message, nor for an undeclared tool; an
    // answer that only looks like the start stays text.
    for (family, input) in [
        (None, one),
        (None, many),
        (None, phi),
        (
            Some(Family::Json),
            "Sure: [{\"name\": \"get_weather\", \"arguments\": {}}]",
        ),
        (
            Some(Family::Json),
            "[{\"name\": \"rm\", \"arguments\": {}}]",
        ),
        (Some(Family::Json), "[1, 2, 3] are the numbers"),
        (Some(Family::Phi4Mini), "functional programming"),
        (Some(Family::Phi4Mini), "functools"),
    ] {
        check(family, &t, input, &[text(input)]);
    }
}

#[test]
fn gemma4_calls_in_its_own_notation() {
    let t = Tools::from_request(&serde_json::json!({"tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "count": {"type": "integer"},
                "as_string": {"type": "string"}, "enabled": {"type": "boolean"}}}}}
    ]}));
    let weather = "<|tool_call>call:get_weather{city:<|\"|>San Francisco<|\"|>}<tool_call|>";
    check(
        Some(Family::Gemma4),
        &t,
        &format!("Checking. {weather}Done."),
        &[
            text("Checking. "),
            call("get_weather", r#"{"city":"San Francisco"}"#),
            text("Done."),
        ],
    );
    // Strings hold anything but their delimiter (the closing marker, brackets); bare
    // values typed by the schema; nested objects and arrays.
    let rich = "<|tool_call>call:get_weather{city:<|\"|>\"Paris\" {x}, [y] \\ <tool_call|> 杭州<|\"|>,count:42,enabled:true,as_string:42,metadata:{labels:[1,2]},extra:[<|\"|>a,b<|\"|>,{key:<|\"|>value<|\"|>},false]}<tool_call|>";
    check(
        None,
        &t,
        rich,
        &[call(
            "get_weather",
            r#"{"city":"\"Paris\" {x}, [y] \\ <tool_call|> 杭州","count":42,"enabled":true,"as_string":"42","metadata":{"labels":[1,2]},"extra":["a,b",{"key":"value"},false]}"#,
        )],
    );
    // `:NAME` without `call`, parentheses, and no closing marker at the end of the text.
    for input in [
        "<|tool_call>:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
        "<|tool_call>call:get_weather(city:<|\"|>Paris<|\"|>)<tool_call|>",
        "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}",
    ] {
        check(
            None,
            &t,
            input,
            &[call("get_weather", r#"{"city":"Paris"}"#)],
        );
    }
    // Another marker after the arguments is text; an undeclared tool is text; a cut call
    // of a declared one is a failure.
    check(
        None,
        &t,
        "<|tool_call>call:get_weather{count:1}<turn|>",
        &[call("get_weather", r#"{"count":1}"#), text("<turn|>")],
    );
    let rm = "<|tool_call>call:rm{path:<|\"|>/<|\"|>}<tool_call|>";
    check(None, &t, rm, &[text(rm)]);
    let cut = "<|tool_call>call:get_weather{city:<|\"|>Par";
    let got = run(None, &t, cut, &[]);
    assert!(
        matches!(&got[..], [Piece::Failed { name, kind: FailureKind::Truncated, .. }] if name == "get_weather"),
        "{got:?}"
    );
}

#[test]
fn sarashina_inkling_olmo3_and_granite_20b() {
    let t = tools();
    // Sarashina: a Python list of dicts after its marker, or alone when named.
    let sarashina = "<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo', 'days': 2}}, {'name': 'write_file', 'arguments': {'path': 'a]b', 'content': None}}]";
    let want = [
        call("get_weather", r#"{"city":"Tokyo","days":2}"#),
        call("write_file", r#"{"path":"a]b","content":null}"#),
    ];
    check(None, &t, sarashina, &want);
    check(
        Some(Family::Sarashina),
        &t,
        &format!("Sure.{sarashina}"),
        &[&[text("Sure.")][..], &want].concat(),
    );
    let bare = &sarashina["<|tool_calls|>".len()..];
    check(Some(Family::Sarashina), &t, bare, &want);
    check(None, &t, bare, &[text(bare)]);
    // Inkling: JSON with `args`, then the message's end marker.
    check(
        None,
        &t,
        "<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"city\":\"Rust {language}\"}}<|end_message|>ok",
        &[call("get_weather", r#"{"city":"Rust {language}"}"#), text("ok")],
    );
    // OLMo 3: one Python call a line.
    check(
        Some(Family::Olmo3),
        &t,
        "<function_calls>\nget_weather(city=\"Paris\", days=3)\nwrite_file(path='x')\n</function_calls>",
        &[
            call("get_weather", r#"{"city":"Paris","days":3}"#),
            call("write_file", r#"{"path":"x"}"#),
        ],
    );
    // Granite 20B: `<function_call>` and JSON, repeated.
    check(
        None,
        &t,
        "<function_call> {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}} <function_call> {\"name\": \"write_file\", \"arguments\": {}}",
        &[
            call("get_weather", r#"{"city": "Lima"}"#),
            text(" "),
            call("write_file", "{}"),
        ],
    );
    // Undeclared names stay text in each.
    for input in [
        "<|tool_calls|>[{'name': 'rm', 'arguments': {}}]",
        "<|content_invoke_tool_json|>{\"name\":\"rm\",\"args\":{}}<|end_message|>",
        "<function_calls>\nrm(path='/')\n</function_calls>",
        "<function_call> {\"name\": \"rm\", \"arguments\": {}}",
    ] {
        check(None, &t, input, &[text(input)]);
    }
}

#[test]
fn kimi_k3_xtml_tools_channel() {
    let t = tools();
    let input = "Checking.<|open|>tools<|sep|>\n<|open|>call tool=\"get_weather\" index=\"0\"<|sep|>\n<|open|>argument key=\"city\" type=\"string\"<|sep|>Rome, \"IT\" {x}<|close|>argument<|sep|>\n<|open|>argument key=\"days\" type=\"integer\"<|sep|>4<|close|>argument<|sep|>\n<|close|>call<|sep|>\n<|open|>call tool=\"write_file\" index=\"1\"<|sep|><|open|>argument key=\"path\"<|sep|>7<|close|>argument<|sep|><|close|>call<|sep|>\n<|close|>tools<|sep|>";
    check(
        None,
        &t,
        input,
        &[
            text("Checking."),
            call("get_weather", r#"{"city":"Rome, \"IT\" {x}","days":4}"#),
            // No type: the schema's (a string).
            call("write_file", r#"{"path":"7"}"#),
        ],
    );
    let rm = "<|open|>tools<|sep|><|open|>call tool=\"rm\" index=\"0\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
    check(Some(Family::KimiK3), &t, rm, &[text(rm)]);
}

#[test]
fn hunyuan_v4_sections_with_and_without_a_checkpoint_suffix() {
    let t = tools();
    for suffix in ["", ":6124c78e", ":another-checkpoint"] {
        let input = format!(
            "hello<tool_calls{suffix}><tool_call{suffix}>write_file<arg_key{suffix}>content</arg_key{suffix}><arg_value{suffix}>  a </tool_call{suffix}> b </arg_value{suffix}><arg_key{suffix}>path</arg_key{suffix}><arg_value{suffix}>42</arg_value{suffix}></tool_call{suffix}><tool_call{suffix}>get_weather<arg_key{suffix}>days</arg_key{suffix}><arg_value{suffix}>3</arg_value{suffix}></tool_call{suffix}></tool_calls{suffix}>tail"
        );
        let want = [
            text("hello"),
            call(
                "write_file",
                &format!(r#"{{"content":"  a </tool_call{suffix}> b ","path":"42"}}"#),
            ),
            call("get_weather", r#"{"days":3}"#),
            text("tail"),
        ];
        check(Some(Family::HunyuanV4), &t, &input, &want);
        check(None, &t, &input, &want);
    }
    // A suffix that is no suffix: the tag is text.
    let odd = "<tool_calls: x>y";
    check(Some(Family::HunyuanV4), &t, odd, &[text(odd)]);
}

#[test]
fn deepseek_v41_spaced_dsml_tags_and_the_peers_names() {
    let input = "Checking.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">杭州</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"days\" string=\"false\">42</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>";
    for family in [None, Some(Family::DeepSeek)] {
        check(
            family,
            &tools(),
            input,
            &[
                text("Checking.\n\n"),
                call("get_weather", r#"{"city":"杭州","days":42}"#),
            ],
        );
    }
    for (name, family) in [
        ("ernie45", Family::Hermes),
        ("glm47", Family::Glm45),
        ("llama3_json", Family::Llama),
        ("llama4_json", Family::Llama),
        ("deepseek_v41", Family::DeepSeek),
        ("xlam", Family::Json),
        ("phi4_mini_json", Family::Phi4Mini),
        ("granite-20b-fc", Family::Granite20bFc),
        ("qwen3_xml", Family::Qwen3Coder),
        ("nemotron_v3", Family::Qwen3Coder),
        ("openai", Family::GptOss),
        ("llama4_pythonic", Family::Pythonic),
        ("cohere_command", Family::Cohere),
        ("internlm2", Family::InternLm),
        ("kimik2", Family::Kimi),
    ] {
        assert_eq!(Family::from_name(name), Some(family), "{name}");
    }
    // GLM-4.7 writes no line break after the name.
    check(
        Some(Family::Glm45),
        &tools(),
        "<tool_call>get_weather<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>",
        &[call("get_weather", r#"{"days":2}"#)],
    );
}

/// A suffixed section tag that is none: it ends at its first byte no suffix holds, even
/// one inside a character (found by the property test: the suffix's window was cut inside
/// a character).
#[test]
fn a_suffix_tag_ends_at_its_first_byte_no_suffix_holds() {
    let t = tools();
    for input in [
        format!("<tool_calls:ab{}", "日本".repeat(100)),
        format!("<tool_calls:{}日 then text", "a".repeat(255)),
        format!("<tool_calls:{}", "a".repeat(300)),
        "<tool_calls:>x".to_string(),
    ] {
        let n = input.chars().count();
        for k in [0, 1, 12, 13, n / 2, n.saturating_sub(1)] {
            let got = run(Some(Family::HunyuanV4), &t, &input, &[k]);
            assert_eq!(got, vec![text(&input)], "cut at {k}");
        }
    }
}
