"""toolstream: tool calls out of LLM provider streams the moment each closes, strictly
validated, however the bytes were cut; and what to do when something fails.

    import toolstream
    for event in toolstream.events(response.iter_bytes()):
        if event["type"] == "tool_call":
            run(event["name"], event["arguments"])

Each event is a dict with the fields of ``toolstream inspect --json`` (a tool call also
carries ``arguments_raw``, the exact bytes); each verdict a dict with the fields of
``toolstream classify --json``.
"""

from ._toolstream import (
    Preview,
    Rewriter,
    Splitter,
    Stream,
    ToolstreamError,
    __version__,
    classify_http,
    classify_stream_error,
    classify_tool_failure,
    classify_transport,
    repair_arguments,
    repair_request,
)

__all__ = [
    "Preview",
    "Rewriter",
    "Splitter",
    "Stream",
    "ToolstreamError",
    "__version__",
    "aevents",
    "classify_http",
    "classify_stream_error",
    "classify_tool_failure",
    "classify_transport",
    "events",
    "repair_arguments",
    "repair_request",
]


def events(chunks, format=None, **options):
    """The events of a stream of byte chunks (any iterable of bytes: ``iter_bytes()`` of an
    httpx or openai response, a file read in pieces), each as soon as it is complete."""
    stream = Stream(format, **options)
    for chunk in chunks:
        if chunk:
            yield from stream.push(chunk)
    yield from stream.finish()


async def aevents(chunks, format=None, **options):
    """The same over an async iterable of bytes (``aiter_bytes()``)."""
    stream = Stream(format, **options)
    async for chunk in chunks:
        if chunk:
            for event in stream.push(chunk):
                yield event
    for event in stream.finish():
        yield event
