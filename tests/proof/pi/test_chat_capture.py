"""The Chat Completions capture server: records what a client sends, answers by its script."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from pipeline.proof.pi.chat_capture import CHAT_PATH, ChatCaptureServer, ChatReply, ChatRequest, ToolCall


def _post(url: str, body: object) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _events(stream: bytes) -> list[str]:
    return [line.removeprefix("data: ") for line in stream.decode().splitlines() if line.startswith("data: ")]


def test_a_chat_call_is_recorded_and_answered_with_a_stream_ending_in_done() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    with ChatCaptureServer(reply_text="hello") as api:
        status, stream = _post(api.base_url + CHAT_PATH, {"model": "m", "messages": messages, "tools": []})
        assert api.conversations == (tuple(messages),)
    events = _events(stream)
    assert status == 200
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["content"] == "hello"
    assert chunks[1]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["usage"]["total_tokens"] == 2


def test_the_script_chooses_tool_calls_or_an_error_per_request() -> None:
    def script(request: ChatRequest) -> ChatReply:
        if len(request.messages or ()) == 1:
            return ChatReply(tool_calls=(ToolCall("call_1", "bash", '{"command":"ls"}'),))
        return ChatReply(text="no", error_status=400)

    with ChatCaptureServer(script=script) as api:
        _, stream = _post(api.base_url + CHAT_PATH, {"messages": [{"role": "user", "content": "a"}]})
        status, body = _post(api.base_url + CHAT_PATH, {"messages": [{}, {}]})
    first = json.loads(_events(stream)[0])["choices"][0]["delta"]["tool_calls"][0]
    assert first == {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command":"ls"}'},
    }
    assert json.loads(_events(stream)[1])["choices"][0]["finish_reason"] == "tool_calls"
    assert status == 400
    assert json.loads(body)["error"]["message"] == "no"


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_body_that_is_not_a_json_object_is_recorded_without_messages(body: bytes) -> None:
    with ChatCaptureServer() as api:
        request = urllib.request.Request(api.base_url + CHAT_PATH, data=body, method="POST")
        with urllib.request.urlopen(request, timeout=10) as reply:
            reply.read()
        recorded = api.requests
    assert [(r.is_chat, r.messages) for r in recorded] == [(True, None)]
    assert api.conversations == ()
