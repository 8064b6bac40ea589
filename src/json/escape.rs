//! Writing a string as a JSON string token: the bytes serde_json writes for it (`\"`, `\\`,
//! `\b \f \n \r \t`, every other control byte as `\u00xx`, everything else as it is), found
//! 64 bytes at a time with the block classifier and copied in runs. The rewriters write each
//! call's arguments so, the largest strings they write; serde_json's writer looks every
//! byte up in a table, which costs several times as much on arguments that hold code
//! (an escape every few bytes is usual there).

/// `s` as a JSON string token, quotes included, appended to `out`.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    // Room for an escape every four bytes (arguments that hold code come near that).
    out.reserve(s.len() + s.len() / 4 + 2);
    out.push(b'"');
    write_inner(out, s);
    out.push(b'"');
}

/// [`write_str`] without the quotes: the JSON string text of `s`.
pub(crate) fn write_inner(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + b.len() / 4);
    // The first byte not yet written.
    let mut from = 0;
    let mut blocks = b.chunks_exact(64);
    let mut at = 0;
    for block in blocks.by_ref() {
        let block: &[u8; 64] = block.try_into().expect("64 bytes");
        let m = crate::scan::classify(block);
        let mut special = m.quote | m.backslash | m.control;
        while special != 0 {
            let k = at + special.trailing_zeros() as usize;
            out.extend_from_slice(&b[from..k]);
            escape(out, b[k]);
            from = k + 1;
            special &= special - 1;
        }
        at += 64;
    }
    for (k, &c) in blocks.remainder().iter().enumerate() {
        if c < 0x20 || c == b'"' || c == b'\\' {
            let k = at + k;
            out.extend_from_slice(&b[from..k]);
            escape(out, c);
            from = k + 1;
        }
    }
    out.extend_from_slice(&b[from..]);
}

/// The escape of a quote, a backslash or a control byte.
fn escape(out: &mut Vec<u8>, c: u8) {
    let short = match c {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0C => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xF)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(s: &str) -> Vec<u8> {
        let mut out = b"x".to_vec();
        write_str(&mut out, s);
        out.split_off(1)
    }

    /// The bytes serde_json writes, for every byte value in every position of a block and
    /// of the tail, beside runs of text long and short, ASCII and not.
    #[test]
    fn writes_what_serde_json_writes() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "é😀\u{2028}\u{7f}".into(),
            "fn main() { println!(\"hi\"); }\n".repeat(9),
        ];
        for c in 0u8..0x80 {
            for at in [0, 1, 31, 63, 64, 65, 100, 127, 128, 130] {
                let mut s = "a".repeat(at);
                s.push(c as char);
                s.push_str(&"é".repeat(at % 7));
                cases.push(s);
            }
        }
        for s in cases {
            assert_eq!(ours(&s), serde_json::to_vec(&s).unwrap(), "{s:?}");
        }
    }
}
