"""Claude Code's plan mode: the reminders its transcripts do not hold, the plan it does not send."""

from __future__ import annotations

import orjson
import pytest

from pipeline.core.index import build_index
from pipeline.formats.claude_code.plan_mode import plan_mode_reminders, reminder_of, unsent_plan
from pipeline.formats.detect import detect_format
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS

PLAN = "# Plan\n\n1. Add the tar reader.\n2. Test it."
PLAN_FILE = "/home/dev/.claude/plans/humble-doodling-wolf.md"
APPROVED = "User has approved your plan. You can now start coding."
REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def reminders(b: TranscriptBuilder) -> dict[int, int]:
    data = b.to_bytes()
    return plan_mode_reminders(data, build_index(data, detect_format(data), LIMITS).record_lines(data))


def first_lines(b: TranscriptBuilder) -> list[int]:
    """Each assistant message's first line, in order (the requests)."""
    seen: set[str] = set()
    lines = []
    for number, raw in enumerate(b.to_bytes().splitlines(), 1):
        record = orjson.loads(raw)
        message_id = record.get("message", {}).get("id") if record.get("type") == "assistant" else None
        if message_id and message_id not in seen:
            seen.add(message_id)
            lines.append(number)
    return lines


def planning_session(version: str, *, rejected_first: bool = False) -> TranscriptBuilder:
    """Request 0 before plan mode; 1-3 in it (a Read, the plan file written, the exit); 4 after."""
    b = TranscriptBuilder(seed=5, version=version)
    b.user("Commit the pending changes.")
    b.tool_call("Bash", {"command": "git commit -am wip"}, "[main 1d28f1e] wip")
    b.user("New feature: read tar archives too. Plan it first.")
    b.tool_call("Read", {"file_path": "/src/main.py"}, "     1→import zipfile")
    b.tool_call("Write", {"file_path": PLAN_FILE, "content": PLAN}, f"File created at {PLAN_FILE}")
    if rejected_first:
        b.tool_call("ExitPlanMode", {"plan": PLAN}, REJECTED, is_error=True)
        b.user("Keep the plan, but name the helper is_tar.")
    b.tool_call("ExitPlanMode", {"plan": PLAN}, APPROVED)
    b.assistant(b.text("Implementing it now."))
    return b


def test_reminders_run_from_the_prompt_before_the_first_sign_to_the_approved_exit() -> None:
    b = planning_session("2.0.55")
    requests = first_lines(b)
    full, _, _ = reminder_of("2.0.55") or (0, 0, 0)
    assert reminders(b) == dict.fromkeys(requests[1:4], full)  # not the commit, not after approval


def test_a_rejected_exit_keeps_plan_mode_through_the_next_prompt() -> None:
    b = planning_session("2.0.37", rejected_first=True)
    requests = first_lines(b)
    full, short, every = reminder_of("2.0.37") or (0, 0, 0)
    assert (short, every) == (0, 0)
    assert reminders(b) == dict.fromkeys(requests[1:5], full)


def test_from_2_0_64_a_reminder_waits_five_assistant_lines() -> None:
    b = TranscriptBuilder(seed=6, version="2.0.76")
    b.user("Plan the migration.")
    for n in range(8):
        b.tool_call("Read", {"file_path": f"/src/m{n}.py"}, "     1→pass")
    b.tool_call("ExitPlanMode", {"plan": PLAN}, APPROVED)
    requests = first_lines(b)
    found = reminders(b)
    assert requests[0] in found and len(found) == 2  # nine requests, one assistant line each
    assert [requests.index(line) for line in sorted(found)] == [0, 5]


def test_sessions_without_a_sign_of_plan_mode_or_recording_their_reminders_add_nothing() -> None:
    b = TranscriptBuilder(seed=7, version="2.0.55")
    b.user("Read the notes at ~/.claude/plans/ for me.")
    b.tool_call("Read", {"file_path": "/src/a.py"}, "     1→pass")
    assert reminders(b) == {}
    recorded = planning_session("2.1.7")
    assert reminders(recorded)  # 2.1.7 writes no line for them either...
    recorded.attachment("todo_reminder", content=[])
    assert reminders(recorded) == {}  # ...but a file that records attachments holds them


def test_a_prompt_sent_in_plan_mode_says_so_from_2_1_17_and_short_reminders_follow_the_full() -> None:
    b = TranscriptBuilder(seed=8, version="2.1.39")
    b.user("Look around first.")  # permissionMode: default
    b.tool_call("Read", {"file_path": "/src/a.py"}, "     1→pass")
    b.user("Now plan the refactor.", permissionMode="plan")
    for n in range(11):
        b.tool_call("Read", {"file_path": f"/src/m{n}.py"}, "     1→pass")
    b.user("Thanks, that is all for now.")  # back in the default mode: no sign needed
    b.tool_call("Read", {"file_path": "/src/z.py"}, "     1→pass")
    requests = first_lines(b)
    full, short, every = reminder_of("2.1.39") or (0, 0, 0)
    assert every == 5 and 0 < short < full
    found = reminders(b)
    assert [requests.index(line) for line in sorted(found)] == [1, 6, 11]
    assert [found[line] for line in sorted(found)] == [full, short, short]


def test_an_accepted_enter_plan_mode_call_starts_plan_mode_at_the_next_request() -> None:
    b = TranscriptBuilder(seed=9, version="2.1.7")
    b.user("Refactor the reader.")
    b.tool_call("EnterPlanMode", {}, "Entered plan mode. You should now focus on exploring the codebase.")
    b.tool_call("ExitPlanMode", {"plan": PLAN}, APPROVED)
    b.assistant(b.text("Starting."))
    requests = first_lines(b)
    full, _, _ = reminder_of("2.1.7") or (0, 0, 0)
    assert reminders(b) == {requests[1]: full}


@pytest.mark.parametrize(
    ("version", "expected"),
    [("2.0.25", None), ("2.0.26", 0), ("2.0.55", 0), ("2.0.76", 5), ("2.1.39", 5), ("dev", None)],
)
def test_the_reminder_is_known_from_the_clients_read(version: str, expected: int | None) -> None:
    reminder = reminder_of(version)
    assert (reminder[2] if reminder else None) == expected
    assert reminder is None or reminder[0] > 100


@pytest.mark.parametrize(("version", "stripped"), [("2.0.53", False), ("2.0.54", True), ("2.1.42", True)])
def test_the_plan_in_an_exit_call_is_not_sent_from_2_0_54(version: str, stripped: bool) -> None:
    raw = orjson.dumps({"plan": PLAN})
    assert unsent_plan("ExitPlanMode", raw, version) == (len(raw) - len(b"{}") if stripped else 0)
    assert unsent_plan("Write", orjson.dumps({"plan": PLAN}), version) == 0
