#!/usr/bin/env python3
"""Write the Bedrock ConverseStream captures in examples/captures/ (binary AWS event stream).

No real Bedrock capture is in ../shared/captures and no provider is reachable from the
project's machines, so these are written after the documented shapes (ConverseStreamOutput,
the event stream encoding) with an encoder independent of the crate's: Python's zlib CRC-32.
Run from the repository root: python3 scripts/make-bedrock-captures.py
"""
import base64
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


def chunk(model_event):
    """An InvokeModelWithResponseStream chunk: the model's own event, base64 in `bytes`."""
    inner = json.dumps(model_event, separators=(",", ":")).encode()
    return event("chunk", {"bytes": base64.b64encode(inner).decode()}, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0")


def invoke_claude():
    """Claude through InvokeModelWithResponseStream: Anthropic Messages events inside."""
    out = [chunk({"type": "message_start", "message": {"id": "msg_bdrk_01", "type": "message", "role": "assistant",
                  "model": "claude-sonnet-4", "content": [], "stop_reason": None, "usage": {"input_tokens": 380, "output_tokens": 1}}})]
    out.append(chunk({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}))
    out.append(chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Read the file first."}}))
    out.append(chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "ErcBCkgIBhABGAIiQsig"}}))
    out.append(chunk({"type": "content_block_stop", "index": 0}))
    out.append(chunk({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_bdrk_01", "name": "read_file", "input": {}}}))
    for frag in ['{"path": "src/', 'lib.rs", "lines": [1, ', '80]}']:
        out.append(chunk({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": frag}}))
    out.append(chunk({"type": "content_block_stop", "index": 1}))
    out.append(chunk({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 64}}))
    out.append(chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 380, "outputTokenCount": 64,
                      "invocationLatency": 2100, "firstByteLatency": 640}}))
    return b"".join(out)


for name, data in [("bedrock-converse-tool-use", tool_use()), ("bedrock-throttled-midstream", throttled()),
                   ("bedrock-invoke-claude", invoke_claude())]:
    with open(f"examples/captures/{name}.eventstream", "wb") as f:
        f.write(data)
    print(name, len(data), "bytes")
