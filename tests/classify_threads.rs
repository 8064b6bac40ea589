//! Error bodies quoted in public issue threads of gateways, agents and servers (2024–26),
//! each with the thread it was taken from and the reason and action it must get. They were
//! written down before the rules that catch them, and split in two before any rule changed:
//! the rules were generalised on the `tune` half, and the `held` half measures whether that
//! generalised (its score is printed by `thread_vectors_score`, and every vector must pass).
//!
//! A body is the server's JSON as the thread shows it (a Python dict repr written back as
//! the JSON it was); where a client printed only the message, the body is the provider's
//! usual error envelope around that message, and the comment says so.

use toolstream::classify::{classify_http, Action, HttpFailure, Policy, Provider, Reason};

use Action as A;
use Provider as P;
use Reason as R;

/// Which set a vector is in: the one the rules were tuned on, the held-out half, or the
/// second held-out set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Set {
    Tune = 0,
    Held = 1,
    Fresh = 2,
    Third = 3,
    Fourth = 4,
    Fifth = 5,
    Sixth = 6,
    Seventh = 7,
    Eighth = 8,
    Ninth = 9,
    Tenth = 10,
    EleventhTune = 11,
    EleventhHeld = 12,
}

/// One vector.
struct T {
    held: Set,
    provider: Provider,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    body: &'static str,
    reason: Reason,
    action: Action,
    thread: &'static str,
    /// The rule that catches it (asserted, so a vector that moves to another rule with
    /// the same verdict is seen).
    rule: &'static str,
}

macro_rules! t {
    ($held:expr, $p:ident, $status:expr, $thread:expr, $body:expr, $reason:ident, $action:ident, $rule:literal) => {
        T {
            held: $held,
            provider: P::$p,
            status: $status,
            headers: &[],
            body: $body,
            reason: R::$reason,
            action: A::$action,
            thread: $thread,
            rule: $rule,
        }
    };
}

const TUNE: Set = Set::Tune;
const HELD: Set = Set::Held;
/// The second held-out set: collected after the rules above were written, and scored before
/// any rule changed for them (see the commit that added them).
const FRESH: Set = Set::Fresh;
/// The third: collected after the rules were generalised on the second, scored before any
/// rule changed for them.
const THIRD: Set = Set::Third;
/// The fourth: collected after the third's rule changes, scored before any change.
const FOURTH: Set = Set::Fourth;
/// The fifth: collected after the fourth's rule changes, scored before any change.
const FIFTH: Set = Set::Fifth;
/// The sixth: collected after the fifth's rule changes, scored before any change.
const SIXTH: Set = Set::Sixth;
/// The seventh: collected after the sixth's rule change, scored before any change.
const SEVENTH: Set = Set::Seventh;
/// The eighth: collected after the seventh, scored before any change.
const EIGHTH: Set = Set::Eighth;
/// The ninth: collected after the eighth's rule change, scored before any change.
const NINTH: Set = Set::Ninth;
/// The tenth: collected after the ninth's rule changes, scored before any change.
const TENTH: Set = Set::Tenth;
/// The eleventh: 41 vectors collected after the tenth's rule changes and split in two
/// before any run, by turns in the order they are listed (first to the tuning half). Both
/// halves were scored before any change; rules were then changed looking at the tuning
/// half only, and the held-out half's score is reported in that commit.
const E_TUNE: Set = Set::EleventhTune;
/// The held-out half of the eleventh set.
const E_HELD: Set = Set::EleventhHeld;

