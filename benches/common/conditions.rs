//! The conditions users run the splitter under, shared by `benches/conditions.rs` (the
//! criterion groups) and `benches/probe.rs` (the cause measurements): out of cache, and
//! after other work, for toolstream and its peers on the same bytes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::de::IgnoredAny;
use toolstream::json::{Mode, Splitter};

/// What runs between two pushes of a gateway's stream (other streams, HTTP, TLS), about
/// 50 µs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Other {
    /// Nothing: the warm case.
    Nothing,
    /// 1 MiB written in order: the caches lose the parser's lines and tables, the branch
    /// predictors keep its branches (a plain loop).
    Caches,
    /// Branches taken at random over 8 KiB that stays in L1: the predictors lose the
    /// parser's history, the caches keep its lines.
    Predictors,
    /// Both: 1 MiB read and written at random with a branch on every value.
    Both,
}

/// Memory the other work touches, and how much of it.
pub struct Work {
    mem: Vec<u64>,
    seed: u64,
    sink: u64,
}

impl Default for Work {
    fn default() -> Self {
        Work {
            mem: vec![1; (1 << 20) / 8],
            seed: 0x1234_5678_9ABC_DEF1,
            sink: 0,
        }
    }
}

impl Other {
    /// Every kind, the warm case first.
    pub const ALL: [Other; 4] = [
        Other::Nothing,
        Other::Caches,
        Other::Predictors,
        Other::Both,
    ];
}

