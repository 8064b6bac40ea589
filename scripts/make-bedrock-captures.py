#!/usr/bin/env python3
"""Write the Bedrock ConverseStream captures in examples/captures/ (binary AWS event stream).

No real Bedrock capture is in ../shared/captures and no provider is reachable from the
project's machines, so these are written after the documented shapes (ConverseStreamOutput,
the event stream encoding) with an encoder independent of the crate's: Python's zlib CRC-32.
Run from the repository root: python3 scripts/make-bedrock-captures.py
"""
import json
import struct
import zlib


def message(headers, payload):
    h = b""
    for name, value in headers:
        n, v = name.encode(), value.encode()
        h += bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v
    total = 16 + len(h) + len(payload)
    prelude = struct.pack(">II", total, len(h))
    m = prelude + struct.pack(">I", zlib.crc32(prelude)) + h + payload
    return m + struct.pack(">I", zlib.crc32(m))


def event(kind, body, pad=None):
    if pad:
        body = dict(body, p=pad)
    return message(
        [(":event-type", kind), (":content-type", "application/json"), (":message-type", "event")],
        json.dumps(body, separators=(",", ":")).encode(),
    )


def tool_use():
    out = [event("messageStart", {"role": "assistant"}, "abcdefghij")]
    out.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "The user wants "}}}))
    out.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "the weather."}}}))
    out.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCkYIBRgCKkBsig=="}}}))
    out.append(event("contentBlockStop", {"contentBlockIndex": 0}))
    out.append(event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Checking both cities."}}, "abcdefghijklmnop"))
    out.append(event("contentBlockStop", {"contentBlockIndex": 1}))
    out.append(event("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_Paris01", "name": "get_weather"}}}))
    for frag in ['{"ci', 'ty": "Par', 'is", "unit', 's": "c"}']:
        out.append(event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": frag}}}, "abc"))
    out.append(event("contentBlockStop", {"contentBlockIndex": 2}))
    out.append(event("contentBlockStart", {"contentBlockIndex": 3, "start": {"toolUse": {"toolUseId": "tooluse_Oslo02", "name": "get_weather"}}}))
    for frag in ['{"city": "Os', 'lo"}']:
        out.append(event("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"toolUse": {"input": frag}}}))
    out.append(event("contentBlockStop", {"contentBlockIndex": 3}))
    out.append(event("messageStop", {"stopReason": "tool_use"}, "abcdefgh"))
    out.append(event("metadata", {"usage": {"inputTokens": 412, "outputTokens": 96, "totalTokens": 508}, "metrics": {"latencyMs": 1840}}))
    return b"".join(out)


def throttled():
    out = [event("messageStart", {"role": "assistant"})]
    out.append(event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_W1", "name": "write_file"}}}))
    out.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"path": "notes.md", "content": "# No'}}}))
    out.append(message(
        [(":exception-type", "throttlingException"), (":content-type", "application/json"), (":message-type", "exception")],
        b'{"message":"Too many tokens, please wait before trying again."}',
    ))
    return b"".join(out)


for name, data in [("bedrock-converse-tool-use", tool_use()), ("bedrock-throttled-midstream", throttled())]:
    with open(f"examples/captures/{name}.eventstream", "wb") as f:
        f.write(data)
    print(name, len(data), "bytes")
