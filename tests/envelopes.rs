//! The OpenAI chat envelope reader (one pass with the strict cursor) against the same
//! decoder written with serde_json (`decode_reference`), on generated
//! `chat.completion.chunk` payloads: random key orders, unknown fields, nulls, escapes,
//! surrogate pairs, whitespace, and single-byte mutations of all of it.

use proptest::prelude::*;
use toolstream::json::reference::Reference;
use toolstream::json::{Limits, Mode};
use toolstream::provider::openai_chat::{decode_reference, Decoder};
use toolstream::provider::Delta;
use toolstream::provider::{anthropic, openai_responses};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

/// A JSON string literal: serde_json's escaping, or every non-ASCII character as `\u`
/// escapes (surrogate pairs above the BMP).
fn string_lit() -> impl Strategy<Value = String> {
    let text = prop::collection::vec(
        prop_oneof![
            Just("a".to_string()),
            Just("call_1".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("\n".to_string()),
            Just("\u{1}".to_string()),
            Just("é".to_string()),
            Just("😀".to_string()),
            Just("{\"city\": ".to_string()),
            Just("/".to_string()),
            Just(" ".to_string()),
        ],
        0..8,
    )
    .prop_map(|v| v.concat());
    (text, any::<bool>()).prop_map(|(t, ascii)| {
        if !ascii {
            return serde_json::to_string(&t).unwrap();
        }
        let mut s = String::from("\"");
        for c in t.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                c if (c as u32) < 0x20 || (c as u32) > 0x7E => {
                    let mut buf = [0u16; 2];
                    for u in c.encode_utf16(&mut buf) {
                        s.push_str(&format!("\\u{:04x}", u));
                    }
                }
                c => s.push(c),
            }
        }
        s.push('"');
        s
    })
}

fn number_lit() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..40).prop_map(|n| n.to_string()),
        Just("1741570283".to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("2e3".to_string()),
        Just("4294967296".to_string()),
    ]
}

fn opt<S: Strategy<Value = String> + 'static>(s: S) -> BoxedStrategy<String> {
    prop_oneof![3 => s, 1 => Just("null".to_string())].boxed()
}

