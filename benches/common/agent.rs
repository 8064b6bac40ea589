//! The second splitter corpus, written independently of the first ([`super::splitter`]):
//! tool-call arguments in the shapes coding agents' tools take (a file written whole, an
//! edit of old and new text, several edits, a shell command, a search, a to-do list, a
//! patch), their text cut from real files (this repository's Rust, Python, shell,
//! Markdown and recorded provider streams, compiled in), serialized by serde_json (its
//! escaping, not the first corpus's), some pretty-printed as some providers send them.
//! Its own generator (splitmix64), sizes log-uniform from ~60 B to 64 KiB.

use bytes::Bytes;
use serde_json::{json, Value};

/// Real text the arguments are cut from: (a path as an agent names it, the text). The texts
/// are copies of those files as they stood when the corpus was frozen (`benches/data/agent/`),
/// so the corpus, and every figure measured on it, stays the same when the files change.
const SOURCES: &[(&str, &str)] = &[
    (
        "src/json/machine/fast.rs",
        include_str!("../data/agent/fast.rs.txt"),
    ),
    (
        "proxy/src/rewrite.rs",
        include_str!("../data/agent/rewrite.rs.txt"),
    ),
    ("README.md", include_str!("../data/agent/README.md.txt")),
    (
        "python/tests/test_toolstream.py",
        include_str!("../data/agent/test_toolstream.py.txt"),
    ),
    (
        "scripts/bench-report.sh",
        include_str!("../data/agent/bench-report.sh.txt"),
    ),
    (
        "examples/captures/anthropic-thinking-tool-use.sse",
        include_str!("../data/agent/anthropic-thinking-tool-use.sse.txt"),
    ),
];

/// splitmix64.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// About `len` bytes of one source's text, from a random line on (whole characters).
fn cut(m: &mut Mix, len: usize) -> (&'static str, &'static str) {
    let (path, text) = SOURCES[m.below(SOURCES.len())];
    let mut from = m.below(text.len().saturating_sub(len).max(1));
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    // From the start of a line, as an agent quotes a file.
    from = text[..from].rfind('\n').map_or(0, |k| k + 1);
    let mut to = (from + len).min(text.len());
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    (path, &text[from..to])
}

/// Lines of `text`, at most `n`.
fn lines(text: &str, n: usize) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .collect()
}

fn arguments(m: &mut Mix, target: usize) -> Value {
    match m.below(8) {
        0 | 1 => {
            let (path, text) = cut(m, target);
            json!({"file_path": path, "content": text})
        }
        2 => {
            let (path, old) = cut(m, target / 2);
            let new = old.replace("self", "this").replace("    ", "\t");
            json!({"file_path": path, "old_string": old, "new_string": new, "replace_all": false})
        }
        3 => {
            let (path, _) = cut(m, 1);
            let mut edits = Vec::new();
            let mut size = 0;
            while size < target {
                let len = 40 + m.below(400);
                let (_, old) = cut(m, len);
                size += old.len() * 2 + 40;
                edits.push(json!({"old_string": old, "new_string": old.to_uppercase()}));
            }
            json!({"file_path": path, "edits": edits})
        }
        4 => {
            let (_, text) = cut(m, target.min(2000));
            let command = lines(text, 3).join(" && ");
            json!({"command": command, "description": "Run the step", "timeout": 120000, "run_in_background": false})
        }
        5 => {
            let (path, text) = cut(m, 200);
            let pattern = text
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ");
            json!({"pattern": pattern, "path": path, "output_mode": "content", "-n": true, "head_limit": 50})
        }
        6 => {
            let (_, text) = cut(m, target);
            let statuses = ["pending", "in_progress", "completed"];
            let todos: Vec<Value> = lines(text, 200)
                .into_iter()
                .map(|l| {
                    let l = l.trim();
                    json!({"content": l, "status": statuses[l.len() % 3], "activeForm": format!("Working on {l}")})
                })
                .collect();
            json!({"todos": todos})
        }
        _ => {
            let (path, text) = cut(m, target);
            let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
            for l in text.lines() {
                patch.push_str(&format!("-{l}\n+{}\n", l.trim_end()));
            }
            patch.push_str("*** End Patch\n");
            json!({"input": patch})
        }
    }
}

/// Objects of the second corpus, `}{`-glued, `bytes` in all, and their number.
pub fn corpus(bytes: usize) -> (Bytes, usize) {
    let mut m = Mix(0x005E_ED0F_A6E7);
    let mut out = Vec::with_capacity(bytes + 140_000);
    let mut n = 0;
    while out.len() < bytes {
        // Log-uniform sizes, ~60 B to 64 KiB.
        let target = (60.0 * 1092.0f64.powf(m.below(1000) as f64 / 1000.0)) as usize;
        let v = arguments(&mut m, target);
        if m.below(5) == 0 {
            serde_json::to_writer_pretty(&mut out, &v).expect("serializable");
        } else {
            serde_json::to_writer(&mut out, &v).expect("serializable");
        }
        n += 1;
    }
    (Bytes::from(out), n)
}
