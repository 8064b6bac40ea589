"""The Python module against the command line (the same events and verdicts), its errors,
a property test of the splitter and the pipeline under random chunkings, and the openai-SDK
example against a loopback server.

    TOOLSTREAM_BIN=target/debug/toolstream pytest python/tests
"""

import http.server
import json
import os
import pathlib
import subprocess
import sys
import threading

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import toolstream

ROOT = pathlib.Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "examples" / "captures"
BIN = os.environ.get("TOOLSTREAM_BIN", str(ROOT / "target" / "debug" / "toolstream"))
CAPTURE_FILES = sorted(
    p for p in CAPTURES.iterdir() if p.suffix in (".sse", ".ndjson", ".eventstream")
)


def cli_events(path):
    out = subprocess.run([BIN, "inspect", "--json", str(path)], capture_output=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def listed(events):
    """The events as `inspect --json` lists them (it leaves out slot openings and usage)."""
    out = []
    for e in events:
        if e["type"] in ("call_started", "usage"):
            continue
        e = dict(e)
        e.pop("arguments_raw", None)
        out.append(e)
    return out


@pytest.mark.parametrize("chunk", [1, 7, 64, 0])
@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda p: p.name)
def test_every_capture_gives_the_cli_events(path, chunk):
    data = path.read_bytes()
    pieces = [data] if chunk == 0 else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    assert listed(toolstream.events(pieces)) == cli_events(path)


def test_a_tool_call_has_its_exact_bytes():
    data = (CAPTURES / "openai-parallel-calls.sse").read_bytes()
    calls = [e for e in toolstream.events([data]) if e["type"] == "tool_call"]
    assert calls[0]["arguments_raw"] == b'{"city": "Paris", "unit": "c"}'
    assert json.loads(calls[1]["arguments_raw"]) == calls[1]["arguments"]


