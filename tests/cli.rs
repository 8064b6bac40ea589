//! The command line: `split`'s output, exit codes and values printed while the input pipe
//! is still open; every command's help, the version, usage errors, unreadable files,
//! closed pipes and machine-readable previews.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

const BIN: &str = env!("CARGO_BIN_EXE_toolstream");

fn run(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = common::cli(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolstream");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn prints_each_value_on_its_own_line() {
    let (code, out, err) = run(&["split"], b"{\"a\":1}{\"b\":[2]}\n {\"c\":\"x\"}");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "{\"a\":1}\n{\"b\":[2]}\n{\"c\":\"x\"}\n");
}

#[test]
fn json_output_is_valid_json_with_spans() {
    let input = b"{\"a\":1} {\"b\":\"\\u00e9\"}";
    let (code, out, _) = run(&["split", "--json", "-"], input);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["index"], 1);
    let (s, e) = (
        lines[1]["start"].as_u64().unwrap(),
        lines[1]["end"].as_u64().unwrap(),
    );
    assert_eq!((s, e), (8, 22));
    assert_eq!(
        lines[1]["value"],
        serde_json::from_slice::<serde_json::Value>(&input[s as usize..e as usize]).unwrap()
    );
}

#[test]
fn any_mode_and_trailing_number() {
    let (code, out, _) = run(&["split", "--any"], b"1 \"two\" [3] 4");
    assert_eq!(code, 0);
    assert_eq!(out, "1\n\"two\"\n[3]\n4\n");
}

