//! Helpers shared by the integration tests: run the splitter under many chunkings and
//! compare with the reference machine.
#![allow(dead_code)]

pub mod alloc;
pub mod oracle;

use bytes::Bytes;
use toolstream::json::reference::Reference;
use toolstream::json::{ErrorKind, Limits, Mode, Splitter};

/// What a run produced: each value as (start, end, bytes), then the error (kind, offset)
/// and its detail message (`None` from the reference machine, which has no messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub values: Vec<(u64, u64, Vec<u8>)>,
    pub error: Option<(ErrorKind, u64)>,
    pub detail: Option<&'static str>,
}

impl Outcome {
    /// The outcome as the reference machine can give it: without the error's message.
    /// Splitter runs are compared with each other whole, messages included: the message,
    /// like the kind and the offset, must not depend on how the input was cut.
    pub fn without_detail(&self) -> Outcome {
        Outcome {
            detail: None,
            ..self.clone()
        }
    }

    /// Accepted as exactly one value with a clean end.
    pub fn one_clean_value(&self) -> bool {
        self.values.len() == 1 && self.error.is_none()
    }
}

/// Feed `input` cut at the given (sorted) offsets.
pub fn run_cuts(mode: Mode, limits: Limits, input: &Bytes, cuts: &[usize]) -> Outcome {
    run_cuts_with(mode, limits, input, cuts, false)
}

/// As `run_cuts`, through `push_slice` (the copying, allocation-free entry point) when
/// `slices` is set.
pub fn run_cuts_with(
    mode: Mode,
    limits: Limits,
    input: &Bytes,
    cuts: &[usize],
    slices: bool,
) -> Outcome {
    let mut s = Splitter::with_limits(mode, limits);
    let mut out = Vec::new();
    let mut error = None;
    let mut prev = 0;
    let mut emitted = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let c = c.clamp(prev, input.len());
        let r = if slices {
            s.push_slice(&input[prev..c], &mut out)
        } else {
            s.push(input.slice(prev..c), &mut out)
        };
        // Emit on close: every value out of this push ends in this chunk, and every value
        // that ends in it came out (unless the push failed).
        // (A top-level number has no closing byte: it comes out with the byte after it.)
        for v in &out[emitted..] {
            let number = matches!(v.bytes()[0], b'-' | b'0'..=b'9');
            assert!(
                (v.end() as usize > prev || number) && v.end() as usize <= c,
                "value {:?} emitted by the push of {prev}..{c}",
                v.start()..v.end()
            );
        }
        // Zero-copy: through `push`, a value that lies inside the chunk is a slice of it.
        if !slices {
            for v in &out[emitted..] {
                if v.start() as usize >= prev {
                    assert_eq!(
                        v.bytes().as_ptr(),
                        input[v.start() as usize..].as_ptr(),
                        "value {:?} inside the chunk {prev}..{c} was copied",
                        v.start()..v.end()
                    );
                }
            }
        }
        emitted = out.len();
        if let Err(e) = r {
            // Fused: the same error again on the next push and at finish.
            assert_eq!(
                s.push(Bytes::from_static(b"{}"), &mut Vec::new()),
                Err(e.clone())
            );
            error = Some(e);
            break;
        }
        prev = c;
    }
    match error {
        Some(_) => {}
        None => match s.finish() {
            Ok(Some(v)) => out.push(v),
            Ok(None) => {}
            Err(e) => error = Some(e),
        },
    }
    for (i, v) in out.iter().enumerate() {
        assert_eq!(v.index(), i as u64);
        assert_eq!(
            &v.bytes()[..],
            &input[v.start() as usize..v.end() as usize],
            "value bytes must be the exact input bytes"
        );
    }
    if let Some(e) = &error {
        assert_eq!(e.value_index(), out.len() as u64, "error value index");
        // The raw bytes are the stream's own bytes at raw_offset, ending at the offending byte.
        let ro = e.raw_offset() as usize;
        assert_eq!(&e.raw()[..], &input[ro..ro + e.raw().len()], "raw bytes");
        if e.kind() != ErrorKind::Truncated {
            assert_eq!(
                ro + e.raw().len(),
                e.offset() as usize + 1,
                "raw ends at the offending byte"
            );
        }
    }
    Outcome {
        values: out
            .into_iter()
            .map(|v| (v.start(), v.end(), v.bytes().to_vec()))
            .collect(),
        error: error.as_ref().map(|e| (e.kind(), e.offset())),
        detail: error.as_ref().map(|e| e.detail()),
    }
}

/// The reference machine's outcome.
pub fn run_reference(mode: Mode, limits: Limits, input: &[u8]) -> Outcome {
    let (spans, error) = Reference::split(mode, limits, input);
    Outcome {
        values: spans
            .into_iter()
            .map(|(s, e)| (s, e, input[s as usize..e as usize].to_vec()))
            .collect(),
        error,
        detail: None,
    }
}

/// Run `input` whole, one byte at a time, split at every offset, and through the
/// reference machine; assert all agree and return the outcome. For inputs longer than
/// `every_split_max`, split points are sampled (every 97th offset and the ends).
pub fn check_chunkings(mode: Mode, limits: Limits, input: &[u8]) -> Outcome {
    let input = Bytes::copy_from_slice(input);
    let whole = run_cuts(mode, limits, &input, &[]);
    let reference = run_reference(mode, limits, &input);
    assert_eq!(
        whole.without_detail(),
        reference,
        "fast path vs reference on {:?}",
        show(&input)
    );
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(
        run_cuts(mode, limits, &input, &bytewise),
        whole,
        "1-byte chunks on {:?}",
        show(&input)
    );
    for k in 0..=input.len() {
        assert_eq!(
            run_cuts(mode, limits, &input, &[k]),
            whole,
            "split at {k} on {:?}",
            show(&input)
        );
    }
    whole
}