CLASSIFY = [
    ("openai", 429, [("retry-after", "2")], b'{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}'),
    ("openai", 429, [], b'{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}'),
    ("ollama", 400, [], b'{"error":{"message":"invalid tool call arguments"}}'),
    ("anthropic", 529, [], b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    ("groq", 413, [], b'{"error":{"message":"Request too large for model on tokens per min (TPM): Limit 30000, Requested 45000","code":"rate_limit_exceeded"}}'),
    ("gemini", 400, [], b'{"error":{"code":400,"message":"The input token count exceeds the maximum number of tokens allowed","status":"INVALID_ARGUMENT"}}'),
    ("openai", 401, [], b'{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}'),
    ("other", 500, [], b"oops"),
]


@pytest.mark.parametrize("provider,status,headers,body", CLASSIFY)
def test_verdicts_are_the_cli_verdicts(provider, status, headers, body):
    args = [BIN, "classify", "--json", "--provider", provider, "--status", str(status), "--body", body.decode()]
    for n, v in headers:
        args += ["--header", "%s: %s" % (n, v)]
    cli = json.loads(subprocess.run(args, capture_output=True, check=True).stdout)
    assert toolstream.classify_http(provider, status, headers, body) == cli
    assert toolstream.classify_http(provider, status, dict(headers), body) == cli


def test_stream_errors_and_transport_errors_are_classified():
    v = toolstream.classify_stream_error(
        "anthropic", b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        phase_name="after_output",
    )
    assert (v["reason"], v["action"]) == ("overloaded", "surface")
    assert toolstream.classify_transport("connection refused")["reason"] == "connection"
    v = toolstream.classify_tool_failure("f", "syntax", 5, b'{"a":tru}')
    assert v["action"] == "retry_with_feedback" and "`f`" in v["feedback"]


def test_errors_carry_kind_and_offset():
    s = toolstream.Splitter()
    assert s.push(b'{"a":1}') == [b'{"a":1}']
    with pytest.raises(toolstream.ToolstreamError) as e:
        s.push(b' {"b":01}')
    assert (e.value.kind, e.value.offset, e.value.value_index) == ("invalid_number", 14, 1)
    with pytest.raises(toolstream.ToolstreamError) as e:
        t = toolstream.Splitter()
        t.push(b'{"a":[1')
        t.finish()
    assert (e.value.kind, e.value.offset) == ("truncated", 7)
    with pytest.raises(ValueError):
        toolstream.Stream("nonsense")


def test_preview_shows_arguments_while_they_arrive():
    p = toolstream.Preview()
    assert p.push(b'{"path": "src/ma') == []
    assert p.partial() == {"path": "src/ma"}
    assert p.push(b'in.rs"}') == [{"path": "src/main.rs"}]


def apply(view, change):
    """A user interface's own model, kept up to date from Preview.update's changes."""
    op, path, v = change
    if not path:
        return v
    target = view
    for step in path[:-1]:
        target = target[step]
    last = path[-1]
    if op == "set":
        if isinstance(target, list):
            assert last == len(target)
            target.append(v)
        else:
            target[last] = v
    else:
        target[last] += v
    return view


def test_preview_update_reports_what_each_delta_changed():
    p = toolstream.Preview()
    assert p.update(b'{"path": "src/ma') == [("set", (), {}), ("set", ("path",), ""), ("append", ("path",), "src/ma")]
    assert p.update(b"in.rs") == [("append", ("path",), "in.rs")]
    assert p.update(b'", "n": [1, {"a": t') == [
        ("set", ("n",), []),
        ("set", ("n", 0), 1),
        ("set", ("n", 1), {}),
    ]
    assert p.update(b"rue}]}") == [("set", ("n", 1, "a"), True)]


@settings(max_examples=100, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=12),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=20,
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=8),
)
# Integers beyond 64 bits stay exact ints, as json.loads gives them (not floats).
@example(value=-9223372036854775809, cuts=[1])
@example(value=[18446744073709551616, -(10**40)], cuts=[3, 1])
def test_preview_changes_applied_in_order_give_the_view(value, cuts):
    data = json.dumps({"v": value}).encode()
    p = toolstream.Preview()
    view = None
    i, k = 0, 0
    while i < len(data):
        n = cuts[k % len(cuts)]
        k += 1
        done = []
        for change in p.update(data[i : i + n]):
            view = apply(view, change)
        i += n
        if i < len(data):
            assert view == p.partial()
    assert view == {"v": value}


def test_numbers_are_what_json_loads_gives():
    text = b'{"big": 123456789012345678901234567890, "neg": -9223372036854775809, "f": 1.5e3, "e": 1E2}'
    (whole,) = toolstream.Preview().push(text)
    assert whole == json.loads(text)
    assert [type(v) for v in whole.values()] == [int, int, float, float]
    assert list(whole) == ["big", "neg", "f", "e"]
    p = toolstream.Preview()
    p.push(text[:-1] + b" ")
    assert p.partial() == json.loads(text)
    args = json.dumps(json.dumps({"id": 2**70, "x": 0.1}))[1:-1]
    sse = (
        'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function",'
        '"function":{"name":"f","arguments":"%s"}}]}}]}\n\ndata: [DONE]\n\n' % args
    ).encode()
    calls = [e for e in toolstream.events([sse], "openai") if e["type"] == "tool_call"]
    assert calls[0]["arguments"] == {"id": 2**70, "x": 0.1}
    assert type(calls[0]["arguments"]["id"]) is int


