"""The loopback Chat Completions server: it records each request and answers from its script,
streamed or not, with text, reasoning and tool calls as an OpenAI-compatible server does."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from pipeline.proof.chat_capture import ChatCaptureServer, ChatRequest, Reply, ToolCall


def _post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return bytes(response.read())


def _script(number: int, request: ChatRequest) -> Reply:
    if number == 0:
        return Reply("calling", (ToolCall("read_file", {"file_path": "/a"}),), reasoning="think")
    return Reply(f"seen {len(request.messages)}")


def test_a_streamed_reply_carries_reasoning_text_and_tool_calls_in_chunks() -> None:
    with ChatCaptureServer(_script) as api:
        raw = _post(
            f"{api.base_url}/v1/chat/completions",
            {"stream": True, "messages": [{"role": "user", "content": "x"}]},
        )
        chunks = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: {")]
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        assert {"reasoning_content": "think"} in deltas and {"content": "calling"} in deltas
        call = next(d["tool_calls"][0] for d in deltas if "tool_calls" in d)
        assert call["function"] == {"name": "read_file", "arguments": '{"file_path": "/a"}'}
        assert chunks[-1]["usage"]["total_tokens"] > 0 and raw.rstrip().endswith(b"data: [DONE]")
        assert api.conversations == (({"role": "user", "content": "x"},),)


def test_a_plain_reply_is_one_completion_and_other_routes_are_recorded_not_scripted() -> None:
    with ChatCaptureServer(_script) as api:
        _post(f"{api.base_url}/v1/other", {})
        _post(f"{api.base_url}/v1/chat/completions", {"messages": []})  # call 0
        completion = json.loads(
            _post(f"{api.base_url}/v1/chat/completions", {"messages": [{"role": "user"}] * 3})
        )
        assert completion["choices"][0]["message"]["content"] == "seen 3"
        assert completion["choices"][0]["finish_reason"] == "stop"
        assert [r.is_completion for r in api.requests] == [False, True, True]
