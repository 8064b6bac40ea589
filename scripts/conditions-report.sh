#!/usr/bin/env bash
# Print BENCHMARKS.md's section on the splitter under users' conditions, from the
# `conditions` criterion groups and the probe's tables (scripts/bench.sh runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
# An interleaved group's table from its totals file (`(not run)` without one).
table_of() {
  if [ -f "$1" ]; then
    python3 scripts/interleaved-table.py grid "$@"
  else
    echo "(not run)"
  fi
}
grid() { table_of "target/criterion/$1/totals.txt" "${@:2}"; }
lto() { table_of "target/criterion/bench-lto/$1.txt" "${@:2}"; }
# The gateway groups' splitter tables, through `grid` or `lto` (`$1`).
gateway_tables() {
  for c in generated agent; do
    echo "\`$c\`:"
    echo
    "$1" "gateway-$c" serde_json-IgnoredAny,actson-64B \
      toolstream-4KiB toolstream-slices-64B serde_json-IgnoredAny actson-64B
    echo
  done
}
probe() {
  if [ -f "target/criterion/probe-$1.txt" ]; then
    grep -v '^scan implementation' "target/criterion/probe-$1.txt"
  else
    echo "(not run)"
  fi
}
cat <<'EOF'
## Under users' conditions: out of cache, after other work, a second corpus

Two corpora written independently of each other: `generated` (the splitter corpus above) and
`agent` (`benches/common/agent.rs`: tool arguments in the shapes coding agents' tools take —
a file written whole, an edit's old and new text, several edits, a shell command, a search, a
to-do list, a patch — their text cut from real files of this repository, Rust, Python, shell,
Markdown and a recorded provider stream, as frozen in `benches/data/agent/`; serialized by serde_json, one in five
pretty-printed; its own generator and sizes, ~60 B to 64 KiB).

### What the splitter loses out of cache and after other work, and why

`cargo run --release -p toolstream-benches --example probe -- memo`: 1 MiB pieces of a
256 MiB corpus, each parsed (a) 16 times over, as a warmed benchmark parses its buffer; (b)
once, right after an untimed read that brings it into cache; (c) once, straight from memory.

EOF
probe memo
cat <<'EOF'

Out-of-cache input costs toolstream at most ~2 % ((b) against (c)): the hardware prefetcher
keeps up with a sequential reader, and the machine reads memory at ~20 GB/s, five to seven
times what the splitter asks of it (the `read-all` column below). What a warmed benchmark
adds is the **branch predictors' memory of bytes seen before**: a piece parsed again runs
~20 % faster ((a) against (b)), for serde_json 0–14 %. A figure taken on a small buffer read
over and over is this learning, not the cache, and no user gets it. A software read-ahead of
the next 16–256 KiB (`-- ahead`) made the whole 10–14 % slower: there is no memory stall to
hide. Buffers of 1 MiB to 256 MiB (`-- sizes`), each read many times:

EOF
probe sizes
cat <<'EOF'

From 8 MiB on, the buffer is too large for the predictors to learn, and the splitter's speed
is flat from L3 to memory: this is its speed on bytes it has not seen.

After other work (`-- gateway`): a 16 MiB stream in 4 KiB pieces, each handed over in a
buffer of its own just written (as a socket read leaves it), with ~50 µs of other work
between two pieces that evicts the caches (1 MiB written), confuses the branch predictors
(random branches over 8 KiB that stays in L1), or both (1 MiB read and written at random
with a branch on every value); only the parsers' time counts. Then the time each kind of
other work adds to each 4 KiB piece, against the same parser with nothing between pieces:

EOF
probe gateway
cat <<'EOF'

