#!/usr/bin/env bash
# Instruction counts for the splitter and its peers on the benches' splitter corpus, and for the
# pipelines and the SSE decoder on theirs
# (callgrind: repeatable where wall time on a shared machine is not), net of generating
# the corpus. Needs valgrind. TOOLSTREAM_BENCH_MB sets the corpus size (default 2 MiB).
#   scripts/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "scripts/instructions.sh needs valgrind" >&2; exit 1; }
cargo build -q --release -p toolstream-benches --example instructions
bin=target/release/examples/instructions
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
    sed -n 's/.*Collected : //p'
}
base=$(count none)
net() { echo $(( $(count "$@") - base )); }
bytes=$(( ${TOOLSTREAM_BENCH_MB:-2} << 20 ))
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
per() { python3 -c "print(f'{$1 / $2:.1f}')"; }

serde=$(net serde_json)
whole=$(net toolstream)
echo "Corpus: $bytes bytes (plus the last object). Instructions net of generating it."
echo
echo "| run | instructions | per byte | ratio |"
echo "|---|---|---|---|"
echo "| serde_json → IgnoredAny, whole | $serde | $(per "$serde" "$bytes") | |"
echo "| toolstream, whole | $whole | $(per "$whole" "$bytes") | $(ratio "$serde" "$whole")× fewer than serde_json |"
for chunk in 64 16 7 1; do
  ours=$(net toolstream "$chunk")
  loop=$(net byte-loop "$chunk")
  keep=$(net byte-loop-values "$chunk")
  cut=$(net slices "$chunk")
  pushes=$(( (bytes + chunk - 1) / chunk ))
  echo "| toolstream, ${chunk}-byte chunks | $ours | $(per "$ours" "$bytes") | share of the whole-buffer speed: $(ratio "$whole" "$ours") |"
  echo "| byte loop, ${chunk}-byte chunks | $loop | $(per "$loop" "$bytes") | toolstream's speed / the loop's: $(ratio "$loop" "$ours")× |"
  echo "| byte loop handing back the values, ${chunk}-byte chunks | $keep | $(per "$keep" "$bytes") | toolstream's speed / this loop's: $(ratio "$keep" "$ours")× |"
  echo "| cutting ${chunk}-byte \`Bytes\` chunks only | $cut | $(per "$cut" "$bytes") | per push: toolstream $(per "$ours" "$pushes"), loop $(per "$loop" "$pushes"), cutting $(per "$cut" "$pushes") |"
done

pnone=$(count pipeline-none)
pours=$(( $(count pipeline-toolstream) - pnone ))
pref=$(( $(count pipeline-reference) - pnone ))
echo
echo "Pipeline (the pipeline benches' OpenAI-style stream, $bytes bytes in 4 KiB chunks, net of building it):"
echo
echo "| run | instructions | ratio |"
echo "|---|---|---|"
echo "| eventsource-stream + typed serde_json + String accumulation | $pref | |"
echo "| toolstream pipeline | $pours | $(ratio "$pref" "$pours")× fewer |"

anone=$(count pipeline-anthropic-none)
aours=$(( $(count pipeline-anthropic) - anone ))
echo
aref=$(( $(count pipeline-anthropic-reference) - anone ))
echo "The same calls as an Anthropic Messages stream: toolstream pipeline $aours instructions, eventsource-stream + typed serde_json + String accumulation $aref ($(ratio "$aref" "$aours")× fewer)."
rnone=$(count pipeline-responses-none)
rours=$(( $(count pipeline-responses) - rnone ))
rref=$(( $(count pipeline-responses-reference) - rnone ))
gnone=$(count pipeline-reasoning-none)
gours=$(( $(count pipeline-reasoning) - gnone ))
gref=$(( $(count pipeline-reasoning-reference) - gnone ))
echo "The OpenAI chat stream of a reasoning model (as many reasoning deltas as argument deltas): toolstream pipeline $gours instructions, the reference stack $gref ($(ratio "$gref" "$gours")× fewer)."
echo "The same calls as an OpenAI Responses stream: toolstream pipeline $rours instructions, eventsource-stream + typed serde_json + String accumulation $rref ($(ratio "$rref" "$rours")× fewer)."

echo
echo "SSE decoding (the SSE benches' stream, $bytes bytes, net of building and cutting it):"
echo
echo "| chunk | toolstream | sse-stream 0.3 | ratio |"
echo "|---|---|---|---|"
for chunk in 1024 4096; do
  snone=$(count sse-none "$chunk")
  sours=$(( $(count sse-toolstream "$chunk") - snone ))
  speer=$(( $(count sse-sse-stream "$chunk") - snone ))
  echo "| $chunk B | $sours | $speer | $(ratio "$speer" "$sours")× fewer |"
done

pnone=$(count preview-none)
psplit=$(( $(count preview-splitter) - pnone ))
pview=$(( $(count preview-toolstream) - pnone ))
echo
echo "json::Preview on 1 MiB of code-like string argument in 16-byte deltas, the view read after every delta: $pview instructions ($(per "$pview" 65536) per push), of which the strict splitter alone $psplit."