/// An object with the given members (some left out), in random order, plus unknown ones.
fn object(members: Vec<(&'static str, BoxedStrategy<String>)>) -> BoxedStrategy<String> {
    let n = members.len();
    let parts: Vec<BoxedStrategy<Option<String>>> = members
        .into_iter()
        .map(|(k, v)| {
            prop_oneof![
                3 => v.prop_map(move |v| Some(format!("\"{k}\":{v}"))),
                1 => Just(None),
            ]
            .boxed()
        })
        .collect();
    let unknown = prop::collection::vec(
        (
            prop_oneof![Just("logprobs"), Just("refusal"), Just("x"), Just("type")],
            prop_oneof![
                Just("null".to_string()),
                string_lit(),
                number_lit(),
                Just("{\"a\":[1,{\"b\":\"c\"}],\"d\":true}".to_string()),
                Just("[]".to_string()),
            ],
        ),
        0..2,
    );
    (
        parts,
        unknown,
        Just(()).prop_perturb(move |_, mut rng| {
            let mut order: Vec<usize> = (0..n + 2).collect();
            for i in (1..order.len()).rev() {
                let j = rng.random_range(0..=i);
                order.swap(i, j);
            }
            order
        }),
    )
        .prop_map(|(parts, unknown, order)| {
            let mut all: Vec<String> = Vec::new();
            let extra: Vec<String> = unknown
                .into_iter()
                .map(|(k, v)| format!("\"{k}\":{v}"))
                .collect();
            for i in order {
                if i < parts.len() {
                    if let Some(p) = &parts[i] {
                        all.push(p.clone());
                    }
                } else if let Some(e) = extra.get(i - parts.len()) {
                    all.push(e.clone());
                }
            }
            format!("{{{}}}", all.join(","))
        })
        .boxed()
}

fn array(item: BoxedStrategy<String>) -> BoxedStrategy<String> {
    prop::collection::vec(item, 0..3)
        .prop_map(|v| format!("[{}]", v.join(",")))
        .boxed()
}

fn chunk() -> impl Strategy<Value = String> {
    let arguments = prop_oneof![
        3 => string_lit(),
        1 => Just("null".to_string()),
        1 => Just("{\"city\":\"Paris\"}".to_string()),
    ]
    .boxed();
    let function = object(vec![("name", opt(string_lit())), ("arguments", arguments)]);
    // Gemini's thought signature in its OpenAI-compatible API, and shapes that are none.
    let extra_content = || {
        prop_oneof![
            4 => string_lit().prop_map(|s| format!("{{\"google\":{{\"thought_signature\":{s}}}}}")),
            1 => string_lit().prop_map(|s| format!(
                "{{\"x\":[1],\"google\":{{\"a\":{{}},\"thought_signature\":{s},\"b\":null}}}}"
            )),
            1 => Just("{\"google\":{\"thought_signature\":7}}".to_string()),
            1 => Just("{\"google\":{\"thought_signature\":\"A\",\"thought_signature\":\"B\"}}".to_string()),
            1 => Just("{\"google\":{\"thought_signature\":\"A\"},\"google\":{\"x\":1}}".to_string()),
            1 => Just("{\"google\":{\"thought_signature\":\"A\",\"thought_signature\":null}}".to_string()),
            1 => Just("{\"google\":[\"thought_signature\"]}".to_string()),
            1 => Just("{\"goo\\u0067le\":{\"thought_signature\":\"S\"}}".to_string()),
            1 => Just("\"thought_signature\"".to_string()),
        ]
        .boxed()
    };
    let call = object(vec![
        ("index", opt(number_lit())),
        ("id", opt(string_lit())),
        ("type", Just("\"function\"".to_string()).boxed()),
        ("function", opt(function)),
        ("extra_content", opt(extra_content())),
    ]);
    // Reasoning text is a string; servers have sent other values under these names too.
    let reasoning = || {
        prop_oneof![
            4 => string_lit(),
            1 => Just("{\"effort\":\"low\"}".to_string()),
            1 => Just("7".to_string()),
        ]
    };
    let message = object(vec![
        ("role", Just("\"assistant\"".to_string()).boxed()),
        ("content", opt(string_lit())),
        ("reasoning_content", opt(reasoning())),
        ("reasoning", opt(reasoning())),
        ("tool_calls", opt(array(call))),
        ("extra_content", opt(extra_content())),
        // OpenRouter's reasoning fragments: objects passed on as they stand, anything
        // else none.
        (
            "reasoning_details",
            opt(prop_oneof![
                4 => array(
                    prop_oneof![
                        3 => string_lit().prop_map(|t| format!(
                            "{{\"type\":\"reasoning.text\",\"text\":{t},\"format\":\"anthropic-claude-v1\",\"index\":0}}"
                        )),
                        1 => string_lit().prop_map(|d| format!(
                            "{{ \"type\" : \"reasoning.encrypted\", \"data\":{d},\"index\":1 }}"
                        )),
                        1 => number_lit(),
                        1 => Just("[{}]".to_string()),
                    ]
                    .boxed()
                ),
                1 => Just("{\"type\":\"reasoning.text\"}".to_string()),
                1 => string_lit(),
            ]
            .boxed()),
        ),
    ]);
    let finish = prop_oneof![
        Just("\"stop\"".to_string()),
        Just("\"tool_calls\"".to_string()),
        Just("\"length\"".to_string()),
        string_lit(),
    ];
    let choice = object(vec![
        ("index", opt(number_lit())),
        ("delta", opt(message)),
        ("finish_reason", opt(finish)),
    ]);
    let usage =
        Just("{\"prompt_tokens\":9,\"completion_tokens\":12,\"total_tokens\":21}".to_string());
    let error = prop_oneof![
        Just("{\"message\":\"Provider returned error\",\"code\":502}".to_string()),
        Just("{\"message\":\"overloaded\",\"code\":\"server_error\"}".to_string()),
        string_lit(),
    ];
    object(vec![
        ("id", string_lit().boxed()),
        (
            "object",
            Just("\"chat.completion.chunk\"".to_string()).boxed(),
        ),
        ("created", number_lit().boxed()),
        ("choices", opt(array(choice))),
        ("usage", opt(usage)),
        (
            "x_groq",
            opt(object(vec![(
                "usage",
                opt(Just("{\"total_tokens\":3}".to_string())),
            )])),
        ),
        ("error", opt(error)),
    ])
}

/// Whitespace after some structural bytes (outside strings), and maybe one mutation.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    (
        chunk(),
        prop::collection::vec(any::<bool>(), 64),
        prop::option::weighted(0.5, (any::<prop::sample::Index>(), 0u8..3, any::<u8>())),
    )
        .prop_map(|(text, spaces, mutation)| {
            let mut out = Vec::new();
            let (mut in_str, mut esc, mut k) = (false, false, 0);
            for &b in text.as_bytes() {
                out.push(b);
                if in_str {
                    if esc {
                        esc = false;
                    } else if b == b'\\' {
                        esc = true;
                    } else if b == b'"' {
                        in_str = false;
                    }
                } else if b == b'"' {
                    in_str = true;
                } else if matches!(b, b'{' | b',' | b':' | b'[') {
                    if spaces[k % spaces.len()] {
                        out.extend_from_slice(b" \n");
                    }
                    k += 1;
                }
            }
            if let Some((at, op, byte)) = mutation {
                let i = at.index(out.len());
                let bytes = b"{}[]:,\"\\ 0a-\xC3";
                let byte = bytes[byte as usize % bytes.len()];
                match op {
                    0 => {
                        out.remove(i);
                    }
                    1 => out.insert(i, byte),
                    _ => out[i] = byte,
                }
            }
            out
        })
}