#[test]
fn errors_exit_1_with_offset_and_kind() {
    let (code, out, err) = run(&["split"], b"{\"a\":1}{\"b\":01}");
    assert_eq!(code, 1);
    assert_eq!(out, "{\"a\":1}\n", "values before the error are printed");
    assert!(
        err.contains("invalid_number") && err.contains("byte 13"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);

    let (code, _, err) = run(&["split"], b"{\"a\":[1");
    assert_eq!(code, 1);
    assert!(err.contains("truncated") && err.contains("byte 7"), "{err}");

    let (code, _, err) = run(&["split"], b"[1]");
    assert_eq!(code, 1);
    assert!(err.contains("not_an_object"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&[], b"").0, 2);
    assert_eq!(run(&["frobnicate"], b"").0, 2);
    assert_eq!(run(&["split", "--bogus"], b"").0, 2);
    assert_eq!(run(&["split", "a", "b"], b"").0, 2);
    let (code, out, _) = run(&["--help"], b"");
    assert_eq!(code, 0);
    assert!(out.contains("inspect") && out.contains("split") && out.contains("classify"));
}

#[test]
fn every_command_has_help_and_the_binary_a_version() {
    for cmd in ["inspect", "split", "classify"] {
        for flag in ["--help", "-h"] {
            let (code, out, err) = run(&[cmd, flag], b"");
            assert_eq!((code, err.as_str()), (0, ""), "{cmd} {flag}");
            assert!(
                out.starts_with(&format!("usage: toolstream {cmd}")),
                "{out}"
            );
        }
        // After other options too, and as `help CMD`.
        let (code, out, _) = run(&[cmd, "--json", "--help"], b"");
        assert_eq!(code, 0);
        assert!(
            out.starts_with(&format!("usage: toolstream {cmd}")),
            "{out}"
        );
        let (code, help, _) = run(&["help", cmd], b"");
        assert_eq!((code, &help), (0, &out));
    }
    // `--body -h` is a body, not a request for help.
    let (code, out, _) = run(&["classify", "--status", "400", "--body", "-h"], b"");
    assert_eq!(code, 0);
    assert!(out.starts_with("reason:"), "{out}");
    for flag in ["--version", "-V"] {
        let (code, out, _) = run(&[flag], b"");
        assert_eq!(code, 0);
        assert_eq!(out, format!("toolstream {}\n", env!("CARGO_PKG_VERSION")));
    }
    // The inspect help names every framing it reads.
    let (_, out, _) = run(&["inspect", "--help"], b"");
    assert!(out.contains("AWS event stream"), "{out}");
}

#[test]
fn a_usage_error_is_one_line_and_a_hint() {
    for args in [
        &["inspect", "--bogus"][..],
        &["split", "--bogus"],
        &["classify", "--bogus"],
        &["inspect", "--chunk"],
        &["frobnicate"],
        &[],
    ] {
        let (code, out, err) = run(args, b"");
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {err}");
        assert!(lines[1].starts_with("Try 'toolstream"), "{err}");
    }
}

#[test]
fn an_unreadable_input_names_the_file() {
    for cmd in ["inspect", "split"] {
        let (code, _, err) = run(&[cmd, "/nonexistent/file.json"], b"");
        assert_eq!(code, 1, "{cmd}");
        assert!(err.contains("/nonexistent/file.json"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `| head -1`: the reader goes away; the command ends without a panic.
#[test]
fn a_closed_pipe_ends_quietly() {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/captures/openai-parallel-calls.sse"
    );
    for args in [
        &["--help"][..],
        &["inspect", "--help"],
        &["inspect", "--chunk", "1", capture],
        &["classify", "--status", "500"],
    ] {
        let mut child = common::cli(BIN)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before the command writes.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn preview_json_is_one_json_object_per_line() {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/captures/openai-parallel-calls.sse"
    );
    let (code, out, err) = run(&["inspect", "--preview", "--json", capture], b"");
    assert_eq!((code, err.as_str()), (0, ""));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let views: Vec<_> = lines.iter().filter(|v| v["type"] == "preview").collect();
    assert!(!views.is_empty(), "{out}");
    let calls: Vec<_> = lines.iter().filter(|v| v["type"] == "tool_call").collect();
    assert_eq!(calls.len(), 2, "{out}");
    // Each view is a view of a call that then arrived, and shows only its members.
    for view in views {
        let call = calls.iter().find(|c| c["index"] == view["index"]).unwrap();
        for key in view["view"].as_object().unwrap().keys() {
            assert!(call["arguments"].get(key).is_some(), "{out}");
        }
    }
}

#[test]
fn reads_the_shipped_sample() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tool-arguments.json");
    let (code, out, err) = run(&["split", path], b"");
    assert_eq!((code, err.as_str()), (0, ""));
    let values: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(values.len(), 4);
    assert_eq!(values[1]["city"], "Tokyo");
}

/// The CLI with `args`, its stdin and stdout piped: the child, its stdin, its stdout.
fn piped(
    args: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = common::cli(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

/// A value is printed as soon as it is complete, while the writer still holds the pipe.
#[test]
fn values_come_out_while_the_pipe_is_open() {
    let (mut child, mut stdin, mut stdout) = piped(&["split"]);
    stdin.write_all(b"{\"first\":1}{\"sec").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap(); // blocks until the first value is printed
    assert_eq!(line, "{\"first\":1}\n");
    stdin.write_all(b"ond\":2}").unwrap();
    stdin.flush().unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "{\"second\":2}\n");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `inspect` prints each call while the stream is still coming (it holds one read's bytes,
/// not the input), and reports bytes it dropped.
#[test]
fn inspect_prints_calls_while_the_pipe_is_open_and_reports_drops() {
    let (mut child, mut stdin, mut stdout) = piped(&["inspect", "--json"]);
    let first = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n";
    stdin.write_all(first).unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap(); // blocks until the call is printed
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (v["type"].as_str(), v["name"].as_str()),
        (Some("tool_call"), Some("f"))
    );
    let late = b"data: [DONE]\n\ndata: {\"late\":1}\n";
    stdin.write_all(late).unwrap();
    stdin.write_all(b"\n").unwrap();
    // The late payload's event ends at the blank line after it.
    let at = first.len() + late.len();
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    let rest: Vec<serde_json::Value> = rest
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        rest,
        [
            serde_json::json!({"type": "dropped", "reason": "after_end", "offset": at, "bytes": 10}),
            serde_json::json!({"type": "end", "complete": false}),
        ]
    );
}

#[test]
fn classify_prints_a_decision_as_json() {
    let (code, out, err) = run(
        &[
            "classify",
            "--provider",
            "ollama",
            "--status",
            "400",
            "--json",
            "-",
        ],
        br#"{"error":{"message":"invalid tool call arguments","type":"invalid_request_error"}}"#,
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(v["reason"], "model_output");
    assert_eq!(v["action"], "retry_with_feedback");
    assert_eq!(v["should_fallback"], false);
    assert_eq!(v["retry_after_ms"], serde_json::Value::Null);
    for key in [
        "retryable",
        "should_compress",
        "rotate_credential",
        "message",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["hint"], serde_json::Value::Null);

    // A request to repair, with the rule's hint.
    let (code, out, _) = run(
        &["classify", "--provider", "anthropic", "--status", "400", "--json", "-"],
        br#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `signature` in `thinking` block"}}"#,
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(v["reason"], "reasoning_replay");
    assert_eq!(v["action"], "repair_request");
    assert!(
        v["hint"].as_str().is_some_and(|h| h.contains("thinking")),
        "{v}"
    );

    let (code, out, _) = run(
        &[
            "classify",
            "--status",
            "429",
            "--header",
            "Retry-After: 7",
            "--body",
            "{}",
            "--json",
        ],
        b"",
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["reason"].as_str(), v["retry_after_ms"].as_u64()),
        (Some("rate_limit"), Some(7000))
    );

    let (code, out, _) = run(&["classify", "--transport", "connection refused"], b"");
    assert_eq!(code, 0);
    assert!(out.contains("reason:   connection"), "{out}");

    let (code, out, _) = run(
        &[
            "classify",
            "--provider",
            "anthropic",
            "--phase",
            "after_output",
            "--json",
            "-",
        ],
        br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    );
    assert_eq!(code, 0);
    assert!(out.contains("\"action\":\"surface\""), "{out}");
}

#[test]
fn classify_usage_errors_exit_2() {
    assert_eq!(run(&["classify"], b"").0, 2);
    assert_eq!(run(&["classify", "--status", "abc"], b"").0, 2);
    assert_eq!(
        run(&["classify", "--provider", "nope", "--status", "500"], b"").0,
        2
    );
    assert_eq!(run(&["classify", "--phase", "sometime"], b"").0, 2);
    assert_eq!(
        run(
            &["classify", "--header", "no-colon", "--status", "500"],
            b""
        )
        .0,
        2
    );
}

#[test]
fn inspect_turn_prints_the_message_to_send_back() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/captures/responses-encrypted-reasoning.sse"
    );
    let (code, out, err) = run(&["inspect", "--turn", path], b"");
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON value");
    assert_eq!(v[0]["type"], "reasoning");
    assert_eq!(
        v[0]["encrypted_content"],
        "gAAAAABpK3vQ9x2mZ1eL0a7Rk3TqWfYb8Uo4sNcD5hJv6EiP=="
    );
    assert_eq!(v[1]["type"], "function_call");
    assert_eq!(v[1]["call_id"], "call_w1");
    // Two outputs asked for: a usage error; input with no format: unreadable.
    assert_eq!(run(&["inspect", "--turn", "--json", path], b"").0, 2);
    assert_eq!(run(&["inspect", "--turn", "-"], b"not a stream").0, 1);
}

#[test]
fn inspect_preview_shows_the_arguments_as_they_stream() {
    // One OpenAI-style call whose arguments arrive in three deltas; 8-byte pushes.
    let mut sse = String::new();
    sse += "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"write\",\"arguments\":\"\"}}]}}]}\n\n";
    for frag in [
        "{\\\"path\\\":\\\"a.md\\\",",
        "\\\"text\\\":\\\"Hel",
        "lo\\\"}",
    ] {
        sse += &format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{frag}\"}}}}]}}}}]}}\n\n");
    }
    sse += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let (code, out, err) = run(&["inspect", "--preview", "--chunk", "8"], sse.as_bytes());
    assert_eq!((code, err.as_str()), (0, ""));
    let views: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once(": ").filter(|(h, _)| h.contains("view of #0")))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(
        views,
        [r#"{"path":"a.md"}"#, r#"{"path":"a.md","text":"Hel"}"#]
    );
    assert!(out.contains("tool call #0 part 1: write("), "{out}");
    assert_eq!(run(&["inspect", "--preview", "--turn", "-"], b"").0, 2);
}

#[test]
fn inspect_tools_checks_each_call_against_its_declaration() {
    let capture = "examples/captures/openai-parallel-calls.sse";
    let root = env!("CARGO_MANIFEST_DIR");
    let request = format!("{root}/examples/requests/openai-parallel-calls.request.json");
    // The shipped request declares both calls as the capture makes them.
    let (code, out, err) = run(
        &["inspect", "--tools", &request, &format!("{root}/{capture}")],
        b"",
    );
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(!out.contains("DOES NOT MATCH"), "{out}");
    assert_eq!(out.matches("tool call #").count(), 2, "{out}");

    // A declaration the calls do not match: another enum, no `note`, one tool missing.
    let dir = std::env::temp_dir().join(format!("toolstream-cli-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"name": "get_weather", "input_schema": {"type": "object",
             "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
             "additionalProperties": false}}]"#,
    )
    .unwrap();
    let tools = tools.to_str().unwrap();
    let (code, out, _) = run(
        &["inspect", "--tools", tools, &format!("{root}/{capture}")],
        b"",
    );
    assert_eq!(code, 0);
    let weather = out.find("get_weather(").expect("the weather call");
    let time = out.find("get_time(").expect("the time call");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        out[weather..time].contains(
            "  DOES NOT MATCH its declaration (schema; retry_with_feedback):\n    at /unit: must be one of \"celsius\", \"fahrenheit\", got \"c\"\n"
        ),
        "{out}"
    );
    assert!(
        out[time..]
            .contains("    there is no tool named `get_time`; the tools are `get_weather`\n"),
        "{out}"
    );
    assert!(lines.len() >= 8, "{out}");

    // JSON: one mismatch object after each call, with the feedback for the model.
    let (code, out, _) = run(
        &[
            "inspect",
            "--json",
            "--tools",
            tools,
            &format!("{root}/{capture}"),
        ],
        b"",
    );
    assert_eq!(code, 0);
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mismatches: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_mismatch")
        .collect();
    assert_eq!(mismatches.len(), 2, "{out}");
    assert_eq!(mismatches[0]["kind"], "schema");
    assert_eq!(mismatches[0]["violations"][0]["path"], "/unit");
    assert_eq!(mismatches[0]["violations"][0]["keyword"], "enum");
    assert_eq!(mismatches[1]["kind"], "unknown_tool");
    assert!(mismatches[1]["feedback"]
        .as_str()
        .unwrap()
        .contains("Call one of the declared tools"));

    // A bad schema: exit 1, the pointer named.
    std::fs::write(
        dir.join("bad.json"),
        r#"{"tools": [{"name": "a", "input_schema": {"type": 3}}]}"#,
    )
    .unwrap();
    let bad = dir.join("bad.json");
    let (code, _, err) = run(
        &[
            "inspect",
            "--tools",
            bad.to_str().unwrap(),
            &format!("{root}/{capture}"),
        ],
        b"",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/tools/0/type"), "{err}");
    // Not with --turn.
    let (code, _, _) = run(
        &[
            "inspect",
            "--turn",
            "--tools",
            tools,
            &format!("{root}/{capture}"),
        ],
        b"",
    );
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&dir).ok();
}

