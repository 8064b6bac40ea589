//! The splitter and the pipeline under the conditions users have, beside their peers on
//! the same bytes, interleaved (`common::interleaved`), on two corpora written
//! independently of each other (`generated`: `common::splitter`; `agent`: `common::agent`,
//! real text in agents' tool shapes, serialized by serde_json):
//!
//! * `out-of-cache-<corpus>`: 64 MiB buffers (twice the last-level cache of the machines
//!   the figures come from), one whole-buffer pass per side per round, each side over a
//!   copy of its own, so that what one side read is long gone from the caches when the
//!   next reads its copy. toolstream in one push, serde_json → IgnoredAny, simd-json's tape
//!   per value, actson at 64-byte chunks. (Out-of-cache input costs toolstream ≤ 2 % on
//!   these machines, see BENCHMARKS.md: this is the figure on bytes the branch
//!   predictors have not seen before, which a buffer read over and over is not.)
//! * `gateway-<corpus>`: the stream in 4 KiB pieces as a gateway's reads deliver them, each
//!   piece in a buffer of its own, with ~50 µs of other work touching 1 MiB at random and
//!   branching at random between two pieces (`conditions::Other::Both`); only the parsers'
//!   time counts. toolstream per piece (`push`), toolstream in 64-byte slices
//!   (`push_slice`), serde_json on each whole value once (its bytes kept until it is
//!   whole; where values end is handed to it), actson in 64-byte pushes.
//! * `gateway-pipeline`: the pipeline corpus (OpenAI responses of 20 streamed calls) in
//!   4 KiB pieces with the same other work between them: toolstream's pipeline beside the
//!   usual crate stack (eventsource-stream, typed serde_json chunks, serde_json on the
//!   finished arguments).
//!
//! Run: `cargo bench -p toolstream-benches --bench conditions`; tables by
//! `scripts/bench-report.sh`. `TOOLSTREAM_BENCH_MB` scales the gateway corpora (default
//! 16 MiB each); the out-of-cache buffers stay at least 64 MiB.

mod common;

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::conditions::{self, actson_chunks, Gateway, Other, Work};
use common::interleaved::{self, TimedSide};
use criterion::{criterion_group, criterion_main, Criterion};
use futures::StreamExt;

fn corpora(bytes: usize) -> [(&'static str, Bytes, usize); 2] {
    let (a, an) = common::splitter::corpus(bytes, false);
    let (b, bn) = common::agent::corpus(bytes);
    [("generated", a, an), ("agent", b, bn)]
}

/// Time `f`, for a side whose whole call counts.
fn timed(f: impl FnOnce() -> usize) -> (usize, Duration) {
    let t = Instant::now();
    let n = f();
    (n, t.elapsed())
}

fn bench_out_of_cache(c: &mut Criterion) {
    let bytes = common::corpus_bytes(64).max(64 << 20);
    for (name, input, n) in corpora(bytes) {
        let spans = conditions::spans(&input);
        let max_len = spans.iter().map(|(s, e)| e - s).max().unwrap_or(0);
        let copy = || Bytes::copy_from_slice(&input);
        let (a, b, c2, d) = (copy(), copy(), copy(), copy());
        let mut scratch = Vec::with_capacity(max_len);
        let mut buffers = simd_json::Buffers::new(max_len);
        let spans = &spans;
        let sides: Vec<TimedSide<'_>> = vec![
            (
                "toolstream",
                Box::new(move |_| timed(|| conditions::toolstream_whole(&a))),
            ),
            (
                "serde_json-IgnoredAny",
                Box::new(move |_| timed(|| conditions::serde_whole(&b))),
            ),
            (
                "simd-json-tape",
                Box::new(move |_| {
                    timed(|| {
                        for &(s, e) in spans {
                            scratch.clear();
                            scratch.extend_from_slice(&c2[s..e]);
                            let tape = simd_json::to_tape_with_buffers(&mut scratch, &mut buffers)
                                .expect("valid");
                            black_box(&tape);
                        }
                        spans.len()
                    })
                }),
            ),
            (
                "actson-64B",
                Box::new(move |_| timed(|| actson_chunks(&d, 64))),
            ),
        ];
        interleaved::run_timed(c, &format!("out-of-cache-{name}"), input.len(), 1, n, sides);
    }
}