const THREADS: &[T] = &[
    // ---- 1. The model's broken tool-call JSON, in every server's words ----
    // Ollama's OpenAI-compatible endpoint (the message as the client printed it).
    t!(
        TUNE,
        Ollama,
        400,
        "https://github.com/duolahypercho/codex-router/issues/161",
        r#"{"error":{"message":"invalid tool call arguments","type":"api_error","param":null,"code":null}}"#,
        ModelOutput,
        RetryWithFeedback,
        "msg.tool_call_arguments_invalid"
    ),
    // vLLM parses the arguments a client replays; a broken one is refused before generation.
    t!(
        HELD,
        Vllm,
        400,
        "https://github.com/vllm-project/vllm/issues/47761",
        r#"{"object":"error","message":"Unterminated string starting at: line 1 column 14 (char 13)","type":"BadRequestError","param":null,"code":400}"#,
        RequestRepair,
        RepairRequest,
        "req.python_json_error"
    ),
    t!(
        TUNE,
        Vllm,
        400,
        "https://github.com/vllm-project/vllm/pull/55497",
        r#"{"object":"error","message":"Expecting value: line 1 column 98 (char 97)","type":"BadRequestError","param":null,"code":400}"#,
        RequestRepair,
        RepairRequest,
        "req.python_json_error"
    ),
    t!(
        HELD,
        Vllm,
        400,
        "https://github.com/huggingface/physics-intern/pull/6",
        r#"{"object":"error","message":"Expecting ',' delimiter: line 1 column 57 (char 56)","type":"BadRequestError","param":null,"code":400}"#,
        RequestRepair,
        RepairRequest,
        "req.python_json_error"
    ),
    t!(
        TUNE,
        Vllm,
        400,
        "https://github.com/huggingface/physics-intern/pull/6",
        r#"{"object":"error","message":"Invalid \\escape: line 1 column 31 (char 30)","type":"BadRequestError","param":null,"code":400}"#,
        RequestRepair,
        RepairRequest,
        "req.python_json_error"
    ),
    t!(
        HELD,
        Vllm,
        400,
        "https://github.com/OpenHands/software-agent-sdk/issues/2887",
        r#"{"error":{"message":"Unterminated string starting at: line 1 column 1121 (char 1120)","type":"BadRequestError","param":null,"code":400}}"#,
        RequestRepair,
        RepairRequest,
        "req.python_json_error"
    ),
    // DashScope (Qwen) through LiteLLM: the history's function.arguments.
    t!(
        TUNE,
        Other,
        400,
        "https://github.com/HKUDS/nanobot/issues/2469",
        r#"{"error":{"message":"<400> InternalError.Algo.InvalidParameter: The \"function.arguments\" parameter of the code model must be in JSON format.","type":"invalid_request_error","param":null,"code":"invalid_parameter_error"}}"#,
        RequestRepair,
        RepairRequest,
        "req.arguments_parameter_not_json"
    ),
    t!(
        HELD,
        Other,
        400,
        "https://github.com/HKUDS/nanobot/issues/1487",
        r#"{"code":"InvalidParameter","message":"<400> InternalError.Algo.InvalidParameter: The \"function.arguments\" parameter of the code model must be in JSON format."}"#,
        RequestRepair,
        RepairRequest,
        "req.arguments_parameter_not_json"
    ),
    // llama-server refuses a prompt whose replayed tool call does not parse.
    t!(
        TUNE,
        Llamacpp,
        500,
        "https://github.com/vxcontrol/pentagi/issues/313",
        r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 131: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal","type":"server_error"}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_call_arguments_in_prompt"
    ),
    // Ollama: the history's calls and results do not pair up.
    t!(
        HELD,
        Ollama,
        400,
        "https://github.com/ollama/ollama/issues/12395",
        r#"{"error":{"message":"Invalid tool usage: mismatch between tool calls and tool results","type":"invalid_request_error","param":null,"code":null}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        TUNE,
        Ollama,
        400,
        "https://github.com/lobehub/lobehub/issues/9531",
        r#"{"error":"Invalid tool usage: mismatch between tool calls and tool results"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // ---- 2. Requests that can never fit a per-minute token limit ----
    t!(
        HELD,
        Openai,
        429,
        "https://github.com/vanna-ai/vanna-flask/issues/11",
        r#"{"error":{"message":"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 342389. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        TUNE,
        Openai,
        429,
        "https://github.com/continuedev/continue/issues/10602",
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-vyUrKHsIdLcZGKR3zqCqllrS on tokens per min (TPM): Limit 30000, Requested 61337. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        HELD,
        Openai,
        429,
        "https://github.com/gptscript-ai/gptscript/issues/393",
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-gLnL4YPUmJUw1RonfNCRnuiS on tokens per min (TPM): Limit 30000, Requested 30872. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        TUNE,
        Openai,
        429,
        "https://github.com/DrShushen/climb/issues/13",
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-VDAWofJASuLH0vVz8o9tiQZr on tokens per min (TPM): Limit 30000, Requested 30601. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        HELD,
        Openai,
        429,
        "https://github.com/continuedev/continue/issues/11717",
        r#"{"error":{"message":"Request too large for gpt-4.1-2025-04-14 (for limit gpt-4.1) in organization org-lFXO45OIovvTfxhxkzQlewnD on tokens per min (TPM): Limit 30000, Requested 37313. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        TUNE,
        Openai,
        429,
        "https://github.com/assafelovic/gpt-researcher/issues/585",
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-sE0IdGM75DskjnJVA5kYx3XU on tokens per min (TPM): Limit 30000, Requested 82821. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        HELD,
        Groq,
        413,
        "https://github.com/continuedev/continue/issues/10218",
        r#"{"error":{"message":"Request too large for model `llama-3.3-70b-versatile` in organization `org_01kgg5588eftc8k70aes4864eb` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 14137, please reduce your message size and try again. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        TUNE,
        Groq,
        413,
        "https://github.com/assafelovic/gpt-researcher/issues/985",
        r#"{"error":{"message":"Request too large for model `llama-3.1-70b-versatile` in organization `org_01hw8f0aa0ekmrn70ffm2zkdv1` on tokens per minute (TPM): Limit 6000, Requested 14368, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.","type":"tokens","code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        HELD,
        Groq,
        413,
        "https://github.com/ITSpecialist111/ai_automation_suggester/issues/61",
        r#"{"error":{"message":"Request too large for model `llama-3.3-70b-versatile` in organization `org_01jp8byqwpfx9sp1m0dbhb6a1e` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.","type":"tokens","code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        TUNE,
        Groq,
        413,
        "https://github.com/HunorLaczko/ha-groq-cloud-api/issues/27",
        r#"{"error":{"message":"Request too large for model llama-3.1-8b-instant in organization org_xxxxxxx service tier on_demand on tokens per minute (TPM): Limit 6000, Requested 12328, please reduce your message size and try again. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        HELD,
        Groq,
        413,
        "https://github.com/cottongeeks/podscript/issues/20",
        r#"{"error":{"message":"Request too large for model `llama-3.3-70b-versatile` in organization `org_01j2g5d88hfvjrgw64hnapqk8y` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 10338, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.","type":"tokens","code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    // trap: the same family of message, but the request fits the limit: a rate limit.
    t!(
        TUNE,
        Groq,
        429,
        "https://github.com/elizaOS/eliza/issues/4040",
        r#"{"error":{"message":"Rate limit reached for model `llama-3.1-8b-instant` in organization `org_01j5b4pz9jff492fq686vypsx6` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5034, Requested 1443. Please try again in 4.77s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#,
        RateLimit,
        Retry,
        "code.rate_limit_exceeded"
    ),
    // GitHub Models: a per-request token cap.
    t!(
        HELD,
        Openai,
        413,
        "https://github.com/tashfeenahmed/freellmapi/issues/426",
        r#"{"error":{"code":"tokens_limit_reached","message":"Request body too large for gpt-4.1 model. Max size: 8000 tokens.","details":null}}"#,
        PayloadTooLarge,
        Compress,
        "status.413"
    ),
    // ---- 3. Quota versus rate limit ----
    t!(
        TUNE,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/38035",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."},"request_id":"req_011CZLrUfBVkVHn5T6EqQaf7"}"#,
        QuotaExhausted,
        Fallback,
        "msg.usage_limits_regain_access"
    ),
    t!(
        HELD,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/2127",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2025-07-01 at 00:00 UTC."}}"#,
        QuotaExhausted,
        Fallback,
        "msg.usage_limits_regain_access"
    ),
    // A per-day quota among the violations: waiting a minute does not help.
    t!(
        TUNE,
        Gemini,
        429,
        "https://github.com/google-gemini/gemini-cli/issues/8437",
        r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count","quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash-preview-image"}},{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash-preview-image"}},{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"model":"gemini-2.5-flash-preview-image","location":"global"}}]}]}}"#,
        QuotaExhausted,
        Fallback,
        "code.quota_per_day"
    ),
    t!(
        HELD,
        Gemini,
        429,
        "https://github.com/google-gemini/gemini-cli/issues/2336",
        r#"{"error":{"code":429,"message":"Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:681255809395'.","errors":[{"message":"Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:681255809395'.","domain":"global","reason":"rateLimitExceeded"}],"status":"RESOURCE_EXHAUSTED"}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_per_day"
    ),
    // A free tier with limit 0: the model is not in the plan at all.
    t!(
        TUNE,
        Gemini,
        429,
        "https://github.com/continuedev/continue/issues/12643",
        r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-3.1-pro\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-3.1-pro\nPlease retry in 11.665902715s.","status":"RESOURCE_EXHAUSTED"}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_limit_zero"
    ),
    t!(
        HELD,
        Gemini,
        429,
        "https://github.com/continuedev/continue/issues/9745",
        r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-3-pro\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-3-pro\nPlease retry in 10.673410956s.","status":"RESOURCE_EXHAUSTED"}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_limit_zero"
    ),
    // trap: a per-minute quota is a rate limit.
    t!(
        TUNE,
        Gemini,
        429,
        "https://github.com/tech-shrimp/gemini-playground/issues/10",
        r#"{"error":{"code":429,"message":"Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer 'project_number:391029737820'.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com","quota_location":"us-west4","quota_limit":"GenerateContentRequestsPerMinutePerProjectPerRegion","quota_metric":"generativelanguage.googleapis.com/generate_content_requests","consumer":"projects/391029737820"}}]}}"#,
        RateLimit,
        Retry,
        "code.rate_limit_exceeded"
    ),
    t!(
        HELD,
        Gemini,
        429,
        "https://github.com/google-gemini/gemini-cli/issues/1811",
        r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","errors":[{"message":"Resource has been exhausted (e.g. check quota).","domain":"global","reason":"rateLimitExceeded"}],"status":"RESOURCE_EXHAUSTED"}}"#,
        RateLimit,
        Retry,
        "gemini.resource_exhausted"
    ),
    // ---- 4. Context overflow in many servers' words ----
    t!(
        TUNE,
        Llamacpp,
        400,
        "https://github.com/oobabooga/textgen/issues/7257",
        r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
        ContextOverflow,
        Compress,
        "code.exceed_context_size"
    ),
    t!(
        HELD,
        Llamacpp,
        500,
        "https://github.com/ggml-org/llama.cpp/issues/19774",
        r#"{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_exceeded"
    ),
    t!(
        TUNE,
        Llamacpp,
        400,
        "https://github.com/ggml-org/llama.cpp/issues/19774",
        r#"{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}"#,
        ContextOverflow,
        Compress,
        "code.exceed_context_size"
    ),
    // The message as the client printed it, in llama-server's envelope.
    t!(
        HELD,
        Llamacpp,
        400,
        "https://github.com/continuedev/continue/issues/9797",
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_size"
    ),
    t!(
        TUNE,
        Vllm,
        400,
        "https://github.com/vllm-project/vllm/issues/42474",
        r#"{"object":"error","message":"This model's maximum context length is 128000 tokens. However, you requested 65535 output tokens and your prompt contains at least 62466 input tokens, for a total of at least 128001 tokens.","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        HELD,
        Vllm,
        400,
        "https://github.com/ogx-ai/ogx/issues/4534",
        r#"{"object":"error","message":"This model's maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        TUNE,
        Vllm,
        400,
        "https://github.com/vllm-project/vllm/issues/4667",
        r#"{"object":"error","message":"max_tokens must be at least 1, got -186.","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_exceeded"
    ),
    t!(
        HELD,
        Vllm,
        400,
        "https://github.com/vllm-project/vllm/issues/4667",
        r#"{"object":"error","message":"max_tokens must be at least 1, got -344.","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_exceeded"
    ),
    t!(
        TUNE,
        Openrouter,
        400,
        "https://github.com/OpenHands/OpenHands/issues/9937",
        r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        HELD,
        Openrouter,
        400,
        "https://github.com/Aider-AI/aider/issues/3721",
        r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 141607 tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":"Chutes"}}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        TUNE,
        Openrouter,
        400,
        "https://github.com/topoteretes/cognee/issues/1061",
        r#"{"error":{"message":"This endpoint's maximum context length is 16384 tokens. However, you requested about 94307 tokens (94307 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        HELD,
        Openrouter,
        400,
        "https://github.com/agno-agi/agno/issues/3980",
        r#"{"error":{"message":"This endpoint's maximum context length is 200000 tokens. However, you requested about 5028244 tokens (4945291 of text input, 2953 of tool input, 80000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        TUNE,
        Openrouter,
        400,
        "https://github.com/OpenRouterTeam/openrouter-examples/issues/10",
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens, however you requested 8977 tokens (8977 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.","type":"invalid_request_error","param":null,"code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        HELD,
        Bedrock,
        400,
        "https://github.com/aws-samples/assessment-generator/issues/2",
        r#"{"message":"Input is too long for requested model."}"#,
        ContextOverflow,
        Compress,
        "msg.input_is_too_long"
    ),
    t!(
        TUNE,
        Bedrock,
        400,
        "https://github.com/aws-samples/bedrock-chat/issues/95",
        r#"{"__type":"ValidationException","message":"Input is too long for requested model."}"#,
        ContextOverflow,
        Compress,
        "msg.input_is_too_long"
    ),
    t!(
        HELD,
        Bedrock,
        400,
        "https://github.com/ryanadoty/Amazon-Bedrock-Amazon-RDS-POC/issues/9",
        r#"{"message":"Malformed input request: expected maxLength: 42000, actual: 46735, please reformat your input and try again."}"#,
        ContextOverflow,
        Compress,
        "msg.context_exceeded"
    ),
    t!(
        TUNE,
        Vllm,
        400,
        "https://github.com/vllm-project/vllm/issues/10440",
        r#"{"object":"error","message":"Input prompt (35247 tokens) is too long and exceeds limit of 1000","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.input_prompt_too_long"
    ),
    // ---- 5. History and request-shape refusals: repair the request, never fall back ----
    t!(
        HELD,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/3512",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.5: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01SWBkC2GPGhoSfEqTZ6y91b. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        TUNE,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/5989",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.22: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01HqfLWiAKQLsniF2fBGF2KD, toolu_01SJzDkeAZER935cpGFptTNk. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // Claude on Vertex through a gateway: Anthropic's error inside Google's envelope.
    t!(
        HELD,
        Gemini,
        400,
        "https://github.com/lbjlaq/Antigravity-Manager/issues/654",
        r#"{"error":{"code":400,"message":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.243: `tool_use` ids were found without `tool_result` blocks immediately after: bash-uOQIdN0O. Each `tool_use` block must have a corresponding `tool_result` block in the next message.\"},\"request_id\":\"req_vrtx_011CX8LKNqFusFUVvygN5vEH\"}","status":"INVALID_ARGUMENT"}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        TUNE,
        Anthropic,
        400,
        "https://github.com/Kilo-Org/kilocode/issues/5163",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.33: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},"request_id":"req_vrtx_011CXDA6q3bAL2vMavcCemUc"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // DeepSeek thinking mode: the reasoning a tool-call turn must carry back.
    t!(
        HELD,
        Deepseek,
        400,
        "https://github.com/hotovo/aider-desk/issues/529",
        r#"{"error":{"message":"Missing `reasoning_content` field in the assistant message at message index 2. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ReasoningReplay,
        RepairRequest,
        "msg.reasoning_content_missing"
    ),
    t!(
        TUNE,
        Deepseek,
        400,
        "https://github.com/AstrBotDevs/AstrBot/issues/4174",
        r#"{"error":{"message":"Missing reasoning_content field in the assistant message at message index 6. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ReasoningReplay,
        RepairRequest,
        "msg.reasoning_content_missing"
    ),
    // max_tokens above the model's maximum: clamp it.
    t!(
        HELD,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/24451",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 128001 > 64000, which is the maximum allowed number of output tokens for claude-opus-4-5-20251101"},"request_id":"req_011CXxg3eqF8ZMvqtkKHNjKQ"}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    t!(
        TUNE,
        Anthropic,
        400,
        "https://github.com/OpenHands/OpenHands/issues/11090",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 1000000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514"}}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    t!(
        HELD,
        Anthropic,
        400,
        "https://github.com/chathub-dev/chathub/issues/1222",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 32000 > 4096, which is the maximum allowed number of output tokens for claude-3-opus-20240229"}}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    t!(
        TUNE,
        Groq,
        400,
        "https://github.com/skapadia3214/groq-moa/issues/8",
        r#"{"error":{"message":"max_tokens for `llama-3.1-8b-instant` must be less than or equal to 8000","type":"invalid_request_error"}}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    t!(
        HELD,
        Bedrock,
        400,
        "https://github.com/langchain-ai/langchain/issues/9697",
        r#"{"message":"Malformed input request: 8192 is not less or equal to 8191, please reformat your input and try again."}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    // ---- A second held-out set, collected after the rules above ----
    t!(
        FRESH,
        Anthropic,
        400,
        "https://github.com/decocms/studio/issues/1803",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_015cqXRmSf7tsfMgJ9ibV1z3. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // Anthropic's refusal through OpenRouter, in metadata.raw.
    t!(
        FRESH,
        Openrouter,
        400,
        "https://github.com/router-for-me/CLIProxyAPI/issues/497",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.12.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01JLpBvrkaJHBDU3z3cWqtyv. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.\"},\"request_id\":\"req_011C\"}","provider_name":"Anthropic"}},"user_id":"user_2i"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/13460",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.48.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_019ETtGZEhTBXgWPVsdVnXMh. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},"request_id":"req_011CVw2irzCqYx77e329n3GK"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/64383",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.7.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc. Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it."},"request_id":"req_011CbboXqqvWYaCeMQ6aVjWV"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Anthropic,
        400,
        "https://github.com/tghamm/Anthropic.SDK/issues/184",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.8.content.0: unexpected tool_use_id found in tool_result blocks: toolu_01NGSZ6A8jPBzZr8prgLzR7P. Each tool_result block must have a corresponding tool_use block in the previous message."},"request_id":"req_011CYByzUedawPRMujMEod1a"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Mistral,
        400,
        "https://github.com/camel-ai/camel/issues/1467",
        r#"{"object":"error","message":"Not the same number of function calls and responses","type":"invalid_request_error","param":null,"code":null}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Mistral,
        400,
        "https://github.com/567-labs/instructor/issues/724",
        r#"{"object":"error","message":"Not the same number of function calls and responses","type":"invalid_request_error","param":null,"code":null}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Gemini,
        400,
        "https://github.com/google-gemini/gemini-cli/issues/5443",
        r#"[{"error":{"code":400,"message":"Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.","errors":[{"message":"Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.","domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT"}}]"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FRESH,
        Anthropic,
        400,
        "https://github.com/boldsoftware/exe.dev/issues/62",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 200251 tokens > 200000 maximum"},"request_id":"req_011CWdepJvA2D819tdYYq4h7"}"#,
        ContextOverflow,
        Compress,
        "msg.prompt_is_too_long"
    ),
    t!(
        FRESH,
        Anthropic,
        400,
        "https://github.com/sojohnnysaid/project-guide/issues/2",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208656 tokens > 200000 maximum"}}"#,
        ContextOverflow,
        Compress,
        "msg.prompt_is_too_long"
    ),
    // trap: Bedrock's "too many tokens" is a throughput limit, not an overflow.
    t!(
        FRESH,
        Bedrock,
        429,
        "https://github.com/anthropics/claude-code/issues/236",
        r#"{"message":"Too many tokens, please wait before trying again."}"#,
        RateLimit,
        Retry,
        "msg.too_many_tokens_wait"
    ),
    T {
        held: FRESH,
        provider: P::Bedrock,
        status: 429,
        headers: &[(
            "x-amzn-ErrorType",
            "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
        )],
        body: r#"{"message":"Too many tokens, please wait before trying again."}"#,
        reason: R::RateLimit,
        action: A::Retry,
        thread: "https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/99",
        rule: "code.throttling",
    },
    t!(
        FRESH,
        Bedrock,
        429,
        "https://github.com/i-dot-ai/caddy-chatbot/issues/97",
        r#"{"message":"Too many requests, please wait before trying again. You have sent too many requests. Wait before trying again."}"#,
        RateLimit,
        Retry,
        "msg.too_many_requests"
    ),
    // A per-day token quota: waiting seconds does not help.
    t!(
        FRESH,
        Bedrock,
        429,
        "https://github.com/minorun365/agent-book/issues/29",
        r#"{"message":"Too many tokens per day, please wait before trying again."}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_per_day"
    ),
    t!(
        FRESH,
        Bedrock,
        400,
        "https://github.com/RooCodeInc/Roo-Code/issues/248",
        r#"{"message":"The maximum tokens you requested exceed the model limit of 4096. Try again with a maximum tokens value lower than 4096."}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    t!(
        FRESH,
        Ollama,
        400,
        "https://github.com/heshengtao/super-agent-party/issues/142",
        r#"{"error":{"message":"registry.ollama.ai/library/deepseek-r1:latest does not support tools","type":"api_error","param":null,"code":null}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.does_not_support_tools"
    ),
    t!(
        FRESH,
        Bedrock,
        400,
        "https://github.com/langchain-ai/langchain-aws/issues/419",
        r#"{"message":"1 validation error detected: Value at 'body' failed to satisfy constraint: Member must have length less than or equal to 25000000"}"#,
        PayloadTooLarge,
        Compress,
        "msg.body_over_length"
    ),
    // ---- A third held-out set, collected after the rules were generalised ----
    t!(
        THIRD,
        Openai,
        400,
        "https://github.com/cline/cline/issues/5474",
        r#"{"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 289650 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.reduce_the_length"
    ),
    t!(
        THIRD,
        Gemini,
        400,
        "https://github.com/google-gemini/gemini-cli/issues/6678",
        r#"[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","errors":[{"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT"}}]"#,
        ContextOverflow,
        Compress,
        "msg.token_count_exceeds"
    ),
    t!(
        THIRD,
        Azure,
        400,
        "https://github.com/charmbracelet/catwalk/issues/41",
        r#"{"message":"max_tokens is too large: 20000. This model supports at most 16384 completion tokens, whereas you provided 20000.","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    // Tool-call ids the client made that Mistral refuses: the request must change.
    t!(
        THIRD,
        Mistral,
        400,
        "https://github.com/anomalyco/opencode/issues/1680",
        r#"{"object":"error","message":"Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_request_error","param":null,"code":null}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_call_id_format"
    ),
    t!(
        THIRD,
        Mistral,
        400,
        "https://github.com/nearai/ironclaw/issues/1241",
        r#"{"object":"error","message":"Tool call id was turn1_0 but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_function_call","param":null,"code":"3280","raw_status_code":400}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_call_id_format"
    ),
    t!(
        THIRD,
        Mistral,
        400,
        "https://github.com/jackmpcollins/magentic/issues/276",
        r#"{"object":"error","message":"Tool call id was 38f04d9ea185424a8dc6ed9a88da5 but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_request_error","param":null,"code":null}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_call_id_format"
    ),
    t!(
        THIRD,
        Mistral,
        400,
        "https://github.com/karthink/gptel/issues/1203",
        r#"{"object":"error","message":"Tool call id was call_0fypS1hVX but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_request_error","param":null,"code":null}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_call_id_format"
    ),
    // A local server that validates Mistral's ids the same way, with a 500.
    t!(
        THIRD,
        Other,
        500,
        "https://github.com/jundot/omlx/pull/1997",
        r#"{"error":{"message":"Tool call id was call_49c89af0 but must be a-z, A-Z, 0-9, with a length of 9"}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_call_id_format"
    ),
    t!(
        THIRD,
        Other,
        400,
        "https://github.com/QwenLM/Qwen3/issues/1321",
        r#"{"object":"error","message":"The input (61709 tokens) is longer than the model's context length (40960 tokens).","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        THIRD,
        Other,
        400,
        "https://github.com/sgl-project/sglang/issues/4048",
        r#"{"object":"error","message":"Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens).","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.input_tokens_over_maximum"
    ),
    t!(
        THIRD,
        Openai,
        400,
        "https://github.com/langchain-ai/langchainjs/issues/5888",
        r#"{"error":{"message":"This model's maximum context length is 16385 tokens. However, your messages resulted in 38551 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        THIRD,
        Vllm,
        400,
        "https://github.com/THUDM/LongBench/issues/104",
        r#"{"object":"error","message":"This model's maximum context length is 131072 tokens. However, you requested 351430 tokens. Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        THIRD,
        Vllm,
        400,
        "https://github.com/instructlab/sdg/issues/276",
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 4472 tokens (376 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        THIRD,
        Gemini,
        400,
        "https://github.com/google-gemini/gemini-cli/issues/6513",
        r#"[{"error":{"code":400,"message":"Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.","errors":[{"message":"Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.","domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT"}}]"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // ---- A fourth held-out set ----
    // Requests that are simply wrong, through OpenRouter's metadata.raw: surface them.
    t!(
        FOURTH,
        Openrouter,
        400,
        "https://github.com/reVrost/go-openrouter/pull/21",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"error\": {\n    \"message\": \"Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.\",\n    \"type\": \"invalid_request_error\",\n    \"param\": \"input\",\n    \"code\": null\n  }\n}","provider_name":"OpenAI"}},"user_id":"org_2x"}"#,
        InvalidRequest,
        Surface,
        "msg.invalid_messages"
    ),
    t!(
        FOURTH,
        Openrouter,
        400,
        "https://github.com/BoltAI/BoltAI/issues/375",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Unable to submit request because required fields ['position', 'args'] are not defined in the schema properties.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","provider_name":"Google"}}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        FOURTH,
        Openrouter,
        400,
        "https://github.com/dirac-run/dirac/issues/44",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"id\": \"oh1SbwZ-2byqsH-9f39dd2e83c3d74c\",\n  \"error\": {\n    \"message\": {\n      \"message\": \"Invalid JSON data: Failed to deserialize the JSON body into the target type: tools[17].function: missing field `parameters` at line 1 column 17651\",\n      \"type\": \"invalid_request_error\",\n      \"code\": \"json_data_error\"\n    },\n    \"type\": \"invalid_request_error\",\n    \"param\": null,\n    \"code\": null\n  }\n}","provider_name":"Together","is_byok":false}}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        FOURTH,
        Openrouter,
        400,
        "https://github.com/ymichael/open-codex/issues/35",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"error\": {\n    \"message\": \"Missing required parameter: 'tools[0].name'.\",\n    \"type\": \"invalid_request_error\",\n    \"param\": \"tools[0].name\",\n    \"code\": \"missing_required_parameter\"\n  }\n}","provider_name":"OpenAI"}}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    // A model that takes fewer images than sent: another model may take them.
    t!(
        FOURTH,
        Openrouter,
        400,
        "https://github.com/diegosouzapw/OmniRoute/issues/3044",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"type\":\"invalid_request_error\",\"code\":\"invalid_request_error\",\"message\":\"Model 'moonshotai/kimi-k2.6' supports at most 1 image per prompt.\",\"request_id\":\"req_1\"}}","provider_name":"Crucible","is_byok":false}},"user_id":"user_1"}"#,
        UnsupportedCapability,
        Fallback,
        "msg.media_over_model_max"
    ),
    // The history's arguments as an object where a string belongs: repair the request.
    t!(
        FOURTH,
        Openai,
        400,
        "https://github.com/aaif-goose/goose-mobile/pull/20",
        r#"{"error":{"message":"Invalid type for 'messages[2].tool_calls[0].function.arguments': expected a string, but got an object instead.","type":"invalid_request_error","param":"messages[2].tool_calls[0].function.arguments","code":"invalid_type"}}"#,
        RequestRepair,
        RepairRequest,
        "req.arguments_parameter_not_json"
    ),
    t!(
        FOURTH,
        Openai,
        400,
        "https://github.com/camel-ai/camel/issues/3359",
        r#"{"error":{"message":"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_fnS1qBA4zshj3BtFc5rajScQ","type":"invalid_request_error","param":"messages","code":null}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // ---- A fifth held-out set ----
    t!(
        FIFTH,
        Groq,
        400,
        "https://github.com/groq/groq-typescript/issues/103",
        r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<tool-use>\n{\n  \"tool_calls\": [\n    {\n      \"id\": \"pending\",\n      \"type\": \"function\",\n      \"function\": {\n        \"name\": \"get_info\"\n      },\n      \"parameters\": {\n        \"query\": \"current president of the US\"\n      }\n    }\n  ]\n}\n</tool-use>"}}"#,
        ModelOutput,
        RetryWithFeedback,
        "code.tool_use_failed"
    ),
    t!(
        FIFTH,
        Groq,
        400,
        "https://github.com/HunorLaczko/ha-groq-cloud-api/issues/20",
        r#"{"request_id":"req_01kgpzetg3egxr9y54ttb37bm3","created_at":"2026-02-05T13:21:55.203Z","error":{"message":"tool call validation failed: parameters for tool HassTurnOff did not match schema: errors: [`/domain`: expected array, but got string]","type":"invalid_request_error","param":"","code":"tool_use_failed"}}"#,
        ModelOutput,
        RetryWithFeedback,
        "code.tool_use_failed"
    ),
    // OpenAI spells it "preceeding".
    t!(
        FIFTH,
        Openai,
        400,
        "https://github.com/miurla/morphic/issues/136",
        r#"{"error":{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (request id: 2024051116100984850589317176109)","type":"invalid_request_error","param":"messages.[3].role","code":null}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FIFTH,
        Openai,
        400,
        "https://github.com/symgraph/GhidrAssist/issues/45",
        r#"{"error":{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.","type":"invalid_request_error","param":"messages.[3].role","code":null}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FIFTH,
        Anthropic,
        400,
        "https://github.com/github/copilot-cli/issues/1159",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_vrtx_015ivZnCHtX8ndKTNpHXMiuG. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        FIFTH,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/12526",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.63: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01Qimu3Y5DwauzoDUuBv2DmZ. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},"request_id":"req_011CVXsgwwRSCBiN5tiU4kjB"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // A per-day token limit: waiting minutes is not the answer.
    t!(
        FIFTH,
        Groq,
        429,
        "https://github.com/continuedev/continue/issues/10920",
        r#"{"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01kjh7p9n8f1qs6nz2bz77vy6b` service tier `on_demand` on tokens per day (TPD): Limit 100000, Used 97050, Requested 3619. Please try again in 9m38.016s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_per_day"
    ),
    // Cerebras, as the client printed it (a message only; searched as text).
    t!(
        FIFTH,
        Other,
        429,
        "https://github.com/continuedev/continue/issues/9800",
        r#"Tokens per minute limit exceeded - too many tokens processed."#,
        RateLimit,
        Retry,
        "status.429"
    ),
    t!(
        FIFTH,
        Groq,
        429,
        "https://github.com/ago19800/HomeMind/issues/29",
        r#"{"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01kes94v04f9ramd2n1vj4gjnc` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Used 4437, Requested 9854. Please try again in 11.455s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#,
        RateLimit,
        Retry,
        "code.rate_limit_exceeded"
    ),
    t!(
        FIFTH,
        Anthropic,
        429,
        "https://github.com/SakanaAI/AI-Scientist/issues/115",
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your daily rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_per_day"
    ),
    t!(
        FIFTH,
        Anthropic,
        429,
        "https://github.com/anthropics/claude-code/issues/64462",
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."},"request_id":"req_011CbcRdccocyfM6EjMahMvQ"}"#,
        RateLimit,
        Retry,
        "code.rate_limit_error"
    ),
    t!(
        FIFTH,
        Other,
        500,
        "https://github.com/xtekky/gpt4free/issues/3456",
        r#"{"error":{"message":"Token limit (500,000 per day) exceeded. Used: 508,311 tokens. Sign up at g4f.dev/members.html for higher limits."}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_per_day"
    ),
    // ---- A sixth held-out set ----
    t!(
        SIXTH,
        Deepseek,
        400,
        "https://github.com/evalstate/fast-agent/issues/621",
        r#"{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        SIXTH,
        Deepseek,
        400,
        "https://github.com/FoundationAgents/OpenManus/issues/62",
        r#"{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 72814 tokens (68718 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        SIXTH,
        Openai,
        400,
        "https://github.com/FoundationAgents/OpenManus/issues/62",
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 8213 tokens (6683 in the messages, 730 in the functions, and 800 in the completion). Please reduce the length of the messages, functions, or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ContextOverflow,
        Compress,
        "code.context_length_exceeded"
    ),
    t!(
        SIXTH,
        Deepseek,
        400,
        "https://github.com/bytedance/deer-flow/issues/66",
        r#"{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 87731 tokens (87731 in the messages, 0 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        SIXTH,
        Deepseek,
        400,
        "https://github.com/FoundationAgents/OpenManus/issues/79",
        r#"{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    // OpenRouter reports DeepInfra's refusal as a 502 around the provider's own 400.
    t!(
        SIXTH,
        Openrouter,
        502,
        "https://github.com/ai-christianson/RA.Aid/issues/41",
        r#"{"error":{"message":"ConnectionError: {\"object\": \"error\", \"message\": \"This model's maximum context length is 16000 tokens. However, you requested 17165 tokens (13069 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.\", \"type\": \"BadRequestError\", \"param\": null, \"code\": 400}","code":502,"metadata":{"provider_name":"DeepInfra","raw":{"error_type":"validation_error","error_message":"ConnectionError"}}}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        SIXTH,
        Deepseek,
        400,
        "https://github.com/continuedev/continue/issues/10342",
        r#"{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 154963 tokens (150867 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        SIXTH,
        Anthropic,
        529,
        "https://github.com/anthropics/claude-code/issues/35792",
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CZAau32QzxDkriovTaFCB"}"#,
        Overloaded,
        Retry,
        "code.overloaded_error"
    ),
    t!(
        SIXTH,
        Anthropic,
        529,
        "https://github.com/anthropics/claude-code/issues/39757",
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded. https://docs.claude.com/en/api/errors"},"request_id":"req_011CZTGFbArQvnRwr6evz8ca"}"#,
        Overloaded,
        Retry,
        "code.overloaded_error"
    ),
    // A 500 whose message says overloaded.
    t!(
        SIXTH,
        Anthropic,
        500,
        "https://github.com/anthropics/claude-code/issues/8118",
        r#"{"type":"error","error":{"type":"api_error","message":"Overloaded"},"request_id":null}"#,
        Overloaded,
        Retry,
        "msg.overloaded"
    ),
    T {
        held: SIXTH,
        provider: P::Anthropic,
        status: 529,
        headers: &[
            ("x-should-retry", "true"),
            ("request-id", "req_01RCc7MbLyQNtGKzBTv8VCep"),
        ],
        body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        reason: R::Overloaded,
        action: A::Retry,
        thread: "https://github.com/anthropics/anthropic-sdk-typescript/issues/616",
        rule: "code.overloaded_error",
    },
    // ---- A seventh held-out set ----
    t!(
        SEVENTH,
        Gemini,
        503,
        "https://github.com/lobehub/lobehub/issues/9728",
        r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
        Overloaded,
        Retry,
        "code.unavailable"
    ),
    // Gemini's error inside a proxy's envelope.
    t!(
        SEVENTH,
        Gemini,
        503,
        "https://github.com/continuedev/continue/issues/10639",
        r#"{"error":{"message":"{\n  \"error\": {\n    \"code\": 503,\n    \"message\": \"This model is currently experiencing high demand. Spikes in demand are usually temporary. Please try again later.\",\n    \"status\": \"UNAVAILABLE\"\n  }\n}\n","code":503,"status":"Service Unavailable"}}"#,
        Overloaded,
        Retry,
        "status.503"
    ),
    t!(
        SEVENTH,
        Gemini,
        503,
        "https://github.com/google-gemini/gemini-cli/issues/5191",
        r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
        Overloaded,
        Retry,
        "code.unavailable"
    ),
    t!(
        SEVENTH,
        Gemini,
        503,
        "https://github.com/google-gemini/cookbook/issues/425",
        r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
        Overloaded,
        Retry,
        "code.unavailable"
    ),
    t!(
        SEVENTH,
        Gemini,
        500,
        "https://github.com/justlovemaki/AIClient2API/issues/392",
        r#"{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#,
        ServerError,
        Retry,
        "code.internal"
    ),
    t!(
        SEVENTH,
        Anthropic,
        401,
        "https://github.com/cline/cline/issues/12",
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        Auth,
        Fallback,
        "code.authentication_error"
    ),
    t!(
        SEVENTH,
        Openai,
        400,
        "https://github.com/skorokithakis/sysaidmin/issues/9",
        r#"{"error":{"message":"The requested model 'gpt-4-1106-preview' does not exist.","type":"invalid_request_error","param":"model","code":"model_not_found"}}"#,
        ModelNotFound,
        Fallback,
        "code.model_not_found"
    ),
    // Azure's message, as the client printed it.
    t!(
        SEVENTH,
        Azure,
        404,
        "https://github.com/QuantumNous/new-api/issues/1005",
        r#"{"error":{"message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}"#,
        ModelNotFound,
        Fallback,
        "msg.deployment_does_not_exist"
    ),
    // vLLM's error with an HTTP 200 (the worker's bug); the body's code says 404.
    t!(
        SEVENTH,
        Vllm,
        200,
        "https://github.com/runpod-workers/worker-vllm/issues/57",
        r#"{"code":404,"message":"The model `a model that does not exist` does not exist.","object":"error","param":null,"type":"NotFoundError"}"#,
        ModelNotFound,
        Fallback,
        "msg.model_does_not_exist"
    ),
    t!(
        SEVENTH,
        Openai,
        404,
        "https://github.com/zabirauf/AutoGPT.js/issues/16",
        r#"{"error":{"message":"The model: `gpt-4` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
        ModelNotFound,
        Fallback,
        "code.model_not_found"
    ),
    t!(
        SEVENTH,
        Other,
        404,
        "https://github.com/opendatahub-io/odh-dashboard/pull/4873",
        r#"{"error":{"code":"404","message":"model 'ollama/llama3.2:3' not found or is not available"}}"#,
        ModelNotFound,
        Fallback,
        "msg.model_not_found"
    ),
    // ---- An eighth held-out set ----
    // A chat template refusing the history's turn order (LM Studio's envelope).
    t!(
        EIGHTH,
        Other,
        500,
        "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2218",
        r#"{"error":"Jinja Exception: After the optional system message, conversation roles must alternate user and assistant roles except for tool calls and results."}"#,
        RequestRepair,
        RepairRequest,
        "req.turn_order_with_tools"
    ),
    t!(
        EIGHTH,
        Llamacpp,
        500,
        "https://github.com/skye-harris/hass_local_openai_llm/issues/18",
        r#"{"error":{"code":500,"message":"Message has tool role, but there was no previous assistant message with a tool call! at row 319, column 120:\n {%- if last_tool_call.name is none %}\n {{- raise_exception(\"Message has tool role, but there was no previous assistant message with a tool call!\") }}\n ^\n {%- endif %}"}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // Parameters the server does not take: the request is wrong, say so.
    t!(
        EIGHTH,
        Other,
        400,
        "https://github.com/alibaba/page-agent/issues/613",
        r#"{"error":"Invalid tool_choice type: 'object'. Supported string values: none, auto, required"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        EIGHTH,
        Other,
        400,
        "https://github.com/t59688/arboris-novel/issues/23",
        r#"{"error":"'response_format.type' must be 'json_schema' or 'text'"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        EIGHTH,
        Xai,
        400,
        "https://github.com/cline/cline/issues/3120",
        r#"{"error":"This model's maximum prompt length is 131072 but the request contains 136973 tokens."}"#,
        ContextOverflow,
        Compress,
        "msg.maximum_prompt_length"
    ),
    t!(
        EIGHTH,
        Vllm,
        400,
        "https://github.com/AIDotNet/OpenCowork/issues/82",
        r#"{"object":"error","message":"This model's maximum context length is 262144 tokens. However, you requested 128000 output tokens and your prompt contains at least 134145 input tokens, for a total of at least 262145 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=134145)","type":"BadRequestError","param":"input_tokens","code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/orhanerday/ChatGPT/issues/17",
        r#"{"error":{"message":"This model's maximum context length is 4097 tokens. However, your messages resulted in 192871 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/mckaywrigley/repo-chat/issues/15",
        r#"{"error":{"message":"This model's maximum context length is 4097 tokens. However, your messages resulted in 13393 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/fierceX/Document_QA/issues/3",
        r#"{"error":{"message":"This model's maximum context length is 8191 tokens, however you requested 8238 tokens (8238 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.","type":"invalid_request_error","param":null,"code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/stanford-crfm/helm/issues/94",
        r#"{"error":{"message":"This model's maximum context length is 2049 tokens, however you requested 2054 tokens (2049 in your prompt, 5 for the completion). Please reduce your prompt or completion length.","type":"invalid_request_error","param":null,"code":null}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/rahul2002m/ChatPDF/issues/6",
        r#"{"error":{"message":"This model's maximum context length is 4097 tokens. However, your messages resulted in 6988 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ContextOverflow,
        Compress,
        "code.context_length_exceeded"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/conghaonet/hao_chatgpt/issues/4",
        r#"{"error":{"message":"This model's maximum context length is 4097 tokens. However, you requested 4268 tokens (4012 in the messages, 256 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ContextOverflow,
        Compress,
        "code.context_length_exceeded"
    ),
    t!(
        EIGHTH,
        Openai,
        400,
        "https://github.com/dirk1983/deepseek/issues/11",
        r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 4222 tokens (1222 in the messages, 3000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ContextOverflow,
        Compress,
        "code.context_length_exceeded"
    ),
    // ---- A ninth held-out set ----
    // Anthropic's unpaired tool_use, inside a gateway's OpenAI-style envelope.
    t!(
        NINTH,
        Other,
        400,
        "https://github.com/co-l/openfox/issues/212",
        r#"{"error":{"message":"[400]: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.12: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_vrtx_01CTGLUuh6jbrTibuYEwZpJN. Each `tool_use` block must have a corresponding `tool_result` block in the next message.\"},\"request_id\":\"req_vrtx_011CdgReuKNsJDCq8epEPu5u\"}","type":"invalid_request_error","code":400},"upstream_details":{"error":{"code":400,"message":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.12: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_vrtx_01CTGLUuh6jbrTibuYEwZpJN. Each `tool_use` block must have a corresponding `tool_result` block in the next message.\"},\"request_id\":\"req_vrtx_011CdgReuKNsJDCq8epEPu5u\"}","status":"INVALID_ARGUMENT"}}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // Vertex's 429 as an array of one error; a rate limit with no day in it.
    t!(
        NINTH,
        Gemini,
        429,
        "https://github.com/google-gemini/gemini-cli/issues/6454",
        r#"[{"error":{"code":429,"message":"Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.","status":"RESOURCE_EXHAUSTED"}}]"#,
        RateLimit,
        Retry,
        "gemini.resource_exhausted"
    ),
    // Gemini's RESOURCE_EXHAUSTED as text inside a client's envelope.
    t!(
        NINTH,
        Gemini,
        429,
        "https://github.com/continuedev/continue/issues/10560",
        r#"{"error":{"message":"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n","code":429,"status":"Too Many Requests"}}"#,
        RateLimit,
        Retry,
        "status.429"
    ),
    // Bedrock's overflow as a Claude model words it (the thread shows the message; the body
    // is Bedrock's usual `message` envelope).
    t!(
        NINTH,
        Bedrock,
        400,
        "https://github.com/continuedev/continue/issues/9592",
        r#"{"message":"The model returned the following errors: Input is too long for requested model."}"#,
        ContextOverflow,
        Compress,
        "msg.input_is_too_long"
    ),
    // Groq's tool_use_failed: the model's own call did not parse.
    t!(
        NINTH,
        Groq,
        400,
        "https://github.com/huggingface/smolagents/issues/1119",
        r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"web_search{\"query\": \"SPFMV and SPCSV in the Pearl Of Africa 2016\", \"filter_year\": 2016}\u003c/function\u003e"}}"#,
        ModelOutput,
        RetryWithFeedback,
        "code.tool_use_failed"
    ),
    t!(
        NINTH,
        Groq,
        400,
        "https://github.com/anomalyco/opencode/issues/1018",
        r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"Tool use failed: JSON does not match the expected schema for tool calls","status_code":400}}"#,
        ModelOutput,
        RetryWithFeedback,
        "code.tool_use_failed"
    ),
    t!(
        NINTH,
        Groq,
        400,
        "https://github.com/lucagrippa/obsidian-ai-tagger/issues/34",
        r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":""}}"#,
        ModelOutput,
        RetryWithFeedback,
        "code.tool_use_failed"
    ),
    // DeepSeek's empty balance, under a 400 and the code invalid_request_error.
    t!(
        NINTH,
        Deepseek,
        400,
        "https://github.com/Aider-AI/aider/issues/4851",
        r#"{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}"#,
        QuotaExhausted,
        Fallback,
        "deepseek.insufficient_balance"
    ),
    // OpenRouter: no endpoint of this model takes tools, or this tool_choice.
    t!(
        NINTH,
        Openrouter,
        404,
        "https://github.com/evalstate/fast-agent/issues/122",
        r#"{"error":{"message":"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.support_tool_use"
    ),
    t!(
        NINTH,
        Openrouter,
        404,
        "https://github.com/zed-industries/zed/issues/36094",
        r#"{"error":{"message":"No endpoints found that support the provided 'tool_choice' value. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.no_endpoints_support"
    ),
    t!(
        NINTH,
        Openrouter,
        404,
        "https://github.com/Kilo-Org/kilocode/issues/9006",
        r#"{"error":{"message":"No endpoints found that support tool use. Try disabling \"question\". To learn more about provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection","code":404}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.support_tool_use"
    ),
    // The same, relayed by a router as its own api_error.
    t!(
        NINTH,
        Other,
        404,
        "https://github.com/musistudio/claude-code-router/issues/583",
        r#"{"error":{"message":"Error from provider(404): {\"error\":{\"message\":\"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing\",\"code\":404}}Error: Error from provider(404): {\"error\":{\"message\":\"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing\",\"code\":404}}\n    at bt (cli.js:74721:11)","type":"api_error","code":"provider_response_error"}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.support_tool_use"
    ),
    // No endpoint for the model at all.
    t!(
        NINTH,
        Openrouter,
        404,
        "https://github.com/vyancharuk/nodejs-api-boilerplate/issues/16",
        r#"{"error":{"message":"No endpoints found for nousresearch/hermes-3-llama-3.1-405b:free.","code":404}}"#,
        ModelNotFound,
        Fallback,
        "msg.no_endpoints_found"
    ),
    // Mistral's turn order after a tool message, in three generations of its words.
    t!(
        NINTH,
        Mistral,
        400,
        "https://github.com/mistralai/mistral-inference/issues/135",
        r#"{"object":"error","message":"Unexpected role RoleEnum.tool","type":"invalid_request_error","param":null,"code":null}"#,
        RequestRepair,
        RepairRequest,
        "req.unexpected_role_tool"
    ),
    t!(
        NINTH,
        Mistral,
        400,
        "https://github.com/datapizza-labs/datapizza-ai/issues/98",
        r#"{"object":"error","message":"Unexpected role 'user' after role 'tool'","type":"invalid_request_message_order","param":null,"code":"3230"}"#,
        RequestRepair,
        RepairRequest,
        "req.unexpected_role_tool"
    ),
    t!(
        NINTH,
        Openrouter,
        400,
        "https://github.com/charmbracelet/crush/issues/279",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"object\":\"error\",\"message\":\"Unexpected role 'tool' after role 'user'\",\"type\":\"invalid_request_message_order\",\"param\":null,\"code\":\"3230\"}","provider_name":"Mistral"}}}"#,
        RequestRepair,
        RepairRequest,
        "req.unexpected_role_tool"
    ),
    t!(
        NINTH,
        Mistral,
        400,
        "https://github.com/zed-industries/zed/issues/37021",
        r#"{"object":"error","message":"Unexpected role 'user' after role 'tool'","type":"invalid_request_message_order","param":null,"code":"32500"}"#,
        RequestRepair,
        RepairRequest,
        "req.unexpected_role_tool"
    ),
    // Azure's content filter on the prompt.
    t!(
        NINTH,
        Azure,
        400,
        "https://github.com/compl-ai/compl-ai/issues/20",
        r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}"#,
        ContentPolicy,
        Surface,
        "code.content_filter"
    ),
    t!(
        NINTH,
        Azure,
        400,
        "https://github.com/microsoft/TinyTroupe/issues/85",
        r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":true,"detected":true},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}}}"#,
        ContentPolicy,
        Surface,
        "code.content_filter"
    ),
    // ---- A tenth held-out set ----
    // Ollama: a model without tools, in its OpenAI-compatible envelopes and natively.
    t!(
        TENTH,
        Ollama,
        400,
        "https://github.com/FoundationAgents/OpenManus/issues/220",
        r#"{"error":{"message":"registry.ollama.ai/library/qwen:4b does not support tools","type":"api_error","param":null,"code":null}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.does_not_support_tools"
    ),
    t!(
        TENTH,
        Ollama,
        400,
        "https://github.com/agentscope-ai/QwenPaw/issues/1727",
        r#"{"error":{"message":"registry.ollama.ai/library/qwen3.5:4b does not support tools","type":"invalid_request_error","param":null,"code":null}}"#,
        UnsupportedCapability,
        Fallback,
        "msg.does_not_support_tools"
    ),
    t!(
        TENTH,
        Ollama,
        400,
        "https://github.com/ollama/ollama/issues/14795",
        r#"{"error":"registry.ollama.ai/library/Qwen3.5:0.8b does not support tools"}"#,
        UnsupportedCapability,
        Fallback,
        "msg.does_not_support_tools"
    ),
    // Requests the server cannot read: a tool schema, a parameter's value, a null in the
    // messages, tools that disagree on `strict`. The caller's to fix; say so.
    t!(
        TENTH,
        Ollama,
        400,
        "https://github.com/zed-industries/zed/issues/32758",
        r#"{"error":"json: cannot unmarshal array into Go struct field .tools.function.parameters.properties.type of type string"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        TENTH,
        Other,
        400,
        "https://github.com/xunbu/docutranslate/issues/18",
        r#"{"error":{"message":"invalid reasoning value: 'minimal' (must be \"high\", \"medium\", \"low\", or \"none\")","type":"invalid_request_error","param":null,"code":null}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        TENTH,
        Other,
        400,
        "https://github.com/livekit/agents/issues/2403",
        r#"{"message":"'NoneType' object is not iterable","type":"invalid_request_error","param":"messages","code":"wrong_api_format"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        TENTH,
        Other,
        422,
        "https://github.com/RooCodeInc/Roo-Code/issues/10334",
        r#"{"message":"Tools with mixed values for 'strict' are not allowed. Please set all tools to 'strict: true' or 'strict: false'","type":"invalid_request_error"}"#,
        InvalidRequest,
        Surface,
        "status.422"
    ),
    // Anthropic's overflow through LiteLLM.
    t!(
        TENTH,
        Anthropic,
        400,
        "https://github.com/entropy-research/Devon/issues/88",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209353 tokens > 199999 maximum"}}"#,
        ContextOverflow,
        Compress,
        "msg.prompt_is_too_long"
    ),
    // Cerebras refuses reasoning_content sent back in the history.
    t!(
        TENTH,
        Other,
        400,
        "https://github.com/Alishahryar1/free-claude-code/issues/1136",
        r#"{"message":"messages.2.assistant.reasoning_content: property 'messages.2.assistant.reasoning_content' is unsupported\nmessages.4.assistant.reasoning_content: property 'messages.4.assistant.reasoning_content' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}"#,
        ReasoningReplay,
        RepairRequest,
        "msg.reasoning_content_refused"
    ),
    // A parameter this model does not take: the caller drops it, as for OpenAI's
    // "'max_tokens' is not supported with this model" (a seed vector). Written down first
    // as unsupported_capability / fallback, corrected to agree with that seed.
    t!(
        TENTH,
        Other,
        400,
        "https://github.com/agno-agi/agno/issues/4508",
        r#"{"message":"parallel_tool_calls=False is not supported by this model.","type":"invalid_request_error","param":"parallel_tool_calls","code":"wrong_api_format"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    // DashScope: calls without their results (the thread shows the message; the body is
    // the usual OpenAI-compatible envelope around it).
    t!(
        TENTH,
        Other,
        400,
        "https://github.com/QwenLM/Qwen3-Coder/issues/455",
        r#"{"error":{"message":"<400> InternalError.Algo.InvalidParameter: An assistant message with \"tool_calls\" must be followed by tool messages responding to each \"tool_call_id\". The following tool_call_ids did not have response messages: message[855].role","type":"invalid_request_error"}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // Cerebras: the model's calls did not come out (the thread quotes the message; the
    // envelope is Cerebras's usual one).
    t!(
        TENTH,
        Other,
        400,
        "https://github.com/Cerebras/cerebras-cloud-sdk-node/issues/4",
        r#"{"message":"Failed to generate tool_calls. Please adjust your prompt. See 'failed_generation' for more details. Exception: No valid function calls generated","type":"invalid_request_error"}"#,
        ModelOutput,
        RetryWithFeedback,
        "msg.failed_generation"
    ),
    // Gemini's turn order around function calls and responses.
    t!(
        TENTH,
        Gemini,
        400,
        "https://github.com/continuedev/continue/issues/11164",
        r#"{"error":{"message":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Please ensure that function call turn comes immediately after a user turn or after a function response turn.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","code":400,"status":"Bad Request"}}"#,
        RequestRepair,
        RepairRequest,
        "req.function_turn_order"
    ),
    t!(
        TENTH,
        Gemini,
        400,
        "https://github.com/GoogleCloudPlatform/generative-ai/pull/368",
        r#"{"error":{"code":400,"message":"Please ensure that function response turn comes immediately after a function call turn.","status":"INVALID_ARGUMENT"}}"#,
        RequestRepair,
        RepairRequest,
        "req.function_turn_order"
    ),
    // ---- The eleventh set (see `E_TUNE`): alternating halves, in this order ----
    // Anthropic: calls without their results, two more threads.
    t!(
        E_TUNE,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/5060",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.6: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01AbmHJypDhKqBF7NKdRPJ6d. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    t!(
        E_HELD,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/6521",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.114: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01N82CRmSxsFBkxD4tYG2md8. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},"request_id":"req_011CSURy8kJA4QAXZjsnBj5N"}"#,
        RequestRepair,
        RepairRequest,
        "req.tool_results_missing"
    ),
    // MiniMax refuses a replayed call whose arguments are not JSON (the thread shows the
    // message; the envelope is the usual OpenAI-compatible one).
    t!(
        E_TUNE,
        Other,
        400,
        "https://github.com/can1357/oh-my-pi/issues/181",
        r#"{"error":{"message":"invalid params, invalid function arguments json string, tool_call_id:  (2013)","type":"bad_request_error"}}"#,
        RequestRepair,
        RepairRequest,
        "req.arguments_in_history"
    ),
    // DeepSeek: a call in the history with an empty name or arguments.
    t!(
        E_HELD,
        Deepseek,
        400,
        "https://github.com/esengine/DeepSeek-Reasonix/issues/6192",
        r#"{"error":{"message":"invalid tool_call function, function/name/arguments cannot be empty","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        RequestRepair,
        RepairRequest,
        "req.history_tool_call_empty"
    ),
    // Per-minute token limits a request can never fit (requested > limit).
    t!(
        E_TUNE,
        Groq,
        413,
        "https://github.com/agent0ai/agent-zero/issues/347",
        r#"{"error":{"message":"Request too large for model : Limit 6000, Requested 7591, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        E_HELD,
        Openai,
        429,
        "https://github.com/openai/codex/issues/38366",
        r#"{"error":{"message":"Request too large for gpt-5.6-luna in organization org-b4g4X7AHZEEhfU5LlCT6H4N4 on tokens per min (TPM): Limit 200000, Requested 208334. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        E_TUNE,
        Openai,
        429,
        "https://github.com/Aider-AI/aider/issues/1880",
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-2itOgSdqw0DhUYp0QyLhttLL on tokens per min (TPM): Limit 30000, Requested 36278. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    t!(
        E_HELD,
        Openai,
        429,
        "https://github.com/TheR1D/shell_gpt/issues/653",
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-78asdf87asdf9aaa8976 on tokens per min (TPM): Limit 30000, Requested 31538. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        PayloadTooLarge,
        Compress,
        "msg.requested_over_limit"
    ),
    // Context overflow in vLLM's, OpenRouter's, OpenAI's, llama.cpp's and TGI's words.
    t!(
        E_TUNE,
        Vllm,
        400,
        "https://github.com/agent0ai/agent-zero/issues/1102",
        r#"{"object":"error","message":"This model's maximum context length is 16384 tokens. However, your request has 19427 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=19427)","type":"BadRequestError","param":null,"code":400}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        E_HELD,
        Openrouter,
        400,
        "https://github.com/refly-ai/refly/issues/1177",
        r#"{"error":{"message":"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
        ContextOverflow,
        Compress,
        "msg.context_length"
    ),
    t!(
        E_TUNE,
        Openai,
        400,
        "https://github.com/lintsinghua/DeepAudit/issues/211",
        r#"{"error":{"message":"This model's maximum context length is 13500 tokens. However, you requested 14032 tokens (9936 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ContextOverflow,
        Compress,
        "code.context_length_exceeded"
    ),
    t!(
        E_HELD,
        Llamacpp,
        400,
        "https://github.com/llmmllab/llmmllab-api/issues/69",
        r#"{"error":{"code":400,"message":"request (25837 tokens) exceeds the available context size (25088 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":25837,"n_ctx":25088}}"#,
        ContextOverflow,
        Compress,
        "code.exceed_context_size"
    ),
    t!(
        E_TUNE,
        Other,
        422,
        "https://github.com/huggingface/huggingface_hub/issues/2763",
        r#"{"error":{"message":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 8740 `inputs` tokens and 500 `max_new_tokens`","http_status_code":422}}"#,
        ContextOverflow,
        Compress,
        "msg.input_tokens_over_maximum"
    ),
    t!(
        E_HELD,
        Other,
        422,
        "https://github.com/huggingface/chat-ui/issues/340",
        r#"{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 1512. Given: 1000 `inputs` tokens and 1024 `max_new_tokens`","error_type":"validation"}"#,
        ContextOverflow,
        Compress,
        "msg.input_tokens_over_maximum"
    ),
    // Bedrock: a model id that needs an inference profile (another route serves it).
    T {
        held: E_TUNE,
        provider: P::Bedrock,
        status: 400,
        headers: &[(
            "x-amzn-ErrorType",
            "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
        )],
        body: r#"{"message":"Invocation of model ID anthropic.claude-sonnet-4-20250514-v1:0 with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model."}"#,
        reason: R::ModelNotFound,
        action: A::Fallback,
        thread: "https://github.com/anthropics/claude-code/issues/1466",
        rule: "msg.inference_profile_required",
    },
    // Gemini's free tier at limit 0: no wait restores it.
    t!(
        E_HELD,
        Gemini,
        429,
        "https://github.com/continuedev/continue/issues/10066",
        r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.0-flash\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.0-flash\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-2.0-flash\nPlease retry in 7.967587226s.","status":"RESOURCE_EXHAUSTED"}}"#,
        QuotaExhausted,
        Fallback,
        "msg.quota_limit_zero"
    ),
    // Vertex's 429 wrapped by gemini-cli: a rate limit.
    t!(
        E_TUNE,
        Gemini,
        429,
        "https://github.com/google-gemini/gemini-cli/issues/14811",
        r#"{"error":{"message":"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n","code":429,"status":"Too Many Requests"}}"#,
        RateLimit,
        Retry,
        "status.429"
    ),
    // Gemini's generic 429 wording, no quota named: a rate limit.
    t!(
        E_HELD,
        Gemini,
        429,
        "https://github.com/googleapis/python-genai/issues/1427",
        r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}]}}"#,
        RateLimit,
        Retry,
        "gemini.quota_message_is_rate_limit"
    ),
    // Money: Anthropic's credit balance, OpenRouter's credits, DeepSeek's balance.
    t!(
        E_TUNE,
        Anthropic,
        400,
        "https://github.com/anthropics/claude-code/issues/66314",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011CbrFTcXhtiMzr3s6EocF7"}"#,
        QuotaExhausted,
        Fallback,
        "anthropic.credit_balance"
    ),
    t!(
        E_HELD,
        Openrouter,
        402,
        "https://github.com/Taewan-P/gpt_mobile/issues/284",
        r#"{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford 3919. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account","code":402,"metadata":{"provider_name":null}}}"#,
        QuotaExhausted,
        Fallback,
        "openrouter.requires_more_credits"
    ),
    t!(
        E_TUNE,
        Openrouter,
        402,
        "https://github.com/anomalyco/opencode/issues/12219",
        r#"{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 32000 tokens, but can only afford 0. To increase, visit https://openrouter.ai/settings/keys and create a key with a higher monthly limit","code":402}}"#,
        QuotaExhausted,
        Fallback,
        "openrouter.requires_more_credits"
    ),
    t!(
        E_HELD,
        Deepseek,
        402,
        "https://github.com/continuedev/continue/issues/9942",
        r#"{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}"#,
        QuotaExhausted,
        Fallback,
        "deepseek.insufficient_balance"
    ),
    // Ollama models without tools.
    t!(
        E_TUNE,
        Ollama,
        400,
        "https://github.com/ollama/ollama/issues/13578",
        r#"{"error":"registry.ollama.ai/library/smollm2:360m does not support tools"}"#,
        UnsupportedCapability,
        Fallback,
        "msg.does_not_support_tools"
    ),
    t!(
        E_HELD,
        Ollama,
        400,
        "https://github.com/microsoft/magentic-ui/issues/206",
        r#"{"error":"registry.ollama.ai/library/gemma3:27b-it-fp16 does not support tools"}"#,
        UnsupportedCapability,
        Fallback,
        "msg.does_not_support_tools"
    ),
    // A tool name in the history that the server refuses: rewrite it in the history.
    t!(
        E_TUNE,
        Openai,
        400,
        "https://github.com/mcp-use/mcp-use/issues/90",
        r#"{"error":{"message":"Invalid 'messages[9].tool_calls[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.","type":"invalid_request_error","param":"messages[9].tool_calls[0].function.name","code":"invalid_value"}}"#,
        RequestRepair,
        RepairRequest,
        "req.history_tool_call_field"
    ),
    // Declared tools the server refuses: the caller's declaration, surfaced.
    t!(
        E_HELD,
        Openai,
        400,
        "https://github.com/danishjsheikh/swagger-mcp/issues/13",
        r#"{"error":{"message":"Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_\\.-]+$'.","type":"invalid_request_error","param":"tools[0].function.name","code":"invalid_value"}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        E_TUNE,
        Deepseek,
        400,
        "https://github.com/nikkigallery/Whimbox/issues/61",
        r#"{"error":{"message":"Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        E_HELD,
        Openrouter,
        400,
        "https://github.com/xinnan-tech/xiaozhi-esp32-server/issues/1466",
        r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n \"error\": {\n \"message\": \"Invalid 'tools[8].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.\",\n \"type\": \"invalid_request_error\",\n \"param\": \"tools[8].function.name\",\n \"code\": \"invalid_value\"\n }\n}","provider_name":"OpenAI"}},"user_id":"user_id"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        E_TUNE,
        Gemini,
        400,
        "https://github.com/google-gemini/gemini-cli/issues/5333",
        r#"{"error":{"message":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"* GenerateContentRequest.tools[0].function_declarations[34].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64.\\n\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","code":400,"status":"Bad Request"}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        E_HELD,
        Gemini,
        400,
        "https://github.com/decolua/9router/issues/369",
        r#"{"error":{"code":400,"message":"The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[25].name: [FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.","status":"INVALID_ARGUMENT"}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        E_TUNE,
        Other,
        400,
        "https://github.com/earendil-works/pi/issues/5352",
        r#"{"error":{"type":"invalid_request_error","message":"JSON Schema not supported: could not understand the instance `{'required': ['criteria']}`."},"type":"error"}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    t!(
        E_HELD,
        Gemini,
        400,
        "https://github.com/bigduu/Bodhi-AI/issues/52",
        r#"{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters': Cannot find field.\nInvalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[1].parameters': Cannot find field.","status":"INVALID_ARGUMENT"}}"#,
        InvalidRequest,
        Surface,
        "status.400"
    ),
    // Mistral's extra fields: a parameter or field the caller sends that it does not take,
    // and reasoning sent back in the history.
    t!(
        E_TUNE,
        Mistral,
        422,
        "https://github.com/partITech/php-mistral/issues/76",
        r#"{"object":"Error","detail":[{"type":"extra_forbidden","loc":["body","tools"],"msg":"Extra inputs are not permitted","input":[]}],"message":[{"type":"extra_forbidden","loc":["body","tools"],"msg":"Extra inputs are not permitted","input":[]}],"type":"invalid_request_error","code":3001}"#,
        InvalidRequest,
        Surface,
        "msg.extra_inputs"
    ),
    t!(
        E_HELD,
        Mistral,
        422,
        "https://github.com/zeroclaw-labs/zeroclaw/issues/2693",
        r#"{"detail":[{"type":"extra_forbidden","loc":["body","messages",6,"assistant","tool_calls",0,"name"],"msg":"Extra inputs are not permitted","input":null}]}"#,
        InvalidRequest,
        Surface,
        "msg.extra_inputs"
    ),
    // The thread describes the refusal (extra_forbidden on the replayed field); the body is
    // Mistral's usual shape around it.
    t!(
        E_TUNE,
        Mistral,
        422,
        "https://github.com/BerriAI/litellm/issues/30835",
        r#"{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","messages",2,"assistant","reasoning_content"],"msg":"Extra inputs are not permitted","input":"Let me check the file first."}]},"type":"invalid_request_error","param":null,"code":null}"#,
        ReasoningReplay,
        RepairRequest,
        "msg.reasoning_content_refused"
    ),
    // Content filter and region blocks.
    t!(
        E_HELD,
        Openai,
        403,
        "https://github.com/continuedev/continue/issues/11449",
        r#"{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}"#,
        PermissionDenied,
        Fallback,
        "status.403"
    ),
    t!(
        E_TUNE,
        Gemini,
        400,
        "https://github.com/google-gemini/gemini-cli/issues/24641",
        r#"{"error":{"message":"{\n \"error\": {\n \"code\": 400,\n \"message\": \"User location is not supported for the API use.\",\n \"status\": \"FAILED_PRECONDITION\"\n }\n}\n","code":400,"status":"Bad Request"}}"#,
        PermissionDenied,
        Fallback,
        "gemini.location"
    ),
    // Anthropic's 500.
    t!(
        E_HELD,
        Anthropic,
        500,
        "https://github.com/anthropics/claude-code/issues/91800",
        r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CegaXgT3UXCMC4LraDuee"}"#,
        ServerError,
        Retry,
        "code.api_error"
    ),
    // Output budgets the caller can clamp: max_tokens over the model's maximum, and the
    // thinking budget against max_tokens.
    t!(
        E_TUNE,
        Anthropic,
        400,
        "https://github.com/OpenHands/software-agent-sdk/issues/596",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 204096 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929"},"request_id":"req_011CTgq3R6cQ9L1tsZjngCzB"}"#,
        RequestRepair,
        RepairRequest,
        "req.max_tokens_over_model_max"
    ),
    t!(
        E_HELD,
        Gemini,
        400,
        "https://github.com/liuw1535/antigravity2api-nodejs/issues/150",
        r#"{"error":{"code":400,"message":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size\"},\"request_id\":\"req_vrtx_011CXz1EDk9oAJ1APShnBXuq\"}","status":"INVALID_ARGUMENT"}}"#,
        RequestRepair,
        RepairRequest,
        "req.thinking_budget"
    ),
    t!(
        E_TUNE,
        Anthropic,
        400,
        "https://github.com/themaximalist/llm.js/issues/30",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"}}"#,
        RequestRepair,
        RepairRequest,
        "req.thinking_budget"
    ),
];