/// Payloads of one stream: the same leading members (ignored by the decoder) before each
/// generated chunk's own members, with the last leading value sometimes extended
/// (`"created":17` then `"created":1741`) and sometimes one byte mutated.
fn stream() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let lead = prop::collection::vec(
        prop_oneof![
            Just("\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\"".to_string()),
            Just("\"object\":\"chat.completion.chunk\"".to_string()),
            Just("\"model\":\"gpt-4o-2024-08-06\"".to_string()),
            Just("\"system_fingerprint\":null".to_string()),
            string_lit().prop_map(|s| format!("\"x\":{s}")),
        ],
        0..4,
    );
    let one = (
        chunk(),
        prop_oneof![
            Just("17"),
            Just("1741"),
            Just("17.5"),
            Just("17e1"),
            Just("\"17\"")
        ],
        prop::option::weighted(0.2, (any::<prop::sample::Index>(), any::<u8>())),
    );
    (lead, prop::collection::vec(one, 1..6)).prop_map(|(lead, chunks)| {
        chunks
            .into_iter()
            .map(|(body, created, mutation)| {
                let mut members = lead.clone();
                members.push(format!("\"created\":{created}"));
                let rest = &body[1..body.len() - 1];
                if !rest.is_empty() {
                    members.push(rest.to_string());
                }
                let mut p = format!("{{{}}}", members.join(",")).into_bytes();
                if let Some((at, byte)) = mutation {
                    let i = at.index(p.len());
                    p[i] = b"{}[]:,\"\\ 0a-"[byte as usize % 12];
                }
                p
            })
            .collect()
    })
}

/// A string token in a template's place, or something that only looks like one: mostly
/// valid strings (empty ones too), else a bad escape, a lone surrogate, a raw control byte,
/// bytes that are not UTF-8, a quote too many, an unterminated string, a string followed by
/// whitespace, or another value.
fn hole() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => string_lit().prop_map(String::into_bytes),
        1 => Just(b"\"\"".to_vec()),
        1 => prop_oneof![
            Just(b"\"a\\x\"".to_vec()),
            Just(b"\"\\ud800\"".to_vec()),
            Just(b"\"a\x01b\"".to_vec()),
            Just(b"\"\xC3\"".to_vec()),
            Just(b"\"\xFF\"".to_vec()),
            Just(b"\"a\"b\"".to_vec()),
            Just(b"\"a".to_vec()),
            Just(b"\"a\" ".to_vec()),
            Just(b"17".to_vec()),
            Just(b"null".to_vec()),
            Just(b"\"a\",\"b\"".to_vec()),
        ],
    ]
}

