"""The Responses API capture server, over real HTTP: it streams a valid reply and records `input`."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from pipeline.proof.codex.responses_capture import FAKE_RESPONSE_ID, ResponsesCaptureServer


def _post(url: str, body: Any) -> tuple[str, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers["content-type"], reply.read().decode()


def _events(stream: str) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of each server-sent event."""
    found = []
    for block in stream.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((fields["event"], json.loads(fields["data"])))
    return found


def test_a_responses_call_is_recorded_and_answered_with_one_streamed_message() -> None:
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    with ResponsesCaptureServer(reply_text="pong") as api:
        kind, stream = _post(f"{api.base_url}/v1/responses", {"model": "m", "input": items, "stream": True})
        assert api.inputs == (tuple(items),)
        assert api.requests[0].model == "m" and api.requests[0].is_response
    assert kind == "text/event-stream"
    events = _events(stream)
    assert [name for name, _ in events] == [
        "response.created",
        "response.output_item.done",
        "response.completed",
    ]
    assert all(data["type"] == name for name, data in events)
    message = events[1][1]["item"]
    assert (message["role"], message["content"][0]["text"]) == ("assistant", "pong")
    assert events[2][1]["response"]["id"] == FAKE_RESPONSE_ID
    assert events[2][1]["response"]["usage"]["total_tokens"] > 0


def test_models_are_listed_empty_and_other_calls_get_an_empty_object() -> None:
    with ResponsesCaptureServer() as api:
        with urllib.request.urlopen(f"{api.base_url}/v1/models?client_version=0.171.0", timeout=10) as reply:
            assert json.loads(reply.read()) == {"object": "list", "data": [], "models": []}
        assert _post(f"{api.base_url}/v1/other", {"input": []})[1] == "{}"
        _post(f"{api.base_url}/v1/responses", "not an object")
        requests = api.requests
    assert [(r.method, r.is_response) for r in requests] == [("GET", False), ("POST", False), ("POST", True)]
    assert requests[2].input is None
    assert api.inputs == ()  # a body without an `input` array carries no context