impl Work {
    fn rand(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    /// One round of `other` (about 50 µs on a 2.6 GHz core for the kinds that work).
    pub fn run(&mut self, other: Other) {
        match other {
            Other::Nothing => {}
            Other::Caches => {
                // 1 MiB written over twice.
                for round in 0..2u64 {
                    for (k, w) in self.mem.iter_mut().enumerate() {
                        *w = w.wrapping_add(k as u64 ^ round);
                    }
                }
            }
            Other::Predictors => {
                let mut acc = 0u64;
                for _ in 0..10_000 {
                    let r = self.rand();
                    let i = (r as usize >> 7) & 1023;
                    // Branches on random bits: nothing a predictor can learn.
                    if r & 1 == 0 {
                        acc = acc.wrapping_add(self.mem[i]);
                    } else if r & 2 == 0 {
                        acc ^= self.mem[i] >> 3;
                    } else {
                        acc = acc.rotate_left(5);
                    }
                }
                self.sink ^= acc;
            }
            Other::Both => {
                let n = self.mem.len();
                let mut acc = 0u64;
                for _ in 0..6_000 {
                    let r = self.rand();
                    let i = (r as usize >> 5) % n;
                    let v = self.mem[i];
                    if (v ^ r) & 1 == 0 {
                        acc = acc.wrapping_add(v);
                        self.mem[i] = v.wrapping_add(r);
                    } else {
                        acc ^= v >> 3;
                    }
                }
                self.sink ^= acc;
            }
        }
        black_box(self.sink);
    }
}

/// The prefix of `input` that ends where a value ends, at or after `bytes` (all of it if
/// shorter), and how many values it holds.
pub fn prefix(input: &Bytes, bytes: usize) -> (Bytes, usize) {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(input.clone(), &mut out).expect("valid corpus");
    let k = out.partition_point(|v| (v.end() as usize) < bytes.min(input.len()));
    let k = (k + 1).min(out.len());
    (input.slice(..out[k - 1].end() as usize), k)
}

/// Value spans of `input`, for serde_json given each whole value once.
pub fn spans(input: &Bytes) -> Vec<(usize, usize)> {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(input.clone(), &mut out).expect("valid corpus");
    out.iter()
        .map(|v| (v.start() as usize, v.end() as usize))
        .collect()
}

/// Sections of whole values, about 1 MiB each, with their value spans (relative).
pub fn sections(input: &Bytes) -> Vec<(Bytes, Vec<(usize, usize)>)> {
    let spans = spans(input);
    let mut out = Vec::new();
    let mut lo = 0;
    for (i, &(_, e)) in spans.iter().enumerate() {
        let s = spans[lo].0;
        if e - s >= 1 << 20 || i + 1 == spans.len() {
            let inner = spans[lo..=i].iter().map(|&(a, b)| (a - s, b - s)).collect();
            out.push((input.slice(s..e), inner));
            lo = i + 1;
        }
    }
    out
}

/// toolstream over the whole buffer in one push.
pub fn toolstream_whole(input: &Bytes) -> usize {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(input.clone(), &mut out).expect("valid");
    out.len()
}

/// serde_json's stream of `IgnoredAny` over the whole buffer.
pub fn serde_whole(input: &[u8]) -> usize {
    let mut n = 0;
    for r in serde_json::Deserializer::from_slice(input).into_iter::<IgnoredAny>() {
        r.expect("valid");
        n += 1;
    }
    n
}

/// The read bandwidth baseline: every byte looked at once, no work per byte (memchr's
/// vector loop for a byte that is not there).
pub fn read_all(input: &[u8]) -> usize {
    black_box(memchr::memchr(0x01, input).map_or(0, |_| 1))
}

/// actson in streaming mode (several top-level values): `more` is called whenever it needs
/// input, to push some into its feeder (and say `done` after the last). The values found.
fn actson_run(mut more: impl FnMut(&mut actson::feeder::PushJsonFeeder)) -> usize {
    use actson::feeder::PushJsonFeeder;
    use actson::options::JsonParserOptionsBuilder;
    use actson::{JsonEvent, JsonParser};
    let options = JsonParserOptionsBuilder::default()
        .with_streaming(true)
        .build();
    let mut p = JsonParser::new_with_options(PushJsonFeeder::new(), options);
    let (mut depth, mut n) = (0usize, 0);
    while let Some(ev) = p.next_event().expect("valid") {
        match ev {
            JsonEvent::NeedMoreInput => more(&mut p.feeder),
            JsonEvent::StartObject | JsonEvent::StartArray => depth += 1,
            JsonEvent::EndObject | JsonEvent::EndArray => {
                depth -= 1;
                if depth == 0 {
                    n += 1;
                }
            }
            _ => {}
        }
    }
    n
}

/// actson, push-fed in chunks.
pub fn actson_chunks(input: &[u8], chunk: usize) -> usize {
    let mut i = 0;
    actson_run(|f| {
        let end = (i + chunk).min(input.len());
        i += f.push_bytes(&input[i..end]);
        if i == input.len() {
            f.done();
        }
    })
}

/// Time spent on `input` fed `piece` bytes at a time with `other` between pieces: the
/// parser's time alone (the other work is not counted). Each piece arrives as the network
/// layer hands it over, in a buffer of its own just written (hot in cache); `feed` gets it
/// and where it ends in the stream.
fn gateway<F: FnMut(Bytes, usize)>(
    input: &Bytes,
    piece: usize,
    other: Other,
    work: &mut Work,
    feed: F,
) -> Duration {
    gateway_then(input, piece, other, work, || {}, feed)
}

/// [`gateway`] with `then` run (untimed) after the other work, before each piece.
fn gateway_then<F: FnMut(Bytes, usize)>(
    input: &Bytes,
    piece: usize,
    other: Other,
    work: &mut Work,
    mut then: impl FnMut(),
    mut feed: F,
) -> Duration {
    let mut spent = Duration::ZERO;
    let mut i = 0;
    while i < input.len() {
        let j = (i + piece).min(input.len());
        work.run(other);
        then();
        let fresh = Bytes::copy_from_slice(&input[i..j]);
        let t = Instant::now();
        feed(fresh, j);
        spent += t.elapsed();
        i = j;
    }
    spent
}

/// Peers fed the same stream as a gateway feeds it: per piece of `piece` bytes (the
/// network's reads), then the other work. Each returns (values found, parser time).
pub struct Gateway<'a> {
    pub input: &'a Bytes,
    pub spans: &'a [(usize, usize)],
    pub piece: usize,
    pub other: Other,
}

