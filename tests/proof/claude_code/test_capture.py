"""The capture server over real HTTP: recorded requests, streamed and plain replies, injected faults."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from pipeline.proof.claude_code.capture import MAX_REQUEST_BYTES, CaptureServer, Fault


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_capture_server_records_requests_streams_a_reply_and_injects_faults() -> None:
    with CaptureServer(
        reply_text="fine", faults=[Fault.rate_limited(retry_after=2), Fault.overloaded()]
    ) as api:
        url = api.base_url + "/v1/messages?beta=true"
        body = {"model": "claude-x", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        limited, overloaded, streamed = post(url, body), post(url, body), post(url, body)
        plain = post(url, {**body, "stream": False})
        counted = post(api.base_url + "/v1/messages/count_tokens", body)
    assert limited[0] == 429 and limited[1]["retry-after"] == "2"
    assert json.loads(limited[2])["error"]["type"] == "rate_limit_error"
    assert overloaded[0] == 529
    assert streamed[0] == 200 and streamed[1]["content-type"] == "text/event-stream"
    events = [
        line.split(": ", 1)[1] for line in streamed[2].decode().splitlines() if line.startswith("event: ")
    ]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert '"text": "fine"' in streamed[2].decode()
    assert json.loads(plain[2])["content"] == [{"type": "text", "text": "fine"}]
    assert json.loads(counted[2]) == {"input_tokens": 10}
    assert [r.body["messages"][0]["content"] for r in api.message_requests] == ["hi"] * 4
    assert api.requests[0].header("Content-Type") == "application/json"


def test_a_body_over_the_api_size_limit_is_refused_as_the_api_refuses_it_and_never_kept() -> None:
    """Claude Code resuming a giant session meets the API's 413 here too, and trims what it sends."""
    huge = {"model": "claude-x", "messages": [{"role": "user", "content": "x" * MAX_REQUEST_BYTES}]}
    with CaptureServer(reply_text="fine") as api:
        url = api.base_url + "/v1/messages?beta=true"
        refused = post(url, huge)
        answered = post(url, {"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]})
    assert refused[0] == 413
    assert json.loads(refused[2])["error"]["type"] == "request_too_large"
    assert answered[0] == 200 and json.loads(answered[2])["content"] == [{"type": "text", "text": "fine"}]
    first, second = api.message_requests
    assert first.raw == b"" and first.body is None  # counted as a call, its body dropped
    assert second.body["messages"][0]["content"] == "hi"


def test_bodies_a_caller_does_not_keep_are_answered_and_counted_but_not_held() -> None:
    """A resume reads its probe's request and the largest call before it (a compaction's): only those
    are held (each up to 32 MB); the others are dropped once answered."""
    keep = lambda body: "probe" in json.dumps(body)  # noqa: E731 - a one-line predicate
    sizes = (2, 5, 3, 5)  # messages per call: the first 5 is the largest
    with CaptureServer(keep=keep) as api:
        url = api.base_url + "/v1/messages"
        for size in sizes:
            messages = [{"role": "user", "content": f"message {n}"} for n in range(size)]
            assert post(url, {"model": "claude-x", "messages": messages})[0] == 200
        post(url, {"model": "claude-x", "messages": [{"role": "user", "content": "probe"}]})
    held = [len(r.body["messages"]) if r.body is not None else None for r in api.message_requests]
    assert held == [None, 5, None, None, 1]
    assert all(r.raw == b"" for r in api.message_requests)
