"""How calls ended and which line tells an error apart, in every spelling the agents write."""

from __future__ import annotations

import pytest

from pipeline.fidelity.outcome import call_outcome, error_signature, exit_status, rejection_reason, states
from pipeline.summarize.evidence.shell import CommandOutcome

PYTEST_FAILURE = """Exit code 1
============================= test session starts ==============================
collected 40 items

tests/test_unit.py .....................F

=================================== FAILURES ===================================
>       assert "not a directory" in captured.err
E       AssertionError: assert 'not a directory' in 'Error: x'
=========================== short test summary info ============================
FAILED tests/test_unit.py::TestGenerator::test_process_invalid_input_type
========================= 1 failed, 37 passed in 2.95s ========================="""

TRACEBACK = """Traceback (most recent call last):
  File "<string>", line 5, in <module>
ImportError: cannot import name 'parse_jsonl_file' from 'claude_code_log.parser'"""


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("Exit code 2\nusage: x", 2),  # Claude Code
        ("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok", 0),  # Codex exec_command
        ("Chunk ID: 9aeaf5\nWall time: 0.02 seconds\nProcess exited with code 1\nOutput:\nno", 1),
        ('{"output":"x","metadata":{"exit_code":127,"duration_seconds":0.1}}', 127),  # Codex shell
        ("all fine", None),
    ],
)
def test_the_exit_status_is_read_in_each_agent_s_spelling(text: str, status: int | None) -> None:
    assert exit_status(text) == status


@pytest.mark.parametrize(
    ("text", "is_error", "validation", "outcome"),
    [
        ("Exit code 1\nboom", True, False, CommandOutcome.FAILED),
        ("Exit code: 0\nWall time: 1s", False, False, CommandOutcome.PASSED),
        ("lsd: No such file or directory", True, False, CommandOutcome.FAILED),  # older builds: no status
        ("The user doesn't want to proceed with this tool use.", True, False, CommandOutcome.CANCELED),
        (
            "Claude requested permissions to write to /a.md, but you haven't granted it yet.",
            True,
            False,
            CommandOutcome.CANCELED,
        ),
        ("Command running in background with ID: bash_1", False, False, CommandOutcome.UNKNOWN),
        ("FAIL Required test coverage of 99% not reached.", False, True, CommandOutcome.FAILED),
        ("FAIL Required test coverage of 99% not reached.", False, False, CommandOutcome.PASSED),
        ("12 passed, 0 failed", False, True, CommandOutcome.PASSED),
        (None, False, False, CommandOutcome.UNKNOWN),
    ],
)
def test_a_call_s_outcome_is_read_from_its_result(
    text: str | None, is_error: bool, validation: bool, outcome: CommandOutcome
) -> None:
    assert call_outcome(text, is_error, test_run=lambda: validation) is outcome


@pytest.mark.parametrize(
    ("text", "signature"),
    [
        (TRACEBACK, "ImportError: cannot import name 'parse_jsonl_file' from 'claude_code_log.parser'"),
        (PYTEST_FAILURE, "FAILED tests/test_unit.py::TestGenerator::test_process_invalid_input_type"),
        (
            "npm warn Unknown env config\n\nsrc/a.ts(6,33): error TS2307: Cannot find module 'x'",
            "src/a.ts(6,33): error TS2307: Cannot find module 'x'",
        ),
        (
            "Exit code 1\nSIM115 Use a context manager\n  --> a.py:191:25\n\nFound 1 error.",
            "SIM115 Use a context manager",
        ),
        ("<tool_use_error>File does not exist.</tool_use_error>", "File does not exist."),
        ("\x1b[31mFAIL\x1b[39m src/a.test.ts > renders", "FAIL src/a.test.ts > renders"),
        ("Exit code 1\nError", ""),  # nothing long enough to tell one error from another
        ("Exit code 1", ""),
    ],
)
def test_an_error_s_signature_is_the_line_that_tells_it_apart(text: str, signature: str) -> None:
    assert error_signature(text) == signature


def test_a_rejection_s_reason_is_the_user_s_words() -> None:
    text = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected. "
        "The user provided the following reason for the rejection:  use  pnpm"
    )
    assert rejection_reason(text) == "use pnpm"
    assert rejection_reason("The user doesn't want to proceed with this tool use.") == ""


@pytest.mark.parametrize(
    ("text", "outcome", "expected"),
    [
        ("- failed: (L3)", CommandOutcome.FAILED, True),
        ("- passed: (L3)", CommandOutcome.FAILED, False),
        ("it exited with code 2", CommandOutcome.FAILED, True),
        ("exit code 0", CommandOutcome.PASSED, True),
        ("the user rejected it", CommandOutcome.CANCELED, True),
        ("ran it", CommandOutcome.PASSED, False),
        ("ran it", CommandOutcome.UNKNOWN, True),
    ],
)
def test_a_text_states_an_outcome_by_its_words(text: str, outcome: CommandOutcome, expected: bool) -> None:
    assert states(text, outcome) is expected


@pytest.mark.parametrize(
    ("output", "failed"),
    [
        ("collected 4\n1 failed, 3 passed in 0.2s", True),
        ("4 passed, 0 failed", False),
        ("see issue12 failed earlier", False),  # no count of its own
        ("ok\nFAILED tests/a.py::test_b", True),
        ("=== RUN TestA\n--- FAIL: TestA (0.00s)", True),
        ("TAP version 13\nnot ok 3 - parses", True),
        ("test result: FAILED. 1 passed; 2 failed", True),
        ("\x1b[31mFAIL\x1b[39m src/a.test.ts", True),
        ("Found 10 errors.", True),
        ("all 12 tests passed", False),
        ("x" * 40_000 + "\n2 failed", True),  # the summary at the end of a long log
    ],
)
def test_a_test_run_has_failed_when_its_output_reports_failures(output: str, failed: bool) -> None:
    outcome = call_outcome(output, False, test_run=lambda: True)
    assert (outcome is CommandOutcome.FAILED) is failed
    assert call_outcome(output, False, test_run=lambda: False) is CommandOutcome.PASSED