fn bench_gateway(c: &mut Criterion) {
    let bytes = common::corpus_bytes(64) / 4;
    for (name, input, n) in corpora(bytes) {
        let sections = conditions::sections(&input);
        let s = &sections;
        let gateway = move |k: usize| Gateway::new(&s[k].0, &s[k].1, Other::Both);
        // Each side its own other work (the same kind and amount).
        let (mut w1, mut w2, mut w3, mut w4) = (
            Work::default(),
            Work::default(),
            Work::default(),
            Work::default(),
        );
        let sides: Vec<TimedSide<'_>> = vec![
            (
                "toolstream-4KiB",
                Box::new(move |k| gateway(k).toolstream(&mut w1)),
            ),
            (
                "toolstream-slices-64B",
                Box::new(move |k| gateway(k).toolstream_slices(64, &mut w2)),
            ),
            (
                "serde_json-IgnoredAny",
                Box::new(move |k| gateway(k).serde(&mut w3)),
            ),
            (
                "actson-64B",
                Box::new(move |k| gateway(k).actson(64, &mut w4)),
            ),
        ];
        interleaved::run_timed(
            c,
            &format!("gateway-{name}"),
            input.len(),
            sections.len(),
            n,
            sides,
        );
    }
}

/// A timer that stops for the other work between two pieces.
#[derive(Clone)]
struct Clock {
    spent: Rc<Cell<Duration>>,
    since: Rc<Cell<Instant>>,
}

impl Clock {
    fn new() -> Self {
        Clock {
            spent: Rc::new(Cell::new(Duration::ZERO)),
            since: Rc::new(Cell::new(Instant::now())),
        }
    }
    fn pause(&self) {
        self.spent
            .set(self.spent.get() + self.since.get().elapsed());
    }
    fn resume(&self) {
        self.since.set(Instant::now());
    }
}

fn pieces(body: &Bytes) -> impl Iterator<Item = Bytes> + '_ {
    (0..body.len())
        .step_by(4096)
        .map(move |i| Bytes::copy_from_slice(&body[i..(i + 4096).min(body.len())]))
}

/// toolstream's pipeline over each response, 4 KiB pieces, the other work between them.
fn toolstream_gateway(responses: &[Bytes], work: &mut Work) -> (usize, Duration) {
    use common::pipeline::take_calls;
    use toolstream::pipeline::Stream;
    use toolstream::provider::Format;
    let mut calls = 0;
    let mut spent = Duration::ZERO;
    let mut events = Vec::new();
    for body in responses {
        let mut s = Stream::new(Some(Format::OpenAiChat));
        for piece in pieces(body) {
            work.run(Other::Both);
            let t = Instant::now();
            s.push(piece, &mut events);
            calls += take_calls(&mut events);
            spent += t.elapsed();
        }
        let t = Instant::now();
        s.finish(&mut events);
        calls += take_calls(&mut events);
        spent += t.elapsed();
    }
    (calls, spent)
}

/// The usual stack over each response, fed the same way: the clock stops while the other
/// work runs, between two pieces the SSE decoder asks for.
fn reference_gateway(responses: &[Bytes], work: &Rc<RefCell<Work>>) -> (usize, Duration) {
    use eventsource_stream::Eventsource;
    let clock = Clock::new();
    let mut calls = 0;
    for body in responses {
        let (c, w) = (clock.clone(), work.clone());
        let fed = futures::stream::iter(pieces(body).collect::<Vec<_>>()).map(move |piece| {
            c.pause();
            w.borrow_mut().run(Other::Both);
            c.resume();
            Ok::<Bytes, Infallible>(piece)
        });
        clock.resume();
        calls += common::pipeline::reference_calls(fed.eventsource());
        clock.pause();
    }
    (calls, clock.spent.get())
}

fn bench_gateway_pipeline(c: &mut Criterion) {
    let (responses, calls) = common::pipeline::corpus(common::corpus_bytes(64) / 4);
    let bytes: usize = responses.iter().map(Bytes::len).sum();
    // Pieces of about 1 MiB of whole responses.
    let mut groups: Vec<Vec<Bytes>> = vec![Vec::new()];
    let mut size = 0;
    for r in &responses {
        if size >= 1 << 20 {
            groups.push(Vec::new());
            size = 0;
        }
        size += r.len();
        groups.last_mut().expect("a group").push(r.clone());
    }
    let g = &groups;
    let mut w1 = Work::default();
    let w2 = Rc::new(RefCell::new(Work::default()));
    let sides: Vec<TimedSide<'_>> = vec![
        (
            "toolstream",
            Box::new(move |k| toolstream_gateway(&g[k], &mut w1)),
        ),
        (
            "eventsource-stream+serde_json",
            Box::new(move |k| reference_gateway(&g[k], &w2)),
        ),
    ];
    interleaved::run_timed(c, "gateway-pipeline", bytes, groups.len(), calls, sides);
}

criterion_group!(
    benches,
    bench_out_of_cache,
    bench_gateway,
    bench_gateway_pipeline
);
criterion_main!(benches);