def test_repair_request():
    body = {"messages": [{"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x":1}{"x":2}'}}]}]}
    fixed, found = toolstream.repair_request(body)
    assert found == [{"path": "/messages/0/tool_calls/0/function/arguments", "problem": "glued", "tool": "f"}]
    assert json.loads(fixed["messages"][0]["tool_calls"][0]["function"]["arguments"]) == {
        "INVALID_JSON": '{"x":1}{"x":2}'
    }


def test_async_events():
    import asyncio

    data = (CAPTURES / "anthropic-tool-use.sse").read_bytes()

    async def chunks():
        for i in range(0, len(data), 10):
            yield data[i : i + 10]

    async def collect():
        return [e async for e in toolstream.aevents(chunks())]

    assert listed(asyncio.run(collect())) == cli_events(CAPTURES / "anthropic-tool-use.sse")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    objects=st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
)
def test_random_chunkings_of_glued_objects_give_the_same_calls(objects, cuts):
    texts = [json.dumps(o, ensure_ascii=False).encode() for o in objects]
    glued = b"".join(texts)
    points = sorted({c % (len(glued) + 1) for c in cuts} | {0, len(glued)})
    s = toolstream.Splitter()
    got = []
    for a, b in zip(points, points[1:]):
        got += s.push(glued[a:b])
    assert s.finish() is None
    assert got == texts
    # The same objects as one call's arguments in an OpenAI stream, cut the same way.
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c", "function": {"name": "f", "arguments": glued.decode()}}]}}]}
    stream = ("data: " + json.dumps(chunk) + "\n\ndata: [DONE]\n\n").encode()
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    events = list(toolstream.events(stream[a:b] for a, b in zip(points, points[1:])))
    calls = [e["arguments_raw"] for e in events if e["type"] == "tool_call"]
    dups = sum(1 for e in events if e["type"] == "duplicate")
    assert len(calls) + dups == len(texts)
    assert calls == [t for i, t in enumerate(texts) if t not in texts[:i]]


class Replay(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


def test_the_openai_sdk_example_runs_against_a_loopback_server():
    Replay.body = (CAPTURES / "gemini-openai-concatenated.sse").read_bytes()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = "http://127.0.0.1:%d/v1" % server.server_address[1]
        out = subprocess.run(
            [sys.executable, str(ROOT / "python" / "examples" / "openai_sdk.py"), base],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout
    finally:
        server.shutdown()
    lines = out.splitlines()
    assert lines[0] == "call call_g1 get_weather {'city': 'Paris'}"
    # The second call's id is made from the first's, in its shape (never call_g1_2).
    made = lines[1].split()[1]
    assert made.startswith("call_") and made[5:].isalnum() and not made[5:].isdigit(), made
    assert not made.startswith("call_g1"), made
    assert lines[1] == "call %s get_weather {'city': 'Tokyo'}" % made
    assert lines[2:] == ["complete"]


TEXT_CALLS = ROOT / "examples" / "text-calls"


@pytest.mark.parametrize("chunk", [1, 7, 64, 0])
def test_text_calls_give_the_cli_events(chunk):
    sample = TEXT_CALLS / "qwen-hermes-calls-in-content.sse"
    request = json.loads((TEXT_CALLS / "request.json").read_text())
    data = sample.read_bytes()
    pieces = [data] if chunk == 0 else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    got = listed(toolstream.events(pieces, text_calls="auto", tools=request))
    out = subprocess.run(
        [BIN, "inspect", "--json", "--text-calls", "auto", "--tools", str(TEXT_CALLS / "request.json"), str(sample)],
        capture_output=True,
        check=True,
    )
    cli = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert got == cli
    calls = [e for e in got if e["type"] == "tool_call"]
    assert [c["arguments"] for c in calls] == [{"city": "Paris"}, {"city": "Tokyo", "unit": "c"}]
    # The tools list alone does as well as the request; without tools it is refused.
    assert listed(toolstream.events(pieces, text_calls="hermes", tools=request["tools"])) == cli
    with pytest.raises(ValueError):
        toolstream.Stream(text_calls="auto")
    with pytest.raises(ValueError):
        toolstream.Stream(text_calls="nope", tools=request)


def readme_python_blocks():
    """The README's ```python blocks, in order, as written."""
    text = (ROOT / "README.md").read_text()
    blocks = []
    for part in text.split("```python\n")[1:]:
        blocks.append(part.split("```", 1)[0])
    return blocks


def test_the_readme_python_snippets_run_as_written(monkeypatch):
    blocks = readme_python_blocks()
    # The proxy's client line, the SDK loop with the classifier, the text-calls loop.
    assert len(blocks) == 3, "the README's Python snippets changed: update this test"
    proxy_line, sdk, text_calls = blocks

    Replay.body = (CAPTURES / "gemini-openai-concatenated.sse").read_bytes()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:%d/v1" % server.server_address[1])
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    ran = []
    scope = {
        "messages": [{"role": "user", "content": "weather in Paris and Tokyo?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
        "run": lambda name, arguments: ran.append((name, arguments)),
        "headers": {"retry-after": "1"},
        "body": b'{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}',
    }
    try:
        exec(compile(sdk, "README.md (the SDK snippet)", "exec"), scope)
    finally:
        server.shutdown()
    assert ran == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]
    assert scope["verdict"]["reason"] == "rate_limit"
    assert scope["verdict"]["should_fallback"] is False

    exec(compile(proxy_line, "README.md (the proxy snippet)", "exec"), {"openai": __import__("openai")})

    class Response:
        def iter_bytes(self):
            data = (TEXT_CALLS / "qwen-hermes-calls-in-content.sse").read_bytes()
            return (data[i : i + 16] for i in range(0, len(data), 16))

    scope = {
        "toolstream": toolstream,
        "response": Response(),
        "request_body": json.loads((TEXT_CALLS / "request.json").read_text()),
    }
    seen = []
    # The snippet's loop body is `...`: run it with the body recording each event instead.
    recording = text_calls.replace("    ...", "    seen.append(event)")
    assert recording != text_calls
    scope["seen"] = seen
    exec(compile(recording, "README.md (the text-calls snippet)", "exec"), scope)
    calls = [e["arguments"] for e in seen if e["type"] == "tool_call"]
    assert calls == [{"city": "Paris"}, {"city": "Tokyo", "unit": "c"}]


@pytest.mark.parametrize("piece", [1, 7, 4096])
def test_the_rewriter_gives_the_client_whole_calls(piece):
    """Rewriter: a stream in, the stream the proxy would send out. Glued chat calls come
    out as two whole calls (the second with an id made from the first's); a Responses
    stream with nothing to change comes out as it came but for its argument deltas, joined;
    a cut stream ends with an error in the provider's shape."""
    def run(api, data, cut=None):
        r = toolstream.Rewriter(api)
        out = b"".join(r.push(data[i : i + piece]) for i in range(0, len(data), piece))
        return out + r.finish(cut)

    out = run("chat", (CAPTURES / "gemini-openai-concatenated.sse").read_bytes())
    calls = [e for e in toolstream.events([out], "openai") if e["type"] == "tool_call"]
    assert [c["arguments"] for c in calls] == [{"city": "Paris"}, {"city": "Tokyo"}]
    assert calls[0]["id"] == "call_g1"
    assert calls[1]["id"].startswith("call_") and not calls[1]["id"].startswith("call_g1")

    # A Responses stream with nothing to change: every event as it came but the argument
    # deltas, joined into one per call; the calls the same.
    body = (CAPTURES / "responses-function-calls.sse").read_bytes()
    out = run("responses", body)

    def others(b):
        return [e for e in b.split(b"\n\n") if b"function_call_arguments.delta" not in e]

    assert others(out) == others(body)
    got = [(e["name"], e["arguments"]) for e in toolstream.events([out], "responses") if e["type"] == "tool_call"]
    want = [(e["name"], e["arguments"]) for e in toolstream.events([body], "responses") if e["type"] == "tool_call"]
    assert got == want and got

    cut = run("anthropic", (CAPTURES / "anthropic-tool-use.sse").read_bytes()[:300], "reset")
    assert b'"type":"error"' in cut and b"message_stop" not in cut
    with pytest.raises(ValueError):
        toolstream.Rewriter("nope")


@pytest.mark.parametrize("piece", [1, 7, 4096])
def test_the_rewriter_takes_text_calls_out_on_every_api(piece):
    """Rewriter with text_calls and the request: a call written into the text comes out
    as the API's call (chat tool_calls, a Messages tool_use block, a Responses
    function_call item), the text without it."""
    request = json.dumps({"tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]}).encode()
    markup = 'Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'

    def run(api, data):
        r = toolstream.Rewriter(api, text_calls="auto", request=request)
        out = b"".join(r.push(data[i : i + piece]) for i in range(0, len(data), piece))
        return out + r.finish()

    chat = (
        b'data: {"choices":[{"index":0,"delta":{"content":' + json.dumps(markup).encode()
        + b'},"finish_reason":null}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    out = run("chat", chat)
    calls = [e for e in toolstream.events([out], "openai") if e["type"] == "tool_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", {"city": "Oslo"})]
    assert b"<tool_call>" not in out and b'"tool_calls"' in out

    def ev(v):
        return ("event: %s\ndata: %s\n\n" % (v["type"], json.dumps(v))).encode()

    messages = b"".join([
        ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": markup}}),
        ev({"type": "content_block_stop", "index": 0}),
        ev({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        ev({"type": "message_stop"}),
    ])
    out = run("anthropic", messages)
    calls = [e for e in toolstream.events([out], "anthropic") if e["type"] == "tool_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", {"city": "Oslo"})]
    assert b'"stop_reason":"tool_use"' in out and b"<tool_call>" not in out

    without = toolstream.Rewriter("anthropic")
    assert without.push(messages) + without.finish() == messages


def test_repair_true_gives_a_trailing_comma_call_with_its_repairs():
    """repair=True: a call whose arguments end in a trailing comma is a tool_call with its
    repairs listed; without it, a tool_call_error as before."""
    body = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function",'
        b'"function":{"name":"write","arguments":"{\\"path\\": \\"a.rs\\",}"}}]},"finish_reason":null}]}\n\n'
        b'data: [DONE]\n\n'
    )
    strict = [e["type"] for e in toolstream.events([body], "openai")]
    assert "tool_call_error" in strict and "tool_call" not in strict
    calls = [e for e in toolstream.events([body], "openai", repair=True) if e["type"] == "tool_call"]
    assert calls[0]["arguments"] == {"path": "a.rs"}
    assert calls[0]["repairs"] == [{"kind": "trailing_comma", "offset": 15, "replaced": ",", "with": ""}]


def test_repair_true_with_tools_coerces_by_the_declared_schema():
    """repair=True and tools=: a string where the tool's schema says integer becomes the
    integer, reported as a coerce repair with its path; a string parameter is left."""
    body = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function",'
        b'"function":{"name":"read","arguments":"{\\"path\\": \\"7\\", \\"line\\": \\"7\\"}"}}]},"finish_reason":null}]}\n\n'
        b'data: [DONE]\n\n'
    )
    tools = [{"type": "function", "function": {"name": "read", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "line": {"type": "integer"}}}}}]
    calls = [e for e in toolstream.events([body], "openai", tools=tools, repair=True) if e["type"] == "tool_call"]
    assert calls[0]["arguments"] == {"path": "7", "line": 7}
    assert [(r["kind"], r["path"]) for r in calls[0]["repairs"]] == [("coerce", "/line")]
    plain = [e for e in toolstream.events([body], "openai", tools=tools) if e["type"] == "tool_call"]
    assert plain[0]["arguments"] == {"path": "7", "line": "7"} and "repairs" not in plain[0]


def test_repair_arguments_repairs_and_refuses():
    got = toolstream.repair_arguments("{'a': 1,}")
    assert json.loads(got["arguments"]) == {"a": 1}
    assert [r["kind"] for r in got["repairs"]] == ["single_quotes", "trailing_comma"]
    cut = toolstream.repair_arguments(b'{"path": "src/ma')
    assert cut["arguments"] is None and cut["refused"]["reason"] == "truncated"
    only = toolstream.repair_arguments("{'a': 1,}", kinds=["trailing_comma"])
    assert only["arguments"] is None and only["refused"]["reason"] == "kind_off"
    with pytest.raises(ValueError):
        toolstream.repair_arguments("{}", kinds=["no_such_kind"])
