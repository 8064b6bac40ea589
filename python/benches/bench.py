"""toolstream beside the Python ways of doing the same jobs, on the same bytes in one run.

    python python/benches/bench.py            # about a minute
    python python/benches/bench.py --quick    # a smaller corpus, for CI

1. The whole pipeline, SSE bytes in (4 KiB chunks), tool calls out, on an OpenAI-style
   stream (20 parallel calls a response, arguments of 300 B - 2 KiB in 3-20-byte deltas):
   - accumulate: split the SSE events, `json.loads` each chunk, append each call's argument
     fragments, `json.loads` the arguments at the end (what agents do);
   - raw_decode: the same, with a `json.JSONDecoder.raw_decode` loop at the end so that glued
     objects are split (the usual fix proposed for them);
   - toolstream.events.
2. Previews: one arguments object (a 64 KiB string, a file being written) in 16-byte deltas,
   the view read after every delta: jiter's partial mode and partial-json-parser re-parse the
   accumulated text each time (what user interfaces do); toolstream reports what each delta
   changed (Preview.update), applied to the interface's own model, or builds its view anew
   (Preview.partial).
3. Repair of broken arguments (a file-writing tool's, ~850 bytes, each with one mistake: a
   trailing comma, a single-quoted key, an unquoted key, `None`, a comment, a markdown
   fence, prose around it): `json_repair.repair_json` beside `toolstream.repair_arguments`,
   on the same strings, each result checked against the original object.
"""

import json
import random
import sys
import time

import toolstream

QUICK = "--quick" in sys.argv


