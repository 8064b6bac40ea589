//! Classification vectors: real providers' statuses and bodies with the expected reason
//! and action, transport errors, failed tool calls, policy cases; a check that every rule
//! in the tables is hit by at least one vector; and a property test that arbitrary input
//! never panics and always yields a documented reason.

use std::collections::BTreeSet;
use std::time::Duration;

use proptest::prelude::*;
use toolstream::classify::{
    classify_http, classify_stream_error, classify_tool_failure, classify_transport, rules, Action,
    HttpFailure, Phase, Policy, Provider, Reason, ToolFailure, ToolFailureKind, Verdict,
};

use Action as A;
use Provider as P;
use Reason as R;

struct V {
    provider: Provider,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    body: &'static str,
    reason: Reason,
    action: Action,
}

macro_rules! v {
    ($p:ident, $status:expr, $headers:expr, $body:expr, $reason:ident, $action:ident) => {
        V {
            provider: P::$p,
            status: $status,
            headers: $headers,
            body: $body,
            reason: R::$reason,
            action: A::$action,
        }
    };
}

const NONE: &[(&str, &str)] = &[];

/// HTTP error responses. `// trap:` marks rule-order traps (two patterns in one message).
const HTTP: &[V] = &[
    // ---- OpenAI ----
    // trap: a rate limit that talks about tokens is not an overflow
    v!(Openai, 429, NONE, r#"{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#, RateLimit, Retry),
    // trap: insufficient_quota on a 429 is quota, not rate limit
    v!(Openai, 429, NONE, r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#, QuotaExhausted, Fallback),
    v!(Openai, 400, NONE, r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#, ContextOverflow, Compress),
    v!(Openai, 401, NONE, r#"{"error":{"message":"Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#, Auth, Fallback),
    // trap: "do not have access" inside a model-not-found error
    v!(Openai, 404, NONE, r#"{"error":{"message":"The model `gpt-5-turbo` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#, ModelNotFound, Fallback),
    v!(Openai, 500, NONE, r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#, ServerError, Retry),
    v!(Openai, 503, NONE, r#"{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}"#, Overloaded, Retry),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Unrecognized request argument supplied: temprature","type":"invalid_request_error","param":null,"code":null}}"#, InvalidRequest, Surface),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#, InvalidRequest, Surface),
    // The history's calls without their results: repair the request (tests/classify_threads.rs
    // has this family in other servers' words).
    v!(Openai, 400, NONE, r#"{"error":{"message":"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_DdmO9","type":"invalid_request_error","param":"messages.[2].role","code":null}}"#, RequestRepair, RepairRequest),
    // trap: "not allowed" and "safety" in a content-policy code
    v!(Openai, 400, NONE, r#"{"error":{"message":"Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}"#, ContentPolicy, Surface),
    v!(Openai, 429, &[("retry-after-ms", "1500"), ("x-ratelimit-remaining-requests", "0")], r#"{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#, RateLimit, Retry),
    v!(Openai, 502, NONE, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>", ServerError, Retry),
    v!(Openai, 504, NONE, "upstream request timeout", Timeout, Retry),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Invalid value for 'tool_choice': 'required' is not supported with this model.","type":"invalid_request_error","param":"tool_choice","code":null}}"#, InvalidRequest, Surface),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Additional properties are not allowed ('foo' was unexpected) - 'messages.0'","type":"invalid_request_error","param":null,"code":null}}"#, InvalidRequest, Surface),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Invalid 'messages[1].content': string too long. Expected a string with maximum length 10485760, but got a string with length 12000000 instead.","type":"invalid_request_error","param":"messages[1].content","code":"string_above_max_length"}}"#, InvalidRequest, Surface),
    v!(Openai, 403, NONE, r#"{"error":{"message":"Your organization must be verified to use the model `o3`. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.","type":"invalid_request_error","param":null,"code":"unsupported_value"}}"#, PermissionDenied, Fallback),
    // ---- Azure OpenAI ----
    v!(Azure, 429, &[("retry-after", "6")], r#"{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit."}}"#, RateLimit, Retry),
    v!(Azure, 404, NONE, r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}"#, ModelNotFound, Fallback),
    // trap: "retry" in a content-filter message
    v!(Azure, 400, NONE, r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}"#, ContentPolicy, Surface),
    v!(Azure, 401, NONE, r#"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}"#, Auth, Fallback),
    v!(Azure, 400, NONE, r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded","status":400}}"#, ContextOverflow, Compress),
    v!(Azure, 500, NONE, r#"{"error":{"code":"InternalServerError","message":"The service is temporarily unable to process your request. Please try again later."}}"#, ServerError, Retry),
    v!(Azure, 401, NONE, r#"{"error":{"code":"AuthenticationTypeDisabled","message":"Key based authentication is disabled for this resource."}}"#, Auth, Fallback),
    v!(Azure, 400, NONE, r#"{"error":{"code":"OperationNotSupported","message":"The chatCompletion operation does not work with the specified model, text-embedding-ada-002. Please choose different model and try again. You can learn more about which models can be used with each operation here: https://go.microsoft.com/fwlink/?linkid=2197993."}}"#, UnsupportedCapability, Fallback),
    v!(Azure, 408, NONE, r#"{"error":{"code":"Timeout","message":"The operation was timeout."}}"#, Timeout, Retry),
    v!(Azure, 503, NONE, r#"{"error":{"code":"ServiceUnavailable","message":"The service is temporarily unavailable."}}"#, Overloaded, Retry),
    // ---- Anthropic ----
    v!(Anthropic, 529, NONE, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}"#, Overloaded, Retry),
    // trap: rate limit that mentions tokens and prompt length
    v!(Anthropic, 429, &[("retry-after", "20")], r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (f1a2) of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}"#, RateLimit, Retry),
    v!(Anthropic, 429, &[("retry-after", "120")], r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit (https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}"#, RateLimit, Fallback),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215123 tokens > 200000 maximum"}}"#, ContextOverflow, Compress),
    // trap: billing arrives as a 400 invalid_request_error
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}"#, QuotaExhausted, Fallback),
    v!(Anthropic, 401, NONE, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#, Auth, Fallback),
    // trap: "API key" in a permission error
    v!(Anthropic, 403, NONE, r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}"#, PermissionDenied, Fallback),
    v!(Anthropic, 404, NONE, r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-3-opus-20240229x"}}"#, ModelNotFound, Fallback),
    v!(Anthropic, 413, NONE, r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#, PayloadTooLarge, Compress),
    v!(Anthropic, 500, NONE, r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#, ServerError, Retry),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"}}"#, InvalidRequest, Surface),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01D7FLrfh4GYq7yT1ULFeyMV. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#, RequestRepair, RepairRequest),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514"}}"#, RequestRepair, RepairRequest),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#, ContextOverflow, Compress),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.claude.com/en/docs/tool-use."}}"#, InvalidRequest, Surface),
    // ---- Google Gemini ----
    v!(Gemini, 429, NONE, r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.0-flash"},"quotaValue":"15"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}"#, RateLimit, Retry),
    v!(Gemini, 429, NONE, r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"43s"}]}}"#, RateLimit, Fallback),
    // trap: same message, but the quota is per day
    v!(Gemini, 429, NONE, r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaValue":"200"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"5s"}]}}"#, QuotaExhausted, Fallback),
    v!(Gemini, 429, NONE, r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}"#, RateLimit, Retry),
    // trap: INVALID_ARGUMENT for a bad key ...
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}"#, Auth, Fallback),
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}"#, Auth, Fallback),
    // trap: ... and for an overflow
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#, ContextOverflow, Compress),
    v!(Gemini, 503, NONE, r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#, Overloaded, Retry),
    v!(Gemini, 500, NONE, r#"{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}"#, ServerError, Retry),
    v!(Gemini, 504, NONE, r#"{"error":{"code":504,"message":"The request timed out. Please try again.","status":"DEADLINE_EXCEEDED"}}"#, Timeout, Retry),
    // trap: "API Key" in a permission error
    v!(Gemini, 403, NONE, r#"{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}"#, PermissionDenied, Fallback),
    v!(Gemini, 401, NONE, r#"{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.","status":"UNAUTHENTICATED"}}"#, Auth, Fallback),
    v!(Gemini, 404, NONE, r#"{"error":{"code":404,"message":"models/gemini-1.0-pro is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status":"NOT_FOUND"}}"#, ModelNotFound, Fallback),
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}"#, PermissionDenied, Fallback),
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"Please ensure that multiturn requests alternate between user and model.","status":"INVALID_ARGUMENT"}}"#, InvalidRequest, Surface),
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty for OBJECT type\n","status":"INVALID_ARGUMENT"}}"#, InvalidRequest, Surface),
    // ---- llama-cpp-python (FastAPI): a request it refuses to validate, answered 500 ----
    v!(Openai, 500, NONE, r#"{"error":{"message":"1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'tools', 0, 'function', 'name'), 'msg': 'Input should be a valid string', 'input': 3}","type":"internal_server_error","param":null,"code":null}}"#, InvalidRequest, Surface),
    v!(Openai, 500, NONE, r#"{"error":{"message":"1 validation error for CreateChatCompletionRequest\nmax_tokens\n  Input should be a valid integer","type":"internal_server_error","param":null,"code":null}}"#, InvalidRequest, Surface),
    // ... but a validation error on its own response is its bug: a server error.
    v!(Openai, 500, NONE, r#"{"error":{"message":"2 validation errors:\n  {'type': 'missing', 'loc': ('response', 'CreateChatCompletionResponse', 'choices', 0, 'message', 'refusal'), 'msg': 'Field required'}","type":"internal_server_error","param":null,"code":null}}"#, ServerError, Retry),
    // ---- Ollama ----
    // the motivating bug: the model's own malformed JSON, never a fallback
    v!(Ollama, 400, NONE, r#"{"error":{"message":"invalid tool call arguments","type":"invalid_request_error","param":null,"code":null}}"#, ModelOutput, RetryWithFeedback),
    v!(Ollama, 500, NONE, r#"{"error":"error parsing tool call: raw='{\"city\":\"Par', err=unexpected end of JSON input"}"#, ModelOutput, RetryWithFeedback),
    v!(Ollama, 500, NONE, r#"{"error":{"message":"failed to parse tool call: invalid character '}' looking for beginning of object key string","type":"api_error","param":null,"code":null}}"#, ModelOutput, RetryWithFeedback),
    v!(Ollama, 404, NONE, r#"{"error":"model 'llama3.3' not found, try pulling it first"}"#, ModelNotFound, Fallback),
    v!(Ollama, 404, NONE, r#"{"error":{"message":"model \"qwen3:32b\" not found, try pulling it first","type":"api_error","param":null,"code":null}}"#, ModelNotFound, Fallback),
    v!(Ollama, 400, NONE, r#"{"error":"registry.ollama.ai/library/gemma2:2b does not support tools"}"#, UnsupportedCapability, Fallback),
    v!(Ollama, 500, NONE, r#"{"error":"llama runner process has terminated: exit status 2"}"#, ServerError, Retry),
    v!(Ollama, 500, NONE, r#"{"error":"model requires more system memory (12.3 GiB) than is available (8.0 GiB)"}"#, ServerError, Retry),
    v!(Ollama, 400, NONE, r#"{"error":"json: cannot unmarshal string into Go struct field ChatRequest.messages of type []api.Message"}"#, InvalidRequest, Surface),
    v!(Ollama, 503, NONE, r#"{"error":"server busy, please try again.  maximum pending requests exceeded"}"#, Overloaded, Retry),
    v!(Ollama, 400, NONE, r#"{"error":"invalid character 'x' looking for beginning of value"}"#, InvalidRequest, Surface),
    v!(Other, 400, NONE, r#"{"error":{"message":"litellm.BadRequestError: OllamaException - {\"error\":\"invalid tool call arguments\"}","type":null,"param":null,"code":"400"}}"#, ModelOutput, RetryWithFeedback),
    // ---- a tool call's arguments refused, in every wording a server or gateway uses ----
    // The spellings of the noun that gateways' classifiers list (tool_call, tool_calls,
    // function_call), before and after the refusal.
    v!(Other, 400, NONE, r#"{"error":{"message":"Invalid tool_call arguments","type":"invalid_request_error"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"invalid tool_calls arguments: expected an object"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"Invalid function_call arguments"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"Invalid function arguments"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"The tool call arguments are invalid"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"function_call arguments are invalid"}}"#, ModelOutput, RetryWithFeedback),
    // With the server's own parser message after it: serde's (a Rust router converting
    // the call), Go's encoding/json, and a C++ server's nlohmann message.
    v!(Other, 400, NONE, r#"{"error":{"message":"Invalid tool call arguments: expected `,` or `}` at line 1 column 17","type":"invalid_request_error"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"invalid tool call arguments: invalid character '}' after object key"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"code":400,"message":"Failed to parse tool call arguments: [json.exception.parse_error.101] parse error at line 1, column 12: syntax error while parsing object - unexpected end of input; expected '}'","type":"invalid_request_error"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"Arguments for tool 'read_file' could not be parsed"}}"#, ModelOutput, RetryWithFeedback),
    // Arguments said not to be JSON in any other words: the catch-all of the family.
    v!(Other, 400, NONE, r#"{"error":{"message":"The generated arguments for get_weather are not valid JSON"}}"#, ModelOutput, RetryWithFeedback),
    // Inside a router's wrapper: OpenRouter's metadata.raw holding Ollama's body.
    v!(Openrouter, 400, NONE, r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"invalid function_call arguments\",\"type\":\"invalid_request_error\"}}","provider_name":"Ollama"}}}"#, ModelOutput, RetryWithFeedback),
    // Where the message says the arguments are the request's history, or quotes Python's
    // JSON error on a call the server re-read from the request (LiteLLM converting the
    // history to Anthropic's shape), the request must change.
    v!(Other, 400, NONE, r#"{"error":{"message":"litellm.BadRequestError: Failed to parse tool call arguments for tool 'exec_command' (Anthropic tool invoke). Error: Unterminated string starting at: line 1 column 8 (char 7)."}}"#, RequestRepair, RepairRequest),
    v!(Other, 400, NONE, r#"{"error":{"message":"messages[3]: invalid tool call arguments for tool_call_id call_1"}}"#, RequestRepair, RepairRequest),
    // Not this family: a tool's declared schema refused is the request's.
    v!(Openai, 400, NONE, r#"{"error":{"message":"Invalid schema for function 'get_weather': In context=(), 'required' is required to be supplied.","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}"#, InvalidRequest, Surface),
    // ---- OpenRouter ----
    v!(Openrouter, 429, NONE, r#"{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations","provider_name":"Google AI Studio"}},"user_id":"user_2abc"}"#, RateLimit, Retry),
    // trap: a daily free-model limit worded as a rate limit
    v!(Openrouter, 429, NONE, r#"{"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1740614400000"},"provider_name":null}},"user_id":"user_2abc"}"#, QuotaExhausted, Fallback),
    // trap: "tokens" in a credits error
    v!(Openrouter, 402, NONE, r#"{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 4096 tokens, but can only afford 1000. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account","code":402,"metadata":{"provider_name":null}},"user_id":"user_2abc"}"#, QuotaExhausted, Fallback),
    // trap: "not found" in a capability error
    v!(Openrouter, 404, NONE, r#"{"error":{"message":"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}"#, UnsupportedCapability, Fallback),
    v!(Openrouter, 404, NONE, r#"{"error":{"message":"No endpoints found for mistralai/mistral-7b-instruct:nitro.","code":404}}"#, ModelNotFound, Fallback),
    v!(Openrouter, 401, NONE, r#"{"error":{"message":"No auth credentials found","code":401}}"#, Auth, Fallback),
    v!(Openrouter, 400, NONE, r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 201234 tokens > 200000 maximum\"}}","provider_name":"Anthropic"}}}"#, ContextOverflow, Compress),
    v!(Openrouter, 400, NONE, r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.\",\"type\":\"invalid_request_error\",\"code\":\"tool_use_failed\"}}","provider_name":"Groq"}}}"#, ModelOutput, RetryWithFeedback),
    v!(Openrouter, 502, NONE, r#"{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"upstream connect error or disconnect/reset before headers. reset reason: connection termination","provider_name":"DeepInfra"}}}"#, ServerError, Retry),
    v!(Openrouter, 403, NONE, r#"{"error":{"message":"openai/gpt-4o requires moderation on OpenRouter. Your input was flagged for \"harassment\". No credits were charged.","code":403,"metadata":{"reasons":["harassment"],"flagged_input":"...","provider_name":"OpenAI","model_slug":"openai/gpt-4o"}}}"#, ContentPolicy, Surface),
    v!(Openrouter, 408, NONE, r#"{"error":{"message":"Request timed out","code":408}}"#, Timeout, Retry),
    v!(Openrouter, 400, NONE, r#"{"error":{"message":"openai/gpt-5-ultra is not a valid model ID","code":400},"user_id":"user_2abc"}"#, ModelNotFound, Fallback),
    v!(Openrouter, 503, NONE, r#"{"error":{"message":"No instances available","code":503}}"#, Overloaded, Retry),
    // ---- AWS Bedrock ----
    // trap: "too many tokens" is a throttle, not an overflow
    v!(Bedrock, 429, &[("x-amzn-errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")], r#"{"message":"Too many tokens, please wait before trying again."}"#, RateLimit, Retry),
    v!(Bedrock, 400, &[("x-amzn-errortype", "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/")], r#"{"message":"Input is too long for requested model."}"#, ContextOverflow, Compress),
    v!(Bedrock, 400, &[("x-amzn-errortype", "ValidationException")], r#"{"message":"The model returned the following errors: prompt is too long: 220000 tokens > 200000 maximum"}"#, ContextOverflow, Compress),
    v!(Bedrock, 400, &[("x-amzn-errortype", "ValidationException")], r#"{"message":"Malformed input request: #: extraneous key [foo] is not permitted, please reformat your input and try again."}"#, InvalidRequest, Surface),
    v!(Bedrock, 403, &[("x-amzn-errortype", "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/")], r#"{"message":"You don't have access to the model with the specified model ID."}"#, PermissionDenied, Fallback),
    v!(Bedrock, 403, &[("x-amzn-errortype", "UnrecognizedClientException")], r#"{"message":"The security token included in the request is invalid."}"#, Auth, Fallback),
    v!(Bedrock, 404, &[("x-amzn-errortype", "ResourceNotFoundException")], r#"{"message":"Could not resolve the foundation model from the provided model identifier."}"#, ModelNotFound, Fallback),
    v!(Bedrock, 503, &[("x-amzn-errortype", "ServiceUnavailableException")], r#"{"message":"Bedrock is unable to process your request."}"#, Overloaded, Retry),
    v!(Bedrock, 424, &[("x-amzn-errortype", "ModelErrorException")], r#"{"message":"The system encountered an unexpected error during processing. Try your request again."}"#, ServerError, Retry),
    v!(Bedrock, 408, &[("x-amzn-errortype", "ModelTimeoutException")], r#"{"message":"Model has timed out in processing the request. Try your request again."}"#, Timeout, Retry),
    v!(Bedrock, 400, &[("x-amzn-errortype", "ServiceQuotaExceededException")], r#"{"message":"Your request exceeds the service quota for your account. You can view your quotas at Viewing service quotas."}"#, QuotaExhausted, Fallback),
    v!(Bedrock, 500, &[("x-amzn-errortype", "InternalServerException")], r#"{"message":"The server encountered an internal error while processing the request."}"#, ServerError, Retry),
    v!(Bedrock, 429, &[("x-amzn-errortype", "ModelNotReadyException")], r#"{"Message":"Model is not ready for inference. Wait and try your request again. Refer to https://docs.aws.amazon.com/bedrock/latest/userguide/invoke-model.html#invoke-model-errors."}"#, Overloaded, Retry),
    // ---- Mistral ----
    // The client's tool-call ids in Mistral's refused form: repair the request.
    v!(Mistral, 400, NONE, r#"{"object":"error","message":"Tool call id was call_abc123def but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_request_message_order","param":null,"code":null}"#, RequestRepair, RepairRequest),
    v!(Mistral, 429, NONE, r#"{"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#, RateLimit, Retry),
    v!(Mistral, 401, NONE, r#"{"message":"Unauthorized","request_id":"5b5e1d3f9a8c4d2e"}"#, Auth, Fallback),
    v!(Mistral, 400, NONE, r#"{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}"#, ContextOverflow, Compress),
    v!(Mistral, 422, NONE, r#"{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","foo"],"msg":"Extra inputs are not permitted","input":1}]},"type":"invalid_request_error","param":null,"code":null}"#, InvalidRequest, Surface),
    // Turn order around a tool message: the history is what to change (it was
    // `invalid_request` / surface until the thread vectors' ninth set).
    v!(Mistral, 400, NONE, r#"{"object":"error","message":"Unexpected role 'user' after role 'tool'","type":"invalid_request_message_order","param":null,"code":"3230"}"#, RequestRepair, RepairRequest),
    v!(Mistral, 503, NONE, r#"{"object":"error","message":"Service unavailable.","type":"internal_server_error","param":null,"code":"1000"}"#, Overloaded, Retry),
    v!(Mistral, 400, NONE, r#"{"object":"error","message":"Invalid model: mistral-huge-latest","type":"invalid_model","param":null,"code":"1500"}"#, ModelNotFound, Fallback),
    // ---- Groq ----
    v!(Groq, 400, NONE, r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=get_weather>{\"city\": \"Paris\"}</function>"}}"#, ModelOutput, RetryWithFeedback),
    // trap: tokens and billing in a rate limit
    v!(Groq, 429, NONE, r#"{"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5800, Requested 900. Please try again in 7.66s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#, RateLimit, Retry),
    v!(Groq, 400, NONE, r#"{"error":{"message":"The model `mixtral-8x7b-32768` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead.","type":"invalid_request_error","code":"model_decommissioned"}}"#, ModelNotFound, Fallback),
    v!(Groq, 401, NONE, r#"{"error":{"message":"Invalid API Key","type":"invalid_request_error","code":"invalid_api_key"}}"#, Auth, Fallback),
    v!(Groq, 503, NONE, r#"{"error":{"message":"Service Unavailable","type":"internal_server_error"}}"#, Overloaded, Retry),
    v!(Groq, 400, NONE, r#"{"error":{"message":"'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1.content' : value must be a string)]","type":"invalid_request_error"}}"#, InvalidRequest, Surface),
    v!(Groq, 498, NONE, r#"{"error":{"message":"Flex Tier Capacity Exceeded. Please try again later.","type":"capacity_exceeded","code":"capacity_exceeded"}}"#, Overloaded, Retry),
    // ---- DeepSeek ----
    v!(Deepseek, 402, NONE, r#"{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}"#, QuotaExhausted, Fallback),
    v!(Deepseek, 400, NONE, r#"{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (66000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#, ContextOverflow, Compress),
    v!(Deepseek, 401, NONE, r#"{"error":{"message":"Authentication Fails (no such user)","type":"authentication_error","param":null,"code":"invalid_request_error"}}"#, Auth, Fallback),
    v!(Deepseek, 429, NONE, r#"{"error":{"message":"Rate Limit Reached","type":"rate_limit_error","param":null,"code":"rate_limit_error"}}"#, RateLimit, Retry),
    v!(Deepseek, 503, NONE, r#"{"error":{"message":"Server overloaded, please try again later","type":"server_error","param":null,"code":"server_error"}}"#, Overloaded, Retry),
    v!(Deepseek, 422, NONE, r#"{"error":{"message":"Failed to deserialize the JSON body into the target type: messages[1]: missing field `content` at line 1 column 120","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#, InvalidRequest, Surface),
    // ---- xAI ----
    v!(Xai, 400, NONE, r#"{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 150000 tokens."}"#, ContextOverflow, Compress),
    // trap: a bad key behind a generic 400 code
    v!(Xai, 400, NONE, r#"{"code":"Client specified an invalid argument","error":"Incorrect API key provided: xa***bc. You can obtain an API key from https://console.x.ai."}"#, Auth, Fallback),
    v!(Xai, 429, NONE, r#"{"code":"Some resource has been exhausted","error":"Your team 0f1e2d has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit."}"#, QuotaExhausted, Fallback),
    // trap: "does not have access" inside a missing-model error
    v!(Xai, 404, NONE, r#"{"code":"Some requested entity was not found","error":"The model grok-9 does not exist or your team 0f1e2d does not have access to it."}"#, ModelNotFound, Fallback),
    v!(Xai, 503, NONE, r#"{"code":"The service is currently unavailable","error":"Service temporarily unavailable. The model is at capacity and currently cannot serve this request. Please try again later."}"#, Overloaded, Retry),
    // ---- vLLM ----
    v!(Vllm, 400, NONE, r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#, ContextOverflow, Compress),
    v!(Vllm, 404, NONE, r#"{"object":"error","message":"The model `llama-3` does not exist.","type":"NotFoundError","param":null,"code":404}"#, ModelNotFound, Fallback),
    v!(Vllm, 400, NONE, r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}"#, UnsupportedCapability, Fallback),
    v!(Vllm, 500, NONE, r#"{"object":"error","message":"Error in extracting tool call from response.","type":"InternalServerError","param":null,"code":500}"#, ModelOutput, RetryWithFeedback),
    v!(Vllm, 400, NONE, r#"{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'foo'), 'msg': 'Extra inputs are not permitted', 'input': 1}]","type":"BadRequestError","param":null,"code":400}"#, InvalidRequest, Surface),
    v!(Vllm, 400, NONE, r#"{"object":"error","message":"Unknown model: qwen2.5-72b","type":"BadRequestError","param":null,"code":400}"#, ModelNotFound, Fallback),
    // ---- llama.cpp ----
    v!(Llamacpp, 400, NONE, r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#, ContextOverflow, Compress),
    v!(Llamacpp, 503, NONE, r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#, Overloaded, Retry),
    v!(Llamacpp, 500, NONE, r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 12: syntax error while parsing object - unexpected end of input","type":"server_error"}}"#, RequestRepair, RepairRequest),
    v!(Llamacpp, 401, NONE, r#"{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}"#, Auth, Fallback),
    v!(Llamacpp, 400, NONE, r#"{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}"#, UnsupportedCapability, Fallback),
    // ---- other OpenAI-compatible servers and proxies ----
    v!(Other, 400, NONE, r#"{"error":{"message":"Error parsing tool call arguments: arguments are not valid JSON","type":"invalid_request_error"}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"detail":"invalid function arguments for tool `search`: expected ',' or '}' after property value"}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 400, NONE, r#"{"error":{"message":"Function calling is not enabled for this model","type":"invalid_request_error"}}"#, UnsupportedCapability, Fallback),
    v!(Other, 400, NONE, r#"{"error":{"message":"Tools are not supported by this model","type":"invalid_request_error"}}"#, UnsupportedCapability, Fallback),
    v!(Other, 400, NONE, r#"{"error":{"message":"tool use is not supported for this deployment"}}"#, UnsupportedCapability, Fallback),
    v!(Other, 402, NONE, r#"{"error":{"message":"Insufficient credits: please top up your account"}}"#, QuotaExhausted, Fallback),
    v!(Other, 402, NONE, "Payment Required", QuotaExhausted, Fallback),
    v!(Other, 429, NONE, "Too Many Requests", RateLimit, Retry),
    v!(Other, 413, NONE, "413 Payload Too Large", PayloadTooLarge, Compress),
    v!(Other, 400, NONE, r#"{"error":"The context window of this model is 8192 tokens; reduce your input"}"#, ContextOverflow, Compress),
    v!(Other, 400, NONE, r#"{"error":"too many input tokens: 9000 > 8192"}"#, ContextOverflow, Compress),
    v!(Other, 400, NONE, r#"{"error":{"message":"Request too large: 30 MB exceeds the 20 MB limit"}}"#, PayloadTooLarge, Compress),
    v!(Other, 401, NONE, r#"{"error":"Unauthorized: bad bearer token"}"#, Auth, Fallback),
    v!(Other, 403, NONE, r#"{"error":"You are not allowed to use this model on the free plan"}"#, PermissionDenied, Fallback),
    v!(Other, 400, NONE, r#"{"error":"unknown parameter 'reasoning_effort'"}"#, InvalidRequest, Surface),
    v!(Other, 400, NONE, r#"{"error":{"message":"Your prompt was flagged by the content policy"}}"#, ContentPolicy, Surface),
    v!(Other, 500, NONE, r#"{"error":"internal error: worker crashed"}"#, ServerError, Retry),
    v!(Other, 503, NONE, r#"{"error":"model is overloaded, try again"}"#, Overloaded, Retry),
    v!(Other, 500, NONE, r#"{"error":"upstream deadline exceeded"}"#, Timeout, Retry),
    v!(Other, 418, NONE, "I'm a teapot", InvalidRequest, Surface),
    v!(Other, 599, NONE, "", ServerError, Retry),
    v!(Other, 200, NONE, "", Unknown, Retry),
    v!(Other, 400, NONE, r#"{"error":{"message":"The deployment gpt4o-prod does not exist in this resource"}}"#, ModelNotFound, Fallback),
    v!(Other, 400, NONE, r#"{"error":{"message":"Invalid 'messages': the tool_call_id call_1 must be a response to a preceding message with 'tool_calls'"}}"#, RequestRepair, RepairRequest),
    v!(Other, 400, NONE, r#"{"error":"content management policy violation"}"#, ContentPolicy, Surface),
    v!(Other, 400, NONE, r#"{"error":"unsupported parameter: logprobs"}"#, InvalidRequest, Surface),
    v!(Other, 429, NONE, r#"{"error":"too many requests, slow down"}"#, RateLimit, Retry),
    v!(Other, 403, NONE, r#"{"error":"permission denied for project"}"#, PermissionDenied, Fallback),
    v!(Other, 400, NONE, r#"{"error":"billing account is disabled"}"#, QuotaExhausted, Fallback),
    v!(Other, 400, NONE, r#"{"error":{"message":"You do not have access to this model"}}"#, PermissionDenied, Fallback),
    v!(Other, 500, NONE, r#"{"error":{"message":"Internal Server Error"}}"#, ServerError, Retry),
    v!(Other, 400, NONE, r#"{"error":{"message":"authentication required"}}"#, Auth, Fallback),
    v!(Other, 400, NONE, r#"{"error":"timeout waiting for model"}"#, Timeout, Retry),
    v!(Other, 400, NONE, r#"{"error":{"message":"prompt exceeds maximum context; please reduce the length of your input"}}"#, ContextOverflow, Compress),
    v!(Other, 400, NONE, r#"{"error":"Please reduce the length of the messages or completion."}"#, ContextOverflow, Compress),
    v!(Other, 400, NONE, r#"{"error":"input exceeds context size of 4096"}"#, ContextOverflow, Compress),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Billing hard limit has been reached","type":"invalid_request_error","param":null,"code":"billing_hard_limit_reached"}}"#, QuotaExhausted, Fallback),
    // Proxies that pass the upstream message on without its code.
    v!(Other, 400, NONE, r#"{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details."}}"#, ModelOutput, RetryWithFeedback),
    v!(Other, 500, NONE, r#"{"error":{"message":"litellm.APIError: VertexAIException - finish_reason: MALFORMED_FUNCTION_CALL"}}"#, ModelOutput, RetryWithFeedback),
    // trap: outside Gemini, "exceeded your current quota" is a quota
    v!(Other, 429, NONE, r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details."}}"#, QuotaExhausted, Fallback),
    // trap: "too many tokens" with "wait" is a throttle
    v!(Other, 400, NONE, r#"{"message":"Too many tokens, please wait before trying again."}"#, RateLimit, Retry),
    v!(Other, 400, NONE, r#"{"error":"invalid x-api-key"}"#, Auth, Fallback),
    v!(Other, 403, NONE, r#"{"message":"The security token included in the request is expired"}"#, Auth, Fallback),
    v!(Other, 400, NONE, r#"{"message":"You don't have access to the model with the specified model ID."}"#, PermissionDenied, Fallback),
    v!(Other, 400, NONE, r#"{"error":"The model text-davinci-003 has been decommissioned"}"#, ModelNotFound, Fallback),
    v!(Other, 400, NONE, r#"{"error":"Response blocked by safety filters"}"#, ContentPolicy, Surface),
    // ---- Replayed reasoning refused (the request must change; bodies as reported) ----
    // trap: mentions `tool_use` and `tool_result` (a tool-id mismatch rule) and "messages"
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"},"request_id":"req_vrtx_011CXHqiZPJzdrvgn43AHAoA"}"#, ReasoningReplay, RepairRequest),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `signature` in `thinking` block"},"request_id":"req_011CWkB65DcNzK2MiofhXx8b"}"#, ReasoningReplay, RepairRequest),
    v!(Anthropic, 400, NONE, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.3.content.11: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response."},"request_id":"req_011CbVJR3DSpsq426RyQ7HJ2"}"#, ReasoningReplay, RepairRequest),
    // An Anthropic model behind Vertex: its error is the message of Google's.
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.5.content.0: Invalid `signature` in `thinking` block\"},\"request_id\":\"req_vrtx_011CWcDAiLqXNmbGx1MH2UDE\"}","status":"INVALID_ARGUMENT"}}"#, ReasoningReplay, RepairRequest),
    v!(Gemini, 400, NONE, r#"[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:shell` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.","status":"INVALID_ARGUMENT"}}]"#, ReasoningReplay, RepairRequest),
    v!(Gemini, 400, NONE, r#"{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}"#, ReasoningReplay, RepairRequest),
    v!(Openrouter, 400, NONE, r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Corrupted thought signature.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","provider_name":"Google AI Studio"}},"user_id":"user_2wBuDnJRIDXqz6yJxJBP7L22ds2"}"#, ReasoningReplay, RepairRequest),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Item 'rs_0c3876fcd4da19ef00692a14046bc8819eba6941c05c5ab7e7' of type 'reasoning' was provided without its required following item.","type":"invalid_request_error","param":"input","code":null}}"#, ReasoningReplay, RepairRequest),
    v!(Openai, 400, NONE, r#"{"error":{"message":"Item 'fc_68b14140a1c08190' of type 'function_call' was provided without its required 'reasoning' item: 'rs_68b14140...'.","type":"invalid_request_error","param":"input","code":null}}"#, ReasoningReplay, RepairRequest),
    v!(Deepseek, 400, NONE, r#"{"error":{"message":"The `reasoning_content` in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#, ReasoningReplay, RepairRequest),
    // The same from a gateway, with the provider named in the message.
    v!(Other, 400, NONE, r#"{"message":"Error from provider (DeepSeek): The `reasoning_content` in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}"#, ReasoningReplay, RepairRequest),
    // store=false: the ids of items the server never kept
    v!(Openai, 400, NONE, r#"{"error":{"type":"invalid_request_error","message":"Item with id 'rs_03ede13b80370d1b016a5f56b4e5fc819690464244979892c9' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."}}"#, ReasoningReplay, RepairRequest),
    v!(Openai, 400, NONE, r#"{"error":{"message":"The encrypted content gAAA...DQ== could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}"#, ReasoningReplay, RepairRequest),
    // Status only: bodies with nothing to go on.
    v!(Other, 402, NONE, "", QuotaExhausted, Fallback),
    v!(Other, 408, NONE, "", Timeout, Retry),
    v!(Other, 413, NONE, "", PayloadTooLarge, Compress),
    v!(Other, 422, NONE, "{}", InvalidRequest, Surface),
    v!(Other, 429, NONE, "", RateLimit, Retry),
    v!(Other, 504, NONE, "<html><body><h1>504</h1></body></html>", Timeout, Retry),
    v!(Anthropic, 529, NONE, "", Overloaded, Retry),
];

fn check(v: &V, got: &Verdict, what: &str) {
    assert_eq!(
        (got.reason, got.action),
        (v.reason, v.action),
        "{what}: {:?} {} {} (rule {})",
        v.provider,
        v.status,
        v.body,
        got.rule
    );
}

/// Classify one HTTP vector on its first attempt.
fn classify_vector(v: &V, policy: &Policy) -> Verdict {
    classify_http(
        &HttpFailure {
            provider: v.provider,
            status: v.status,
            headers: v.headers,
            body: v.body.as_bytes(),
            attempt: 0,
        },
        policy,
    )
}

#[test]
fn http_vectors() {
    let policy = Policy::default();
    for v in HTTP {
        let got = classify_vector(v, &policy);
        check(v, &got, "http");
        // Flags follow the action and the documented exceptions.
        assert_eq!(got.should_compress, got.action == Action::Compress);
        assert_eq!(got.rotate_credential, got.reason == Reason::Auth);
        if matches!(
            got.reason,
            R::ModelOutput
                | R::TruncatedOutput
                | R::InvalidRequest
                | R::ContentPolicy
                | R::ContextOverflow
        ) {
            assert!(!got.should_fallback, "never fall back on {:?}", got.reason);
        }
    }
}

/// Errors inside a 200 stream: the phase decides whether a retry is allowed.
#[test]
fn stream_error_vectors() {
    let policy = Policy::default();
    let cases: &[(Provider, &str, Phase, Reason, Action)] = &[
        (
            P::Anthropic,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            Phase::BeforeOutput,
            R::Overloaded,
            A::Retry,
        ),
        (
            P::Anthropic,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            Phase::AfterOutput,
            R::Overloaded,
            A::Surface,
        ),
        (
            P::Gemini,
            r#"[{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]"#,
            Phase::BeforeOutput,
            R::Overloaded,
            A::Retry,
        ),
        (
            P::Gemini,
            r#"{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"MALFORMED_FUNCTION_CALL","index":0}],"usageMetadata":{"promptTokenCount":10}}"#,
            Phase::BeforeOutput,
            R::ModelOutput,
            A::RetryWithFeedback,
        ),
        (
            P::Gemini,
            r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":12}}"#,
            Phase::BeforeOutput,
            R::ContentPolicy,
            A::Surface,
        ),
        (
            P::Gemini,
            r#"{"candidates":[{"finishReason":"SAFETY","index":0,"safetyRatings":[]}]}"#,
            Phase::AfterOutput,
            R::ContentPolicy,
            A::Surface,
        ),
        (
            P::Openrouter,
            r#"{"id":"gen-17","object":"chat.completion.chunk","created":1740000000,"model":"openai/gpt-4o","provider":"OpenAI","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
            Phase::AfterOutput,
            R::ServerError,
            A::Surface,
        ),
        (
            P::Openrouter,
            r#"{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min."}}"#,
            Phase::BeforeOutput,
            R::RateLimit,
            A::Retry,
        ),
        (
            P::Openai,
            r#"{"error":{"message":"The server had an error processing your request. Sorry about that! You can retry your request.","type":"server_error","param":null,"code":null}}"#,
            Phase::BeforeOutput,
            R::ServerError,
            A::Retry,
        ),
        (
            P::Openai,
            r#"{"type":"error","sequence_number":2,"code":"ERR_SOMETHING","message":"Something went wrong","param":null}"#,
            Phase::BeforeOutput,
            R::Unknown,
            A::Retry,
        ),
        (
            P::Ollama,
            r#"{"error":"an error was encountered while running the model: unexpected EOF"}"#,
            Phase::AfterOutput,
            R::Unknown,
            A::Surface,
        ),
        (
            P::Vllm,
            r#"{"error":{"object":"error","message":"Internal server error","type":"InternalServerError","param":null,"code":500}}"#,
            Phase::BeforeOutput,
            R::ServerError,
            A::Retry,
        ),
    ];
    // Bedrock's in-stream exceptions, as the pipeline gives their body (the
    // `:exception-type` header as the code).
    let bedrock: &[(Provider, &str, Phase, Reason, Action)] = &[
        (
            P::Bedrock,
            r#"{"code":"throttlingException","message":"Too many tokens, please wait before trying again."}"#,
            Phase::BeforeOutput,
            R::RateLimit,
            A::Retry,
        ),
        (
            P::Bedrock,
            r#"{"code":"modelStreamErrorException","message":"The model stream broke"}"#,
            Phase::BeforeOutput,
            R::ServerError,
            A::Retry,
        ),
        (
            P::Bedrock,
            r#"{"code":"serviceUnavailableException","message":"Service unavailable"}"#,
            Phase::BeforeOutput,
            R::Overloaded,
            A::Retry,
        ),
    ];
    for (p, payload, phase, reason, action) in cases.iter().chain(bedrock) {
        let got = classify_stream_error(*p, payload.as_bytes(), *phase, 0, &policy);
        assert_eq!(
            (got.reason, got.action),
            (*reason, *action),
            "{p:?} {payload} (rule {})",
            got.rule
        );
    }
    // A policy may allow a restart after output.
    let restart = Policy {
        restart_after_output: true,
        ..Policy::default()
    };
    let got = classify_stream_error(
        P::Anthropic,
        br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        Phase::AfterOutput,
        0,
        &restart,
    );
    assert_eq!(got.action, A::Retry);
}

#[test]
fn transport_vectors() {
    let policy = Policy::default();
    let cases: &[(&str, Reason)] = &[
        ("operation timed out", R::Timeout),
        ("error sending request for url (https://api.openai.com/v1/chat/completions): operation timed out", R::Timeout),
        ("error trying to connect: tcp connect error: Connection refused (os error 111)", R::Connection),
        ("connection reset by peer (os error 104)", R::Connection),
        ("error trying to connect: dns error: failed to lookup address information: Name or service not known", R::Connection),
        ("getaddrinfo ENOTFOUND api.anthropic.com: lookup failed", R::Connection),
        ("dial tcp: lookup api.groq.com: no such host", R::Connection),
        ("error trying to connect: invalid peer certificate: UnknownIssuer", R::Connection),
        ("received fatal alert: HandshakeFailure", R::Connection),
        ("TLS handshake eof", R::Connection),
        ("SSL routines::wrong version number", R::Connection),
        ("write: broken pipe", R::Connection),
        ("network is unreachable", R::Connection),
        ("name or service not known", R::Connection),
        // trap: "connection" in a cut stream
        ("hyper::Error(IncompleteMessage): connection closed before message completed", R::StreamInterrupted),
        ("error decoding response body: unexpected EOF during chunk size line", R::StreamInterrupted),
        ("stream ended without a terminal marker ([DONE])", R::StreamInterrupted),
        ("incomplete message", R::StreamInterrupted),
        ("request timeout", R::Timeout),
        ("context deadline exceeded (Client.Timeout exceeded while awaiting headers)", R::Timeout),
        ("deadline has elapsed", R::Timeout),
        ("something odd happened", R::Unknown),
    ];
    for (msg, reason) in cases {
        let got = classify_transport(msg, 0, &policy);
        assert_eq!(got.reason, *reason, "{msg} (rule {})", got.rule);
        assert_eq!(got.action, A::Retry, "{msg}");
    }
    // Once retries are spent, a transient failure falls back.
    let got = classify_transport("connection refused", 2, &policy);
    assert_eq!(
        (got.action, got.should_fallback, got.retryable),
        (A::Fallback, true, false)
    );
}

#[test]
fn tool_failure_vectors() {
    let policy = Policy::default();
    let raw = br#"{"path": "src/main.rs", "content": "fn main() {\n    println!(\"hi\")\n}", "mode": 0755}"#;
    let cases = [
        (ToolFailureKind::Syntax, 84u64, R::ModelOutput),
        (ToolFailureKind::Truncated, 40, R::TruncatedOutput),
        (ToolFailureKind::NotObject, 0, R::ModelOutput),
        (ToolFailureKind::Limit, 60, R::ModelOutput),
        (ToolFailureKind::NoName, 0, R::ModelOutput),
    ];
    for (kind, offset, reason) in cases {
        let got = classify_tool_failure(
            &ToolFailure {
                tool: "write_file",
                kind,
                offset,
                raw,
                detail: Some("leading zero in number"),
            },
            0,
            &policy,
        );
        assert_eq!(
            (got.reason, got.action),
            (reason, A::RetryWithFeedback),
            "{kind:?}"
        );
        assert!(!got.should_fallback && got.retryable);
        let fb = got.feedback.expect("feedback text");
        assert!(fb.contains("`write_file`"), "{fb}");
        assert!(fb.contains(kind.as_str()), "{fb}");
        assert!(fb.contains(&format!("byte {offset}")), "{fb}");
        assert!(fb.contains(">>>"), "{fb}");
        assert!(fb.contains("valid JSON object"), "{fb}");
    }
    // Bytes the stream lost are not the model's doing: a plain retry, no feedback.
    let got = classify_tool_failure(
        &ToolFailure {
            tool: "run",
            kind: ToolFailureKind::Interrupted,
            offset: 15,
            raw: b"{\"cmd\":\"rm -rf ",
            detail: None,
        },
        0,
        &policy,
    );
    assert_eq!(
        (got.reason, got.action, got.feedback),
        (R::StreamInterrupted, A::Retry, None)
    );
    // One vocabulary: the assembler's kinds are the classifier's, with the same names.
    use toolstream::assemble::FailureKind as F;
    for (k, name) in [
        (F::Syntax, "syntax"),
        (F::Truncated, "truncated"),
        (F::NotObject, "not_object"),
        (F::Limit, "limit"),
        (F::NoName, "no_name"),
        (F::Interrupted, "interrupted"),
        (ToolFailureKind::Schema, "schema"),
        (ToolFailureKind::UnknownTool, "unknown_tool"),
    ] {
        assert_eq!(k.as_str(), name);
    }
    // The excerpt is around the offset and never splits a UTF-8 character.
    let raw = "{\"a\": \"ééééééééééééééééééééééééééééééééé\" 01}".as_bytes();
    let got = classify_tool_failure(
        &ToolFailure {
            tool: "t",
            kind: ToolFailureKind::Syntax,
            offset: 75,
            raw,
            detail: None,
        },
        0,
        &policy,
    );
    let fb = got.feedback.unwrap();
    assert!(fb.contains("\" >>>01}"), "{fb}");
    assert!(fb.contains("…é"), "{fb}");
    // Feedback retries are bounded too: after max_retries the failure is surfaced.
    let got = classify_tool_failure(
        &ToolFailure {
            tool: "t",
            kind: ToolFailureKind::Syntax,
            offset: 0,
            raw: b"{",
            detail: None,
        },
        2,
        &policy,
    );
    assert_eq!((got.action, got.should_fallback), (A::Surface, false));
}

#[test]
fn policy_turns_reasons_into_actions() {
    let p = Policy::default();
    let http =
        |status, headers: &'static [(&'static str, &'static str)], body: &'static str, attempt| {
            classify_http(
                &HttpFailure {
                    provider: P::Other,
                    status,
                    headers,
                    body: body.as_bytes(),
                    attempt,
                },
                &p,
            )
        };
    // Transient: retry, then fall back once retries are spent.
    let v = http(503, NONE, "", 0);
    assert_eq!(
        (v.action, v.should_fallback, v.retryable),
        (A::Retry, false, true)
    );
    let v = http(503, NONE, "", 2);
    assert_eq!(
        (v.action, v.should_fallback, v.retryable),
        (A::Fallback, true, false)
    );
    // Retry-After within the budget: retry and wait; beyond it: fall back.
    let v = http(429, &[("Retry-After", "5")], "", 0);
    assert_eq!(
        (v.action, v.retry_after),
        (A::Retry, Some(Duration::from_secs(5)))
    );
    let v = http(429, &[("Retry-After", "30")], "", 0);
    assert_eq!(
        (v.action, v.retry_after),
        (A::Retry, Some(Duration::from_secs(30))),
        "at the budget: wait"
    );
    // Beyond the budget: fall back, and the provider's own figure is reported as it is
    // (a gateway cools the key down for that long).
    let v = http(429, &[("Retry-After", "600")], "", 0);
    assert_eq!(
        (v.action, v.should_fallback, v.retry_after),
        (A::Fallback, true, Some(Duration::from_secs(600)))
    );
    let v = http(
        429,
        &[
            ("Retry-After", "Wed, 21 Oct 2015 07:28:10 GMT"),
            ("Date", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ],
        "",
        0,
    );
    assert_eq!(v.retry_after, Some(Duration::from_secs(10)));
    // Body and message retry hints.
    let v = http(
        429,
        NONE,
        r#"{"error":{"message":"slow down","retry_after":3}}"#,
        0,
    );
    assert_eq!(v.retry_after, Some(Duration::from_secs(3)));
    // Invalid requests surface unless the policy lets them fall back.
    let v = http(400, NONE, r#"{"error":"unknown parameter 'x'"}"#, 0);
    assert_eq!((v.action, v.should_fallback), (A::Surface, false));
    let lenient = Policy {
        invalid_request_may_fall_back: true,
        ..p
    };
    let v = classify_http(
        &HttpFailure {
            provider: P::Other,
            status: 400,
            headers: NONE,
            body: b"{\"error\":\"unknown parameter 'x'\"}",
            attempt: 0,
        },
        &lenient,
    );
    assert_eq!((v.action, v.should_fallback), (A::Fallback, true));
    // Context overflow compresses and never falls back, whatever the attempt.
    let v = http(
        400,
        NONE,
        r#"{"error":"maximum context length exceeded"}"#,
        5,
    );
    assert_eq!(
        (v.action, v.should_compress, v.should_fallback),
        (A::Compress, true, false)
    );
    // Refused replayed reasoning: repair the request once, with a hint, never fall back;
    // a second refusal surfaces.
    let body = r#"{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}"#;
    let v = http(400, NONE, body, 0);
    assert_eq!(
        (v.reason, v.action, v.retryable, v.should_fallback),
        (R::ReasoningReplay, A::RepairRequest, true, false)
    );
    assert!(
        v.hint.is_some_and(
            |h| h.contains("skip_thought_signature_validator") && h.contains("replay::Turn")
        ),
        "{:?}",
        v.hint
    );
    let v = http(400, NONE, body, 1);
    assert_eq!(
        (v.action, v.retryable, v.should_fallback),
        (A::Surface, false, false)
    );
    let v = classify_http(
        &HttpFailure {
            provider: P::Gemini,
            status: 400,
            headers: NONE,
            body: body.as_bytes(),
            attempt: 0,
        },
        &lenient,
    );
    assert_eq!((v.action, v.should_fallback), (A::RepairRequest, false));
    // Only such rules give a hint.
    assert_eq!(
        http(400, NONE, r#"{"error":"unknown parameter 'x'"}"#, 0).hint,
        None
    );
    // Every reason has a documented default action.
    for r in Reason::ALL {
        let _ = r.default_action();
        assert!(!r.as_str().is_empty());
    }
}

#[test]
fn enough_vectors_of_each_kind() {
    assert!(
        HTTP.len() + 12 + 22 >= 150,
        "{} vectors",
        HTTP.len() + 12 + 22
    );
    let model_output = HTTP.iter().filter(|v| v.reason == R::ModelOutput).count();
    assert!(
        model_output + 4 + 1 >= 15,
        "{model_output} model-output vectors"
    );
}

/// Every rule in the tables is hit by at least one vector.
#[test]
fn every_rule_is_hit() {
    let policy = Policy::default();
    let mut hit = BTreeSet::new();
    for v in HTTP {
        let got = classify_vector(v, &policy);
        hit.insert(got.rule);
    }
    hit.extend(crate::classify_threads::rules_hit());
    let stream: &[(Provider, &str)] = &[
        (
            P::Gemini,
            r#"{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}]}"#,
        ),
        (P::Gemini, r#"{"candidates":[{"finishReason":"SAFETY"}]}"#),
        (
            P::Gemini,
            r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}"#,
        ),
        (
            P::Openrouter,
            r#"{"error":{"code":"server_error","message":"Provider disconnected unexpectedly"}}"#,
        ),
        (
            P::Openai,
            r#"{"error":{"message":"The server had an error processing your request.","type":"server_error"}}"#,
        ),
        (
            P::Bedrock,
            r#"{"code":"modelStreamErrorException","message":"The model stream broke"}"#,
        ),
    ];
    for (p, s) in stream {
        hit.insert(classify_stream_error(*p, s.as_bytes(), Phase::BeforeOutput, 0, &policy).rule);
    }
    for msg in [
        "operation timed out",
        "connection refused",
        "connection reset",
        "dns error",
        "lookup failed",
        "name or service not known",
        "no such host",
        "tls error",
        "ssl error",
        "bad certificate",
        "handshake failure",
        "broken pipe",
        "network unreachable",
        "stream ended",
        "unexpected eof",
        "incomplete message",
        "connection closed before message completed",
        "request timeout",
        "deadline has elapsed",
        "error decoding response body",
        "error sending request for url (http://127.0.0.1:9/v1)",
        "client error (Connect)",
    ] {
        hit.insert(classify_transport(msg, 0, &policy).rule);
    }
    let missing: Vec<&str> = rules::all()
        .map(|r| r.id)
        .filter(|id| !hit.contains(id))
        .collect();
    assert!(missing.is_empty(), "rules without a vector: {missing:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary status, headers and body: never panics, always a documented reason, and
    /// the flags are consistent with the action.
    #[test]
    fn never_panics_and_stays_in_the_taxonomy(
        status in any::<u16>(),
        provider in 0usize..14,
        names in prop::collection::vec("[a-zA-Z-]{0,16}", 0..4),
        values in prop::collection::vec("\\PC{0,40}", 0..4),
        body in prop::collection::vec(any::<u8>(), 0..256),
        json_body in "\\{\"error\":\\{\"(message|type|code|status)\":\"\\PC{0,60}\"\\}\\}",
        attempt in 0u32..5,
        after in any::<bool>(),
    ) {
        let headers: Vec<(&str, &str)> = names.iter().map(String::as_str).zip(values.iter().map(String::as_str)).collect();
        let p = Provider::ALL[provider];
        for b in [&body[..], json_body.as_bytes()] {
            let v = classify_http(&HttpFailure { provider: p, status, headers: &headers, body: b, attempt }, &Policy::default());
            prop_assert!(Reason::ALL.contains(&v.reason));
            prop_assert_eq!(v.should_compress, v.action == Action::Compress);
            // A wait over the budget on a rate limit is never a plain retry.
            if v.reason == Reason::RateLimit && v.retry_after.is_some_and(|d| d > Policy::default().wait_budget) {
                prop_assert_ne!(v.action, Action::Retry);
            }
            let phase = if after { Phase::AfterOutput } else { Phase::BeforeOutput };
            let s = classify_stream_error(p, b, phase, attempt, &Policy::default());
            prop_assert!(Reason::ALL.contains(&s.reason));
            if after { prop_assert_eq!(s.action, Action::Surface); }
        }
        let t = classify_transport(&String::from_utf8_lossy(&body), attempt, &Policy::default());
        prop_assert!(Reason::ALL.contains(&t.reason));
    }
}
