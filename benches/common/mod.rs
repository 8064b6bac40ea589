//! Shared by the benches: a deterministic generator and the corpus size knob.
#![allow(dead_code)]

pub mod agent;
pub mod conditions;
pub mod interleaved;
pub mod pipeline;
pub mod splitter;
pub mod sse;

/// xorshift64: deterministic corpora with no files and no dependency.
pub struct Rng(pub u64);

impl Rng {
    /// The next pseudo-random value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// One of `xs`.
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Corpus size in bytes: `TOOLSTREAM_BENCH_MB` MiB, or `default_mb`.
pub fn corpus_bytes(default_mb: usize) -> usize {
    std::env::var("TOOLSTREAM_BENCH_MB")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(default_mb)
        << 20
}
