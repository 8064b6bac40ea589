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

/// The oracle over a pipeline's events (the tests' own, `tests/common/oracle.rs`).
#[path = "../../tests/common/oracle.rs"]
pub mod oracle;

/// The counting allocator (the tests' own, `tests/common/alloc.rs`): each target that
/// asserts memory installs it as its global allocator.
#[path = "../../tests/common/alloc.rs"]
pub mod alloc;

/// What a run may hold whatever its input, for `policy` and `framing`: a line and an event
/// of framing, the payloads held before the format is known (the event limit), and per
/// call its arguments four times over (its splitter, its view, its failure's bytes, its
/// first object kept for duplicate detection).
pub fn limits_bound(
    policy: &toolstream::assemble::Policy,
    framing: &toolstream::sse::Limits,
) -> usize {
    let args = policy.json.value_bytes() as usize + 1;
    (framing.line_bytes() + 2 * framing.event_bytes()) as usize + policy.max_calls * 4 * args
}

/// Whether the pipeline reads `data` as SSE: `format`'s framing when given, else the
/// first byte that is not whitespace decides (as `pipeline::Stream` documents), SSE past
/// 64 KiB of leading whitespace.
pub fn read_as_sse(data: &[u8], format: Option<toolstream::provider::Format>) -> bool {
    if let Some(f) = format {
        return f.framing() == toolstream::provider::Framing::Sse;
    }
    match data.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(k) if k <= 64 << 10 => !matches!(data[k], 0 | b'{' | b'['),
        Some(_) => true,
        None => data.len() > 64 << 10,
    }
}

/// Check what every pipeline run must give: the oracle's properties, and that every SSE
/// event or line the framing dropped was reported (as many `Dropped` events of those
/// reasons as the SSE decoder itself skips in the same bytes, when the pipeline reads them
/// as SSE). `format` is the format the pipeline was given (`None`: detected).
pub fn check_run(
    data: &[u8],
    events: &[toolstream::assemble::Event],
    format: Option<toolstream::provider::Format>,
    framing: toolstream::sse::Limits,
) {
    use toolstream::assemble::{DropReason, Event};
    use toolstream::sse::Item;
    if let Err(e) = oracle::check_events(events) {
        panic!("{e}: {events:?}");
    }
    if !read_as_sse(data, format) {
        return;
    }
    let mut d = toolstream::sse::Decoder::with_limits(framing);
    let mut items = Vec::new();
    d.push(bytes::Bytes::copy_from_slice(data), &mut items);
    let end = d.finish(&mut items);
    let skipped = items
        .iter()
        .filter(|i| matches!(i, Item::Skipped(_)))
        .count()
        + usize::from(end.is_err_and(|e| e.skipped.is_some()));
    let reported = events
        .iter()
        .filter(|e| {
            matches!(e, Event::Dropped(d)
                if matches!(d.reason, DropReason::LineTooLong | DropReason::EventTooLarge))
        })
        .count();
    assert_eq!(
        reported, skipped,
        "dropped SSE bytes not reported: {events:?}"
    );
}

/// The whole check of a pipeline fuzz target: run `data` cut at `cuts` (buffered memory at
/// or under `bound` after every push), check the run ([`check_run`]), the peak allocation
/// (at most 32 times the input plus the limits and the 64 KiB of whitespace the pipeline
/// may hold), and that the whole input in one push gives the same.
pub fn check_pipeline(
    data: &bytes::Bytes,
    cuts: &[usize],
    policy: toolstream::assemble::Policy,
    framing: toolstream::sse::Limits,
    bound: usize,
) {
    let run = |cuts: &[usize]| run_pipeline(data, cuts, policy, framing, bound);
    let (chunked, peak, _) = alloc::measure(|| run(cuts));
    check_run(data, &chunked.0, None, framing);
    let most = 32 * data.len() + limits_bound(&policy, &framing) + (64 << 10);
    assert!(
        peak <= most,
        "peak {peak} bytes for {} bytes of input",
        data.len()
    );
    assert_eq!(chunked, run(&[]), "chunking changed the result");
}