/// Payloads of one stream that streams one text or one call's arguments: the same bytes
/// around a changing string (and OpenAI's changing `obfuscation` string at the end), each
/// payload maybe mutated at one byte.
fn templated_stream() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let lead = prop_oneof![
        Just("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",".to_string()),
        Just("{".to_string()),
    ];
    let delta = prop_oneof![
        Just(("{\"content\":".to_string(), "}".to_string())),
        Just(("{\"role\":\"assistant\",\"content\":".to_string(), ",\"refusal\":null}".to_string())),
        Just(("{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":".to_string(), "}}]}".to_string())),
        Just(("{\"tool_calls\":[{\"function\":{\"arguments\":".to_string(), "},\"index\":0,\"id\":\"\",\"type\":\"function\"}]}".to_string())),
        Just(("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"f\",\"arguments\":".to_string(), "}}]}".to_string())),
        Just(("{\"content\":null,\"reasoning_content\":".to_string(), "}".to_string())),
        Just(("{\"role\":\"assistant\",\"reasoning\":".to_string(), ",\"content\":\"\"}".to_string())),
    ];
    let choice_end = prop_oneof![
        Just(",\"logprobs\":null,\"finish_reason\":null}]".to_string()),
        Just(",\"index\":2}]".to_string()),
        Just(",\"finish_reason\":\"stop\"}]".to_string()),
    ];
    // The members after `choices`: constant ones, and gaps that change every payload.
    let trailer = prop::sample::subsequence(
        vec![
            Some(",\"usage\":null"),
            None,
            Some(",\"model\":\"qwen3-max\""),
            None,
        ],
        0..=4,
    );
    let one = (
        hole(),
        prop::collection::vec(hole(), 3),
        prop::option::weighted(0.15, (any::<prop::sample::Index>(), any::<u8>())),
    );
    (
        lead,
        delta,
        choice_end,
        trailer,
        prop::collection::vec(one, 1..8),
    )
        .prop_map(|(lead, (open, close), choice_end, trailer, payloads)| {
            payloads
                .into_iter()
                .map(|(hole, gaps, mutation)| {
                    let mut p = lead.clone().into_bytes();
                    p.extend_from_slice(b"\"choices\":[{\"delta\":");
                    p.extend_from_slice(open.as_bytes());
                    p.extend_from_slice(&hole);
                    p.extend_from_slice(close.as_bytes());
                    p.extend_from_slice(choice_end.as_bytes());
                    let names = ["obfuscation", "x_pad"];
                    let mut k = 0;
                    for member in &trailer {
                        match member {
                            Some(m) => p.extend_from_slice(m.as_bytes()),
                            None => {
                                p.extend_from_slice(format!(",\"{}\":", names[k]).as_bytes());
                                p.extend_from_slice(&gaps[k]);
                                k += 1;
                            }
                        }
                    }
                    p.push(b'}');
                    mutate(&mut p, mutation);
                    p
                })
                .collect()
        })
}

/// The comparison rule of the property tests, for one payload.
fn check(p: &[u8], ours: &[Delta], theirs: &[Delta]) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(p);
    match (is_undecodable(ours), is_undecodable(theirs)) {
        (false, false) => prop_assert_eq!(ours, theirs, "on {}", text),
        (true, true) => {
            let (Delta::Undecodable { body: a, .. }, Delta::Undecodable { body: b, .. }) =
                (&ours[0], &theirs[0])
            else {
                unreachable!()
            };
            prop_assert_eq!(a, b);
        }
        // serde_json does not check the surrogates of strings it skips; the cursor does,
        // like the splitter.
        (true, false) => prop_assert!(
            !strictly_valid(p.trim_ascii()),
            "ours rejected valid {}: {:?}",
            text,
            ours
        ),
        (false, true) => prop_assert!(
            false,
            "serde rejected, ours accepted {}: {:?} / {:?}",
            text,
            ours,
            theirs
        ),
    }
    Ok(())
}

fn is_undecodable(d: &[Delta]) -> bool {
    matches!(d, [Delta::Undecodable { message, .. }] if message.starts_with("undecodable payload"))
}

fn strictly_valid(payload: &[u8]) -> bool {
    let (spans, error) = Reference::split(Mode::Any, Limits::default(), payload);
    spans.len() == 1 && error.is_none()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn cursor_decoder_matches_the_serde_decoder(p in payload()) {
        let mut ours = Vec::new();
        Decoder::default().decode(&p, &mut ours);
        let mut theirs = Vec::new();
        decode_reference(&p, &mut theirs);
        check(&p, &ours, &theirs)?;
    }

    /// One decoder for a whole stream (it remembers the leading members it ignored).
    #[test]
    fn a_stream_of_payloads_decodes_like_each_payload_alone(payloads in stream()) {
        check_stream(&payloads)?;
    }

    /// One decoder for a stream of the same bytes around a changing string (it reads such a
    /// payload from the bytes it kept around the string).
    #[test]
    fn a_stream_around_one_string_decodes_like_each_payload_alone(payloads in templated_stream()) {
        check_stream(&payloads)?;
    }
}

