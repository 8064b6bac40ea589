"""The official openai SDK's raw stream through toolstream: each tool call printed the
moment its arguments close, glued calls split, broken ones reported with what to do.

    python examples/openai_sdk.py [BASE_URL]     # default http://127.0.0.1:8000/v1
"""

import sys

import openai
import toolstream

base_url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/v1"
client = openai.OpenAI(base_url=base_url, api_key="sk-anything", max_retries=0)

with client.chat.completions.with_streaming_response.create(
    model="gpt-4o",
    messages=[{"role": "user", "content": "Weather in Paris and Tokyo?"}],
    stream=True,
) as response:
    for event in toolstream.events(response.iter_bytes(), "openai"):
        if event["type"] == "tool_call":
            print("call", event["id"], event["name"], event["arguments"])
        elif event["type"] == "tool_call_error":
            verdict = toolstream.classify_tool_failure(
                event["name"], event["kind"], event["offset"], event["raw"].encode()
            )
            print("failed", event["name"], verdict["action"])
        elif event["type"] == "end":
            print("complete" if event["complete"] else "incomplete")
