"""The billed truth of a Gemini CLI session: each reply's last recorded `tokens` once, counted as
Codex counts (cached within input, thoughts within output), wherever the reply lies in the file."""

from __future__ import annotations

import orjson

from pipeline.formats.gemini_cli.billed_tokens import billed_usage
from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.line_guard import LineLimits
from tests.support.gemini_files import fixture, lines_of

LIMITS = LineLimits(64 << 20, 256)


def _tokens(prompt: int, output: int, *, cached: int = 0, thoughts: int = 0, tool: int = 0) -> dict[str, int]:
    total = prompt + output + thoughts + tool  # the Gemini API's totalTokenCount
    return {
        "input": prompt,
        "output": output,
        "cached": cached,
        "thoughts": thoughts,
        "tool": tool,
        "total": total,
    }


def test_thoughts_count_as_output_and_the_tool_use_prompt_as_input_each_reply_once() -> None:
    header = lines_of(fixture("tools.jsonl"))[0]
    reply = {"id": "g1", "timestamp": "t", "type": "gemini", "content": "a", "tokens": _tokens(100, 5)}
    records = [
        header,
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "hi"}]},
        reply,
        {**reply, "tokens": _tokens(100, 7, cached=40, thoughts=30, tool=3)},  # re-appended: it wins
        {"id": "u2", "timestamp": "t", "type": "user", "content": [{"text": "more"}]},
        {"id": "g2", "timestamp": "t", "type": "gemini", "content": "b", "tokens": _tokens(200, 10)},
        {"$rewindTo": "u2"},  # the rewound reply was billed all the same
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    usage = billed_usage(analyze_chat(data, LIMITS))
    assert (usage.replies, usage.input, usage.cached_input) == (2, 303, 40)
    assert (usage.output, usage.thoughts, usage.last_input) == (47, 30, 200)
    assert usage.input + usage.output == sum(r["tokens"]["total"] for r in (records[3], records[5]))


def test_a_recorded_session_bills_what_its_replies_recorded() -> None:
    usage = billed_usage(analyze_chat(fixture("long.jsonl").read_bytes(), LIMITS))
    replies = {r["id"]: r["tokens"] for r in lines_of(fixture("long.jsonl")) if r.get("type") == "gemini"}
    assert usage.replies == len(replies) > 0
    assert usage.input + usage.output == sum(t["total"] for t in replies.values())