Every parser pays a cold start each time it runs after the other work: its code, tables and
buffers come back from L3, its branches are mispredicted until the predictors relearn them
(each kind of other work alone accounts for part of it; both together for the most). The
cold start is a few hundred nanoseconds, of the same order for every parser in absolute
terms, but toolstream pays it on every piece (it reads each piece as it comes, to hand each
value over the moment it closes), where serde_json runs once per value (a value spans ~2.3
pieces of the `agent` corpus on average), and a piece takes toolstream 1–2 µs where it takes
actson 16–20 µs: the same few hundred nanoseconds are a much larger share of toolstream's
time (from several per cent to two fifths, the second table) than of actson's (a few per cent). The clock is not part of it: with no parser
between its two readings (`probe -- one agent Both timer`, beside `Nothing`) it costs
32–47 ns a piece under every kind of other work. The vector units are not the cause: the scalar
build (`RUSTFLAGS="--cfg toolstream_disable_simd"`, then `probe -- one agent Both 4096` beside
`Nothing`) pays ~0.8 µs per 4 KiB piece cold, the AVX-512 build ~0.4 µs, at ten times the
speed. Page faults are not in these figures (every buffer is reused or freshly written); a
software read-ahead of the input does not help (above), but one of the splitter's own writes
did: the chunks that wait are appended to a buffer whose lines the other work evicted, one
line a 64-byte push, and asking for the line 2 KiB ahead of the buffer's end (one prefetch
a waiting chunk) took 3–9 % off the 64-byte figures.

Which part of the cold start is the code's (`-- rewarm`): toolstream in 64-byte slices after
each kind of other work, and the same with an untimed run of a second splitter over 4 KiB
of other values of the corpus between the other work and the piece, which brings back the
code, its constants and tables and the predictors' memory of the same branches, but not the
timed splitter's own state and buffer, nor the predictors' memory of this stream:

EOF
probe rewarm
cat <<'EOF'

Each cold start is the median, over rounds that run every condition in turn, of the
difference from the same column with nothing between pieces. Bringing the code back takes
away a third to three fifths of it (the last two columns, over runs). The rest, about
100–200 ns a piece, remains even where the
other work leaves the caches alone (`Predictors`), so it is most likely the predictors' memory of this stream's own recent branches (which
state each chunk starts in, where its strings and escapes fall), which no other run brings
back, and, where the caches were evicted, the splitter's own lines. Smaller code would take
at most the share the code's return takes; the rest is the price of reading each piece as it
comes.

Where the 64-byte path's time goes, by perf's clock sampling (`perf record -e cpu-clock` of
`probe -- one agent Nothing 64`, or `Both`, then `perf report`): about a third in the tracker
that decides, chunk by chunk, whether a chunk may wait (`scan::track`: ~10 ns a 64-byte chunk,
and a second call of it on every chunk adds 9 ns; a chain of dependent steps, from the
quotes through the escapes and the carry-less prefix XOR to the brackets outside strings),
a little over half in the machine's one read of the bytes
that waited, the rest in copying and bookkeeping; after other work the two main parts each
take about half of the cold start. The waiting is what makes the path this fast: built to read
every chunk at once, the same groups ran at 5.5× / 4.6× actson (`agent` / `generated`), a
quarter to a half below the figures further down, the machine's entry and exit for each
chunk costing more than the tracker and its share of the read. For the same reason the wait
is long: the waiting bytes are read at the chunk that may end the value, or once 64 KiB
wait. Each read costs the machine its entry and, after other work, a cold start; reading a
long value in one run rather than one per 16 KiB took 2–4 % off `agent`'s 64-byte time
(the two builds alternated three times in the gateway groups), and waits of 256 KiB or 1 MiB
gained nothing more. Memory stays bounded by the value limit: the buffer holds the value's
bytes anyway. What the chunk that waits costs around the tracker was cut by measuring many
alternated runs of two builds (`probe -- one agent <Nothing|Both> 64`, twelve or more runs each,
the minimum and the median compared, since single runs on this shared machine move by 20 %):
the test of whether a chunk may wait inlined into `push_slice`, so a chunk that waits makes one
call, to the tracker, where it made two (−4 %); the tracker computing a block's escapes
whether or not it holds a backslash, where a branch on that mispredicted on code, about every
other block of which has one (−2 to −3 %); a tracker of one block for chunks of at most 64
bytes, one masked load and no loop (−1 to −2 %); a waiting chunk of 16 to 64 bytes copied by
two fixed-size moves instead of a call to `memcpy` (−2 to −4 %). The first three took `agent`'s
64-byte gateway ratio from 7.3× (three runs of the groups, the build before them) to 8.2–8.4×
(four runs). Letting chunks without a closer
wait on that test alone inside a followed wait, with the tracker catching up over all of them
in one call at the next chunk with a closer, was 6–13 % slower: two-thirds of those chunks
lack a closer, but each then pays the closer test as well, and the catch-up reads bytes just
stored. Tracking fewer chunks does not pay either: letting a chunk wait
on a count of its closers alone while that count stays under the depth, and following the
bytes only when it does not, would still follow ~93 % of the `agent` stream's blocks (a
simulation of the 64-byte stream), since a string of code holds a `}` every few dozen bytes
and the depth is two or three. Nor does skipping the machine where it is cheap to check:
taking a chunk that lies inside a long string at once (a check that it is plain string
content in place of the tracker, the machine moved past it unread) was 3–12 % slower,
because the machine must stand inside the string first, so the first such chunk of each
long string reads what waits, and those extra entries cost more than the tracker and the
reading they spare. Following every chunk of a value from its first wait, rather than
testing for closers until one fails to end the value, was 0–6 % slower; a tracker whose
step from one block's state to the next is shorter (the escape carried in touching byte 0
alone) was no faster.

