//! What the fuzz targets share.

/// The fuzzer's cut points as sorted offsets into an input of `len` bytes (each taken
/// modulo `len + 1`, so any `u16` is a valid cut).
pub fn cut_points(cuts: &[u16], len: usize) -> Vec<usize> {
    let mut out: Vec<usize> = cuts.iter().map(|&c| c as usize % (len + 1)).collect();
    out.sort_unstable();
    out
}

/// What a pipeline run gives: the events, the turn to send back (in the detected format),
/// and the views of the first four call slots at the end.
pub type PipelineRun = (
    Vec<toolstream::assemble::Event>,
    Option<serde_json::Value>,
    Vec<Option<serde_json::Value>>,
);

/// Run `data` through a pipeline with `policy` and `framing`, pushed as cut at `cuts`,
/// asserting after every push that the bytes held stay at or under `bound`.
pub fn run_pipeline(
    data: &bytes::Bytes,
    cuts: &[usize],
    policy: toolstream::assemble::Policy,
    framing: toolstream::sse::Limits,
    bound: usize,
) -> PipelineRun {
    use toolstream::pipeline::Stream;
    use toolstream::replay::Turn;
    let mut s = Stream::with_limits(None, policy, framing);
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        s.push(data.slice(prev..c.max(prev)), &mut out);
        assert!(s.buffered() <= bound, "buffered {} > {bound}", s.buffered());
        prev = c.max(prev);
    }
    // The views of the calls still open at the end do not depend on the chunking.
    let views = (0..4).map(|i| s.preview(i).cloned()).collect();
    let format = s.format();
    s.finish(&mut out);
    let turn = format.map(|f| {
        let mut t = Turn::new(f);
        for e in &out {
            t.push(e);
        }
        t.to_json()
    });
    (out, turn, views)
}
