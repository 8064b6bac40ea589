#!/usr/bin/env bash
# Build the seed corpora from files in the repo:
#   fuzz/make-seeds.sh      -> fuzz/corpus/<target>/
# Seeds: the shipped captures, the tool-argument sample, the JSONTestSuite files, and the
# SSE cases' shapes. Reproducible: same repo, same seeds.
set -euo pipefail
cd "$(dirname "$0")"
for t in splitter_chunked sse_chunked pipeline_small_limits pipeline_structured classify openai_envelope preview_chunked bedrock_messages schema proxy_rewriter proxy_structured text_calls proxy_whole repair; do mkdir -p "corpus/$t"; done
cp ../examples/tool-arguments.json corpus/splitter_chunked/
cp ../examples/tool-arguments.json corpus/preview_chunked/
for f in ../examples/captures/*.sse ../examples/captures/*.ndjson ../examples/captures/*.eventstream; do
  cp "$f" corpus/sse_chunked/
  cp "$f" corpus/pipeline_small_limits/
done
cp ../examples/captures/*.sse ../examples/text-calls/*.sse corpus/proxy_rewriter/
suite=../tests/data/JSONTestSuite/test_parsing
if [ -d "$suite" ]; then
  for f in "$suite"/*.json; do
    sz=$(stat -c %s "$f")
    [ "$sz" -le 4096 ] && cp "$f" corpus/splitter_chunked/ && cp "$f" corpus/preview_chunked/
  done
fi
# A long array of numbers and nulls (the token path checks such runs a block at a time).
printf '{"values":[%s]}' "$(printf '%s,' 12 -0.5 3e-7 null 0 1E+9 -12.75 42 null 7e2 0.001 -3 | sed 's/,$//;p;p;p;p' | tr '\n' ',' | sed 's/,$//')" \
  | tee corpus/splitter_chunked/number-array > corpus/preview_chunked/number-array
printf 'data: a\r\ndata: b\r\rdata: c\n\n: ping\nid: 7\nretry: 100\nevent: x\ndata\n\n' > corpus/sse_chunked/whatwg-mix
printf '\xef\xbb\xbfdata: bom\n\n' > corpus/sse_chunked/bom
# The shapes of the tests/sse.rs table, one seed each.
sse_case() { printf "$2" > "corpus/sse_chunked/$1"; }
sse_case lf-crlf-cr 'data: A\r\ndata: B\rdata: C\r\n\n'
sse_case one-space 'data:  a\n\ndata:a\n\n'
sse_case no-colon 'data\ndata\n\n'
sse_case event-only 'event: x\n\n'
sse_case comments ': OPENROUTER PROCESSING\n\n:ping\n'
sse_case case-names 'Data: a\nDATA: b\ndata : c\n\n'
sse_case ids 'id: 1\ndata: a\n\nid\ndata: b\n\nid: 7\0x\ndata: c\n\n'
sse_case retry 'retry: 1500\n\nretry: +5\n\nretry: 1e3\n\nretry: -1\n\nretry: 10 \n\nretry: 99999999999999999999999\n\n'
sse_case unterminated 'data: a\n\ndata: {"error"'
sse_case u2028 'data: a\xe2\x80\xa8b\n\n'
sse_case gemini-crlf 'data: {"candidates":[]}\r\n\r\n'
sse_case done 'data: {"choices":[]}\n\ndata: [DONE]\n\n'
sse_case bad-utf8 'data: \xff\xfe\n\n'
sse_case second-bom '\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n'
printf '{"error":{"message":"invalid tool call arguments","type":"invalid_request_error"}}' > corpus/classify/ollama-400
printf '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' > corpus/classify/anthropic-529
# Schema seeds: a budget byte, a schema, NUL, an instance (see fuzz_targets/schema.rs).
schema_case() { { printf '%b' "$2"; printf '\0'; printf '%s' "$3"; } > "corpus/schema/$1"; }
schema_case weather '@{"type":"object","properties":{"city":{"type":"string","minLength":1},"unit":{"enum":["c","f"]}},"required":["city"],"additionalProperties":false}' '{"city":"Paris","unit":"k","x":1}'
schema_case edits '@{"type":"object","properties":{"edits":{"type":"array","minItems":1,"uniqueItems":true,"items":{"type":"object","properties":{"line":{"type":"integer","minimum":1},"text":{"type":"string"}},"required":["line"]}}}}' '{"edits":[{"line":1,"text":"a"},{"line":1.0,"text":"a"},{"line":0}]}'
schema_case combinators ' {"anyOf":[{"type":"string","maxLength":3},{"type":"number","multipleOf":0.5}],"not":{"const":2},"oneOf":[{"minimum":0},{"type":"string"}]}' '[2.5]'
schema_case conditional '!{"if":{"properties":{"kind":{"const":"file"}}},"then":{"required":["path"]},"else":{"required":["url"]},"dependentRequired":{"a":["b"]},"propertyNames":{"maxLength":4}}' '{"kind":"file","a":0,"longname":1}'
schema_case refs '~{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"},"v":{"type":["integer","null"]}}}},"$ref":"#/$defs/node"}' '{"v":1,"next":{"v":null,"next":{"v":"x"}}}'
schema_case self-ref '\001{"$ref":"#"}' '{}'
schema_case arrays '@{"prefixItems":[{"type":"string"}],"items":false,"contains":{"type":"null"},"minContains":1,"maxContains":1}' '["a",null,null]'
schema_case gemini '@{"type":"OBJECT","properties":{"n":{"type":"INTEGER","nullable":true,"maxItems":"3"}},"required":["n"]}' '{"n":null}'
schema_case draft7 '@{"items":[{"type":"string"}],"additionalItems":{"type":"integer"},"dependencies":{"a":{"required":["b"]}},"exclusiveMinimum":true,"minimum":1}' '["a",1,"b"]'
echo "seeds: $(find corpus -type f | wc -l) files"
# OpenAI-chat-style payloads (and Anthropic and Responses ones, for the target's template
# checks), one
# per seed, and consecutive pairs joined by a NUL (the second payload then meets a decoder
# that remembers the first one's envelope prefix, and replaces one of the first's strings).
for f in ../examples/captures/openai-*.sse ../examples/captures/openrouter-*.sse \
         ../examples/captures/mistral-*.sse ../examples/captures/gemini-openai-*.sse \
         ../examples/captures/ollama-index-reuse.sse ../examples/captures/anthropic-*.sse \
         ../examples/captures/responses-*.sse; do
  base=$(basename "$f" .sse)
  n=0; prev=""
  while IFS= read -r line; do
    case "$line" in
      "data: "*) ;;
      *) continue ;;
    esac
    p="${line#data: }"
    n=$((n + 1))
    printf '%s' "$p" > "corpus/openai_envelope/$base-$n"
    if [ -n "$prev" ]; then
      { printf '%s' "$prev"; printf '\0'; printf '%s' "$p"; } > "corpus/openai_envelope/$base-pair-$n"
    fi
    prev="$p"
  done < "$f"
done
# Reasoning payloads (OpenAI-compatible names, an Anthropic thinking delta), alone and in
# pairs, for the envelope target's cursor/serde and template checks.
rc='{"id":"c1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Let me"},"logprobs":null,"finish_reason":null}]}'
rr='{"id":"c1","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{"role":"assistant","reasoning":" think","content":""}}]}'
th='{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"I will"}}'
printf '%s' "$rc" > corpus/openai_envelope/reasoning-content
printf '%s' "$rr" > corpus/openai_envelope/reasoning
gs='{"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"CpoC=="}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"function-call-1","index":0,"type":"function"}],"extra_content":{"google":{"thought_signature":"Ctsb"}}},"index":0}],"object":"chat.completion.chunk"}'
printf '%s' "$gs" > corpus/openai_envelope/gemini-signature
{ printf '%s' "$rc"; printf '\0'; printf '%s' '" think\"s"'; } > corpus/openai_envelope/reasoning-pair
{ printf '%s' "$th"; printf '\0'; printf '%s' '"more"'; } > corpus/openai_envelope/thinking-pair
# Broken arguments of each closed-form kind, and of each refused one.
printf '%s' '{"a":1,}' > corpus/repair/trailing
printf '%s' "{'a': 'it\\'s', b: True, c: None, // x
}" > corpus/repair/python
printf '%s' '```json
{"a": "l1
l2", "b": "\x41"}
```' > corpus/repair/fence
printf '%s' 'Sure! {"a": [1, 2,], /* c */ "b": {}} Hope it helps.' > corpus/repair/prose
printf '%s' '"{\"a\":1}"' > corpus/repair/double
printf '%s' '{"cmd": "echo "hi""}' > corpus/repair/ambiguous
printf '%s' '{"path": "src/ma' > corpus/repair/cut