/// One decoder reads every payload of `payloads` in turn; each must decode as the serde
/// decoder decodes it alone.
fn check_stream(payloads: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let mut d = Decoder::default();
    for p in payloads {
        let mut ours = Vec::new();
        d.decode(p, &mut ours);
        let mut theirs = Vec::new();
        decode_reference(p, &mut theirs);
        check(p, &ours, &theirs)?;
    }
    Ok(())
}

/// A decoder's `decode` for one event (its type, its payload).
type DecodeEvent<D> = fn(&mut D, Option<&[u8]>, &[u8], &mut Vec<Delta>);

/// One decoder (`decode`) for the whole stream of `(event type, payload)` pairs — it reads
/// an event from the template the event before left — against, for each event, a decoder
/// in the same state that has no template (it reads the whole event).
fn check_events<D: Default>(
    events: &[(Vec<u8>, Vec<u8>)],
    decode: DecodeEvent<D>,
    forget_template: fn(&mut D),
) -> Result<(), TestCaseError> {
    let mut d = D::default();
    let mut whole = D::default();
    for (event, p) in events {
        let mut ours = Vec::new();
        decode(&mut d, Some(event), p, &mut ours);
        // `whole` has read every event before, never from a template: forgetting its
        // template leaves it in the same state as `d` but for the template.
        let mut theirs = Vec::new();
        forget_template(&mut whole);
        decode(&mut whole, Some(event), p, &mut theirs);
        prop_assert_eq!(&ours, &theirs, "on {}", String::from_utf8_lossy(p));
    }
    Ok(())
}

/// `p` with the byte at `mutation`'s index (if any) replaced by one of the bytes that
/// matter to the grammar, picked by its second half.
fn mutate(p: &mut [u8], mutation: Option<(prop::sample::Index, u8)>) {
    if let Some((at, byte)) = mutation {
        let i = at.index(p.len());
        p[i] = b"{}[]:,\"\\ 0a-\xC3"[byte as usize % 13];
    }
}

/// Anthropic `content_block_delta` events of one text, one thinking block or one call's
/// arguments: the same bytes around a changing string, each maybe mutated at one byte, with
/// now and then an event of another kind between them (a signature, a redacted block).
fn anthropic_stream() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    let shape = prop_oneof![
        Just((
            "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":",
            "}}"
        )),
        Just((
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":",
            "}}"
        )),
        Just((
            "{\"delta\":{\"partial_json\":",
            ",\"type\":\"input_json_delta\"},\"index\":2,\"type\":\"content_block_delta\"}"
        )),
        Just((
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":",
            "}}"
        )),
    ];
    let one = (
        hole(),
        prop::option::weighted(0.15, (any::<prop::sample::Index>(), any::<u8>())),
        prop::option::weighted(0.1, 0..5usize),
    );
    (shape, prop::collection::vec(one, 1..8)).prop_map(|((open, close), events)| {
        let mut out = Vec::new();
        for (hole, mutation, other) in events {
            if let Some(k) = other {
                let (event, p): (&[u8], &[u8]) = [
                    (&b"ping"[..], &b"{\"type\":\"ping\"}"[..]),
                    (b"content_block_stop", b"{\"type\":\"content_block_stop\",\"index\":1}"),
                    (b"content_block_start", b"{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}"),
                    (b"content_block_delta", b"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB+/=\"}}"),
                    (b"content_block_start", b"{\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwK\"}}"),
                ][k];
                out.push((event.to_vec(), p.to_vec()));
            }
            let mut p = open.as_bytes().to_vec();
            p.extend_from_slice(&hole);
            p.extend_from_slice(close.as_bytes());
            mutate(&mut p, mutation);
            out.push((b"content_block_delta".to_vec(), p));
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// One Anthropic decoder for the whole stream (it reads an event from the template the
    /// event before left) against, for each event, a decoder in the same state that has no
    /// template (it reads the whole event).
    #[test]
    fn anthropic_events_around_one_string_decode_like_each_event_alone(
        events in anthropic_stream()
    ) {
        check_events(&events, anthropic::Decoder::decode, anthropic::Decoder::forget_template)?;
    }
}

/// What a Responses event's `sequence_number` holds: mostly a counter, else something that
/// only looks like one.
fn sequence_number() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (0u64..1_000_000).prop_map(|n| n.to_string()),
        1 => prop_oneof![
            Just("0".to_string()),
            Just("01".to_string()),
            Just("-3".to_string()),
            Just("3.5".to_string()),
            Just("3e2".to_string()),
            Just("\"3\"".to_string()),
            Just("null".to_string()),
            Just("123456789012345678901234567890".to_string()),
        ],
    ]
}

