#!/usr/bin/env bash
# Regenerate BENCHMARKS.md: run every criterion group, then print the ratio tables.
#   scripts/bench.sh            # full run (about 15 minutes), rewrites BENCHMARKS.md
#   TOOLSTREAM_BENCH_MB=8 scripts/bench.sh   # a smaller corpus, for a quick look
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf target/criterion
cargo bench -p toolstream-benches --bench splitter
cargo bench -p toolstream-benches --bench sse
cargo bench -p toolstream-benches --bench pipeline
cargo bench -p toolstream-benches --bench hostile
cargo bench -p toolstream-benches --features tool-parser --bench text_calls
cargo bench -p toolstream-benches --bench repair
# The gateway groups built with link-time optimization (their totals set aside), then every
# conditions group in the default build, which writes the usual totals.
cargo bench -p toolstream-benches --profile bench-lto --bench conditions -- gateway
mkdir -p target/criterion/bench-lto
for g in gateway-generated gateway-agent gateway-pipeline; do
  cp "target/criterion/$g/totals.txt" "target/criterion/bench-lto/$g.txt"
done
cargo bench -p toolstream-benches --bench conditions
for p in memo sizes gateway rewarm; do
  cargo run -q --release -p toolstream-benches --example probe -- "$p" > "target/criterion/probe-$p.txt"
done
cargo build --release
scripts/bench-report.sh
