#!/usr/bin/env bash
# Regenerate BENCHMARKS.md: run every criterion group, then print the ratio tables.
#   scripts/bench.sh            # full run (about 10 minutes), rewrites BENCHMARKS.md
#   TOOLSTREAM_BENCH_MB=8 scripts/bench.sh   # a smaller corpus, for a quick look
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf target/criterion
cargo bench --bench splitter
cargo bench --bench sse
cargo bench --bench pipeline
scripts/bench-report.sh
