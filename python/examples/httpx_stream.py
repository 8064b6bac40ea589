"""httpx directly: the bytes of a streaming chat completion into toolstream.

    python examples/httpx_stream.py [BASE_URL]
"""

import sys

import httpx
import toolstream

base_url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/v1"
body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
with httpx.stream("POST", base_url + "/chat/completions", json=body, timeout=60) as r:
    if r.status_code >= 400:
        verdict = toolstream.classify_http("openai", r.status_code, r.headers, r.read())
        sys.exit("%s: %s" % (verdict["reason"], verdict["action"]))
    for event in toolstream.events(r.iter_bytes()):
        if event["type"] == "tool_call":
            print("call", event["name"], event["arguments"])
