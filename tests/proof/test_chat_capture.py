"""The loopback Chat Completions server every Chat Completions judge shares: it records each
request and answers from its script, streamed or not, with reasoning, text, tool calls, the usage
figures chosen, or an HTTP error, as an OpenAI-compatible server does."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from pipeline.proof.chat_capture import ChatCaptureServer, ChatRequest, Reply, ToolCall, Usage


def _send(url: str, data: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data, {"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, bytes(response.read())
    except urllib.error.HTTPError as error:
        return error.code, bytes(error.read())


def _post(url: str, body: object) -> tuple[int, bytes]:
    return _send(url, json.dumps(body).encode())


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _chunks(stream: bytes) -> list[dict[str, Any]]:
    events = [
        line.removeprefix("data: ") for line in stream.decode().splitlines() if line.startswith("data: ")
    ]
    assert events[-1] == "[DONE]"
    return [json.loads(event) for event in events[:-1]]


def _script(number: int, request: ChatRequest) -> Reply:
    if number == 0:
        return Reply("calling", (ToolCall("read_file", {"file_path": "/a"}),), reasoning="think")
    return Reply(f"seen {len(request.messages)}")


def test_a_streamed_reply_carries_reasoning_text_and_tool_calls_in_chunks_usage_last() -> None:
    with ChatCaptureServer(_script) as api:
        status, raw = _post(
            f"{api.base_url}/v1/chat/completions",
            {"stream": True, "model": "m", "messages": [{"role": "user", "content": "x"}]},
        )
        assert api.conversations == (({"role": "user", "content": "x"},),)
    chunks = _chunks(raw)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert status == 200 and deltas[0] == {"role": "assistant", "content": ""}
    assert {"reasoning_content": "think"} in deltas and {"content": "calling"} in deltas
    call = next(d["tool_calls"][0] for d in deltas if "tool_calls" in d)
    assert call == {
        "index": 0,
        "id": "call_0_0",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"file_path": "/a"}'},
    }
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    assert {c["model"] for c in chunks} == {"m"}


def test_a_plain_reply_is_one_completion_and_other_routes_are_recorded_not_scripted() -> None:
    with ChatCaptureServer(_script) as api:
        _post(f"{api.base_url}/v1/other", {})
        _, first = _post(f"{api.base_url}/v1/chat/completions", {"messages": []})  # call 0
        _, second = _post(f"{api.base_url}/v1/chat/completions", {"messages": [{"role": "user"}] * 3})
        requests = api.requests
    message = json.loads(first)["choices"][0]["message"]
    assert message["reasoning_content"] == "think"
    assert message["tool_calls"] == [  # a completion's calls carry no stream `index`
        {
            "id": "call_0_0",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"file_path": "/a"}'},
        }
    ]
    completion = json.loads(second)
    assert completion["choices"][0]["message"]["content"] == "seen 3"
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert completion["usage"]["total_tokens"] > 0
    assert [r.is_completion for r in requests] == [False, True, True]


def test_explicit_call_ids_are_kept_beside_generated_ones_and_string_arguments_go_verbatim() -> None:
    calls = (ToolCall("bash", '{"command":"ls"}', "call_ls"), ToolCall("read", {"path": "n.txt"}))
    with ChatCaptureServer(lambda number, request: Reply(calls=calls)) as api:
        _post(f"{api.base_url}/v1/chat/completions", {"messages": []})
        _, raw = _post(f"{api.base_url}/v1/chat/completions", {"stream": True, "messages": []})
    sent = next(
        c["choices"][0]["delta"]["tool_calls"] for c in _chunks(raw) if "tool_calls" in str(c["choices"])
    )
    assert [(c["index"], c["id"], c["function"]["arguments"]) for c in sent] == [
        (0, "call_ls", '{"command":"ls"}'),
        (1, "call_1_1", '{"path": "n.txt"}'),  # the second completions call's second call
    ]


def test_the_script_chooses_the_usage_figures_of_the_last_chunk() -> None:
    reply = Reply("hello", usage=Usage(prompt_tokens=900, completion_tokens=40))
    with ChatCaptureServer(lambda number, request: reply) as api:
        _, raw = _post(f"{api.base_url}/v1/chat/completions", {"stream": True, "messages": []})
    assert _chunks(raw)[-1]["usage"] == {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}


@pytest.mark.parametrize("stream", [True, False])
def test_an_error_status_answers_an_error_object_instead_of_a_completion(stream: bool) -> None:
    with ChatCaptureServer(lambda number, request: Reply("upstream rejected", status=400)) as api:
        status, body = _post(f"{api.base_url}/v1/chat/completions", {"stream": stream, "messages": [{}]})
        assert api.conversations == (({},),)  # recorded all the same
    assert status == 400
    assert json.loads(body) == {"error": {"message": "upstream rejected"}}  # as pi's fixtures record it


@pytest.mark.parametrize("status", [201, 302, 600])
def test_a_reply_is_200_or_an_error_status(status: int) -> None:
    with pytest.raises(ValueError, match=str(status)):
        Reply("x", status=status)


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_body_that_is_not_a_json_object_is_recorded_without_messages(body: bytes) -> None:
    with ChatCaptureServer() as api:
        status, answer = _send(f"{api.base_url}/v1/chat/completions", body)
        recorded = api.requests
        assert api.conversations == ()
    assert status == 200 and json.loads(answer)["choices"][0]["message"]["content"] == "ok"
    assert [(r.is_completion, r.body, r.messages) for r in recorded] == [(True, {}, ())]


def test_the_server_model_is_listed_and_named_in_every_reply() -> None:
    with ChatCaptureServer(model="capture-model") as api:
        listed = _get(f"{api.base_url}/v1/models")
        _, raw = _post(f"{api.base_url}/v1/chat/completions", {"model": "other", "messages": []})
    assert [m["id"] for m in listed["data"]] == ["capture-model"]
    assert json.loads(raw)["model"] == "capture-model"
    with ChatCaptureServer() as api:
        assert _get(f"{api.base_url}/v1/models")["data"] == []
        assert _get(f"{api.base_url}/v1/elsewhere") == {}
        assert [r.method for r in api.requests] == ["GET", "GET"]