/// OpenAI Responses delta events of one call's arguments or one text: the same bytes
/// around a changing `delta` string, a changing `sequence_number` and (mostly) a changing
/// `obfuscation` string, each maybe mutated at one byte, with now and then an event of
/// another kind between them (a call added or done, a reasoning delta, a reasoning item
/// done, the end).
fn responses_stream() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    // (event type, the members before `delta`, the members after it); `{seq}` is the
    // counter's place.
    let shape = prop_oneof![
        Just((
            "response.function_call_arguments.delta",
            "{\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":{seq},\"item_id\":\"fc_1\",\"output_index\":1,\"delta\":",
            ",\"obfuscation\":{ob}}"
        )),
        Just((
            "response.output_text.delta",
            "{\"type\":\"response.output_text.delta\",\"sequence_number\":{seq},\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":",
            ",\"logprobs\":[],\"obfuscation\":{ob}}"
        )),
        Just((
            "response.function_call_arguments.delta",
            "{\"delta\":",
            ",\"output_index\":1,\"sequence_number\":{seq},\"type\":\"response.function_call_arguments.delta\"}"
        )),
        Just((
            "response.function_call_arguments.delta",
            "{\"type\":\"response.function_call_arguments.delta\",\"output_index\":1,\"sequence_number\":{seq},\"delta\":",
            "}"
        )),
    ];
    let one = (
        hole(),
        sequence_number(),
        hole(),
        prop::option::weighted(0.15, (any::<prop::sample::Index>(), any::<u8>())),
        prop::option::weighted(0.15, 0..5usize),
    );
    (shape, prop::collection::vec(one, 1..8)).prop_map(|((event, open, close), events)| {
        let mut out = Vec::new();
        for (hole, seq, ob, mutation, other) in events {
            if let Some(k) = other {
                let (event, p): (&[u8], &[u8]) = [
                    (&b"response.output_item.added"[..], &br#"{"type":"response.output_item.added","sequence_number":2,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}"#[..]),
                    (b"response.function_call_arguments.done", br#"{"type":"response.function_call_arguments.done","sequence_number":9,"item_id":"fc_1","output_index":1,"arguments":"{}"}"#),
                    (b"response.reasoning_summary_text.delta", br#"{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"hm"}"#),
                    (b"response.completed", br#"{"type":"response.completed","sequence_number":30,"response":{"status":"completed","usage":null}}"#),
                    (b"response.output_item.done", br#"{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA==","summary":[]}}"#),
                ][k];
                out.push((event.to_vec(), p.to_vec()));
            }
            let mut p = open.replace("{seq}", &seq).into_bytes();
            p.extend_from_slice(&hole);
            let close = close.replace("{seq}", &seq);
            let mut parts = close.split("{ob}");
            p.extend_from_slice(parts.next().unwrap_or_default().as_bytes());
            if let Some(rest) = parts.next() {
                p.extend_from_slice(&ob);
                p.extend_from_slice(rest.as_bytes());
            }
            mutate(&mut p, mutation);
            out.push((event.as_bytes().to_vec(), p));
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// One Responses decoder for the whole stream (it reads an event from the template the
    /// event before left) against, for each event, a decoder in the same state that has no
    /// template (it reads the whole event). The decoder's state shows in what the `done`
    /// events give.
    #[test]
    fn responses_events_around_one_string_decode_like_each_event_alone(
        events in responses_stream()
    ) {
        check_events(
            &events,
            openai_responses::Decoder::decode,
            openai_responses::Decoder::forget_template,
        )?;
    }
}

#[test]
fn escaped_keys_mean_the_same_keys() {
    let p = br#"{"ch\u006fices":[{"d\u0065lta":{"content":"hi"},"index":1}]}"#;
    let mut ours = Vec::new();
    Decoder::default().decode(p, &mut ours);
    let mut theirs = Vec::new();
    decode_reference(p, &mut theirs);
    assert_eq!(ours, theirs);
    assert_eq!(
        ours,
        [Delta::Text {
            choice: 1,
            text: "hi".into()
        }]
    );
}