def corpus(mb):
    """Responses, each as its 4 KiB chunks, and the bytes in all."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "path", "src/main.rs", "fn main() {}", "caf\u00e9", "\"q\""]
    responses = []
    size = 0
    n = 0
    while size < mb * 1_000_000:
        n += 1
        out = []
        env = '"id":"chatcmpl-%d","object":"chat.completion.chunk","created":1,"model":"gpt-4o"' % n
        for call in range(20):
            args = json.dumps({"path": "src/f%d.rs" % call, "text": " ".join(rng.choice(words) for _ in range(rng.randint(40, 300)))})
            at = 0
            first = True
            while at < len(args):
                step = rng.randint(3, 20)
                piece = args[at : at + step]
                at += step
                tc = {"index": call, "function": {"arguments": piece}}
                if first:
                    tc.update(id="call_%d_%d" % (n, call), type="function")
                    tc["function"]["name"] = "write_file"
                    first = False
                chunk = '{%s,"choices":[{"index":0,"delta":{"tool_calls":[%s]},"finish_reason":null}]}' % (
                    env, json.dumps(tc, separators=(",", ":")))
                out.append("data: " + chunk + "\n\n")
        out.append('data: {%s,"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n' % env)
        data = "".join(out).encode()
        size += len(data)
        responses.append([data[i : i + 4096] for i in range(0, len(data), 4096)])
    return responses, size


def accumulate(responses, glued=False):
    out = []
    for chunks in responses:
        out += accumulate_one(chunks, glued)
    return out


def accumulate_one(chunks, glued):
    buf = b""
    calls = {}
    out = []
    decoder = json.JSONDecoder()
    for chunk in chunks:
        buf += chunk
        while True:
            end = buf.find(b"\n\n")
            if end < 0:
                break
            event, buf = buf[:end], buf[end + 2 :]
            if not event.startswith(b"data: "):
                continue
            payload = event[6:]
            if payload == b"[DONE]":
                for i in sorted(calls):
                    c = calls[i]
                    if glued:
                        text = c["arguments"]
                        at = 0
                        while at < len(text):
                            obj, at = decoder.raw_decode(text, at)
                            out.append((c["name"], obj))
                            while at < len(text) and text[at].isspace():
                                at += 1
                    else:
                        out.append((c["name"], json.loads(c["arguments"])))
                calls = {}
                continue
            msg = json.loads(payload)
            for tc in msg["choices"][0]["delta"].get("tool_calls") or []:
                c = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
                f = tc.get("function") or {}
                if f.get("name"):
                    c["name"] = f["name"]
                c["arguments"] += f.get("arguments") or ""
    return out


def with_toolstream(responses):
    out = []
    for chunks in responses:
        out += [(e["name"], e["arguments"]) for e in toolstream.events(chunks) if e["type"] == "tool_call"]
    return out


def best(fn, *args, rounds=3):
    t = float("inf")
    result = None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn(*args)
        t = min(t, time.perf_counter() - start)
    return t, result


def main():
    mb = 4 if QUICK else 32
    chunks, size = corpus(mb)
    print("## Python: the whole pipeline (%.0f MB of OpenAI chunks in 4 KiB pieces, SSE bytes in, calls out)" % (size / 1e6))
    print()
    print("| implementation | MB/s | x accumulate |")
    print("|---|---|---|")
    rows = [("accumulate + json.loads", lambda c: accumulate(c)),
            ("accumulate + raw_decode loop", lambda c: accumulate(c, glued=True)),
            ("toolstream.events", with_toolstream)]
    results = {}
    base = None
    for name, fn in rows:
        t, r = best(fn, chunks)
        results[name] = r
        base = base or t
        print("| %s | %.1f | %.1f |" % (name, size / t / 1e6, base / t))
    assert results["toolstream.events"] == results["accumulate + json.loads"], "the same calls"
    print()

    # Previews.
    text = json.dumps({"path": "src/main.rs", "content": ("fn main() {\n    println!(\"hi\");\n}\n" * 2000)[: 64 * 1024]})
    deltas = [text[i : i + 16] for i in range(0, len(text), 16)]
    print("## Python: the view after every 16-byte delta of a 64 KiB argument")
    print()
    print("| implementation | ms | x the slowest |")
    print("|---|---|---|")
    timings = []

    def ts_preview():
        s = toolstream.Preview()
        last = None
        for d in deltas:
            s.push(d.encode())
            last = s.partial()
        return last

    timings.append(("toolstream.Preview, partial() after each push", best(ts_preview, rounds=3)[0]))

    def ts_update():
        # A user interface's own model, kept from the changes: the structure as it grows,
        # and each string its widget's pieces, found by path (a text widget appends; it
        # does not rebuild the text for every delta).
        s = toolstream.Preview()
        model, widgets = None, {}
        for d in deltas:
            for op, path, v in s.update(d.encode()):
                if op == "append":
                    widgets[path].append(v)
                    continue
                if isinstance(v, str):
                    v = widgets[path] = [v]
                if not path:
                    model = v
                    continue
                target = model
                for step in path[:-1]:
                    target = target[step]
                if isinstance(target, list):
                    target.append(v)
                else:
                    target[path[-1]] = v
        return model

    got = ts_update()
    assert "".join(got["content"]) == json.loads(text)["content"], "the same view"
    timings.insert(0, ("toolstream.Preview, update() changes applied", best(ts_update, rounds=3)[0]))
    try:
        import jiter

        def jiter_preview():
            acc = ""
            last = None
            for d in deltas:
                acc += d
                last = jiter.from_json(acc.encode(), partial_mode="trailing-strings")
            return last

        timings.append(("jiter partial mode, re-parsed", best(jiter_preview, rounds=1)[0]))
    except ImportError:
        pass
    try:
        import partial_json_parser

        few = deltas if not QUICK else deltas[: len(deltas) // 4]

        def pjp_preview():
            acc = ""
            for d in few:
                acc += d
                partial_json_parser.loads(acc)

        t = best(pjp_preview, rounds=1)[0]
        timings.append(("partial-json-parser, re-parsed" + (" (first quarter)" if QUICK else ""), t))
    except ImportError:
        pass
    slowest = max(t for _, t in timings)
    for name, t in timings:
        print("| %s | %.1f | %.1f |" % (name, t * 1000, slowest / t))
    ts = timings[0][1]
    for name, t in timings[1:]:
        print()
        print("toolstream.Preview.update / %s: %.0fx" % (name, t / ts))

    repair_bench()


def repair_corpus(n):
    rng = random.Random(59)
    lines = [
        'fn main() { println!("hello, world"); }\n',
        "    let x = compute(&items, 42); // why not\n",
        '    if x > 0 { return Err("negative".into()); }\n',
        "use std::collections::HashMap;\n",
    ]
    kinds = [
        lambda t: t[:-1] + ",}",
        lambda t: t.replace('"path"', "'path'", 1),
        lambda t: t.replace('"line"', "line", 1),
        lambda t: t.replace("null", "None", 1),
        lambda t: "{ /* arguments */ " + t[1:],
        lambda t: "```json\n" + t + "\n```",
        lambda t: "Sure! Here are the arguments:\n" + t + "\nLet me know if you need more.",
    ]
    out = []
    for i in range(n):
        code = ""
        while len(code) < 600:
            code += rng.choice(lines)
        v = {"path": "src/module_%d.rs" % rng.randrange(1000), "content": code,
             "line": rng.randrange(5000), "create": rng.random() < 0.5, "mode": None}
        out.append((kinds[i % len(kinds)](json.dumps(v)), v))
    return out


def repair_bench():
    try:
        import json_repair
    except ImportError:
        print()
        print("(json_repair is not installed: the repair comparison did not run)")
        return
    cases = repair_corpus(700 if QUICK else 7000)
    texts = [t for t, _ in cases]
    size = sum(len(t) for t in texts)

    def ours():
        return [json.loads(toolstream.repair_arguments(t)["arguments"]) for t in texts]

    def ours_alone():
        return [toolstream.repair_arguments(t) for t in texts]

    def peer():
        return [json_repair.repair_json(t, return_objects=True) for t in texts]

    t_ours, got = best(ours)
    assert got == [v for _, v in cases], "toolstream did not restore every object"
    t_alone = best(ours_alone)[0]
    t_peer, theirs = best(peer, rounds=1 if QUICK else 2)
    restored = sum(a == v for a, (_, v) in zip(theirs, cases))
    print()
    print("## Python: repair of %d broken arguments (%.1f MB), each checked against the original" % (len(texts), size / 1e6))
    print()
    print("| implementation | MB/s | restored |")
    print("|---|---|---|")
    print("| json_repair.repair_json(return_objects=True) | %.2f | %d/%d |" % (size / t_peer / 1e6, restored, len(texts)))
    print("| toolstream.repair_arguments, then json.loads | %.1f | %d/%d |" % (size / t_ours / 1e6, len(texts), len(texts)))
    print("| toolstream.repair_arguments alone | %.1f | |" % (size / t_alone / 1e6))
    print()
    print("toolstream (with json.loads) / json_repair: %.0fx" % (t_peer / t_ours))


if __name__ == "__main__":
    main()