fn verdict(t: &T) -> toolstream::classify::Verdict {
    classify_http(
        &HttpFailure {
            provider: t.provider,
            status: t.status,
            headers: t.headers,
            body: t.body.as_bytes(),
            attempt: 0,
        },
        &Policy::default(),
    )
}

fn classify(t: &T) -> (Reason, Action, &'static str) {
    let v = verdict(t);
    (v.reason, v.action, v.rule)
}

/// The rules the vectors reach (for `classify::every_rule_is_hit`).
pub(crate) fn rules_hit() -> Vec<&'static str> {
    use toolstream::classify::{classify_stream_error, Phase};
    let stream = STREAM.iter().map(|(_, body, _)| {
        classify_stream_error(
            P::Openai,
            body.as_bytes(),
            Phase::BeforeOutput,
            0,
            &Policy::default(),
        )
        .rule
    });
    THREADS
        .iter()
        .map(|t| classify(t).2)
        .chain(stream)
        .collect()
}

/// Every vector gets its reason and action; model-output and request-shape errors are
/// never a fallback. The held-out half's score is printed (`--nocapture`).
#[test]
fn thread_vectors_score() {
    let mut wrong = Vec::new();
    // Right of all, per set (in the order of `Set`).
    let mut score = [(0usize, 0usize); 13];
    for t in THREADS {
        let v = verdict(t);
        let (reason, action, rule) = (v.reason, v.action, v.rule);
        let right = (reason, action) == (t.reason, t.action);
        assert!(
            !right || rule == t.rule,
            "{}: caught by {rule}, marked {}",
            t.thread,
            t.rule
        );
        // A request to repair always says how; the model's output and the request's shape
        // are never a reason to fall back.
        if reason == R::RequestRepair {
            assert!(v.hint.is_some(), "{}: no hint (rule {rule})", t.thread);
        }
        if matches!(
            reason,
            R::ModelOutput | R::RequestRepair | R::ReasoningReplay
        ) {
            assert!(!v.should_fallback, "{}: should_fallback", t.thread);
        }
        let (n, r) = &mut score[t.held as usize];
        *n += 1;
        *r += usize::from(right);
        if !right {
            wrong.push(format!(
                "{} {:?} {}: got {reason:?}/{action:?} (rule {rule}), want {:?}/{:?}",
                t.thread, t.provider, t.status, t.reason, t.action
            ));
        }
    }
    let sets = [
        "tuned on",
        "held-out half",
        "second set",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh (tuning half)",
        "eleventh (held-out half)",
    ];
    let per_set: Vec<String> = sets
        .iter()
        .zip(score)
        .map(|(name, (n, r))| format!("{name} {r} of {n}"))
        .collect();
    println!(
        "thread vectors: {} of {} right; {}",
        THREADS.len() - wrong.len(),
        THREADS.len(),
        per_set.join("; ")
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The delay the provider gave is reported as it gave it, over the wait budget too.
#[test]
fn retry_after_is_the_providers_own_figure() {
    // Gemini's documented RetryInfo shape (constructed, not from a thread): 38 s is over the
    // 30 s budget, so a fallback, reporting 38 s rather than the budget.
    let body = r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"38s"}]}}"#;
    let v = classify_http(
        &HttpFailure {
            provider: P::Gemini,
            status: 429,
            headers: &[],
            body: body.as_bytes(),
            attempt: 0,
        },
        &Policy::default(),
    );
    assert_eq!(
        (v.reason, v.action, v.retry_after),
        (
            R::RateLimit,
            A::Fallback,
            Some(std::time::Duration::from_secs(38))
        )
    );
    // Anthropic's spending limit, against the response's Date header.
    let t = THREADS
        .iter()
        .find(|t| t.thread.ends_with("claude-code/issues/38035"))
        .expect("vector");
    let v = classify_http(
        &HttpFailure {
            provider: t.provider,
            status: t.status,
            headers: &[("date", "Mon, 23 Mar 2026 23:08:46 GMT")],
            body: t.body.as_bytes(),
            attempt: 0,
        },
        &Policy::default(),
    );
    assert_eq!((v.reason, v.action), (R::QuotaExhausted, A::Fallback));
    assert_eq!(
        v.retry_after,
        Some(std::time::Duration::from_secs(8 * 86_400 + 51 * 60 + 14))
    );
}