pub fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 200 {
        format!(
            "{}...({} bytes)",
            &s[..s.char_indices().nth(200).map_or(s.len(), |c| c.0)],
            b.len()
        )
    } else {
        s.into_owned()
    }
}

/// Wrap `doc` so that the splitter's token-level path (entered only with at least 16 bytes
/// of input left) reads it: after padding, as an array element, as an object member, and
/// glued after an object. Each wrapped input is run whole, split at every offset, and with
/// small limits, and compared with the reference machine.
pub fn check_token_path(doc: &[u8]) {
    let pad = b"                                        ";
    let wrappers: [(&[u8], &[u8]); 5] = [
        (b"", pad),
        (pad, pad),
        (b"[", b"]                                        "),
        (
            b"{\"padding key\":\"padding value\",\"v\":",
            b"}                                        ",
        ),
        (b"{\"a\":[1,2.5e3,true,null,\"x\"]}", pad),
    ];
    let small = Limits::default()
        .max_depth(3)
        .max_number_bytes(4)
        .max_string_bytes(8)
        .max_value_bytes(48);
    for (before, after) in wrappers {
        let input = Bytes::from([before, doc, after].concat());
        for limits in [Limits::default(), small] {
            let want = run_cuts(Mode::Any, limits, &input, &[]);
            assert_eq!(
                want.without_detail(),
                run_reference(Mode::Any, limits, &input),
                "token path, whole, {limits:?}, on {:?}",
                show(&input)
            );
            for k in 1..input.len() {
                assert_eq!(
                    run_cuts(Mode::Any, limits, &input, &[k]),
                    want,
                    "token path, split at {k}, {limits:?}, on {:?}",
                    show(&input)
                );
            }
        }
    }
}

/// A command that runs the CLI binary `bin`, through the runner named by the
/// `TOOLSTREAM_TEST_RUNNER` environment variable when it is set (words separated by spaces,
/// e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu` when the tests were built for aarch64 and
/// run under emulation, as `.ci/run` does).
pub fn cli(bin: &str) -> std::process::Command {
    match std::env::var("TOOLSTREAM_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut cmd = std::process::Command::new(words.next().expect("not empty"));
            cmd.args(words).arg(bin);
            cmd
        }
        _ => std::process::Command::new(bin),
    }
}

/// The pipeline's events for `input` in `chunk`-byte pushes (`format`: as given, or
/// detected when `None`).
pub fn pipeline_events(
    format: Option<toolstream::provider::Format>,
    input: &Bytes,
    chunk: usize,
) -> Vec<toolstream::assemble::Event> {
    let mut stream = toolstream::pipeline::Stream::new(format);
    let mut events = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let j = (i + chunk.max(1)).min(input.len());
        stream.push(input.slice(i..j), &mut events);
        i = j;
    }
    stream.finish(&mut events);
    events
}

/// The test data shipped in `tests/data/<sub>`: third-party suites and recorded streams,
/// each with its licence (JSONTestSuite, MIT; the Vercel AI SDK's captures, Apache-2.0).
pub fn data_dir(sub: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(sub)
}

/// `inspect --json` events with the ids toolstream made checked and masked: a tool call or
/// a failure whose `id_source` says the id was made, and a duplicate (always a later object of a
/// call, so its id is made when the call has one). Each such id must have the shape the
/// made ids promise — the prefix of the id it was made from (`id_from`) or of the API
/// (`call_`, `toolu_`), nothing after its last `_` or `-` that is all digits, not the
/// original plus a suffix — and be unique among the events' ids; it is then replaced by
/// `"<made>"`, so that hand-written expected files can say where an id is made without
/// holding a hash. (Chunk invariance of the exact ids is checked by comparing runs.)
pub fn mask_made_ids(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    use serde_json::Value;
    let made = |e: &Value| {
        e["type"] == "duplicate" && e["id"].as_str().is_some_and(|i| !i.is_empty())
            || matches!(e["type"].as_str(), Some("tool_call" | "tool_call_error"))
                && e.get("id_source").is_some()
    };
    let mut ids = std::collections::HashMap::<String, usize>::new();
    for e in events {
        if matches!(
            e["type"].as_str(),
            Some("tool_call" | "tool_call_error" | "duplicate")
        ) {
            *ids.entry(e["id"].as_str().unwrap_or("").to_string())
                .or_default() += 1;
        }
    }
    events
        .iter()
        .map(|e| {
            if !made(e) {
                return e.clone();
            }
            let id = e["id"].as_str().expect("a made id is a string");
            let tail = id.rsplit(['_', '-']).next().unwrap_or("");
            assert!(
                !(id.contains(['_', '-']) && tail.bytes().all(|c| c.is_ascii_digit())),
                "a made id ends in digits: {id}"
            );
            assert!(
                id.bytes().any(|c| c.is_ascii_alphabetic()),
                "a made id without a letter: {id}"
            );
            if let Some(from) = e["id_from"].as_str() {
                let prefix = toolstream::ids::prefix_of(from);
                assert!(id.starts_with(prefix), "{id} is not in {from}'s shape");
                assert!(!id.starts_with(from), "{id} is {from} plus a suffix");
            } else if e["id_source"] == "text" {
                assert!(
                    id.starts_with("call_") || id.starts_with("toolu_"),
                    "a text call's id not in an API's shape: {id}"
                );
            }
            assert_eq!(ids[id], 1, "a made id used twice: {id}");
            let mut e = e.clone();
            e["id"] = "<made>".into();
            e
        })
        .collect()
}
