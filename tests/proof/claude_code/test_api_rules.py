"""The Messages API's tool-pairing rules, held to the API's own answers.

Each expected sentence below is the API's, as quoted from real 400 responses (sources in
`pipeline/proof/claude_code/api_rules.py`); the requests are the shapes that drew them. The capture server
answers a violating request over real HTTP with the same envelope and sentence.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.proof.claude_code.api_rules import api_violations, error_envelope
from pipeline.proof.claude_code.capture import CaptureServer
from pipeline.reasons import ApiRule
from tests.proof.claude_code.test_capture import post

Json = dict[str, Any]


def use(tool_id: str) -> Json:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}


def result(tool_id: str) -> Json:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}


def text(value: str = "words") -> Json:
    return {"type": "text", "text": value}


def user(*blocks: Json) -> Json:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Json) -> Json:
    return {"role": "assistant", "content": list(blocks)}


def sentences(messages: list[Json]) -> list[str]:
    return [violation.text for violation in api_violations(messages)]


def test_a_paired_conversation_breaks_no_rule() -> None:
    messages = [
        user(text("look")),
        assistant(text("reading"), use("toolu_a"), use("toolu_b")),
        user(result("toolu_b"), result("toolu_a"), text("and then?")),  # any order, text after
        assistant(text("done")),
        {"role": "user", "content": "thanks"},
    ]
    assert api_violations(messages) == ()


def test_the_recorded_exchange_text_after_a_call_is_answered_for_the_next_message() -> None:
    # anomalyco/opencode's recorded request, answered by the API with exactly this sentence.
    messages = [
        assistant(use("call_1"), text("I will check the weather.")),
        user(result("call_1")),
        user(text("Use that result to answer briefly.")),
    ]
    assert sentences(messages) == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: call_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]


def test_a_call_whose_result_is_missing_names_every_unanswered_id() -> None:
    messages = [
        user(text()),
        assistant(use("toolu_01HqfLWiAKQLsniF2fBGF2KD"), use("toolu_01SJzDkeAZER935cpGFptTNk")),
        user(text("carry on")),
    ]
    assert sentences(messages) == [
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01HqfLWiAKQLsniF2fBGF2KD, toolu_01SJzDkeAZER935cpGFptTNk. Each `tool_use` block must "
        "have a corresponding `tool_result` block in the next message."
    ]


def test_a_result_after_a_text_block_leaves_its_call_unanswered() -> None:
    messages = [user(text()), assistant(use("toolu_a")), user(text("note"), result("toolu_a"))]
    (violation,) = api_violations(messages)
    assert (violation.rule, violation.path, violation.ids) == (
        ApiRule.TOOL_USE_WITHOUT_RESULT,
        "messages.2",
        ("toolu_a",),
    )


def test_a_result_without_its_call_names_its_block() -> None:
    messages = [
        user(text()),
        assistant(text("no call")),
        user(text("x"), result("toolu_019ETtGZEhTBXgWPVsdVnXMh")),
    ]
    assert sentences(messages) == [
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_019ETtGZEhTBXgWPVsdVnXMh. Each `tool_result` block must have a corresponding `tool_use` "
        "block in the previous message."
    ]
    assert sentences([user(result("toolu_x"))])[0].startswith(
        "messages.0.content.0: unexpected `tool_use_id`"
    )


def test_a_result_a_turn_late_breaks_both_rules_and_the_call_comes_first() -> None:
    messages = [
        user(text()),
        assistant(use("toolu_a")),
        user(text("meanwhile")),
        assistant(text("still waiting")),
        user(result("toolu_a")),
    ]
    assert [(v.rule, v.path) for v in api_violations(messages)] == [
        (ApiRule.TOOL_USE_WITHOUT_RESULT, "messages.2"),
        (ApiRule.TOOL_RESULT_WITHOUT_USE, "messages.4.content.0"),
    ]


def test_a_repeated_call_id_is_named_at_its_second_occurrence() -> None:
    messages = [
        user(text()),
        assistant(use("toolu_a")),
        user(result("toolu_a")),
        assistant(text("again"), use("toolu_a")),
        user(result("toolu_a")),
    ]
    assert sentences(messages) == ["messages.3.content.1: `tool_use` ids must be unique"]


def test_a_call_answered_twice_in_one_turn_names_the_second_result() -> None:
    messages = [
        user(text()),
        assistant(use("toolu_XXX")),
        user(result("toolu_XXX")),
        user(result("toolu_XXX")),
    ]
    assert sentences(messages) == [
        "messages.3.content.0: each tool_use must have a single result. Found multiple `tool_result` "
        "blocks with id: toolu_XXX"
    ]


def test_consecutive_messages_of_one_role_are_one_turn() -> None:
    calls_split = [
        user(text()),
        assistant(use("toolu_a")),
        assistant(use("toolu_b")),
        user(result("toolu_a")),
    ]
    assert [(v.rule, v.path, v.ids) for v in api_violations(calls_split)] == [
        (ApiRule.TOOL_USE_WITHOUT_RESULT, "messages.3", ("toolu_b",))
    ]
    answered = [*calls_split[:3], user(result("toolu_a")), user(result("toolu_b"))]
    assert api_violations(answered) == ()
    text_first = [user(text()), assistant(use("toolu_a")), user(text()), user(result("toolu_a"))]
    assert [(v.rule, v.path) for v in api_violations(text_first)] == [
        (ApiRule.TOOL_USE_WITHOUT_RESULT, "messages.2")
    ]


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "user", "content": "just text"}],
        [user(text()), assistant(use("toolu_a"))],  # a final assistant turn is a prefill, not judged
        ["not a message", {"role": "user"}, {"role": "assistant", "content": [42, {"type": "tool_use"}]}],
    ],
)
def test_odd_requests_are_read_without_error(messages: list[Any]) -> None:
    assert isinstance(api_violations(messages), tuple)


def test_the_capture_server_answers_a_violation_with_the_apis_400_after_recording_it() -> None:
    bad = [user(text()), assistant(use("toolu_a")), user(text("note"), result("toolu_a"))]
    good = [user(text()), assistant(use("toolu_a")), user(result("toolu_a"), text("note"))]
    with CaptureServer() as api:
        url = api.base_url + "/v1/messages?beta=true"
        rejected = post(url, {"model": "claude-x", "messages": bad})
        accepted = post(url, {"model": "claude-x", "messages": good})
    with CaptureServer(api_rules=False) as lenient:
        unchecked = post(lenient.base_url + "/v1/messages", {"model": "claude-x", "messages": bad})
    (violation,) = api_violations(bad)
    assert rejected[0] == 400
    assert json.loads(rejected[2]) == error_envelope(violation, "req_fake")
    assert json.loads(rejected[2])["error"] == {"type": "invalid_request_error", "message": violation.text}
    assert accepted[0] == 200 and unchecked[0] == 200
    first, second = api.message_requests
    assert first.body["messages"] == bad and first.rejected == (violation,)
    assert second.rejected == () and lenient.message_requests[0].rejected == ()