### The groups

`cargo bench -p toolstream-benches --bench conditions`, interleaved (`common::interleaved`:
every side timed at the same moments; sums over every pass).

Out of cache: 64 MiB buffers, twice this machine's L3, one whole-buffer pass per side per
round, each side over a copy of its own (what one side read is gone from the caches when
the next reads its copy); actson in 64-byte chunks.

EOF
for c in generated agent; do
  echo "\`$c\`:"
  echo
  grid "out-of-cache-$c" serde_json-IgnoredAny,simd-json-tape,actson-64B \
    toolstream serde_json-IgnoredAny simd-json-tape actson-64B
  echo
done
cat <<'EOF'
Gateway: the stream in 4 KiB pieces, each in a buffer of its own, ~50 µs of other work
touching 1 MiB at random with a branch on every value between two pieces (`Other::Both`),
only the parsers' time counted. toolstream per piece (`push`) and in 64-byte slices
(`push_slice`); serde_json keeps the pieces of a value until it is whole and parses each
value once (where values end is handed to it: the least it can do); actson in 64-byte
pushes.

EOF
gateway_tables grid
cat <<'EOF'
The whole pipeline under the same conditions (the pipeline corpus, 4 KiB pieces, the same
other work between them; the reference stack's clock stops while the other work runs):

EOF
grid gateway-pipeline eventsource-stream+serde_json \
  toolstream eventsource-stream+serde_json
cat <<'EOF'

### Built with link-time optimization

Every figure above comes from cargo's default release profile, as `cargo bench` builds it.
Services are often built with link-time optimization across crates; the gateway groups
built so, every side alike (`cargo bench -p toolstream-benches --profile bench-lto --bench
conditions -- gateway`; the profile, thin LTO, is in the workspace's `Cargo.toml`):

EOF
gateway_tables lto
echo "The pipeline:"
echo
lto gateway-pipeline eventsource-stream+serde_json toolstream eventsource-stream+serde_json
cat <<'EOF'

toolstream, serde_json and the reference stack move within the noise: their hot loops lie
inside one crate and were inlined already. actson runs 20–35 % faster with it, from inlining
across crates (one codegen unit without LTO gains it ~5 %), and every ratio against actson
falls by as much. A comparison with actson should say how both were built.
EOF
