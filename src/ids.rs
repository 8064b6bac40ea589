//! The ids toolstream makes: for the second and later objects of a glued call, for a call
//! taken out of the text, and for a call the provider sent without one.
//!
//! # The scheme
//!
//! - A call's first object keeps the provider's id, untouched: clients match results by it.
//! - A made id has the provider's shape: the prefix of the id it is made from (`call_`,
//!   `toolu_`, `tooluse_`, `fc_`: letters up to the first `_` or `-`), or the prefix the
//!   caller names for the API (`call_` for OpenAI chat, `toolu_` for Anthropic); then a body
//!   of ASCII letters and digits as long as the original's (9 for Mistral's ids, which must
//!   be 9 alphanumerics), 24 when there is no original.
//! - The body is a hash of what the id is made from (the original id and the part number;
//!   for a text call, the response's first payload and the call's slot), so the same
//!   input gives the same ids (tests stay exact) and two responses give different ones.
//! - It always holds a letter, and it is checked against every id in the response, so a
//!   made id is unique in it.
//!
//! # Why not `<id>_2`
//!
//! A suffix reads as structure. One coding agent treats a `tool_use` id ending in
//! `_<digits>` as an entry of one batched call: it folded the second call's result into
//! the first's, and its next request said the second result was missing. So no made id has
//! a part after its last `_` or `-` that is all digits, and none is another id plus a
//! suffix.

/// The body's alphabet: what every provider accepts in an id.
const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The body's length when there is no original to take it from.
const BODY: usize = 24;

/// The longest body made (an original's longer body is not copied past it).
const MAX_BODY: usize = 40;

/// The shortest body made: 9 alphanumerics are Mistral's form, and 62^9 keeps chance
/// collisions out of reach within one response (each is checked anyway).
const MIN_BODY: usize = 9;

/// The prefix of `id` that names its kind (`call_`, `toolu_`, `fc_`, `chatcmpl-`): ASCII
/// letters up to and including the first `_` or `-`, at most 12 bytes; `""` when there is
/// none.
pub fn prefix_of(id: &str) -> &str {
    let b = id.as_bytes();
    match b.iter().position(|&c| c == b'_' || c == b'-') {
        Some(n) if (1..12).contains(&n) && b[..n].iter().all(u8::is_ascii_alphabetic) => &id[..=n],
        _ => "",
    }
}

/// The id of part `part` (2, 3, ...) of the call whose id is `original`, at `attempt` (0,
/// then higher when a made id is already in the response).
pub fn derive(original: &str, part: u32, attempt: u32) -> String {
    let prefix = prefix_of(original);
    let len = (original.len() - prefix.len()).clamp(MIN_BODY, MAX_BODY);
    let mut out = String::with_capacity(prefix.len() + len);
    out.push_str(prefix);
    body(
        &[
            b"part",
            original.as_bytes(),
            &part.to_le_bytes(),
            &attempt.to_le_bytes(),
        ],
        len,
        &mut out,
    );
    out
}

/// An id with `prefix` for a call that has none from the provider (a text call, or a
/// call sent without an id), made from `salt` (the response's), the call's `slot` and
/// `attempt`.
pub fn mint(prefix: &str, salt: u64, slot: u32, attempt: u32) -> String {
    let mut out = String::with_capacity(prefix.len() + BODY);
    out.push_str(prefix);
    body(
        &[
            b"mint",
            &salt.to_le_bytes(),
            &slot.to_le_bytes(),
            &attempt.to_le_bytes(),
        ],
        BODY,
        &mut out,
    );
    out
}

/// A salt for [`mint`] from the bytes that identify a response (its first payload: every
/// provider puts the response's id or creation time there).
pub fn salt(bytes: &[u8]) -> u64 {
    fnv(FNV_BASIS, &[bytes])
}

/// Whether `id` has the shape a client may read as structure: a part after its last `_`
/// or `-` that is all digits.
pub fn has_numeric_tail(id: &str) -> bool {
    let tail = id.rsplit(['_', '-']).next().unwrap_or("");
    id.contains(['_', '-']) && !tail.is_empty() && tail.bytes().all(|c| c.is_ascii_digit())
}

const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `parts`, each ended by its length (so that the parts' boundaries count).
fn fnv(basis: u64, parts: &[&[u8]]) -> u64 {
    let mut h = basis;
    for p in parts {
        for &b in p.iter() {
            h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
        for b in (p.len() as u64).to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
    }
    h
}

/// splitmix64's output function: spreads every input bit over the output.
fn finish(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `len` characters of [`ALPHABET`] from a hash of `parts`, at least one of them a letter.
fn body(parts: &[&[u8]], len: usize, out: &mut String) {
    let a = fnv(FNV_BASIS, parts);
    let b = fnv(a ^ 0x9e37_79b9_7f4a_7c15, parts);
    let start = out.len();
    let mut word = 0u64;
    let mut left = 0;
    for i in 0..len {
        if left == 0 {
            // Ten base-62 digits per 64-bit word (62^10 < 2^64).
            word = finish(a ^ finish(b.wrapping_add(i as u64)));
            left = 10;
        }
        out.push(ALPHABET[(word % 62) as usize] as char);
        word /= 62;
        left -= 1;
    }
    if out.as_bytes()[start..].iter().all(u8::is_ascii_digit) {
        // One letter, chosen by the hash too.
        let letter = ALPHABET[10 + (a % 52) as usize] as char;
        out.replace_range(start..start + 1, letter.encode_utf8(&mut [0; 4]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_ids_keep_the_provider_shape_and_never_end_in_digits() {
        let d = derive("toolu_01A09q90qw90lq917835lq9", 2, 0);
        assert!(d.starts_with("toolu_") && d.len() == "toolu_01A09q90qw90lq917835lq9".len());
        assert!(!d.contains("01A09q90qw90lq917835lq9"));
        // Mistral's 9 alphanumerics stay 9 alphanumerics.
        let m = derive("D681PevKs", 2, 0);
        assert_eq!(m.len(), 9);
        assert!(m.bytes().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(prefix_of("call_abc"), "call_");
        assert_eq!(prefix_of("chatcmpl-tool-1"), "chatcmpl-");
        assert_eq!(prefix_of("D681PevKs"), "");
        assert_eq!(prefix_of("x1_abc"), "");
        for part in 2..2000 {
            for original in ["call_1", "toolu_0", "1", "", "call_", "a-b-c"] {
                let id = derive(original, part, 0);
                assert!(!has_numeric_tail(&id), "{id}");
                assert!(id.bytes().any(|c| c.is_ascii_alphabetic()), "{id}");
            }
            assert!(!has_numeric_tail(&mint("call_", 7, part, 0)));
        }
        assert_eq!(derive("call_1", 2, 0), derive("call_1", 2, 0));
        assert_ne!(derive("call_1", 2, 0), derive("call_1", 3, 0));
        assert_ne!(derive("call_1", 2, 0), derive("call_1", 2, 1));
        assert_ne!(mint("call_", 1, 0, 0), mint("call_", 2, 0, 0));
        assert!(has_numeric_tail("toolu_abc_2"));
        assert!(has_numeric_tail("call-0123"));
        assert!(!has_numeric_tail("call_abc"));
        assert!(!has_numeric_tail("12345"));
    }
}
