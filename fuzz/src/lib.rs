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

/// What the SSE standard's line-by-line reading of a whole stream drops under `limits`:
/// the events skipped (an over-limit line that is not a comment, or an event whose field
/// lines pass the event limit, each up to the next blank line, and one still being skipped
/// at the end) and the comment lines over the line limit that end (skipped alone). Written apart
/// from the decoder, from the standard and the limits' documentation, as the fuzz targets'
/// reference for what the decoder must report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SseDrops {
    /// Events dropped.
    pub dropped: usize,
    /// Comment lines skipped.
    pub comments: usize,
}

/// See [`SseDrops`].
pub fn sse_reference(data: &[u8], limits: &toolstream::sse::Limits) -> SseDrops {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let (max_line, max_event) = (limits.line_bytes(), limits.event_bytes());
    let mut drops = SseDrops::default();
    let (mut skipping, mut event) = (false, 0u64);
    let mut i = 0;
    while i < data.len() {
        // A line ends at CR, LF or CRLF; the last one may end with the stream.
        let end = data[i..]
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .map(|k| i + k);
        let line = &data[i..end.unwrap_or(data.len())];
        i = match end {
            Some(e) if data[e] == b'\r' && data.get(e + 1) == Some(&b'\n') => e + 2,
            Some(e) => e + 1,
            None => data.len(),
        };
        if skipping {
            if line.is_empty() {
                skipping = false;
                drops.dropped += 1;
            }
            continue;
        }
        if line.is_empty() {
            event = 0;
        } else if line[0] == b':' {
            // (An unterminated last line is no line: the end reports it as discarded.)
            if line.len() as u64 > max_line && end.is_some() {
                drops.comments += 1;
            }
        } else if line.len() as u64 > max_line {
            (skipping, event) = (true, 0);
        } else {
            event += line.len() as u64;
            if event > max_event {
                (skipping, event) = (true, 0);
            }
        }
    }
    drops.dropped += usize::from(skipping);
    drops
}

/// Check what every pipeline run must give: the oracle's properties, and that every SSE
/// event or line the framing dropped was reported (as many `Dropped` events of those
/// reasons as the standard's reading drops in the same bytes ([`sse_reference`]), when the
/// pipeline reads them as SSE). `format` is the format the pipeline was given (`None`: detected).
pub fn check_run(
    data: &[u8],
    events: &[toolstream::assemble::Event],
    format: Option<toolstream::provider::Format>,
    framing: toolstream::sse::Limits,
) {
    use toolstream::assemble::{DropReason, Event};
    if let Err(e) = oracle::check_events(events) {
        panic!("{e}: {events:?}");
    }
    if !read_as_sse(data, format) {
        return;
    }
    let skipped = sse_reference(data, &framing).dropped;
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

/// What a strict client reads of a proxy's output: the data of each event, read as the
/// SSE spec says (a `data:` line per
/// line of the data); each must be `[DONE]` or one JSON value (RFC 8259).
pub fn client_events(out: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(out).expect("the output is UTF-8");
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in text.split('\n') {
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        if let Some(v) = line.strip_prefix("data:") {
            let v = v.strip_prefix(' ').unwrap_or(v);
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(v);
                }
                None => data = Some(v.to_string()),
            }
        }
    }
    assert!(data.is_none(), "the output ends inside an event");
    for e in &events {
        if e != "[DONE]" {
            // RFC 8259 JSON, by the library's strict splitter (serde_json refuses some of
            // it, `1e400` among it: such an event is what the upstream sent, forwarded).
            let mut s = toolstream::json::Splitter::new(toolstream::json::Mode::Any);
            let mut values = Vec::new();
            let one = s
                .push(bytes::Bytes::copy_from_slice(e.as_bytes()), &mut values)
                .and_then(|()| s.finish())
                .map(|last| values.len() + usize::from(last.is_some()) == 1);
            assert!(
                matches!(one, Ok(true)),
                "an event a client cannot parse: {e:?}"
            );
        }
    }
    events
}

/// (name, arguments) of each call the pipeline delivered or failed, as a rewriter's client
/// should get them: a call's arguments, a failed call's bytes as they came; markup in the
/// text that could not be read is left out (the rewriters leave it in the text).
pub fn pipeline_calls(events: &[toolstream::assemble::Event]) -> Vec<(String, String)> {
    use toolstream::assemble::{Event, IdSource};
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some((
                c.name.clone(),
                String::from_utf8_lossy(&c.arguments).into_owned(),
            )),
            Event::ToolCallFailed(f) if f.id_source == IdSource::Text => None,
            Event::ToolCallFailed(f) => {
                Some((f.name.clone(), String::from_utf8_lossy(&f.raw).into_owned()))
            }
            _ => None,
        })
        .collect()
}
