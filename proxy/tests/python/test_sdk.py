"""The official `openai` and `anthropic` Python SDKs through `toolstream-proxy`, over
loopback, against a fake upstream that replays the shipped captures in 1-, 7-, 64- and
4096-byte writes (and cuts and errors): what the SDKs hand the agent is each capture's
expected calls.

Run by `.ci/run` in a venv it creates:
    TOOLSTREAM_PROXY=target/debug/toolstream-proxy pytest proxy/tests/python
"""

import http.server
import json
import os
import pathlib
import re
import shlex
import socket
import subprocess
import threading
import time
import urllib.request

import anthropic
import openai
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CAPTURES = ROOT / "examples" / "captures"
# The command that runs the proxy: a binary, or a command line such as `toolstream proxy`
# (CI runs these tests against the `toolstream` that the README's install command gives).
PROXY = shlex.split(
    os.environ.get("TOOLSTREAM_PROXY", shlex.quote(str(ROOT / "target" / "debug" / "toolstream-proxy")))
)

OPENAI_CAPTURES = [
    "openai-parallel-calls",
    "openai-truncated-arguments",
    "gemini-openai-concatenated",
    "gemini-openai-thought-signatures",
    "mistral-no-index",
    "ollama-index-reuse",
]
ANTHROPIC_CAPTURES = ["anthropic-tool-use", "anthropic-thinking-tool-use"]
WRITES = [1, 7, 64, 4096]


class Upstream:
    """A loopback HTTP server answering every request with `self.script` (or what it
    returns for the request, when it is a function), and keeping each request's body."""

    def __init__(self):
        self.script = None
        self.requests = []
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                upstream.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                script = upstream.script
                if callable(script):
                    script = script(upstream.requests[-1])
                status, ctype, body, write, cut = script
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                data = body if cut is None else body[:cut]
                for i in range(0, len(data), write):
                    piece = data[i : i + write]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                if cut is None:
                    self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def stack():
    yield from proxy_stack()


@pytest.fixture(scope="module")
def text_stack():
    yield from proxy_stack("--text-calls", "auto")


@pytest.fixture(scope="module")
def repair_stack():
    yield from proxy_stack("--repair")


@pytest.fixture(scope="module")
def fallback_stack():
    """The proxy with a second upstream as its --fallback: (first, second, base)."""
    second = Upstream()
    for up, base in proxy_stack("--fallback", second.url):
        yield up, second, base
    second.server.shutdown()


def proxy_stack(*options):
    """A fake upstream and the proxy in front of it, started with `options`."""
    up = Upstream()
    port = free_port()
    proc = subprocess.Popen(
        [*PROXY, "--listen", "127.0.0.1:%d" % port, "--upstream", up.url, *options],
        stderr=subprocess.DEVNULL,
    )
    base = "http://127.0.0.1:%d" % port
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/healthz", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("the proxy did not start")
    yield up, base
    proc.kill()
    proc.wait()
    up.server.shutdown()


def expected(name):
    """Each call (name, arguments) of the capture's hand-written expected file; a failed
    call with the bytes the provider sent, which the proxy forwards as they came."""
    out = []
    for line in (CAPTURES / (name + ".expected.jsonl")).read_text().splitlines():
        ev = json.loads(line)
        if ev["type"] == "tool_call":
            out.append((ev["name"], ev["arguments"]))
        elif ev["type"] == "tool_call_error":
            out.append((ev["name"], parsed(ev["raw"])))
    return out


def parsed(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def openai_calls(base, **kw):
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS, stream=True, **kw
    )
    calls = {}
    for chunk in stream:
        for choice in chunk.choices:
            for tc in choice.delta.tool_calls or []:
                c = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                if tc.id:
                    c["id"] = tc.id
                if tc.function and tc.function.name:
                    c["name"] += tc.function.name
                if tc.function and tc.function.arguments:
                    c["arguments"] += tc.function.arguments
    return [calls[i] for i in sorted(calls)]


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("name", OPENAI_CAPTURES)
def test_openai_sdk_gets_the_expected_calls(stack, name, write):
    up, base = stack
    up.script = (200, "text/event-stream", (CAPTURES / (name + ".sse")).read_bytes(), write, None)
    calls = openai_calls(base)
    assert [(c["name"], parsed(c["arguments"])) for c in calls] == expected(name)
    ids = [c["id"] for c in calls]
    assert all(ids) and len(set(ids)) == len(ids)


def assert_made_id(made, original, prefix):
    """An id the proxy made from `original`: the same prefix, letters and digits after it,
    not the original plus a suffix, nothing after its last `_` or `-` all digits."""
    assert made.startswith(prefix) and made != original, made
    body = made[len(prefix):]
    assert body.isalnum() and not body.isdigit(), made
    assert not made.startswith(original + "_") and not made.startswith(original + "-"), made
    assert not re.search(r"[_-][0-9]+$", made), made


def test_openai_sdk_sees_glued_calls_as_separate_calls(stack):
    up, base = stack
    up.script = (
        200,
        "text/event-stream",
        (CAPTURES / "gemini-openai-concatenated.sse").read_bytes(),
        64,
        None,
    )
    calls = openai_calls(base)
    ids = [c["id"] for c in calls]
    assert ids[0] == "call_g1"
    assert_made_id(ids[1], "call_g1", "call_")


