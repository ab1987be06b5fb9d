"""Failed calls of a span: what failed, the lines that tell it apart, and whether a later call resolved it."""

from __future__ import annotations

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.summarize import EvidenceItem
from pipeline.summarize.evidence.failures import (
    collect_failures,
    reports_failures,
    run_outcome,
    telling_lines,
)
from pipeline.summarize.evidence.shell import CommandOutcome
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import SourceFormat

TRACEBACK = (
    'Exit code 1\nTraceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
    "    import b\nModuleNotFoundError: No module named 'b'"
)


def items_of(b: TranscriptBuilder) -> tuple[EvidenceItem, ...]:
    data = b.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    return extract_evidence(data, index, range(1, len(index) + 1))


def test_a_failed_command_keeps_its_exception_line_and_the_run_that_resolved_it() -> None:
    b = TranscriptBuilder(seed=1)
    b.tool_call("Bash", {"command": "python a.py"}, TRACEBACK, is_error=True)
    b.tool_call("Bash", {"command": "python  a.py"}, "Exit code 0\nok")  # white space aside, the same command
    fixed_at = b.line_count - 1
    (record,) = collect_failures(items_of(b))
    assert record.outcome is CommandOutcome.FAILED
    assert record.status == 1
    assert record.subject == "python a.py"
    # the first line verbatim (a traceback's: where it failed), then the final exception line
    assert record.details == ('File "a.py", line 3, in <module>', "ModuleNotFoundError: No module named 'b'")
    assert (record.resolved_at, record.resolution) == (fixed_at, "the same command passed")


def test_a_test_run_that_reports_failures_failed_whatever_its_status() -> None:
    output = (
        "collected 3 items\n...F\nFAILED tests/test_a.py::test_x - AssertionError\n1 failed, 2 passed in 0.1s"
    )
    assert run_outcome(output, False, validation=True) is CommandOutcome.FAILED
    assert run_outcome(output, False, validation=False) is CommandOutcome.PASSED  # `cat log.txt` ran fine
    assert run_outcome("0 failed, 3 passed", False, validation=True) is CommandOutcome.PASSED
    b = TranscriptBuilder(seed=2)
    b.tool_call("Bash", {"command": "pytest | tail -3"}, output)
    (record,) = collect_failures(items_of(b))
    assert record.details == ("collected 3 items", "FAILED tests/test_a.py::test_x - AssertionError")
    assert record.resolved_at is None


def test_failure_counts_and_lines_are_read_whole() -> None:
    assert reports_failures("== 2 failed, 1 passed ==")
    assert not reports_failures("12 passed, 0 failed")
    assert not reports_failures("build v1.2 failed_count=0")
    assert reports_failures("running 3 tests\ntest result: FAILED. 2 passed; 1 failed")


def test_a_linter_message_on_the_first_line_is_kept_beside_its_count() -> None:
    output = "Exit code 1\nSIM115 Use a context manager for opening files\n --> a.py:3:5\n\nFound 1 error."
    assert telling_lines(output) == ("SIM115 Use a context manager for opening files",)


def test_a_tool_error_is_about_its_file_and_resolved_by_the_same_kind_of_tool() -> None:
    b = TranscriptBuilder(seed=3)
    edit = {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}
    b.tool_call(
        "Edit", edit, "<tool_use_error>String to replace not found in file.</tool_use_error>", is_error=True
    )
    b.tool_call("Read", {"file_path": "/r/a.py"}, "1→x")  # reading is not what the edit could not do
    b.tool_call("Write", {"file_path": "/r/a.py", "content": "y"}, "ok")
    written_at = b.line_count - 1
    (record,) = collect_failures(items_of(b))
    assert record.subject == "/r/a.py"
    assert record.details == ("String to replace not found in file.",)
    assert (record.resolved_at, record.resolution) == (written_at, "Write modified the same file")


def test_a_rejection_keeps_the_users_reason_and_the_same_failure_is_one_record() -> None:
    refusal = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected. "
        "To tell you how to proceed, the user said the following reason for the rejection: use pnpm"
    )
    b = TranscriptBuilder(seed=4)
    b.tool_call("Bash", {"command": "npm install"}, refusal, is_error=True)
    b.tool_call("Bash", {"command": "npm install"}, refusal, is_error=True)
    (record,) = collect_failures(items_of(b))
    assert record.outcome is CommandOutcome.CANCELED
    assert record.by_user  # the user's decision, not a failure of the call
    assert record.details == ("use pnpm",)
    assert record.times == 2
    assert record.lines[0] == b.line_count - 1  # the latest occurrence


def test_calls_that_passed_or_have_no_result_are_not_failures() -> None:
    b = TranscriptBuilder(seed=5)
    b.tool_call("Bash", {"command": "ls"}, "Exit code 0\na.py")
    b.assistant(b.tool_use("Bash", {"command": "sleep 100"}))
    assert collect_failures(items_of(b)) == ()
