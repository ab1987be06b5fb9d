"""What CodeWhale 0.10.2 puts on the Chat Completions wire for a rebuilt history: the rules of
`build_chat_messages_with_reasoning` the golden (tests/proof/codewhale/test_whale_golden.py)
holds against the real client, each shown on the smallest history that needs it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.formats.codewhale.whale_document import Message, message_from_json
from pipeline.formats.codewhale.whale_markers import checkpoint_message
from pipeline.formats.codewhale.whale_wire import INTERRUPTED_PREFIX, api_tool_name, wire_history
from tests.support.codewhale_sessions import call, result, text


def _messages(*raw: dict[str, Any]) -> list[Message]:
    messages = [message_from_json(r) for r in raw]
    assert all(m is not None for m in messages)
    return [m for m in messages if m is not None]


def _wire(*messages: Message, budget: int = 100_000) -> list[dict[str, Any]]:
    return [json.loads(m) for m in wire_history(messages, budget)]


def test_calls_and_results_become_tool_calls_then_tool_messages_and_thinking_is_not_sent() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "s"}
    asked = call("c1", arguments={"command": "ls", "cwd": "é"}, say="looking")
    asked["content"].insert(0, thinking)
    sent = _wire(*_messages(text("user", "go"), asked, result("c1", "a\nb", error=True)))
    assert sent == [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "looking",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "exec_shell", "arguments": '{"command":"ls","cwd":"é"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a\nb"},
    ]


def test_an_interrupted_answer_is_marked_and_an_empty_assistant_is_dropped() -> None:
    sent = _wire(
        *_messages(text("user", "go"), text("assistant", " "), text("assistant_interrupted", "half"))
    )
    assert sent == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": INTERRUPTED_PREFIX + "half"},
    ]


def test_a_repeated_medium_result_is_a_reference_to_its_first_copy_and_a_huge_one_an_excerpt() -> None:
    body = "line\n" * 300  # 1,500 characters: medium
    history = _messages(
        call("c1"), result("c1", body), call("c2"), result("c2", body), call("c3"), result("c3", "y" * 5000)
    )
    sent = _wire(*history, budget=2048)
    assert sent[1]["content"] == body
    assert (
        sent[3]["content"].startswith("<TOOL_RESULT_REF ")
        and 'original_message="Message #1"' in sent[3]["content"]
    )
    excerpt = sent[5]["content"]
    assert excerpt.startswith("[TOOL_RESULT_TRUNCATED]\ntool_name: exec_shell\ncommand_or_query: ls\n")
    assert "original_chars: 5000" in excerpt and "[... truncated 3976 chars from middle ...]" in excerpt


def test_codewhales_own_checkpoint_after_the_last_round_is_sent_before_that_rounds_prompt() -> None:
    checkpoint = checkpoint_message("The work so far.", None)
    history = [*_messages(text("user", "review it"), call("c1"), result("c1", "out")), checkpoint]
    sent = _wire(*history)
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    note, provenance = (b.text for b in checkpoint.blocks)
    assert sent[0]["content"] == f"{note}\n{provenance}\n\nreview it"  # merged into one user message


def test_a_call_whose_result_does_not_follow_is_stripped_with_its_late_result() -> None:
    history = _messages(call("c1", say="trying"), text("user", "interrupting"), result("c1", "late"))
    assert _wire(*history) == [
        {"role": "assistant", "content": "trying"},
        {"role": "user", "content": "interrupting"},
    ]


@pytest.mark.parametrize(
    ("name", "sent"),
    [("exec_shell", "exec_shell"), ("mcp-git.log", "mcp--git-x00002E-log"), ("ü", "-x0000FC-")],
)
def test_tool_names_are_escaped_as_codewhale_escapes_them(name: str, sent: str) -> None:
    assert api_tool_name(name) == sent