/// Errors inside Responses streams (see `responses_stream_failures`).
const STREAM: &[(&str, &str, Reason)] = &[
    // Azure, a per-minute token limit in a response.failed event.
    (
        "https://github.com/earendil-works/pi/pull/1458",
        r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Requests to the ... Operation have exceeded token rate limit ..."}}}"#,
        R::RateLimit,
    ),
    // microsoft/agent-framework-go's failing test's shape: "Internal error".
    (
        "https://github.com/microsoft/agent-framework-go/pull/546",
        r#"{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"Internal error"}}}"#,
        R::ServerError,
    ),
    // The documented shapes (constructed, not from a thread): an incomplete response's
    // reason, and an `error` event's code at the top.
    (
        "response.incomplete",
        r#"{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}"#,
        R::TruncatedOutput,
    ),
    (
        "response.incomplete",
        r#"{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"content_filter"}}}"#,
        R::ContentPolicy,
    ),
    (
        "error event",
        r#"{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4o. Please try again in 1.2s.","param":null,"sequence_number":3}"#,
        R::RateLimit,
    ),
];

/// Errors inside a Responses stream: `response.failed` carries its error inside `response`,
/// `response.incomplete` its reason, an `error` event its code at the top.
#[test]
fn responses_stream_failures() {
    use toolstream::classify::{classify_stream_error, Phase};
    for (thread, body, want) in STREAM {
        let v = classify_stream_error(
            P::Openai,
            body.as_bytes(),
            Phase::BeforeOutput,
            0,
            &Policy::default(),
        );
        assert_eq!(v.reason, *want, "{thread}: rule {}", v.rule);
    }
}
