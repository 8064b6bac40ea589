//! The rules, as data. Four ordered tables are checked in turn — structured codes, then
//! provider-specific messages, then cross-provider message patterns, then the HTTP status —
//! and the first matching rule decides. Within a table, order matters: the more specific
//! rule comes first (a rate-limit message that mentions tokens is a rate limit, not an
//! overflow; "No endpoints found that support tool use" is a capability, not a missing
//! model). Every rule has at least one test vector in `tests/classify.rs`.

use super::body::ErrorBody;
use super::{Provider, Reason};

/// What a rule looks at: a condition on the failure's codes, message or status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// A structured code equals this (lower-case).
    Code(&'static str),
    /// A structured code contains this (lower-case).
    CodeContains(&'static str),
    /// The message contains this (lower-case).
    Message(&'static str),
    /// The message contains all of these.
    MessageAll(&'static [&'static str]),
    /// The message contains, from each group, at least one of its phrases: a family of
    /// messages matched by its parts rather than by one server's wording.
    Parts(&'static [&'static [&'static str]]),
    /// The message gives a limit and a requested amount (`Limit 30000, Requested 45000`)
    /// and the request is over the limit by itself: waiting cannot make it fit.
    RequestedOverLimit,
    /// The HTTP status equals this.
    Status(u16),
    /// The HTTP status lies in this inclusive range.
    StatusRange(u16, u16),
}

/// One rule: if `condition` holds (and the provider is one of `providers`, when not empty),
/// the reason is `reason`.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// Stable id, reported in [`Verdict::rule`](super::Verdict::rule).
    pub id: &'static str,
    /// Providers the rule applies to; empty means all.
    pub providers: &'static [Provider],
    /// What must hold of the failure.
    pub condition: Condition,
    /// The reason it decides.
    pub reason: Reason,
    /// What the caller can change for the request to succeed, when the rule knows
    /// ([`Verdict::hint`](super::Verdict::hint)).
    pub hint: Option<&'static str>,
}

const fn r(id: &'static str, condition: Condition, reason: Reason) -> Rule {
    Rule {
        id,
        providers: &[],
        condition,
        reason,
        hint: None,
    }
}

/// A rule for a request the caller must change: [`Reason::ReasoningReplay`] and how.
const fn fix(id: &'static str, condition: Condition, hint: &'static str) -> Rule {
    Rule {
        id,
        providers: &[],
        condition,
        reason: Reason::ReasoningReplay,
        hint: Some(hint),
    }
}

/// Anthropic: the thinking blocks a tool loop must send back are missing.
const HINT_THINKING_MISSING: &str = "Send the assistant turn's thinking and redacted_thinking \
blocks back before its tool_use blocks, unchanged and with their signatures (toolstream's \
replay::Turn builds that message from the response's events). When the \
history has none to send (it came from another model or provider), send this request with \
thinking disabled.";

/// Anthropic: thinking blocks sent back altered, or made elsewhere.
const HINT_THINKING_ALTERED: &str = "Send thinking blocks back byte for byte as this model \
produced them in this conversation, with their signatures; leave out the ones made by \
another model, provider, account or conversation, and send this request with thinking \
disabled if the latest assistant turn's blocks are among them.";

/// Gemini: a thought signature missing or not valid.
const HINT_THOUGHT_SIGNATURE: &str = "Send each part's thoughtSignature back on the same \
part, unchanged (through the OpenAI-compatible API, in the tool call's \
extra_content.google.thought_signature; toolstream's replay::Turn puts each where it \
belongs). For calls no Gemini model made in this \
conversation, Google documents the placeholder signature skip_thought_signature_validator.";

/// DeepSeek (thinking mode): a tool-call turn's reasoning text missing.
const HINT_REASONING_CONTENT: &str = "Send every assistant message that has tool_calls back \
with its reasoning_content, in every later request: the turn's reasoning text as it came \
(toolstream's replay::Turn puts it in; with reasoning_content_on_every_call_turn, an empty \
string when the turn had none).";

/// A server that takes no reasoning text in the history (Cerebras's "property
/// 'messages.2.assistant.reasoning_content' is unsupported").
const HINT_REASONING_CONTENT_REFUSED: &str = "Leave reasoning_content out of the assistant \
messages sent to this server (keep it for servers that want it back, such as DeepSeek's \
thinking mode); if the reasoning must stay in the history, put it in the message's content.";

/// OpenAI Responses: a reasoning item without the item it belongs to, or the reverse.
const HINT_REASONING_ITEMS: &str = "Send each reasoning item back together with the output \
item that followed it in the response (a function call or a message), in the same order, \
or leave both out (toolstream's replay::Turn gives the items in the response's order).";

/// OpenAI Responses: items referred to by id that a `store: false` response never kept.
const HINT_ITEMS_NOT_STORED: &str = "With store=false the server keeps no items: send \
reasoning items back whole, with their encrypted_content (ask for it with include: \
[\"reasoning.encrypted_content\"]; toolstream's replay::Turn keeps them whole), and leave \
out item references and the ids of the other items; or send store=true.";

/// OpenAI Responses: encrypted reasoning that cannot be verified.
const HINT_ENCRYPTED_CONTENT: &str = "Leave out the reasoning items whose encrypted_content \
was made by another organization, model or conversation, and send the request again.";

/// A request the caller must change in another way than its reasoning: [`Reason::RequestRepair`]
/// and how.
const fn repair(id: &'static str, condition: Condition, hint: &'static str) -> Rule {
    Rule {
        id,
        providers: &[],
        condition,
        reason: Reason::RequestRepair,
        hint: Some(hint),
    }
}

/// Arguments in the history that are not JSON (the model's own broken call, replayed).
const HINT_REPLAYED_ARGUMENTS: &str = "An assistant tool call in the history has arguments \
that are not one JSON object as a string of JSON text (the model's own broken output, or an \
object where the text belongs, sent back): replace them with one JSON object's text before \
sending again (keeping the raw text inside it, e.g. \
{\"INVALID_JSON\": \"<raw>\"}, so the model can see what it wrote: toolstream::request::repair does \
this), or drop that call and its result. No other provider would take the request as it is.";

/// Tool calls in the history without their results, or the reverse, or out of order.
const HINT_TOOL_RESULTS: &str = "Every tool call in the history needs its result, right after \
the turn that made it and with the same id: add the missing tool results (an error text is \
enough), or remove the calls that have none and results whose call is gone; keep user and \
assistant turns alternating around them.";

/// Turns in an order the server refuses around tool results (Mistral wants an assistant
/// turn between the tool results and the next user turn).
const HINT_TURN_ORDER: &str = "Put the history's turns in the order the server takes: each \
tool result right after the assistant turn that made the call, an assistant turn between the \
tool results and the next user turn (a short text is enough), and user and assistant turns \
alternating otherwise.";

/// Tool-call ids in the history that the server's format refuses.
const HINT_TOOL_CALL_IDS: &str = "Rewrite the tool-call ids in the history into the form \
the error names (Mistral: exactly 9 letters or digits), the same new id in each call and in \
its result, and send again.";

/// A number over the model's maximum (max_tokens most often).
const HINT_MAX_TOKENS: &str = "Lower max_tokens (max_completion_tokens) to at most the \
maximum the error names for this model, and send again.";

/// A field of a tool call in the history that the server refuses (a name outside its pattern,
/// an empty name or arguments).
const HINT_HISTORY_TOOL_CALL: &str = "A tool call in the history has a field the server \
refuses (the error names it, e.g. messages[9].tool_calls[0].function.name): rewrite that \
field into the form the error gives (a tool name of letters, digits, _ and - only) in the \
call, or drop the call and its result, and send again.";

/// Anthropic's extended thinking: the budget against max_tokens and its minimum.
const HINT_THINKING_BUDGET: &str = "Set thinking.budget_tokens to at least 1024 and below \
max_tokens (raise max_tokens, or lower the budget), or send the request with thinking \
disabled.";

const fn p(
    id: &'static str,
    providers: &'static [Provider],
    condition: Condition,
    reason: Reason,
) -> Rule {
    Rule {
        id,
        providers,
        condition,
        reason,
        hint: None,
    }
}

use Condition::*;
use Provider as P;
use Reason as R;

/// Structured codes in the body, most specific first.
pub static CODE_RULES: &[Rule] = &[
    // Model output first: these codes name the model's malformed call, whatever the status.
    // A Responses stream that ended incomplete at the output limit.
    r(
        "code.max_output_tokens",
        Code("max_output_tokens"),
        R::TruncatedOutput,
    ),
    r(
        "code.tool_use_failed",
        Code("tool_use_failed"),
        R::ModelOutput,
    ),
    r(
        "code.malformed_function_call",
        Code("malformed_function_call"),
        R::ModelOutput,
    ),
    fix(
        "code.invalid_encrypted_content",
        Code("invalid_encrypted_content"),
        HINT_ENCRYPTED_CONTENT,
    ),
    // Quota before rate limit: insufficient_quota arrives as a 429.
    r(
        "code.insufficient_quota",
        Code("insufficient_quota"),
        R::QuotaExhausted,
    ),
    r(
        "code.billing_hard_limit",
        Code("billing_hard_limit_reached"),
        R::QuotaExhausted,
    ),
    r(
        "code.quota_per_day",
        CodeContains("perday"),
        R::QuotaExhausted,
    ),
    r(
        "code.service_quota_exceeded",
        Code("servicequotaexceededexception"),
        R::QuotaExhausted,
    ),
    r(
        "code.quota_per_minute",
        CodeContains("perminute"),
        R::RateLimit,
    ),
    // A limit per day, whoever says it and under whatever code (Groq's and Anthropic's
    // per-day token limits come as rate-limit codes): a wait of seconds does not restore it.
    r(
        "msg.quota_per_day",
        Parts(&[
            &["per day", "perday", "per-day", "daily"],
            &["quota", "too many", "limit", "exceeded", "exhausted"],
        ]),
        R::QuotaExhausted,
    ),
    // A per-minute token limit that the request alone is over (OpenAI 429, Groq 413):
    // it can never pass, whatever the wait. Compare the numbers before the code says
    // "rate limit".
    r(
        "msg.requested_over_limit",
        RequestedOverLimit,
        R::PayloadTooLarge,
    ),
    r(
        "code.rate_limit_exceeded",
        Code("rate_limit_exceeded"),
        R::RateLimit,
    ),
    r(
        "code.rate_limit_error",
        Code("rate_limit_error"),
        R::RateLimit,
    ),
    r("code.throttling", Code("throttlingexception"), R::RateLimit),
    r(
        "code.context_length_exceeded",
        Code("context_length_exceeded"),
        R::ContextOverflow,
    ),
    r(
        "code.exceed_context_size",
        Code("exceed_context_size_error"),
        R::ContextOverflow,
    ),
    r(
        "code.request_too_large",
        Code("request_too_large"),
        R::PayloadTooLarge,
    ),
    r(
        "code.overloaded_error",
        Code("overloaded_error"),
        R::Overloaded,
    ),
    r("code.unavailable", Code("unavailable"), R::Overloaded),
    r(
        "code.service_unavailable",
        Code("serviceunavailableexception"),
        R::Overloaded,
    ),
    r(
        "code.model_not_ready",
        Code("modelnotreadyexception"),
        R::Overloaded,
    ),
    r(
        "code.deadline_exceeded",
        Code("deadline_exceeded"),
        R::Timeout,
    ),
    r(
        "code.model_timeout",
        Code("modeltimeoutexception"),
        R::Timeout,
    ),
    r("code.api_key_invalid", Code("api_key_invalid"), R::Auth),
    r("code.invalid_api_key", Code("invalid_api_key"), R::Auth),
    r(
        "code.authentication_error",
        Code("authentication_error"),
        R::Auth,
    ),
    r("code.unauthenticated", Code("unauthenticated"), R::Auth),
    r(
        "code.unrecognized_client",
        Code("unrecognizedclientexception"),
        R::Auth,
    ),
    r(
        "code.permission_error",
        Code("permission_error"),
        R::PermissionDenied,
    ),
    r(
        "code.permission_denied",
        Code("permission_denied"),
        R::PermissionDenied,
    ),
    r(
        "code.access_denied",
        Code("accessdeniedexception"),
        R::PermissionDenied,
    ),
    r(
        "code.model_not_found",
        Code("model_not_found"),
        R::ModelNotFound,
    ),
    r(
        "code.model_decommissioned",
        Code("model_decommissioned"),
        R::ModelNotFound,
    ),
    r(
        "code.deployment_not_found",
        Code("deploymentnotfound"),
        R::ModelNotFound,
    ),
    r(
        "code.resource_not_found",
        Code("resourcenotfoundexception"),
        R::ModelNotFound,
    ),
    r(
        "code.operation_not_supported",
        Code("operationnotsupported"),
        R::UnsupportedCapability,
    ),
    r(
        "code.invalid_model",
        Code("invalid_model"),
        R::ModelNotFound,
    ),
    r(
        "code.content_filter",
        Code("content_filter"),
        R::ContentPolicy,
    ),
    r("code.finish_safety", Code("safety"), R::ContentPolicy),
    r(
        "code.prohibited_content",
        Code("prohibited_content"),
        R::ContentPolicy,
    ),
    r(
        "code.content_policy_violation",
        Code("content_policy_violation"),
        R::ContentPolicy,
    ),
    r(
        "code.internal_server_error",
        Code("internalserverexception"),
        R::ServerError,
    ),
    r(
        "code.model_error",
        Code("modelerrorexception"),
        R::ServerError,
    ),
    // Bedrock's in-stream "An error occurred while streaming the response. Retry your
    // request." (HTTP 424 outside a stream).
    r(
        "code.model_stream_error",
        Code("modelstreamerrorexception"),
        R::ServerError,
    ),
    // Anthropic's 500 type; Ollama reuses "api_error" for everything, so only Anthropic.
    // Anthropic's generic api_error (a 500) that says it is overloaded: the overload it is.
    r("msg.overloaded", Message("overloaded"), R::Overloaded),
    p(
        "code.api_error",
        &[P::Anthropic],
        Code("api_error"),
        R::ServerError,
    ),
    r("code.internal", Code("internal"), R::ServerError),
];

/// Messages that mean something only from one provider.
pub static PROVIDER_MESSAGE_RULES: &[Rule] = &[
    // Quotas that a wait of seconds does not restore, whoever says it: per day, a plan
    // whose limit is 0, a spending limit with a date. Before Gemini's "exceeded your
    // current quota", which is a rate limit otherwise.
    r(
        "msg.quota_limit_zero",
        Parts(&[
            &["quota exceeded"],
            &["limit: 0,", "limit: 0\n", "quota_limit_value\":\"0"],
        ]),
        R::QuotaExhausted,
    ),
    r(
        "msg.usage_limits_regain_access",
        Parts(&[&["usage limit"], &["regain access", "will reset on"]]),
        R::QuotaExhausted,
    ),
    // Gemini says "exceeded your current quota" for per-minute limits too; without a
    // per-day quota id (checked above) it is a rate limit.
    p(
        "gemini.quota_message_is_rate_limit",
        &[P::Gemini],
        Message("exceeded your current quota"),
        R::RateLimit,
    ),
    p(
        "gemini.resource_exhausted",
        &[P::Gemini],
        Code("resource_exhausted"),
        R::RateLimit,
    ),
    p(
        "gemini.location",
        &[P::Gemini],
        Message("user location is not supported"),
        R::PermissionDenied,
    ),
    p(
        "ollama.pull_model",
        &[P::Ollama],
        Message("try pulling it first"),
        R::ModelNotFound,
    ),
    p(
        "llamacpp.loading_model",
        &[P::Llamacpp],
        Message("loading model"),
        R::Overloaded,
    ),
    p(
        "anthropic.credit_balance",
        &[P::Anthropic],
        Message("credit balance is too low"),
        R::QuotaExhausted,
    ),
    p(
        "deepseek.insufficient_balance",
        &[P::Deepseek],
        Message("insufficient balance"),
        R::QuotaExhausted,
    ),
    p(
        "openrouter.requires_more_credits",
        &[P::Openrouter],
        Message("more credits"),
        R::QuotaExhausted,
    ),
];

/// Cross-provider message patterns (case-insensitive), most specific first.
pub static MESSAGE_RULES: &[Rule] = &[
    // Arguments replayed in the history that the server could not parse: the request must
    // change (before the model-output rules: the same words about the model's new output
    // call for feedback instead). DashScope names the request parameter; llama-server
    // renders the prompt; vLLM re-parses every replayed call with Python's json module,
    // whose messages end "line 1 column N (char M)" (a request body that is not JSON at
    // all gets "JSON decode error" and a 400/422 of its own, caught below).
    repair(
        "req.arguments_parameter_not_json",
        Parts(&[
            &["function.arguments", "tool_calls.function.arguments"],
            &[
                "json format",
                "valid json",
                "must be json",
                "not json",
                "expected a string",
                "invalid type",
            ],
        ]),
        HINT_REPLAYED_ARGUMENTS,
    ),
    repair(
        "req.tool_call_arguments_in_prompt",
        Parts(&[
            &[
                "tool call arguments",
                "tool_call arguments",
                "function call arguments",
            ],
            &["as json"],
        ]),
        HINT_REPLAYED_ARGUMENTS,
    ),
    repair(
        "req.python_json_error",
        Parts(&[
            &[
                "expecting value",
                "unterminated string starting at",
                "expecting ',' delimiter",
                "expecting ':' delimiter",
                "invalid \\escape",
                "invalid control character at",
                "expecting property name enclosed in double quotes",
                "extra data",
            ],
            &["line 1 column", "(char "],
        ]),
        HINT_REPLAYED_ARGUMENTS,
    ),
    // DeepSeek's thinking mode: the reasoning of a tool-call turn left out.
    fix(
        "msg.reasoning_content_missing",
        Parts(&[&["missing"], &["reasoning_content"]]),
        HINT_REASONING_CONTENT,
    ),
    // The model's own malformed call: before anything that mentions "invalid".
    // The model's broken arguments, named in a refusal that points into the request (a
    // tool_call_id, a message index, the history): they were replayed, so the request
    // changes. Before the model-output rules below, which read the same words without it.
    repair(
        "req.arguments_in_history",
        Parts(&[
            &[
                "function arguments",
                "function_call arguments",
                "tool call arguments",
                "tool_call arguments",
                "tool_calls arguments",
            ],
            &["invalid", "not valid", "malformed", "json"],
            &["tool_call_id", "messages[", "message[", "history"],
        ]),
        HINT_REPLAYED_ARGUMENTS,
    ),
    // A tool call's arguments refused, in any of the servers' and gateways' wordings: the
    // noun in its spellings (Ollama's "invalid tool call arguments", the `tool_call`,
    // `tool_calls` and `function_call` forms of OpenAI-compatible gateways, "arguments for
    // tool ..."), and the refusal before or after it ("invalid ...", "... are invalid",
    // "failed to parse ...", with the server's parser message after it). The rules above
    // took those that point into the request's history or quote Python's JSON errors on
    // a replayed call; a router's wrapper (LiteLLM's prefix, OpenRouter's metadata.raw) is
    // read through by the body reader.
    r(
        "msg.tool_call_arguments_invalid",
        Parts(&[
            &[
                "tool call arguments",
                "tool_call arguments",
                "tool_calls arguments",
                "tool-call arguments",
                "function call arguments",
                "function_call arguments",
                "function arguments",
                "tool arguments",
                "arguments for tool",
                "arguments of tool",
                "arguments for function",
                "arguments of function",
                "arguments in tool call",
                "arguments in function call",
            ],
            &[
                "invalid",
                "not valid",
                "malformed",
                "failed to parse",
                "could not parse",
                "could not be parsed",
                "cannot be parsed",
                "unable to parse",
                "error parsing",
                "not parseable",
                "unparseable",
            ],
        ]),
        R::ModelOutput,
    ),
    r(
        "msg.tool_call_arguments_json",
        MessageAll(&["arguments", "not valid json"]),
        R::ModelOutput,
    ),
    r(
        "msg.failed_to_parse_tool_call",
        Message("failed to parse tool call"),
        R::ModelOutput,
    ),
    r(
        "msg.error_parsing_tool_call",
        Message("error parsing tool call"),
        R::ModelOutput,
    ),
    r(
        "msg.failed_to_call_a_function",
        Message("failed to call a function"),
        R::ModelOutput,
    ),
    // The same family in Cerebras's words ("Failed to generate tool_calls ... No valid
    // function calls generated"): both servers point to their `failed_generation` field.
    r(
        "msg.failed_generation",
        Parts(&[&[
            "failed_generation",
            "failed to generate tool_calls",
            "failed to generate tool calls",
            "no valid function calls",
        ]]),
        R::ModelOutput,
    ),
    r(
        "msg.malformed_function_call",
        Message("malformed_function_call"),
        R::ModelOutput,
    ),
    r(
        "msg.extracting_tool_call",
        Message("extracting tool call"),
        R::ModelOutput,
    ),
    // Replayed reasoning refused: before "tool_use ... tool_result" and "messages", which
    // Anthropic's messages about thinking blocks mention too.
    fix(
        "msg.thinking_block_expected",
        Message("expected `thinking` or `redacted_thinking`"),
        HINT_THINKING_MISSING,
    ),
    fix(
        "msg.thinking_signature_invalid",
        Message("invalid `signature` in `thinking` block"),
        HINT_THINKING_ALTERED,
    ),
    fix(
        "msg.thinking_blocks_modified",
        MessageAll(&["`redacted_thinking` blocks", "cannot be modified"]),
        HINT_THINKING_ALTERED,
    ),
    fix(
        "msg.missing_thought_signature",
        Message("missing a thought_signature"),
        HINT_THOUGHT_SIGNATURE,
    ),
    fix(
        "msg.corrupted_thought_signature",
        Message("corrupted thought signature"),
        HINT_THOUGHT_SIGNATURE,
    ),
    fix(
        "msg.reasoning_content_passed_back",
        MessageAll(&["reasoning_content", "must be passed back"]),
        HINT_REASONING_CONTENT,
    ),
    // The reverse: a server that refuses reasoning_content in the history.
    fix(
        "msg.reasoning_content_refused",
        Parts(&[
            &["reasoning_content"],
            &[
                "unsupported",
                "not supported",
                "not permitted",
                "not allowed",
                "unrecognized",
                "unknown field",
            ],
        ]),
        HINT_REASONING_CONTENT_REFUSED,
    ),
    fix(
        "msg.items_not_persisted",
        Message("items are not persisted when `store` is set to false"),
        HINT_ITEMS_NOT_STORED,
    ),
    fix(
        "msg.reasoning_item_pairing",
        MessageAll(&["of type '", "was provided without its required"]),
        HINT_REASONING_ITEMS,
    ),
    // After the replayed-reasoning rules: Anthropic's thinking-block message names
    // `tool_use` and `tool_result` too.
    // Calls and results that do not pair up in the history, in every server's words: a
    // call side, a result side, and a word that says they do not match.
    repair(
        "req.tool_results_missing",
        Parts(&[
            &["tool_use", "tool call", "tool_call", "function call"],
            &[
                "tool_result",
                "tool result",
                "tool message",
                "tool role",
                "function response",
                "responses",
                "response messages",
                "a response to",
            ],
            &[
                "without",
                "mismatch",
                "corresponding",
                "not the same number",
                "equal to the number",
                "must be followed",
                "did not have",
                "unexpected",
                "preceding",
                "preceeding",
                "no previous",
            ],
        ]),
        HINT_TOOL_RESULTS,
    ),
    // A chat template's turn order around tool calls (the roles must alternate "except for
    // tool calls and results"): the history, not the request's parameters.
    repair(
        "req.turn_order_with_tools",
        Parts(&[&["alternate"], &["tool"]]),
        HINT_TOOL_RESULTS,
    ),
    // A role out of order around a tool message, in Mistral's words ("Unexpected role
    // 'user' after role 'tool'", "Unexpected role RoleEnum.tool").
    repair(
        "req.unexpected_role_tool",
        Parts(&[&["unexpected role"], &["tool"]]),
        HINT_TURN_ORDER,
    ),
    // Gemini's turn order: "function call turn comes immediately after a user turn or
    // after a function response turn", "function response turn comes immediately after a
    // function call turn".
    repair(
        "req.function_turn_order",
        Parts(&[
            &["function call turn", "function response turn"],
            &["immediately after", "must come after", "must follow"],
        ]),
        HINT_TURN_ORDER,
    ),
    // Tool-call ids whose form the server refuses (Mistral's 9 letters or digits, a length
    // limit): the client's ids, rewritten in the history.
    repair(
        "req.tool_call_id_format",
        Parts(&[
            &[
                "tool call id",
                "tool_call_id",
                "tool_call.id",
                "tool_use_id",
                "tool use id",
            ],
            &[
                "must be",
                "string too long",
                "does not match",
                "pattern",
                "invalid",
            ],
        ]),
        HINT_TOOL_CALL_IDS,
    ),
    // max_tokens above the model's maximum: clamp it.
    // A field of a tool call in the history, by its locator (`messages[9].tool_calls[0]`):
    // after the rules above that name the field's own problem (arguments, ids).
    repair(
        "req.history_tool_call_field",
        Parts(&[
            &["messages["],
            &["].tool_calls[", "].tool_calls.", "].function_call."],
        ]),
        HINT_HISTORY_TOOL_CALL,
    ),
    // A tool call in the history with a field left empty (DeepSeek's "function/name/arguments
    // cannot be empty").
    repair(
        "req.history_tool_call_empty",
        Parts(&[
            &["tool_call", "tool call", "function call"],
            &["cannot be empty", "can't be empty", "must not be empty"],
        ]),
        HINT_HISTORY_TOOL_CALL,
    ),
    repair(
        "req.thinking_budget",
        Parts(&[
            &["budget_tokens"],
            &[
                "greater than",
                "less than",
                "at least",
                "must be",
                "should be",
            ],
        ]),
        HINT_THINKING_BUDGET,
    ),
    repair(
        "req.max_tokens_over_model_max",
        Parts(&[
            &[
                "max_tokens",
                "max_completion_tokens",
                "maximum tokens",
                "max tokens",
                "malformed input request",
            ],
            &[
                "maximum allowed number of output tokens",
                "must be less than or equal to",
                "is not less or equal to",
                "exceed the model limit",
                "exceeds the model limit",
                "is too large",
                "supports at most",
            ],
        ]),
        HINT_MAX_TOKENS,
    ),
    // A request body over the API's byte limit (Bedrock's body constraint).
    r(
        "msg.body_over_length",
        Parts(&[&["'body'", "body"], &["length less than or equal to"]]),
        R::PayloadTooLarge,
    ),
    // A prompt that fills the context: the room left for output is negative (vLLM), the
    // server's context is exceeded (llama.cpp, its 500 too), the input is over the model's
    // length (Bedrock's "expected maxLength").
    r(
        "msg.context_exceeded",
        Parts(&[&[
            "context size has been exceeded",
            "max_tokens must be at least 1, got -",
            "expected maxlength",
        ]]),
        R::ContextOverflow,
    ),
    r(
        "msg.input_prompt_too_long",
        Parts(&[
            &["input prompt (", "prompt ("],
            &["is too long", "too long and exceeds"],
        ]),
        R::ContextOverflow,
    ),
    // Capabilities before "not found": "No endpoints found that support tool use".
    r(
        "msg.support_tool_use",
        Message("support tool use"),
        R::UnsupportedCapability,
    ),
    // A model that takes fewer images, or other media, than the request sends: another
    // model may take them.
    r(
        "msg.media_over_model_max",
        Parts(&[
            &["image", "audio", "video", "pdf", "document"],
            &["supports at most", "at most", "maximum of", "too many"],
            &["model", "per prompt", "per request"],
        ]),
        R::UnsupportedCapability,
    ),
    r(
        "msg.does_not_support_tools",
        Message("does not support tools"),
        R::UnsupportedCapability,
    ),
    r(
        "msg.tools_not_supported",
        Message("tools are not supported"),
        R::UnsupportedCapability,
    ),
    r(
        "msg.tool_use_not_supported",
        Message("tool use is not supported"),
        R::UnsupportedCapability,
    ),
    r(
        "msg.function_calling_not_enabled",
        Message("function calling is not enabled"),
        R::UnsupportedCapability,
    ),
    r(
        "msg.tool_choice_requires",
        Message("\"auto\" tool choice requires"),
        R::UnsupportedCapability,
    ),
    r(
        "msg.requires_jinja",
        Message("requires --jinja"),
        R::UnsupportedCapability,
    ),
    // Quota before rate limit ("exceeded your current quota" comes with a 429).
    r(
        "msg.exceeded_quota",
        Message("exceeded your current quota"),
        R::QuotaExhausted,
    ),
    r("msg.billing", Message("billing"), R::QuotaExhausted),
    r(
        "msg.insufficient_credits",
        Message("insufficient credits"),
        R::QuotaExhausted,
    ),
    r(
        "msg.payment_required",
        Message("payment required"),
        R::QuotaExhausted,
    ),
    r(
        "msg.spending_limit",
        Message("spending limit"),
        R::QuotaExhausted,
    ),
    // Rate limits before overflow: "Rate limit reached ... tokens per min" is not an overflow.
    r("msg.rate_limited", Message("rate-limited"), R::RateLimit),
    r("msg.rate_limit", Message("rate limit"), R::RateLimit),
    r(
        "msg.too_many_requests",
        Message("too many requests"),
        R::RateLimit,
    ),
    r(
        "msg.too_many_tokens_wait",
        MessageAll(&["too many tokens", "wait"]),
        R::RateLimit,
    ),
    r("msg.capacity", Message("capacity"), R::Overloaded),
    r(
        "msg.temporarily_unavailable",
        Message("temporarily unavailable"),
        R::Overloaded,
    ),
    // Context overflow.
    r(
        "msg.context_length",
        Message("context length"),
        R::ContextOverflow,
    ),
    r(
        "msg.context_window",
        Message("context window"),
        R::ContextOverflow,
    ),
    r(
        "msg.maximum_context",
        Message("maximum context"),
        R::ContextOverflow,
    ),
    r(
        "msg.context_size",
        Message("context size"),
        R::ContextOverflow,
    ),
    r(
        "msg.context_limit",
        Message("context limit"),
        R::ContextOverflow,
    ),
    r(
        "msg.prompt_is_too_long",
        Message("prompt is too long"),
        R::ContextOverflow,
    ),
    r(
        "msg.input_is_too_long",
        Message("input is too long"),
        R::ContextOverflow,
    ),
    r(
        "msg.too_many_input_tokens",
        Message("too many input tokens"),
        R::ContextOverflow,
    ),
    r(
        "msg.token_count_exceeds",
        MessageAll(&["token count", "exceeds"]),
        R::ContextOverflow,
    ),
    r(
        "msg.maximum_prompt_length",
        Message("maximum prompt length"),
        R::ContextOverflow,
    ),
    r(
        "msg.reduce_the_length",
        Message("reduce the length"),
        R::ContextOverflow,
    ),
    r(
        "msg.request_too_large",
        Message("request too large"),
        R::PayloadTooLarge,
    ),
    r(
        "msg.payload_too_large",
        Message("payload too large"),
        R::PayloadTooLarge,
    ),
    // Credentials.
    r("msg.api_key", Message("api key"), R::Auth),
    r("msg.x_api_key", Message("x-api-key"), R::Auth),
    r("msg.auth_credentials", Message("auth credentials"), R::Auth),
    r("msg.security_token", Message("security token"), R::Auth),
    r("msg.unauthorized", Message("unauthorized"), R::Auth),
    r("msg.authentication", Message("authentication"), R::Auth),
    r(
        "msg.not_have_access",
        Message("do not have access"),
        R::PermissionDenied,
    ),
    r(
        "msg.dont_have_access",
        Message("don't have access"),
        R::PermissionDenied,
    ),
    r("msg.permission", Message("permission"), R::PermissionDenied),
    r(
        "msg.not_allowed",
        Message("not allowed to"),
        R::PermissionDenied,
    ),
    // Models.
    // Bedrock: a model that this route serves only through an inference profile.
    r(
        "msg.inference_profile_required",
        Parts(&[
            &["on-demand throughput", "on demand throughput"],
            &[
                "inference profile",
                "not supported",
                "isn't supported",
                "isn\u{2019}t supported",
            ],
        ]),
        R::ModelNotFound,
    ),
    r(
        "msg.decommissioned",
        Message("decommissioned"),
        R::ModelNotFound,
    ),
    r(
        "msg.deployment_does_not_exist",
        MessageAll(&["deployment", "does not exist"]),
        R::ModelNotFound,
    ),
    r(
        "msg.model_does_not_exist",
        MessageAll(&["model", "does not exist"]),
        R::ModelNotFound,
    ),
    r(
        "msg.model_not_found",
        MessageAll(&["model", "not found"]),
        R::ModelNotFound,
    ),
    // OpenRouter: the model has endpoints, none that takes what was asked ("that support
    // tool use", "that support the provided 'tool_choice' value").
    r(
        "msg.no_endpoints_support",
        MessageAll(&["no endpoints found", "support"]),
        R::UnsupportedCapability,
    ),
    r(
        "msg.no_endpoints_found",
        Message("no endpoints found"),
        R::ModelNotFound,
    ),
    r(
        "msg.unknown_model",
        Message("unknown model"),
        R::ModelNotFound,
    ),
    r(
        "msg.not_a_valid_model",
        Message("not a valid model"),
        R::ModelNotFound,
    ),
    // Content policy.
    r(
        "msg.content_policy",
        Message("content policy"),
        R::ContentPolicy,
    ),
    r(
        "msg.content_management",
        Message("content management"),
        R::ContentPolicy,
    ),
    r("msg.safety", Message("safety"), R::ContentPolicy),
    r("msg.flagged", Message("flagged"), R::ContentPolicy),
    // Timeouts and servers.
    r("msg.timed_out", Message("timed out"), R::Timeout),
    r("msg.timeout", Message("timeout"), R::Timeout),
    r("msg.deadline", Message("deadline"), R::Timeout),
    r(
        "msg.internal_error",
        Message("internal error"),
        R::ServerError,
    ),
    r(
        "msg.server_had_an_error",
        Message("server had an error"),
        R::ServerError,
    ),
    // A Python server (llama-cpp-python, any FastAPI app behind a catch-all handler) that
    // validates the request with pydantic and answers a refusal with HTTP 500: the error
    // names the request's body (`'loc': ('body', ...)`) or its request model
    // (`... validation error for CreateChatCompletionRequest`). No retry or other upstream
    // changes the request. (A validation error on the *response*, `'loc': ('response',
    // ...)`, is the server's own bug and stays a server error.)
    r(
        "msg.request_validation_error",
        Parts(&[&["validation error"], &["('body',", "for create"]]),
        R::InvalidRequest,
    ),
    r("msg.disconnected", Message("disconnected"), R::ServerError),
    r(
        "msg.internal_server_error",
        Message("internal server error"),
        R::ServerError,
    ),
    // Requests that are simply wrong.
    r(
        "msg.unrecognized_argument",
        Message("unrecognized request argument"),
        R::InvalidRequest,
    ),
    r(
        "msg.unknown_parameter",
        Message("unknown parameter"),
        R::InvalidRequest,
    ),
    r(
        "msg.unsupported_parameter",
        Message("unsupported parameter"),
        R::InvalidRequest,
    ),
    r(
        "msg.extra_inputs",
        Message("extra inputs are not permitted"),
        R::InvalidRequest,
    ),
    r(
        "msg.additional_properties",
        Message("additional properties"),
        R::InvalidRequest,
    ),
    r(
        "msg.must_alternate",
        Message("alternate"),
        R::InvalidRequest,
    ),
    // Any other server's words for a prompt over the context: the input, prompt, context
    // or messages, in tokens, over a maximum (after the rate-limit messages above, which
    // speak of tokens per minute).
    r(
        "msg.input_tokens_over_maximum",
        Parts(&[
            &["input", "prompt", "context", "messages"],
            &["token"],
            &[
                "exceed",
                "longer than",
                "too long",
                "maximum",
                "must be <=",
                "must have less than",
            ],
        ]),
        R::ContextOverflow,
    ),
    r(
        "msg.invalid_messages",
        Message("messages"),
        R::InvalidRequest,
    ),
];

/// The HTTP status, last.
pub static STATUS_RULES: &[Rule] = &[
    r("status.400", Status(400), R::InvalidRequest),
    r("status.401", Status(401), R::Auth),
    r("status.402", Status(402), R::QuotaExhausted),
    r("status.403", Status(403), R::PermissionDenied),
    r("status.404", Status(404), R::ModelNotFound),
    r("status.408", Status(408), R::Timeout),
    r("status.413", Status(413), R::PayloadTooLarge),
    r("status.422", Status(422), R::InvalidRequest),
    r("status.429", Status(429), R::RateLimit),
    r("status.500", Status(500), R::ServerError),
    r("status.502", Status(502), R::ServerError),
    r("status.503", Status(503), R::Overloaded),
    r("status.504", Status(504), R::Timeout),
    r("status.529", Status(529), R::Overloaded),
    r("status.4xx", StatusRange(400, 499), R::InvalidRequest),
    r("status.5xx", StatusRange(500, 599), R::ServerError),
];

/// Transport errors (no status), matched against the lower-cased message.
pub static TRANSPORT_RULES: &[Rule] = &[
    r(
        "transport.stream_ended",
        Message("stream ended"),
        R::StreamInterrupted,
    ),
    r(
        "transport.unexpected_eof",
        Message("unexpected eof"),
        R::StreamInterrupted,
    ),
    r(
        "transport.incomplete_message",
        Message("incomplete message"),
        R::StreamInterrupted,
    ),
    r(
        "transport.closed_before_complete",
        Message("closed before message completed"),
        R::StreamInterrupted,
    ),
    r("transport.timed_out", Message("timed out"), R::Timeout),
    r("transport.timeout", Message("timeout"), R::Timeout),
    r("transport.deadline", Message("deadline"), R::Timeout),
    r("transport.refused", Message("refused"), R::Connection),
    r("transport.reset", Message("reset"), R::Connection),
    r(
        "transport.broken_pipe",
        Message("broken pipe"),
        R::Connection,
    ),
    r("transport.dns", Message("dns"), R::Connection),
    r("transport.lookup", Message("lookup"), R::Connection),
    r(
        "transport.name_not_known",
        Message("name or service not known"),
        R::Connection,
    ),
    r(
        "transport.no_such_host",
        Message("no such host"),
        R::Connection,
    ),
    r("transport.tls", Message("tls"), R::Connection),
    r("transport.ssl", Message("ssl"), R::Connection),
    r(
        "transport.certificate",
        Message("certificate"),
        R::Connection,
    ),
    r("transport.handshake", Message("handshake"), R::Connection),
    r(
        "transport.unreachable",
        Message("unreachable"),
        R::Connection,
    ),
    // HTTP clients' outer messages (reqwest, hyper), for a chain whose inner errors say
    // nothing more precise: last, so that any cause they wrap decides first.
    r(
        "transport.body",
        MessageAll(&["error", "body"]),
        R::StreamInterrupted,
    ),
    r(
        "transport.sending_request",
        Message("error sending request"),
        R::Connection,
    ),
    r("transport.connect", Message("connect"), R::Connection),
];

/// Every rule of every table, in the order they are checked (transport last).
pub fn all() -> impl Iterator<Item = &'static Rule> {
    CODE_RULES
        .iter()
        .chain(PROVIDER_MESSAGE_RULES)
        .chain(MESSAGE_RULES)
        .chain(STATUS_RULES)
        .chain(TRANSPORT_RULES)
}

fn matches(rule: &Rule, provider: Provider, status: Option<u16>, body: &ErrorBody) -> bool {
    if !rule.providers.is_empty() && !rule.providers.contains(&provider) {
        return false;
    }
    match rule.condition {
        Code(c) => body.codes.iter().any(|x| x == c),
        CodeContains(c) => body.codes.iter().any(|x| x.contains(c)),
        Message(m) => body.haystack.contains(m),
        MessageAll(ms) => ms.iter().all(|m| body.haystack.contains(m)),
        Parts(groups) => groups
            .iter()
            .all(|g| g.iter().any(|m| body.haystack.contains(m))),
        RequestedOverLimit => requested_over_limit(&body.haystack),
        Status(s) => status == Some(s),
        StatusRange(lo, hi) => status.is_some_and(|s| (lo..=hi).contains(&s)),
    }
}

/// The number right after the first `word` in `text` that has one (`for limit gpt-4.1 ...
/// Limit 30000` gives 30000; digits with `,` between them allowed).
fn number_after(text: &str, word: &str) -> Option<u64> {
    text.match_indices(word).find_map(|(at, _)| {
        let digits: String = text[at + word.len()..]
            .trim_start_matches([' ', ':'])
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

/// `Limit N` and `Requested M` with M > N (OpenAI's and Groq's per-minute token messages;
/// `Rate limit reached ... Limit 30000, Used 29000, Requested 2000` is not over).
fn requested_over_limit(haystack: &str) -> bool {
    match (
        number_after(haystack, "limit "),
        number_after(haystack, "requested "),
    ) {
        (Some(limit), Some(requested)) => requested > limit,
        _ => false,
    }
}

/// The first matching rule of the four HTTP tables (its reason, id and hint), or
/// `unknown`.
pub(crate) fn decide(
    provider: Provider,
    status: Option<u16>,
    body: &ErrorBody,
) -> (Reason, &'static str, Option<&'static str>) {
    CODE_RULES
        .iter()
        .chain(PROVIDER_MESSAGE_RULES)
        .chain(MESSAGE_RULES)
        .chain(STATUS_RULES)
        .find(|rule| matches(rule, provider, status, body))
        .map_or((Reason::Unknown, "unknown", None), |rule| {
            (rule.reason, rule.id, rule.hint)
        })
}

/// The first matching transport rule, or `unknown`.
pub(crate) fn decide_transport(message: &str) -> (Reason, &'static str) {
    let body = ErrorBody {
        haystack: message.to_lowercase(),
        ..ErrorBody::default()
    };
    TRANSPORT_RULES
        .iter()
        .find(|rule| matches(rule, Provider::Other, None, &body))
        .map_or((Reason::Unknown, "unknown"), |rule| (rule.reason, rule.id))
}
