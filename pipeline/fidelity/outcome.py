"""How a tool call ended, and what a text says about how something ended, read independently of
the summarizer (a judge that shared the summarizer's reading would share its mistakes).

A call's outcome is read from its result: a rejection or a permission refusal is `canceled`; an
exit status (Claude Code writes `Exit code N`; Codex `Exit code: N`, `Process exited with code N`
or an `exit_code` member) decides `passed` or `failed`; else the error flag does; a test runner
whose output reports failures has failed whatever its status (a pipe into `tail` exits 0). An
error's signature is the line of its output that tells it apart: a traceback's last exception
line, else the first line naming an error, else the first line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from pipeline.fidelity.text import IDENTITY_CHARS, normalize
from pipeline.summarize.evidence.shell import CommandOutcome

__all__ = [
    "MIN_SIGNATURE_CHARS",
    "STATUS_HEAD_CHARS",
    "STATUS_TAIL_CHARS",
    "call_outcome",
    "error_signature",
    "exit_status",
    "rejection_reason",
    "states",
]

MIN_SIGNATURE_CHARS: Final = 12
"""An error line shorter than this ("Error", "failed") tells no error apart: the call's target
and a failure word must then stand together instead."""

STATUS_HEAD_CHARS: Final = 4096
STATUS_TAIL_CHARS: Final = 12288
"""A result's exit status and test summary are read from its head and tail: agents write the status
first (Claude Code, Codex's header) or last (an `exit_code` member), runners their summary last;
the middle of a long log says nothing about how it ended and would only cost time."""

_CANCELED_PREFIXES: Final = (
    "The user doesn't want to",
    "[Request interrupted by user",
    "This command requires approval",
    "This Bash command contains multiple operations. The following part requires approval",
)
_PERMISSION: Final = re.compile(r"^Claude requested permissions to .* but you haven't granted it yet")
_EXIT: Final = (  # each with a literal it needs, looked for first (a multi-line search is slow)
    ("Exit code", re.compile(r"\AExit code:? (-?\d+)")),
    ("Process exited with code", re.compile(r"^Process exited with code (-?\d+)\s*$", re.M)),
    ("<exit_code>", re.compile(r"<exit_code>(-?\d+)</exit_code>")),
    ("(exit code", re.compile(r"\(exit code (-?\d+)\)")),
    ('"exit_code"', re.compile(r'"exit_code"\s*:\s*(-?\d+)')),
)
_BACKGROUND: Final = re.compile(r"Command running in background with ID: ")
_FAILED_LINE: Final = re.compile(r"\n(?:(?:FAILED|FAIL|ERROR)\b|--- FAIL\b|not ok \d)")
_FAILED_COUNT: Final = re.compile(r" (?:failed|failing|failures?|errors?)\b")  # after a count: "2 failed"
_SUMMARY_FAILED: Final = "test result: FAILED"
_REJECTION_REASON: Final = re.compile(r"the following reason for the rejection:\s*(.+)", re.S)
_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TAGS: Final = re.compile(r"</?tool_use_error>")
_HEADER: Final = re.compile(
    r"^(?:Exit code:? -?\d+|Process exited with code -?\d+|Wall time: .*|Chunk ID: \S+"
    r"|Original token count: \d+|Output:|Error:?)$"
)
_GENERIC: Final = re.compile(
    r"^(?:Traceback \(most recent call last\):|Found \d+ errors?\.?|\d+ errors?\.?"
    r"|(?:[=_!*]{3,}|-{4,}).*|npm (?:warn|WARN)\b.*)$"
)
_FAILURE_LINE: Final = re.compile(r"^(?:FAILED|FAIL|ERROR)\b|^--- FAIL\b")
_EXCEPTION: Final = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b")
_ERROR_WORDS: Final = re.compile(
    r"(?i)\b(?:errors?|failed|failure|fatal|exception|not found|no such|cannot|can't|could not|"
    r"unable to|denied|refused|invalid|timed out|panic|rejected|not granted|requires approval|blocked)\b"
)

_PASSED_WORDS: Final = re.compile(
    r"(?i)\b(?:passed|passes|passing|pass|succeeded|succeeds|successful(?:ly)?|success|ok|worked|works|"
    r"green|exit(?:ed)? (?:with )?(?:code |status )?:?0|exit code:? 0)\b"
)
_FAILED_WORDS: Final = re.compile(
    r"(?i)\b(?:failed|fails|failing|failures?|fail|errored|errors?|crashed|broken|non-?zero|timed out|"
    r"exit(?:ed)? (?:with )?(?:code |status )?:?[1-9]\d*|exit code:? [1-9]\d*)\b"
)
_CANCELED_WORDS: Final = re.compile(
    r"(?i)\b(?:cancel+ed|rejected|declined|denied|interrupted|aborted|not run|blocked|not granted|"
    r"refused|doesn't want|did not want|didn't want)\b"
)
_STATED: Final = {
    CommandOutcome.PASSED: _PASSED_WORDS,
    CommandOutcome.FAILED: _FAILED_WORDS,
    CommandOutcome.CANCELED: _CANCELED_WORDS,
}


def _ends(text: str) -> str:
    """The head and tail of a long result (the whole of a short one)."""
    if len(text) <= STATUS_HEAD_CHARS + STATUS_TAIL_CHARS:
        return text
    return f"{text[:STATUS_HEAD_CHARS]}\n{text[-STATUS_TAIL_CHARS:]}"


def exit_status(text: str) -> int | None:
    """The exit status a shell tool's result reports, in any spelling the agents write."""
    text = _ends(text)
    for literal, pattern in _EXIT:
        match = pattern.search(text) if literal in text else None
        if match is not None:
            return int(match.group(1))
    return None


def call_outcome(
    text: str | None, is_error: bool, *, test_run: Callable[[], bool] | None = None
) -> CommandOutcome:
    """How a call ended, from its result (`None`: the records hold no result).

    `test_run` says whether the call ran tests, a linter or a build; it is asked (a shell parse)
    only of a result that reports failures.
    """
    if text is None:
        return CommandOutcome.UNKNOWN
    head = text[:512].lstrip()  # a rejection is said first; a 64 KiB output is not copied for it
    if head.startswith(_CANCELED_PREFIXES) or _PERMISSION.match(head):
        return CommandOutcome.CANCELED
    if test_run is not None and _reports_failures(_ends(text)) and test_run():
        return CommandOutcome.FAILED
    status = exit_status(text)
    if status is not None:
        return CommandOutcome.PASSED if status == 0 else CommandOutcome.FAILED
    if is_error:
        return CommandOutcome.FAILED
    return CommandOutcome.UNKNOWN if _BACKGROUND.search(_ends(text)) else CommandOutcome.PASSED


def _reports_failures(text: str) -> bool:
    """Whether a test run's output reports failures: a line opening with FAILED, FAIL, ERROR,
    `--- FAIL` or `not ok N`, a count of failures above zero, or cargo's failed summary.

    Written as literal-led searches: one pattern with line anchors takes milliseconds on a log.
    """
    text = "\n" + _ANSI.sub("", text)
    if _SUMMARY_FAILED in text or _FAILED_LINE.search(text) is not None:
        return True
    return any(_counted(text, match.start()) for match in _FAILED_COUNT.finditer(text))


def _counted(text: str, end: int) -> bool:
    """Whether a count above zero stands whole right before `end` ("2 failed", not "0 failed")."""
    start = end
    while start > 0 and text[start - 1].isdigit():
        start -= 1
    if start == end or not text[start:end].lstrip("0"):
        return False
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def states(text: str, outcome: CommandOutcome) -> bool:
    """Whether a text says a run ended so (an unknown outcome needs no word)."""
    pattern = _STATED.get(outcome)
    return pattern is None or pattern.search(text) is not None


def rejection_reason(text: str) -> str:
    """The words a user gave for rejecting a call, normalized and bounded ("" when none)."""
    match = _REJECTION_REASON.search(text)
    return normalize(match.group(1))[:IDENTITY_CHARS] if match is not None else ""


def error_signature(text: str) -> str:
    """The line that tells an error apart, normalized and bounded; "" when no line is long enough.

    In order: a traceback's last exception line, the first test failure line, the first line
    naming an error, the first line; lines that every error of a tool prints are passed over.
    """
    lines = [normalize(line) for line in _TAGS.sub("", _ANSI.sub("", text)).splitlines()]
    lines = [line for line in lines if line and not _HEADER.match(line) and not _GENERIC.match(line)]
    if not lines:
        return ""
    exceptions = [line for line in lines if _EXCEPTION.match(line)]
    chosen = exceptions[-1] if exceptions else None
    chosen = chosen or next((line for line in lines if _FAILURE_LINE.match(line)), None)
    chosen = chosen or next((line for line in lines if _ERROR_WORDS.search(line)), lines[0])
    chosen = chosen[:IDENTITY_CHARS]
    return chosen if len(chosen) >= MIN_SIGNATURE_CHARS else ""
