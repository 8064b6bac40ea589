#!/usr/bin/env bash
# Write BENCHMARKS.md from the criterion results in target/criterion (see scripts/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
table() { python3 scripts/bench-table.py "$@"; }
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
  echo "The same comparison interleaved (each timed pass runs toolstream, serde_json and simd-json's"
  echo "tape piece by piece, about 1 MiB of whole values each, so all see the same moments of the"
  echo "shared machine; sums over every pass criterion ran):"
  echo
  python3 scripts/interleaved-table.py target/criterion/peers-interleaved/totals.txt whole \
    serde_json-IgnoredAny=serde_json_ns simd-json-tape=simd_json_tape_ns toolstream=toolstream_ns
  echo
  echo "## Linear work: one object fed in 1-byte deltas vs. re-parsing the accumulated buffer every 16 bytes"
  echo
  table linear toolstream-1B-deltas
  echo
  echo "## SSE decoding (ratios to sse-stream 0.3, eventsource-stream and a bare memchr line splitter)"
  echo
  table sse sse-stream-0.3 eventsource-stream memchr-lines
  echo
  echo "## The whole pipeline: SSE + OpenAI chat envelopes + tool-call assembly (ratio to eventsource-stream + typed serde_json + String accumulation)"
  echo
  table pipeline eventsource+serde_json-typed
  echo
  echo "The same two pipelines interleaved (each timed pass runs both, response by response, so both"
  echo "see the same moments of the shared machine; sums over every pass criterion ran):"
  echo
  python3 scripts/interleaved-table.py target/criterion/pipeline-interleaved/totals.txt 4KiB \
    eventsource+serde_json-typed=reference_ns toolstream=toolstream_ns
  echo
  echo "## Envelope decoding alone (choosing the envelope parser by measurement)"
  echo
  table envelopes serde_json-borrowed-typed
  echo
  echo "## NDJSON decoding"
  echo
  table ndjson serde_json-lines-IgnoredAny
  echo
  cat scripts/benchmarks-tail.md
} > BENCHMARKS.md
echo "BENCHMARKS.md rewritten"
