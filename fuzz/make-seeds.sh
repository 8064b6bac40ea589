#!/usr/bin/env bash
# Build the seed corpora from files in the repo (and ../shared when present):
#   fuzz/make-seeds.sh      -> fuzz/corpus/<target>/
# Seeds: the shipped captures, the tool-argument sample, the JSONTestSuite files, and the
# SSE cases' shapes. Reproducible: same repo, same seeds.
set -euo pipefail
cd "$(dirname "$0")"
for t in splitter_chunked sse_chunked pipeline_small_limits classify; do mkdir -p "corpus/$t"; done
cp ../examples/tool-arguments.json corpus/splitter_chunked/
for f in ../examples/captures/*.sse ../examples/captures/*.ndjson; do
  cp "$f" corpus/sse_chunked/
  cp "$f" corpus/pipeline_small_limits/
done
suite=../../shared/conformance/JSONTestSuite/test_parsing
if [ -d "$suite" ]; then
  for f in "$suite"/*.json; do
    sz=$(stat -c %s "$f")
    [ "$sz" -le 4096 ] && cp "$f" corpus/splitter_chunked/
  done
fi
printf 'data: a\r\ndata: b\r\rdata: c\n\n: ping\nid: 7\nretry: 100\nevent: x\ndata\n\n' > corpus/sse_chunked/whatwg-mix
printf '\xef\xbb\xbfdata: bom\n\n' > corpus/sse_chunked/bom
printf '{"error":{"message":"invalid tool call arguments","type":"invalid_request_error"}}' > corpus/classify/ollama-400
printf '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' > corpus/classify/anthropic-529
echo "seeds: $(find corpus -type f | wc -l) files"
