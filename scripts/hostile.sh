#!/usr/bin/env bash
# The hostile inputs of the hardening work through `toolstream inspect`, each timed with
# its peak RSS (GNU time), for BENCHMARKS.md's table:
#   cargo build --release && scripts/hostile.sh [DIR]
# DIR (default: a temporary directory) receives the generated inputs (about 110 MB).
# Needs python3 and /usr/bin/time (Debian's `time` package).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/toolstream
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
python3 - "$dir" <<'PY'
import json, sys, os
d = sys.argv[1]
def sse(o): return "data: " + (o if isinstance(o, str) else json.dumps(o, separators=(',', ':'))) + "\n\n"
def call(args, **kw):
    c = {"index": 0, "function": {"arguments": args}}
    if "id" in kw: c["id"] = kw["id"]
    if "name" in kw: c["function"]["name"] = kw["name"]
    return sse({"choices": [{"index": 0, "delta": {"tool_calls": [c]}}]})
def w(name, s):
    with open(os.path.join(d, name), "w") as f: f.write(s)
w("index-2^32-1.sse", sse('{"candidates":[{"index":4294967295,"finishReason":"STOP"}]}'))
w("index-5e7.sse", sse('{"candidates":[{"index":50000000,"finishReason":"STOP"}]}'))
w("reasoning-details-400k.sse", sse('{"choices":[{"index":0,"delta":{"reasoning_details":[' + ",".join(["{}"] * 400000) + ']}}]}'))
w("content-key-160k.sse", sse('{"choices":[{"index":0,"delta":{' + ",".join(['"content":"x"'] * 160000) + '}}]}'))
w("glued-160k.sse", call("".join('{"a":%d}' % i for i in range(160000)), id="c", name="f") + "data: [DONE]\n\n")
w("line-over-limit.sse", call('{"cmd":"rm -rf ', id="c1", name="run") + call("x" * (8 * 1024 * 1024 + 1)) + call('/tmp/x"}') + "data: [DONE]\n\n")
w("failed-then-200.sse", call('{"a":"\\q', id="c1", name="f") + call("x") * 200 + sse({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "g", "arguments": "{}"}}]}}]}) + "data: [DONE]\n\n")
w("no-name.sse", call('{"a":1}', id="c1") + "data: [DONE]\n\n")
w("payload-7mb.sse", sse('{"x":[' + ",".join(['{"a":[1,2,3]}'] * 500000) + '],"choices":[]}') + "data: [DONE]\n\n")
w("error-7mb.sse", sse('{"error":{"message":"boom","x":[' + ",".join(['{"a":[1,2,3]}'] * 500000) + ']}}'))
w("path-7mb.sse", sse({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "willContinue": True, "partialArgs": [{"jsonPath": "$" + ".a" * 3500000, "numberValue": 1}]}}]}}]}))
w("comments-15mb.sse", ":\n\n" * 5000000)
w("blank-then-ndjson.ndjson", "\n" * 65600 + '{"message":{"role":"assistant","content":"hi"},"done":false}\n')
w("after-done.sse", "data: [DONE]\n\n" + call('{"a', id="c1", name="f"))
w("empty-data-5m.sse", "data:\n\n" * 5000000)
PY
printf '| input | bytes | seconds | peak RSS (MB) | what inspect says |\n|---|---|---|---|---|\n'
for f in "$dir"/*; do
  out=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$out.t" "$bin" inspect "$f" > "$out" 2>&1 || true
  read -r secs kb < "$out.t"
  # The first two lines that are not text, and the end (cut short for the table).
  said=$( { grep -v -e '^text:' -e '^end:' "$out" | head -2; grep '^end:' "$out" | cut -d' ' -f1-2; } \
    | cut -c1-60 | sed 's/|/\\|/g' | paste -sd ';' - | sed 's/;/; /g')
  printf '| %s | %s | %s | %s | %s |\n' "$(basename "$f")" "$(stat -c %s "$f")" "$secs" "$((kb / 1024))" "$said"
  rm -f "$out" "$out.t"
done
