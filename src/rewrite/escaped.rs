//! The arguments of the calls in flight as JSON string text, kept beside their decoded
//! text, so that a call written out whole takes its arguments' escaped form from there
//! instead of escaping the decoded text again: in arguments that hold code an escape
//! comes every few bytes, and escaping them again was the largest cost of writing a call.
//!
//! Each piece of a call's arguments is kept twice: its decoded text (what the decoder gave
//! the assembler) and its JSON string text, without the quotes: the piece as the upstream
//! escaped it when that is what the escaper writes for it (the decoder's template read it
//! as ASCII with only the escapes `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`:
//! [`crate::json::cursor::simple_string_onto`]), else the piece escaped here. Each piece is
//! whole escapes, so the kept text is the escaper's text of the kept decoded text.
//!
//! [`Escaped::take`] hands the kept text out only for a decoded text equal, byte for byte,
//! to the arguments being written: which call of the assembler's a piece went to (a call
//! split from glued arguments, an index reused) never decides what is written, only
//! whether the kept text can be used. The client gets the same bytes either way (checked
//! on every call written in a build with debug assertions, as the tests are).

/// The most calls kept at once (the oldest goes first).
const MAX_CALLS: usize = 16;

/// The most bytes kept at once, decoded and escaped text together (a call past it is
/// escaped when written, as before).
const MAX_BYTES: usize = 256 << 10;

/// The calls in flight, by the provider's choice and index.
#[derive(Debug, Default)]
pub(super) struct Escaped {
    calls: Vec<Call>,
    /// Bytes held by `calls`, decoded and escaped.
    bytes: usize,
    /// The buffers of the last call handed out, for the next (calls come one after
    /// another, most often of like sizes).
    spare: (String, Vec<u8>),
}

/// The largest buffers kept for the next call.
const KEEP_SPARE: usize = 16 << 10;

#[derive(Debug)]
struct Call {
    key: (u32, Option<u32>),
    text: String,
    escaped: Vec<u8>,
    /// Past [`MAX_BYTES`]: nothing kept, nothing handed out.
    gone: bool,
}

impl Escaped {
    /// A call starts at `key` (its id or name came): what was kept under it goes.
    pub(super) fn start(&mut self, key: (u32, Option<u32>)) {
        if let Some(i) = self.calls.iter().position(|c| c.key == key) {
            self.remove(i);
        }
    }

    /// A piece of the arguments of the call at `key`: `text` decoded, `escaped` its JSON
    /// string text as the upstream wrote it when that has only the short escapes and
    /// printable ASCII (else `None`: the text is escaped here).
    pub(super) fn piece(&mut self, key: (u32, Option<u32>), text: &str, escaped: Option<&[u8]>) {
        let i = match self.calls.iter().rposition(|c| c.key == key) {
            Some(i) => i,
            None => {
                if self.calls.len() == MAX_CALLS {
                    self.remove(0);
                }
                let (text, escaped) = std::mem::take(&mut self.spare);
                self.calls.push(Call {
                    key,
                    text,
                    escaped,
                    gone: false,
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[i];
        if call.gone {
            return;
        }
        let before = call.text.len() + call.escaped.len();
        call.text.push_str(text);
        match escaped {
            Some(e) => call.escaped.extend_from_slice(e),
            None => crate::json::escape::write_inner(&mut call.escaped, text),
        }
        self.bytes += call.text.len() + call.escaped.len() - before;
        if self.bytes > MAX_BYTES {
            self.bytes -= call.text.len() + call.escaped.len();
            // (Its buffers freed.)
            *call = Call {
                key,
                text: String::new(),
                escaped: Vec::new(),
                gone: true,
            };
        }
    }

    /// The JSON string text (no quotes) of `arguments` appended to `out`, when a call
    /// kept has exactly that decoded text (`false`, and nothing written, otherwise); that
    /// call is then no longer kept.
    pub(super) fn take(&mut self, arguments: &str, out: &mut Vec<u8>) -> bool {
        let Some(i) = self
            .calls
            .iter()
            .position(|c| !c.gone && c.text.len() == arguments.len() && c.text == arguments)
        else {
            return false;
        };
        let kept = &self.calls[i].escaped;
        debug_assert!(
            {
                let mut again = Vec::new();
                crate::json::escape::write_inner(&mut again, arguments);
                again == *kept
            },
            "the text kept is the escaper's"
        );
        out.extend_from_slice(kept);
        self.remove(i);
        true
    }

    fn remove(&mut self, i: usize) {
        let mut call = self.calls.remove(i);
        self.bytes -= call.text.len() + call.escaped.len();
        if call.text.capacity() <= KEEP_SPARE && call.escaped.capacity() <= KEEP_SPARE {
            call.text.clear();
            call.escaped.clear();
            self.spare = (call.text, call.escaped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(e: &mut Escaped, arguments: &str) -> Option<String> {
        let mut out = b"x".to_vec();
        let taken = e.take(arguments, &mut out);
        assert_eq!(taken, out.len() > 1, "written only when taken");
        taken.then(|| String::from_utf8(out.split_off(1)).unwrap())
    }

    #[test]
    fn text_is_handed_out_only_for_equal_arguments() {
        let mut e = Escaped::default();
        e.piece((0, Some(0)), "{\"a\":", Some(br#"{\"a\":"#));
        e.piece((0, Some(0)), "\"\n\"}", Some(br#"\"\n\"}"#));
        // Not the whole, not another text of that length.
        assert_eq!(take(&mut e, "{\"a\":"), None);
        assert_eq!(take(&mut e, "{\"b\":\"\n\"}"), None);
        assert_eq!(
            take(&mut e, "{\"a\":\"\n\"}").as_deref(),
            Some(r#"{\"a\":\"\n\"}"#)
        );
        // Taken once.
        assert_eq!(take(&mut e, "{\"a\":\"\n\"}"), None);
        assert_eq!(e.bytes, 0);
        // A piece with no escaped text given is escaped here (into the buffers of the
        // call taken before).
        e.piece((0, Some(1)), "a\"\u{1}é/", None);
        assert_eq!(
            take(&mut e, "a\"\u{1}é/").as_deref(),
            Some("a\\\"\\u0001é/")
        );
    }

    #[test]
    fn a_start_drops_what_was_kept_and_the_bounds_hold() {
        let mut e = Escaped::default();
        e.piece((0, Some(0)), "old", None);
        e.start((0, Some(0)));
        e.piece((0, Some(0)), "new", None);
        assert_eq!(take(&mut e, "old"), None);
        assert_eq!(take(&mut e, "new").as_deref(), Some("new"));
        // More calls than kept: the oldest goes.
        for i in 0..=MAX_CALLS as u32 {
            e.piece((0, Some(i)), &i.to_string(), None);
        }
        assert_eq!(e.calls.len(), MAX_CALLS);
        assert_eq!(take(&mut e, "0"), None);
        assert!(take(&mut e, "1").is_some());
        // Past the byte bound: the call is gone, and stays gone until it starts again.
        let big = "x".repeat(MAX_BYTES / 2);
        e.piece((1, None), &big, None);
        e.piece((1, None), "y", None);
        assert!(e.bytes <= MAX_BYTES);
        assert_eq!(take(&mut e, &(big.clone() + "y")), None);
        assert_eq!(take(&mut e, &big), None);
        e.start((1, None));
        e.piece((1, None), "z", None);
        assert_eq!(take(&mut e, "z").as_deref(), Some("z"));
    }
}
