"""A drop-in for an agent's error classifier: a status and a body in, should it fall back
to another provider? (Never for the model's own broken tool-call JSON, which no provider
can fix; retry it with the feedback instead.)"""

import toolstream


def should_fall_back(provider, status, body, headers=None):
    verdict = toolstream.classify_http(provider, status, headers or {}, body)
    return verdict["should_fallback"], verdict


if __name__ == "__main__":
    for status, body in [
        (400, b'{"error":{"message":"invalid tool call arguments"}}'),
        (429, b'{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}'),
        (529, b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    ]:
        fall_back, v = should_fall_back("openai", status, body)
        print(status, v["reason"], v["action"], "fall back" if fall_back else "stay")