/// A `--tools` file that cannot be read is reported under its own name, not the capture's;
/// `help` of a command that does not exist points at the list of commands. (At 91c7367 the
/// first named the capture, the second suggested `toolstream help --help`.)
#[test]
fn errors_name_what_they_are_about() {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/captures/openai-parallel-calls.sse"
    );
    let (code, _, err) = run(&["inspect", "--tools", "/nonexistent.json", capture], b"");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("toolstream inspect: --tools /nonexistent.json:"),
        "{err}"
    );
    assert!(!err.contains("openai-parallel-calls"), "{err}");
    let (code, _, err) = run(&["help", "nosuch"], b"");
    assert_eq!(code, 2);
    assert!(
        err.contains("toolstream --help") && !err.contains("help --help"),
        "{err}"
    );
}

/// `inspect --json` prints a call's arguments as their exact bytes: member order, spacing and
/// number spelling as the model wrote them, a number out of a float's range included. (At
/// 91c7367 they were re-read into a tree: keys sorted, `1.50` became `1.5`, and a call whose
/// arguments held `1e400` was not printed at all.)
#[test]
fn inspect_json_prints_the_arguments_exact_bytes() {
    let stream = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"z\\\": 1.50, \\\"a\\\":1e400}\"}}]}}]}\n\ndata: [DONE]\n\n";
    let (code, out, _) = run(&["inspect", "--json", "-"], stream);
    assert_eq!(code, 0);
    assert!(
        out.contains(r#""arguments":{"z": 1.50, "a":1e400}"#),
        "{out}"
    );
}

/// `inspect --repair`: a call whose arguments end in a trailing comma is a call, with each
/// repair listed in `--json` (kind, offset, the bytes, what replaced them), at every
/// chunking; without it, the call fails as before.
#[test]
fn inspect_repair_turns_a_trailing_comma_into_a_call_with_its_repairs() {
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"write","arguments":"{\"path\": \"a.rs\","}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"n\": [1, 2,],}"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let (code, strict, _) = run(&["inspect", "--json", "-"], stream.as_bytes());
    assert_eq!(code, 0);
    assert!(strict.contains(r#""type":"tool_call_error""#), "{strict}");
    let (code, out, err) = run(&["inspect", "--json", "--repair", "-"], stream.as_bytes());
    assert_eq!(code, 0, "{err}");
    let call: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(call["type"], "tool_call");
    assert_eq!(
        call["arguments"],
        serde_json::json!({"path": "a.rs", "n": [1, 2]})
    );
    let repairs = call["repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 2);
    assert_eq!(repairs[0]["kind"], "trailing_comma");
    assert_eq!(repairs[0]["replaced"], ",");
    assert_eq!(repairs[0]["with"], "");
    // The offset names the comma in the raw arguments: `{"path": "a.rs", "n": [1, 2,],}`.
    assert_eq!(repairs[0]["offset"], 27);
    assert_eq!(repairs[1]["offset"], 29);
    for chunk in ["1", "7"] {
        let (_, again, _) = run(
            &["inspect", "--json", "--repair", "--chunk", chunk, "-"],
            stream.as_bytes(),
        );
        assert_eq!(again, out, "--chunk {chunk}");
    }
}

/// `inspect --tools --repair`: a string where the tool's schema says integer, holding
/// exactly an integer, is coerced (a repair of kind `coerce` with its path); without
/// `--repair` the schema mismatch is listed as before.
#[test]
fn inspect_repair_coerces_by_the_declared_schema() {
    let dir = std::env::temp_dir().join(format!("toolstream-coerce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("request.json");
    std::fs::write(
        &tools,
        r#"{"tools":[{"type":"function","function":{"name":"count","parameters":{"type":"object","properties":{"n":{"type":"integer"},"label":{"type":"string"}},"required":["n"]}}}]}"#,
    )
    .unwrap();
    let stream = concat!(
        r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_c","type":"function","function":{"name":"count","arguments":"{\"n\": \"3\", \"label\": \"7\"}"}}]},"finish_reason":null}]}"#,
        "\n\ndata: [DONE]\n\n"
    );
    let tools = tools.to_str().unwrap();
    let (_, strict, _) = run(
        &["inspect", "--json", "--tools", tools, "-"],
        stream.as_bytes(),
    );
    assert!(
        strict.contains("tool_call_mismatch"),
        "a mismatch listed: {strict}"
    );
    let (code, out, err) = run(
        &["inspect", "--json", "--tools", tools, "--repair", "-"],
        stream.as_bytes(),
    );
    assert_eq!(code, 0, "{err}");
    let call: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(call["arguments"], serde_json::json!({"n": 3, "label": "7"}));
    assert_eq!(call["repairs"][0]["kind"], "coerce");
    assert_eq!(call["repairs"][0]["path"], "/n");
    assert_eq!(call["repairs"][0]["replaced"], "\"3\"");
    assert_eq!(call["repairs"][0]["offset"], 6);
    assert_eq!(
        out.lines().count(),
        strict.lines().count() - 1,
        "no mismatch left: {out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