def test_openai_sdk_raises_on_a_cut_stream(stack):
    up, base = stack
    body = (CAPTURES / "openai-parallel-calls.sse").read_bytes()
    up.script = (200, "text/event-stream", body, 64, len(body) // 2)
    with pytest.raises(openai.APIError) as e:
        openai_calls(base)
    assert "interrupted" in str(e.value)


def test_openai_sdk_non_streaming_glued_arguments_become_two_calls(stack):
    up, base = stack
    completion = {
        "id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "f", "arguments": "{\"a\":1}{\"a\":2}"}}]}}],
    }
    up.script = (200, "application/json", json.dumps(completion).encode(), 4096, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    calls = r.choices[0].message.tool_calls
    assert [json.loads(c.function.arguments) for c in calls] == [{"a": 1}, {"a": 2}]
    assert calls[0].id == "c1"
    assert_made_id(calls[1].id, "c1", "")
    assert r.choices[0].finish_reason == "tool_calls"


def test_openai_sdk_history_with_broken_arguments_is_repaired(stack):
    up, base = stack
    up.script = (200, "text/event-stream", (CAPTURES / "openai-parallel-calls.sse").read_bytes(), 4096, None)
    up.requests.clear()
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}{\"x\":2}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "done"},
    ]
    raw = client.chat.completions.with_raw_response.create(model="m", messages=messages, stream=True)
    assert "/messages/1/tool_calls/0/function/arguments" in raw.headers["toolstream-repaired"]
    for _ in raw.parse():
        pass
    sent = up.requests[-1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == {"INVALID_JSON": "{\"x\":1}{\"x\":2}"}


def test_openai_sdk_error_carries_the_verdict(stack):
    up, base = stack
    body = b'{"error":{"message":"invalid tool call arguments"}}'
    up.script = (400, "application/json", body, 4096, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert e.value.response.headers["toolstream-reason"] == "model_output"
    assert e.value.response.headers["toolstream-action"] == "retry_with_feedback"


def anthropic_calls(base):
    client = anthropic.Anthropic(base_url=base, api_key="sk-test", max_retries=0)
    with client.messages.stream(
        model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        final = stream.get_final_message()
    return [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"]


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("name", ANTHROPIC_CAPTURES)
def test_anthropic_sdk_gets_the_expected_calls(stack, name, write):
    up, base = stack
    up.script = (200, "text/event-stream", (CAPTURES / (name + ".sse")).read_bytes(), write, None)
    calls = anthropic_calls(base)
    assert [(n, i) for _, n, i in calls] == expected(name)
    assert all(c[0] for c in calls)


def test_anthropic_sdk_raises_on_an_error_in_the_stream(stack):
    up, base = stack
    up.script = (
        200,
        "text/event-stream",
        (CAPTURES / "anthropic-overloaded-midstream.sse").read_bytes(),
        64,
        None,
    )
    with pytest.raises(anthropic.APIStatusError):
        anthropic_calls(base)


def test_anthropic_sdk_raises_on_a_cut_stream(stack):
    up, base = stack
    body = (CAPTURES / "anthropic-tool-use.sse").read_bytes()
    up.script = (200, "text/event-stream", body, 64, len(body) // 2)
    with pytest.raises(anthropic.APIError):
        anthropic_calls(base)


TEXT_CALLS = ROOT / "examples" / "text-calls"


def text_sample():
    """The shipped sample of calls written into the content: its request, stream, and the
    text and calls of its hand-written expected file."""
    request = json.loads((TEXT_CALLS / "request.json").read_text())
    body = (TEXT_CALLS / "qwen-hermes-calls-in-content.sse").read_bytes()
    text, calls = "", []
    for line in (TEXT_CALLS / "qwen-hermes-calls-in-content.expected.jsonl").read_text().splitlines():
        ev = json.loads(line)
        if ev["type"] == "text":
            text += ev["text"]
        elif ev["type"] == "tool_call":
            calls.append((ev["name"], ev["arguments"]))
    return request, body, text, calls


@pytest.mark.parametrize("write", WRITES)
def test_openai_sdk_gets_calls_written_into_the_text_as_tool_calls(text_stack, write):
    up, base = text_stack
    request, body, text, calls = text_sample()
    up.script = (200, "text/event-stream", body, write, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model=request["model"], messages=request["messages"], tools=request["tools"], stream=True
    )
    content, got, finish = "", {}, None
    for chunk in stream:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                got[tc.index] = (tc.id, tc.function.name, json.loads(tc.function.arguments))
            finish = choice.finish_reason or finish
    assert content == text
    assert [(n, a) for _, n, a in (got[i] for i in sorted(got))] == calls
    ids = [i for i, _, _ in got.values()]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == len(ids)
    assert finish == "tool_calls"


def test_openai_sdk_text_calls_of_an_undeclared_tool_stay_text(text_stack):
    up, base = text_stack
    request, body, _, _ = text_sample()
    up.script = (200, "text/event-stream", body, 64, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    tools = [{"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}]
    stream = client.chat.completions.create(
        model="m", messages=request["messages"], tools=tools, stream=True
    )
    content = ""
    for chunk in stream:
        for choice in chunk.choices:
            assert not choice.delta.tool_calls
            content += choice.delta.content or ""
    assert "<tool_call>" in content and '"get_weather"' in content


def test_openai_sdk_non_streaming_text_calls(text_stack):
    up, base = text_stack
    request, _, _, _ = text_sample()
    content = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    completion = {
        "id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }
    up.script = (200, "application/json", json.dumps(completion).encode(), 4096, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    r = client.chat.completions.create(model="m", messages=request["messages"], tools=request["tools"])
    m = r.choices[0].message
    assert m.content == "Checking.\n"
    assert [(c.function.name, json.loads(c.function.arguments)) for c in m.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert r.choices[0].finish_reason == "tool_calls"


def content_deltas(body):
    """The content deltas of a chat stream, in order."""
    deltas = []
    for line in body.decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            for choice in json.loads(line[6:])["choices"]:
                if choice["delta"].get("content"):
                    deltas.append(choice["delta"]["content"])
    return deltas


def anthropic_text_stream(deltas):
    """An Anthropic Messages stream of one text block with these text deltas."""
    def ev(v):
        return "event: %s\ndata: %s\n\n" % (v["type"], json.dumps(v))

    out = ev({"type": "message_start", "message": {"id": "msg_1", "type": "message",
              "role": "assistant", "content": [], "model": "m", "stop_reason": None,
              "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}})
    out += ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    for d in deltas:
        out += ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}})
    out += ev({"type": "content_block_stop", "index": 0})
    out += ev({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
               "usage": {"output_tokens": 20}})
    out += ev({"type": "message_stop"})
    return out.encode()


@pytest.mark.parametrize("write", WRITES)
def test_anthropic_sdk_gets_calls_written_into_the_text_as_tool_use_blocks(text_stack, write):
    up, base = text_stack
    request, body, text, calls = text_sample()
    # The sample's content deltas, as a Messages text block.
    deltas = content_deltas(body)
    up.script = (200, "text/event-stream", anthropic_text_stream(deltas), write, None)
    tools = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]}
             for t in request["tools"]]
    client = anthropic.Anthropic(base_url=base, api_key="sk-test", max_retries=0)
    with client.messages.stream(model="m", max_tokens=100, tools=tools,
                                messages=[{"role": "user", "content": "weather?"}]) as stream:
        final = stream.get_final_message()
    got_text = "".join(b.text for b in final.content if b.type == "text")
    assert got_text == text
    assert all(b.text for b in final.content if b.type == "text"), "no empty text block"
    uses = [b for b in final.content if b.type == "tool_use"]
    assert [(b.name, b.input) for b in uses] == calls
    ids = [b.id for b in uses]
    assert all(i.startswith("toolu_") and not re.search(r"[_-][0-9]+$", i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert final.stop_reason == "tool_use"


@pytest.mark.parametrize("write", [1, 64, 4096])
@pytest.mark.parametrize("name", ["responses-function-calls", "responses-encrypted-reasoning"])
def test_openai_responses_sdk_through_the_proxy(stack, name, write):
    """The Responses API passes through: the SDK's events and final response are the
    capture's (its function calls, whole), but each valid call's argument deltas, which
    come as one delta of the whole arguments."""
    up, base = stack
    body = (CAPTURES / (name + ".sse")).read_bytes()
    up.script = (200, "text/event-stream", body, write, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    stream = client.responses.create(model="m", input="hi", stream=True)
    events = list(stream)
    kinds = [event.type for event in events]
    assert kinds[-1] == "response.completed"
    wanted = []
    for line in body.decode().splitlines():
        if line.startswith("data:") and line[len("data:"):].strip() not in ("", "[DONE]"):
            kind = json.loads(line[len("data:"):])["type"]
            if not (kind == "response.function_call_arguments.delta" and wanted and wanted[-1] == kind):
                wanted.append(kind)
    assert kinds == wanted
    streamed = {}
    for e in events:
        if e.type == "response.function_call_arguments.delta":
            streamed[e.item_id] = streamed.get(e.item_id, "") + e.delta
        elif e.type == "response.function_call_arguments.done":
            assert streamed.get(e.item_id, e.arguments) == e.arguments
    names = {
        e.output_index: e.item.name
        for e in events
        if e.type == "response.output_item.added" and e.item.type == "function_call"
    }
    calls = [
        (names[e.output_index], json.loads(e.arguments))
        for e in events
        if e.type == "response.function_call_arguments.done"
    ]
    assert calls == [(n, a) for (n, a) in expected(name) if isinstance(a, dict)]


def test_openai_responses_sdk_raises_on_a_cut_stream(stack):
    """A Responses stream the upstream cuts reaches the SDK cut: it raises, as direct."""
    up, base = stack
    body = (CAPTURES / "responses-function-calls.sse").read_bytes()
    up.script = (200, "text/event-stream", body, 64, len(body) // 2 + 3)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(Exception):
        for event in client.responses.create(model="m", input="hi", stream=True):
            pass


def test_openai_sdk_n_2_keeps_each_choice_calls(stack):
    """`n = 2`: each choice's calls reach the SDK in that choice, numbered from 0."""
    up, base = stack
    def chunk(choice, delta, finish=None):
        return "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 1,
            "model": "m", "choices": [{"index": choice, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    call = lambda i, args: {"tool_calls": [{"index": 0, "id": "c%d" % i, "type": "function",
        "function": {"name": "f", "arguments": args}}]}
    body = (chunk(0, call(0, '{"a":0}')) + chunk(1, call(1, '{"a":1}{"a":2}'))
            + chunk(0, {}, "tool_calls") + chunk(1, {}, "tool_calls") + "data: [DONE]\n\n")
    up.script = (200, "text/event-stream", body.encode(), 7, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    calls = {}
    for c in client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                            tools=TOOLS, stream=True, n=2):
        for choice in c.choices:
            for tc in choice.delta.tool_calls or []:
                acc = calls.setdefault((choice.index, tc.index), "")
                calls[(choice.index, tc.index)] = acc + (tc.function.arguments or "")
    assert calls == {(0, 0): '{"a":0}', (1, 0): '{"a":1}', (1, 1): '{"a":2}'}


def responses_stream(calls):
    """A Responses stream: an encrypted reasoning item, function calls with these
    arguments (each in two deltas), a custom tool call and an event type no SDK knows."""
    events, output = [], []

    def add(kind, **fields):
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    add("response.created", response={"id": "resp_1", "object": "response", "status": "in_progress",
                                      "model": "m", "output": []})
    reasoning = {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA==", "summary": []}
    add("response.output_item.added", output_index=0, item=reasoning)
    add("response.output_item.done", output_index=0, item=reasoning)
    output.append(reasoning)
    for k, args in enumerate(calls, start=1):
        item = {"id": "fc_%d" % k, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": "call_%d" % k, "name": "get_weather"}
        add("response.output_item.added", output_index=k, item=item)
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            add("response.function_call_arguments.delta", item_id=item["id"], output_index=k, delta=piece)
        add("response.function_call_arguments.done", item_id=item["id"], output_index=k, arguments=args)
        done = dict(item, status="completed", arguments=args)
        add("response.output_item.done", output_index=k, item=done)
        output.append(done)
    at = len(calls) + 1
    custom = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_c", "name": "apply_patch",
              "input": "*** Begin Patch"}
    add("response.output_item.added", output_index=at, item=custom)
    add("response.something_new", output_index=at, x=[1, 2])
    add("response.output_item.done", output_index=at, item=custom)
    output.append(custom)
    add("response.completed", response={"id": "resp_1", "object": "response", "status": "completed",
                                        "model": "m", "output": output,
                                        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}})
    return "".join("event: %s\ndata: %s\n\n" % (k, json.dumps(d)) for k, d in events).encode()


GLUED = '{"city": "Oslo"}{"city": "Rome"}{"city": "Oslo"}'


@pytest.mark.parametrize("write", [1, 7, 64, 4096])
def test_openai_responses_glued_calls_become_items(stack, write):
    """Glued arguments in a Responses function_call: one item per object, through
    `responses.create(stream=True)` and through the `responses.stream` helper (which
    accumulates the items and checks the events' order); the final response lists the same
    items; the reasoning item, the custom tool call and the unknown event come through."""
    up, base = stack
    up.script = (200, "text/event-stream", responses_stream([GLUED, '{"city": "Paris"}']), write, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    events = list(client.responses.create(model="m", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    seqs = [e.sequence_number for e in events]
    assert seqs == sorted(set(seqs))
    done = [e.item for e in events if e.type == "response.output_item.done"]
    calls = [(i.call_id, json.loads(i.arguments)) for i in done if i.type == "function_call"]
    assert [a for _, a in calls] == [{"city": "Oslo"}, {"city": "Rome"}, {"city": "Paris"}]
    assert calls[0][0] == "call_1" and calls[2][0] == "call_2"
    assert_made_id(calls[1][0], "call_1", "call_")
    assert [i.type for i in done] == ["reasoning", "function_call", "function_call", "function_call",
                                      "custom_tool_call"]
    assert done[0].encrypted_content == "gAAAA=="
    assert any(e.type == "response.something_new" for e in events)
    final = events[-1].response.output
    assert [(i.call_id, i.arguments) for i in final if i.type == "function_call"] == [
        (i.call_id, i.arguments) for i in done if i.type == "function_call"]

    with client.responses.stream(model="m", input="hi") as stream:
        for _ in stream:
            pass
        response = stream.get_final_response()
    got = [(i.call_id, json.loads(i.arguments)) for i in response.output if i.type == "function_call"]
    assert got == calls


def responses_text_stream(deltas):
    """A Responses stream of one message whose output_text streams these deltas."""
    events = []

    def add(kind, **fields):
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    text = "".join(deltas)
    add("response.created", response={"id": "resp_t", "object": "response", "status": "in_progress",
                                      "model": "m", "output": []})
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    add("response.output_item.added", output_index=0, item=item)
    part = {"type": "output_text", "annotations": [], "text": ""}
    add("response.content_part.added", item_id="msg_1", output_index=0, content_index=0, part=part)
    for d in deltas:
        add("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=d,
            logprobs=[])
    add("response.output_text.done", item_id="msg_1", output_index=0, content_index=0, text=text,
        logprobs=[])
    add("response.content_part.done", item_id="msg_1", output_index=0, content_index=0,
        part=dict(part, text=text))
    done = dict(item, status="completed", content=[dict(part, text=text)])
    add("response.output_item.done", output_index=0, item=done)
    add("response.completed", response={"id": "resp_t", "object": "response", "status": "completed",
                                        "model": "m", "output": [done],
                                        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}})
    return "".join("event: %s\ndata: %s\n\n" % (k, json.dumps(d)) for k, d in events).encode()


@pytest.mark.parametrize("write", WRITES)
def test_openai_responses_text_calls_become_function_call_items(text_stack, write):
    """Calls written into a message's output_text, with `--text-calls auto`: the message
    keeps the text without them, each call is a function_call item after it, through
    `responses.create(stream=True)` and the `responses.stream` helper."""
    up, base = text_stack
    request, body, text, calls = text_sample()
    deltas = content_deltas(body)
    up.script = (200, "text/event-stream", responses_text_stream(deltas), write, None)
    tools = [dict(t["function"], type="function") for t in request["tools"]]
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    events = list(client.responses.create(model="m", input="weather?", tools=tools, stream=True))
    assert events[-1].type == "response.completed"
    seqs = [e.sequence_number for e in events]
    assert seqs == sorted(set(seqs))
    got_text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert got_text == text
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert done[0].type == "message" and done[0].content[0].text == text
    fc = [i for i in done if i.type == "function_call"]
    assert [(i.name, json.loads(i.arguments)) for i in fc] == calls
    ids = [i.call_id for i in fc]
    assert all(i.startswith("call_") and not re.search(r"[_-][0-9]+$", i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert [i.id for i in events[-1].response.output] == [i.id for i in done]

    with client.responses.stream(model="m", input="weather?", tools=tools) as stream:
        for _ in stream:
            pass
        response = stream.get_final_response()
    assert response.output_text == text
    got = [(i.name, json.loads(i.arguments)) for i in response.output if i.type == "function_call"]
    assert got == calls


def test_openai_responses_non_streaming_glued_calls_become_items(stack):
    """A non-streaming Responses body: glued arguments become one function_call item each,
    through `responses.create` without `stream`; the rest of the output as it came."""
    up, base = stack
    body = {"id": "resp_n", "object": "response", "status": "completed", "model": "m",
            "created_at": 1, "output": [
                {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA==", "summary": []},
                {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
                 "name": "get_weather", "arguments": GLUED}],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}
    up.script = (200, "application/json", json.dumps(body).encode(), 4096, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    r = client.responses.create(model="m", input="hi")
    calls = [(i.call_id, json.loads(i.arguments)) for i in r.output if i.type == "function_call"]
    assert [a for _, a in calls] == [{"city": "Oslo"}, {"city": "Rome"}]
    assert calls[0][0] == "call_1"
    assert_made_id(calls[1][0], "call_1", "call_")
    assert r.output[0].encrypted_content == "gAAAA=="


def test_anthropic_sdk_non_streaming_text_calls(text_stack):
    """A non-streaming Messages body with a call written into its text, with
    `--text-calls auto`: `messages.create` gets a tool_use block in its place."""
    up, base = text_stack
    message = {"id": "msg_n", "type": "message", "role": "assistant", "model": "m",
               "content": [{"type": "text", "text": 'Checking. <tool_call>{"name": "get_weather", '
                                                    '"arguments": {"city": "Paris"}}</tool_call>'}],
               "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    up.script = (200, "application/json", json.dumps(message).encode(), 4096, None)
    client = anthropic.Anthropic(base_url=base, api_key="sk-test", max_retries=0)
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    r = client.messages.create(model="m", max_tokens=10, tools=tools,
                               messages=[{"role": "user", "content": "weather?"}])
    assert [b.type for b in r.content] == ["text", "tool_use"]
    assert r.content[0].text == "Checking. "
    assert (r.content[1].name, r.content[1].input) == ("get_weather", {"city": "Paris"})
    assert r.content[1].id.startswith("toolu_") and not re.search(r"[_-][0-9]+$", r.content[1].id)
    assert r.stop_reason == "tool_use"


@pytest.mark.parametrize("write", [1, 7, 64, 4096])
def test_openai_responses_broken_call_comes_as_the_provider_sent_it(stack, write):
    """A function_call whose arguments never close: the SDK gets the item with the bytes
    the provider sent and `status: incomplete` (the agent's own handling applies), beside
    the valid call, whose id is untouched; the final output lists the same."""
    up, base = stack
    up.script = (200, "text/event-stream", responses_stream(['{"city": "Par', '{"city": "Rome"}']), write, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    with client.responses.stream(model="m", input="hi") as stream:
        for _ in stream:
            pass
        response = stream.get_final_response()
    calls = [(i.call_id, i.arguments, i.status) for i in response.output if i.type == "function_call"]
    assert calls == [("call_1", '{"city": "Par', "incomplete"), ("call_2", '{"city": "Rome"}', "completed")]
    assert [i.type for i in response.output] == ["reasoning", "function_call", "function_call", "custom_tool_call"]


def test_openai_responses_cut_stream_raises(stack):
    """A Responses stream cut after a call: the SDK raises, never a clean completion."""
    up, base = stack
    body = responses_stream([GLUED])
    up.script = (200, "text/event-stream", body, 64, len(body) - 40)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(openai.APIError):
        for _ in client.responses.create(model="m", input="hi", stream=True):
            pass


def test_openai_responses_follow_up_on_a_stored_response_knows_the_made_calls(stack):
    """With `store`, the upstream keeps the response as it sent it, glued call and all. A
    follow-up that names it in `previous_response_id` and answers the call the proxy split
    off is refused by the API ("No tool call found for function call output with call_id
    ..."), as this upstream does; through the proxy the made call goes into the input, so
    the follow-up succeeds."""
    up, base = stack
    stored = {}

    def refusal(request):
        known = set(stored.get(request.get("previous_response_id"), []))
        known |= {i["call_id"] for i in request["input"] if i.get("type") == "function_call"}
        for i in request["input"]:
            if i.get("type") == "function_call_output" and i["call_id"] not in known:
                return "No tool call found for function call output with call_id %s." % i["call_id"]
        return None

    def script(request):
        if request.get("previous_response_id"):
            why = refusal(request)
            if why:
                body = {"error": {"message": why, "type": "invalid_request_error", "param": "input", "code": None}}
                return (400, "application/json", json.dumps(body).encode(), 4096, None)
            return (200, "text/event-stream", responses_stream([]), 4096, None)
        stored["resp_1"] = ["call_1", "call_2"]
        return (200, "text/event-stream", responses_stream([GLUED, '{"city": "Paris"}']), 64, None)

    up.script = script
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    events = list(client.responses.create(model="m", input="hi", stream=True, store=True))
    calls = [e.item for e in events if e.type == "response.output_item.done" and e.item.type == "function_call"]
    assert len(calls) == 3
    outputs = [{"type": "function_call_output", "call_id": c.call_id, "output": "ok"} for c in calls]
    # The upstream refuses these outputs as they are: the split call is unknown to it.
    assert "No tool call found" in (refusal({"previous_response_id": "resp_1", "input": outputs}) or "")
    with client.responses.with_streaming_response.create(
        model="m", previous_response_id="resp_1", input=outputs, stream=True
    ) as raw:
        assert raw.headers.get("toolstream-continued") == "1"
        raw.read()
    follow = list(client.responses.create(model="m", previous_response_id="resp_1", input=outputs, stream=True))
    assert follow[-1].type == "response.completed"
    sent = up.requests[-1]["input"]
    assert [(i["type"], i["call_id"]) for i in sent] == [
        ("function_call_output", "call_1"),
        ("function_call", calls[1].call_id),
        ("function_call_output", calls[1].call_id),
        ("function_call_output", "call_2"),
    ]
    assert json.loads(sent[1]["arguments"]) == {"city": "Rome"}


def responses_events(output_items, streamed):
    """A Responses stream whose output is `output_items`, each announced, streamed by
    `streamed(item, index, add)` and closed; the response object complete enough for
    clients that read it whole."""
    events = []

    def add(kind, **fields):
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    response = {"id": "resp_a", "object": "response", "created_at": 0, "model": "m",
                "status": "in_progress", "output": [], "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": []}
    add("response.created", response=response)
    for k, item in enumerate(output_items):
        start = dict(item, status="in_progress")
        if item["type"] == "function_call":
            start["arguments"] = ""
        if item["type"] == "message":
            start["content"] = []
        add("response.output_item.added", output_index=k, item=start)
        streamed(item, k, add)
        add("response.output_item.done", output_index=k, item=item)
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
             "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    add("response.completed", response=dict(response, status="completed", output=output_items, usage=usage))
    return "".join("event: %s\ndata: %s\n\n" % (k, json.dumps(d)) for k, d in events).encode()


def stream_parts(item, k, add):
    if item["type"] == "function_call":
        args = item["arguments"]
        for piece in (args[: len(args) // 2], args[len(args) // 2:]):
            add("response.function_call_arguments.delta", item_id=item["id"], output_index=k, delta=piece)
        add("response.function_call_arguments.done", item_id=item["id"], output_index=k, arguments=args)
    elif item["type"] == "message":
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        add("response.content_part.added", item_id=item["id"], output_index=k, content_index=0, part=part)
        add("response.output_text.delta", item_id=item["id"], output_index=k, content_index=0, delta=text, logprobs=[])
        add("response.output_text.done", item_id=item["id"], output_index=k, content_index=0, text=text, logprobs=[])
        add("response.content_part.done", item_id=item["id"], output_index=k, content_index=0,
            part=dict(part, text=text))


def run_weather_agent(base, question):
    """The OpenAI Agents SDK's streamed tool loop on the Responses API through the proxy at
    `base`, with one tool, get_weather: (the final output or the exception it raised, the
    cities the tool ran for)."""
    import asyncio

    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    ran = []

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return "sunny in " + city

    client = openai.AsyncOpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    agent = Agent(name="weather", instructions="Answer.", tools=[get_weather],
                  model=OpenAIResponsesModel(model="m", openai_client=client))

    async def run():
        result = Runner.run_streamed(agent, question)
        async for _ in result.stream_events():
            pass
        return result.final_output

    try:
        out = asyncio.run(run())
    except Exception as e:  # noqa: BLE001 - the SDK's own failure is the outcome
        out = e
    return out, ran


def test_openai_agents_sdk_runs_both_glued_calls(stack):
    """The OpenAI Agents SDK (Responses API, streamed) in a real tool loop through the
    proxy: a function_call whose arguments glue two calls runs both tools, the next request
    carries both calls and both results (the upstream refuses an output for a call it
    cannot see, as the API does), and the loop ends with the final answer."""
    up, base = stack
    glued = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
             "name": "get_weather", "arguments": '{"city": "Oslo"}{"city": "Rome"}'}
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}

    def script(request):
        items = [i for i in request["input"] if isinstance(i, dict)]
        outputs = [i for i in items if i.get("type") == "function_call_output"]
        if not outputs:
            return (200, "text/event-stream", responses_events([glued], stream_parts), 64, None)
        known = {i["call_id"] for i in items if i.get("type") == "function_call"}
        missing = [o["call_id"] for o in outputs if o["call_id"] not in known]
        if missing:
            body = {"error": {"message": "No tool call found for function call output with call_id %s." % missing[0],
                              "type": "invalid_request_error", "param": "input", "code": None}}
            return (400, "application/json", json.dumps(body).encode(), 4096, None)
        return (200, "text/event-stream", responses_events([answer], stream_parts), 64, None)

    up.script = script
    out, ran = run_weather_agent(base, "Weather in Oslo and Rome?")
    assert out == "Done.", out
    assert sorted(ran) == ["Oslo", "Rome"]
    second = up.requests[-1]["input"]
    calls = [i for i in second if isinstance(i, dict) and i.get("type") == "function_call"]
    assert [json.loads(c["arguments"]) for c in calls] == [{"city": "Oslo"}, {"city": "Rome"}]


TRAILING = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
    b'{"role":"assistant","tool_calls":[{"index":0,"id":"call_t","type":"function","function":'
    b'{"name":"write","arguments":"{\\"path\\": \\"a.rs\\", \\"lines\\": [1, 2,],}"}}]},"finish_reason":null}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
)


def chat_calls_and_comments(base, up, write):
    up.script = (200, "text/event-stream", TRAILING, write, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    got = {}
    with client.chat.completions.with_streaming_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    ) as r:
        raw = b"".join(r.iter_bytes())
    for line in raw.decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                for tc in choice["delta"].get("tool_calls") or []:
                    got.setdefault(tc["index"], "")
                    got[tc["index"]] += tc["function"].get("arguments") or ""
    return got, [l for l in raw.decode().splitlines() if l.startswith(":")]


@pytest.mark.parametrize("write", [1, 64, 4096])
def test_openai_sdk_with_repair_gets_a_trailing_comma_call_valid(repair_stack, stack, write):
    """--repair: a call whose arguments end in trailing commas reaches the agent valid, the
    repairs in an SSE comment; without it, the bytes as sent, annotated as a failure."""
    up, base = repair_stack
    got, comments = chat_calls_and_comments(base, up, write)
    assert json.loads(got[0]) == {"path": "a.rs", "lines": [1, 2]}
    assert any("toolstream repaired call #0" in c and "trailing_comma" in c for c in comments), comments
    up, base = stack
    got, comments = chat_calls_and_comments(base, up, write)
    assert got[0] == '{"path": "a.rs", "lines": [1, 2,],}'
    assert any("tool_call_error" in c for c in comments), comments


COERCE = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
    b'{"role":"assistant","tool_calls":[{"index":0,"id":"call_c","type":"function","function":'
    b'{"name":"read","arguments":"{\\"path\\": \\"a.rs\\", \\"line\\": \\"12\\", \\"all\\": \\"true\\"}"}}]},'
    b'"finish_reason":null}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
)
READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "line": {"type": "integer"}, "all": {"type": "boolean"}},
            "required": ["path", "line"],
        },
    },
}


@pytest.mark.parametrize("write", [1, 64, 4096])
def test_openai_sdk_with_repair_gets_a_call_coerced_by_the_declared_schema(repair_stack, stack, write):
    """--repair with the request's tools: strings where the tool's schema says integer and
    boolean reach the agent as those types, each coercion in the comment with its path; a
    string parameter is left; without --repair, the arguments as sent."""
    for (up, base), coerced in [(repair_stack, True), (stack, False)]:
        up.script = (200, "text/event-stream", COERCE, write, None)
        client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        with client.chat.completions.with_streaming_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=[READ_TOOL], stream=True
        ) as r:
            raw = b"".join(r.iter_bytes()).decode()
        args = ""
        for line in raw.splitlines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    for tc in choice["delta"].get("tool_calls") or []:
                        args += tc["function"].get("arguments") or ""
        comments = [l for l in raw.splitlines() if l.startswith(":")]
        if coerced:
            assert json.loads(args) == {"path": "a.rs", "line": 12, "all": True}
            note = [c for c in comments if "toolstream repaired call #0" in c]
            assert note and "coerce" in note[0] and "/line" in note[0] and "/all" in note[0], comments
        else:
            assert json.loads(args) == {"path": "a.rs", "line": "12", "all": "true"}
            assert not any("repaired" in c for c in comments), comments


def test_openai_sdk_non_streaming_repaired_call_and_its_count_header(repair_stack):
    """--repair on a whole completion: the call's arguments repaired in the body, the
    number of calls repaired in `toolstream-calls-repaired` (a body has no room for a
    comment)."""
    up, base = repair_stack
    body = {
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_t", "type": "function",
                 "function": {"name": "read", "arguments": "{'path': 'a.rs', 'line': '3',}"}}]}}],
    }
    up.script = (200, "application/json", json.dumps(body).encode(), 4096, None)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=[READ_TOOL]
    )
    assert raw.headers.get("toolstream-calls-repaired") == "1"
    call = raw.parse().choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"path": "a.rs", "line": 3}


def test_openai_agents_sdk_runs_a_trailing_comma_call_with_repair(repair_stack, stack):
    """The Agents SDK's tool loop on the Responses API: a call whose arguments end in a
    trailing comma runs its tool through --repair (the SDK's own parse refuses it
    direct), with the repaired arguments in the next request's history; without --repair
    the tool never runs with those arguments."""
    broken = {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
              "name": "get_weather", "arguments": '{"city": "Oslo",}'}
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}

    def script(request):
        items = [i for i in request["input"] if isinstance(i, dict)]
        if not any(i.get("type") == "function_call_output" for i in items):
            return (200, "text/event-stream", responses_events([broken], stream_parts), 7, None)
        return (200, "text/event-stream", responses_events([answer], stream_parts), 64, None)

    def run_through(up, base):
        up.script = script
        return run_weather_agent(base, "Weather in Oslo?")

    out, ran = run_through(*repair_stack)
    assert out == "Done." and ran == ["Oslo"], (out, ran)
    up, _ = repair_stack
    calls = [i for i in up.requests[-1]["input"] if isinstance(i, dict) and i.get("type") == "function_call"]
    assert [json.loads(c["arguments"]) for c in calls] == [{"city": "Oslo"}]
    _, ran = run_through(*stack)
    assert ran == []


def test_openai_sdk_falls_back_on_quota_and_not_on_the_models_output(fallback_stack):
    """--fallback: the first upstream's quota is exhausted, the second answers, and the SDK
    gets the second's calls (the attempts in a header); the model's own broken output goes
    to the SDK after one attempt, the second upstream never asked."""
    first, second, base = fallback_stack
    quota = json.dumps({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                                  "type": "insufficient_quota", "code": "insufficient_quota"}}).encode()
    first.script = (429, "application/json", quota, 4096, None)
    second.script = (200, "text/event-stream", (CAPTURES / "openai-parallel-calls.sse").read_bytes(), 64, None)
    before = (len(first.requests), len(second.requests))
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    with client.chat.completions.with_streaming_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    ) as r:
        assert r.headers["toolstream-attempts"] == "2"
        raw = b"".join(r.iter_bytes())
    assert b"[DONE]" in raw
    assert (len(first.requests), len(second.requests)) == (before[0] + 1, before[1] + 1)
    assert second.requests[-1] == first.requests[-1]
    bad = b'{"error":{"message":"invalid tool call arguments"}}'
    first.script = (400, "application/json", bad, 4096, None)
    before = len(second.requests)
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert e.value.response.headers["toolstream-reason"] == "model_output"
    assert len(second.requests) == before


def scrape(base):
    """The proxy's /metrics, parsed by the Prometheus Python client's OpenMetrics parser:
    {(sample name, labels as a sorted tuple): value}."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    text = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_scraped_by_the_prometheus_parser_count_what_the_sdk_sent(fallback_stack):
    """Requests through the openai SDK, then a scrape: the counters moved by exactly what
    was sent (requests by route, upstream and status; failed attempts by reason and
    decision; calls delivered), and the stream gauge is back to zero."""
    first, second, base = fallback_stack
    quota = json.dumps({"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota",
                                  "code": "insufficient_quota"}}).encode()
    first.script = (429, "application/json", quota, 4096, None)
    second.script = (200, "text/event-stream", (CAPTURES / "openai-parallel-calls.sse").read_bytes(), 64, None)
    served = ("toolstream_proxy_requests_total", (("route", "chat"), ("status", "200"), ("upstream", "1")))
    failed = ("toolstream_proxy_attempts_failed_total",
              (("action", "fallback"), ("decision", "fallback"), ("reason", "quota_exhausted")))
    delivered = ("toolstream_proxy_calls_total", (("outcome", "delivered"),))
    before = scrape(base)
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
    calls = 0
    for _ in range(4):
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as s:
            calls += len(s.get_final_completion().choices[0].message.tool_calls or [])
    after = scrape(base)
    delta = lambda key: after.get(key, 0) - before.get(key, 0)
    assert delta(served) == 4
    assert delta(failed) == 4
    assert calls > 0 and delta(delivered) == calls
    assert after[("toolstream_proxy_streams_open", ())] == 0