impl<'a> Gateway<'a> {
    /// The stream in 4 KiB pieces (a gateway's reads), `other` between two.
    pub fn new(input: &'a Bytes, spans: &'a [(usize, usize)], other: Other) -> Self {
        Gateway {
            input,
            spans,
            piece: 4096,
            other,
        }
    }
}

impl Gateway<'_> {
    /// No parser: the timer alone around each piece, what every side's figure includes
    /// besides its parser (a few tens of ns a piece, with no cold start of its own).
    pub fn timer_only(&self, work: &mut Work) -> (usize, Duration) {
        let mut n = 0;
        let t = gateway(self.input, self.piece, self.other, work, |fresh, _| {
            n += std::hint::black_box(fresh.len());
        });
        (n, t)
    }

    /// toolstream, each piece one `push` of a `Bytes` (zero-copy values).
    pub fn toolstream(&self, work: &mut Work) -> (usize, Duration) {
        let mut s = Splitter::new(Mode::Objects);
        let mut out = Vec::new();
        let mut n = 0;
        let t = gateway(self.input, self.piece, self.other, work, |fresh, _| {
            s.push(fresh, &mut out).expect("valid");
            n += out.len();
            out.clear();
        });
        (n, t)
    }

    /// toolstream, each piece in `chunk`-byte slices (`push_slice`), as deltas come.
    pub fn toolstream_slices(&self, chunk: usize, work: &mut Work) -> (usize, Duration) {
        self.toolstream_slices_then(chunk, work, || {})
    }

    /// [`Gateway::toolstream_slices`] with `then` run (untimed) between the other work and
    /// each piece.
    pub fn toolstream_slices_then(
        &self,
        chunk: usize,
        work: &mut Work,
        then: impl FnMut(),
    ) -> (usize, Duration) {
        let mut s = Splitter::new(Mode::Objects);
        let mut out = Vec::new();
        let mut n = 0;
        let t = gateway_then(
            self.input,
            self.piece,
            self.other,
            work,
            then,
            |fresh, _| {
                for c in fresh.chunks(chunk) {
                    s.push_slice(c, &mut out).expect("valid");
                }
                n += out.len();
                out.clear();
            },
        );
        (n, t)
    }

    /// serde_json, which cannot take a value a piece at a time: the pieces are kept in a
    /// buffer, and each whole value parsed once, in the piece that completes it (where
    /// values end is handed to it for free: the least it can do).
    pub fn serde(&self, work: &mut Work) -> (usize, Duration) {
        let mut next = 0;
        let mut held: Vec<u8> = Vec::new();
        let mut base = 0;
        let t = gateway(self.input, self.piece, self.other, work, |fresh, j| {
            held.extend_from_slice(&fresh);
            let mut used = 0;
            while next < self.spans.len() && self.spans[next].1 <= j {
                let (s, e) = self.spans[next];
                let _: IgnoredAny =
                    serde_json::from_slice(&held[s - base..e - base]).expect("valid");
                used = e - base;
                next += 1;
            }
            if used > 0 {
                held.drain(..used);
                base += used;
            }
        });
        (next, t)
    }

    /// actson, pushed `chunk` bytes at a time (validating, byte by byte).
    pub fn actson(&self, chunk: usize, work: &mut Work) -> (usize, Duration) {
        let len = self.input.len();
        let mut fresh = Bytes::new();
        let (mut i, mut piece_end) = (0, 0);
        let mut spent = Duration::ZERO;
        let mut t = Instant::now();
        let n = actson_run(|f| {
            if i == piece_end {
                // The piece is read: the other work and the next piece's arrival, untimed.
                spent += t.elapsed();
                work.run(self.other);
                piece_end = (i + self.piece).min(len);
                fresh = Bytes::copy_from_slice(&self.input[i..piece_end]);
                t = Instant::now();
            }
            let start = fresh.len() - (piece_end - i);
            let end = (start + chunk).min(fresh.len());
            i += f.push_bytes(&fresh[start..end]);
            if i == len {
                f.done();
            }
        });
        spent += t.elapsed();
        (n, spent)
    }
}
