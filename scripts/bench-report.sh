#!/usr/bin/env bash
# Write BENCHMARKS.md from the criterion results in target/criterion (see scripts/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
table() { python3 scripts/bench-table.py "$@"; }
# An interleaved pipeline group: toolstream beside the reference stack.
pipeline_grid() {
  python3 scripts/interleaved-table.py grid "target/criterion/$1/totals.txt" \
    eventsource+serde_json-typed=reference \
    eventsource+serde_json-typed=reference toolstream
}
{
  cat scripts/benchmarks-head.md
  echo
  echo "Run on: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(rustc --version), scan implementation: $(cargo run -q --release --example scan-impl 2>/dev/null || echo unknown), $(date -u +%Y-%m-%d)."
  echo
  echo "## Splitter by chunk size (same chunks for both; ratio to the plain byte loop)"
  echo
  table splitter byte-loop
  echo
  echo "## Splitter beside its peers, whole buffer (ratios to serde_json → IgnoredAny and to the byte loop)"
  echo
  table peers serde_json-IgnoredAny byte-loop
  echo
  echo "The same comparison interleaved, with toolstream and actson at 64-byte chunks beside it: each"
  echo "timed pass runs every side piece by piece (about 1 MiB of whole values each, the order"
  echo "rotating), so all see the same moments of the shared machine; sums over every pass criterion"
  echo "ran. The \"× toolstream\" column of the 64-byte rows is their share of the whole-buffer speed."
  echo "\`toolstream-64B\` takes each chunk as a \`Bytes\` (\`push\`: a reference count up and down per"
  echo "chunk, zero-copy values); \`toolstream-slices-64B\` as a slice (\`push_slice\`), as actson takes them."
  echo
  python3 scripts/interleaved-table.py grid target/criterion/peers-interleaved/totals.txt \
    serde_json-IgnoredAny,simd-json-tape,actson-64B,toolstream \
    toolstream toolstream-64B toolstream-slices-64B serde_json-IgnoredAny simd-json-tape actson-64B
  echo
  echo "Small chunks interleaved the same way (the first eighth of the corpus), beside three"
  echo "baselines at the same chunk size: the plain byte loop (depth, string and escape state;"
  echo "counts values), the same loop also handing back each value's bytes as a splitter must"
  echo "(\`byte-loop-values\`: a slice of the chunk, or the bytes copied once across chunks), and the"
  echo "actson push parser (validating, byte by byte):"
  echo
  python3 scripts/interleaved-table.py pairs target/criterion/chunks-interleaved/totals.txt \
    toolstream-16B:byte-loop-16B toolstream-16B:byte-loop-values-16B toolstream-16B:actson-16B \
    toolstream-7B:byte-loop-7B toolstream-7B:byte-loop-values-7B toolstream-7B:actson-7B \
    toolstream-1B:byte-loop-1B toolstream-1B:byte-loop-values-1B toolstream-1B:actson-1B
  echo
  echo "## Linear work: one object fed in 1-byte deltas vs. re-parsing the accumulated buffer every 16 bytes"
  echo
  table linear toolstream-1B-deltas
  echo
  echo "## Showing arguments while they stream: \`json::Preview\` vs. re-parsing with jiter's partial mode after every delta"
  echo
  echo "One arguments object in 16-byte deltas, the view read after every delta (\`string\`: one long"
  echo "escaped string, a file being written; \`edits\`: an array of small objects). jiter, with"
  echo "\`PartialMode::TrailingStrings\` (how pydantic reads partial LLM output), re-parses the"
  echo "accumulated text after every delta: quadratic, so only up to 64 KiB."
  echo
  table --mb preview toolstream-16B-deltas
  echo
  echo "## SSE decoding (ratios to sse-stream 0.3, eventsource-stream and a bare memchr line splitter)"
  echo
  table sse sse-stream-0.3 eventsource-stream memchr-lines
  echo
  echo "The network chunk sizes interleaved (each timed pass runs every side piece by piece, about"
  echo "1 MiB of whole events each, on an eighth of the corpus; sums over every pass criterion ran):"
  echo
  python3 scripts/interleaved-table.py pairs target/criterion/sse-interleaved/totals.txt \
    toolstream-1KiB:eventsource-stream-1KiB toolstream-1KiB:sse-stream-1KiB \
    toolstream-4KiB:eventsource-stream-4KiB toolstream-4KiB:sse-stream-4KiB
  echo
  echo "## The whole pipeline: SSE + OpenAI chat envelopes + tool-call assembly (ratio to eventsource-stream + typed serde_json + String accumulation)"
  echo
  table pipeline eventsource+serde_json-typed
  echo
  echo "The same two pipelines interleaved (each timed pass runs both, response by response, so both"
  echo "see the same moments of the shared machine; sums over every pass criterion ran):"
  echo
  pipeline_grid pipeline-interleaved
  echo
  echo "The same calls as Anthropic Messages events (a quarter of the size), beside the same kind"
  echo "of stack (eventsource-stream, typed serde_json per \`content_block_delta\`, \`String\`"
  echo "accumulation, serde_json on the finished arguments), interleaved the same way:"
  echo
  pipeline_grid pipeline-anthropic-interleaved
  echo
  echo "The same calls as OpenAI Responses events (\`sequence_number\` and \`obfuscation\` in every"
  echo "delta event, as OpenAI sends them; a quarter of the size), beside the same kind of stack"
  echo "(typed serde_json per \`response.function_call_arguments.delta\`), interleaved the same way:"
  echo
  pipeline_grid pipeline-responses-interleaved
  echo
  echo "## Calls written into the text (\`text_calls\`), in the whole pipeline"
  echo
  echo "One response is about 8 KiB of prose in 16-byte content deltas (OpenAI chat chunks in 4 KiB"
  echo "network pieces). \`plain\`: no markup (code-ish \`<\` and \`[\` in about one delta in five), the"
  echo "pipeline with \`with_text_calls(auto, two tools)\` beside the same pipeline without it."
  echo "\`markup\`: the same prose with a Hermes \`<tool_call>\` every ~600 bytes, toolstream's"
  echo "extraction beside the peers' way on the pipeline's text events: a regex over the whole text"
  echo "once it ended (no call before the end of the response), and a regex over the text so far at"
  echo "every delta (what whole-text parsers do while streaming: quadratic). Every call counted is"
  echo "checked to be a declared tool with an object of arguments. \`cargo bench -p toolstream-benches"
  echo "--bench text_calls\` (\`TOOLSTREAM_BENCH_MB=4\` for the figures here)."
  echo
  python3 scripts/interleaved-table.py grid target/criterion/text-calls-plain-interleaved/totals.txt \
    text_calls-off text_calls-off text_calls-on
  echo
  python3 scripts/interleaved-table.py grid target/criterion/text-calls-markup-interleaved/totals.txt \
    regex-at-end,regex-per-delta toolstream-text_calls regex-at-end regex-per-delta
  echo
  echo "Beside the Rust peer, the \`tool-parser\` crate (1.10, the smg gateway's parsers): the same"
  echo "texts in 16-byte deltas straight into each (ours: \`text_calls::Extractor\`, \`auto\`, every"
  echo "family's markers; the peer: its Qwen parser's \`parse_incremental\`, which reads the same"
  echo "\`<tool_call>\` markup, one \`block_on\` per response). Both hand back the same text bytes"
  echo "(plain) and the same calls (with markup), checked on every pass. \`cargo bench -p"
  echo "toolstream-benches --features tool-parser --bench text_calls -- peer\`."
  echo
  python3 scripts/interleaved-table.py grid target/criterion/text-calls-peer-plain-interleaved/totals.txt \
    tool-parser-qwen toolstream-extractor tool-parser-qwen
  echo
  python3 scripts/interleaved-table.py grid target/criterion/text-calls-peer-markup-interleaved/totals.txt \
    tool-parser-qwen toolstream-extractor tool-parser-qwen
  echo
  echo "## Repair of broken arguments, beside the Rust ports of the repair libraries"
  echo
  echo "A file-writing tool's arguments (~850 bytes: a path, ~600 bytes of code with quotes and"
  echo "newlines, a number, a flag), each written with one mistake: a trailing comma, a"
  echo "single-quoted key, an unquoted key, \`None\`, a comment, a markdown fence, prose around"
  echo "it. \`repair::repair\` (every kind on) beside \`llm_json\` (a port of Python's"
  echo "\`json_repair\`) and \`jsonrepair-rs\` (a port of JS's \`jsonrepair\`) on the same"
  echo "strings, interleaved; every result is checked against the original object before"
  echo "timing, and the timing takes the kinds every side restores (\`jsonrepair-rs\` restores"
  echo "none of the prose cases, so they are left out). \`cargo bench -p toolstream-benches"
  echo "--bench repair\` (\`TOOLSTREAM_BENCH_MB=4\` for the figures here)."
  echo
  python3 scripts/interleaved-table.py grid target/criterion/repair-interleaved/totals.txt \
    llm_json,jsonrepair-rs toolstream-repair llm_json jsonrepair-rs
  echo
  echo "## Envelope decoding alone (choosing the envelope parser by measurement)"
  echo
  table envelopes serde_json-borrowed-typed
  echo
  echo "The same sides interleaved (each timed pass runs every side, response by response; the stream"
  echo "side keeps one decoder per response, as the pipeline does):"
  echo
  python3 scripts/interleaved-table.py grid target/criterion/envelopes-interleaved/totals.txt \
    serde_json-borrowed-typed=serde \
    serde_json-borrowed-typed=serde simd-json-tape toolstream-cursor=cursor \
    toolstream-cursor-stream=cursor-stream
  echo
  echo "## NDJSON decoding"
  echo
  table ndjson serde_json-lines-IgnoredAny
  echo
  echo "The same interleaved (each timed pass runs every side piece by piece, about 1 MiB of whole"
  echo "lines each, on an eighth of the corpus; sums over every pass criterion ran):"
  echo
  python3 scripts/interleaved-table.py grid target/criterion/ndjson-interleaved/totals.txt \
    serde_json-lines-IgnoredAny \
    toolstream toolstream-4KiB serde_json-lines-IgnoredAny
  echo
  scripts/conditions-report.sh
  echo
  echo "## Hostile inputs"
  echo
  echo "The pipeline on adversarial shapes, one push each (\`benches/hostile.rs\`): linear work reads"
  echo "as a throughput flat from 1 KiB to 4 MiB (a quadratic step would fall 4096-fold):"
  echo
  python3 scripts/hostile-table.py
  echo
  echo "Hostile inputs through \`toolstream inspect\` (\`scripts/hostile.sh\`: each generated, then"
  echo "run with GNU time for its time and peak memory):"
  echo
  scripts/hostile.sh
  echo
  cat scripts/benchmarks-tail.md
} > BENCHMARKS.md.tmp
mv BENCHMARKS.md.tmp BENCHMARKS.md
echo "BENCHMARKS.md rewritten"
