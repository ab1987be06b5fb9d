"""Run Claude Code offline: find the executable, resume a staged copy, capture what it sends.

`resume` stages a copy of a transcript in a throwaway home (`staging.py`), runs
`claude -p --resume <session-id> <probe>` in a clean environment against a fresh
:class:`~pipeline.proof.claude_code.capture.CaptureServer` with every kind of outside traffic turned off,
and returns the context Claude Code rebuilt from the file, read as a :class:`SentContext`: the
request that carried the probe; or, when Claude Code compacted the session before answering (a
file over its auto-compact threshold, or near it), its own compaction request, which carries the
whole rebuilt context, with the probe turn's reminders beside it. Nothing of the user's
environment is passed on but `PATH`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from pipeline.installed import (
    CLAUDE_CODE_ENV,
    CLAUDE_CODE_VERSION,
    OFFLINE_ENV,
    ClaudeCodeError,
    ClaudeCodeNotInstalled,
    find_claude_code,
    reported_version,
    require_claude_code,
)
from pipeline.proof.claude_code.api_rules import ApiViolation
from pipeline.proof.claude_code.capture import CaptureServer, RecordedRequest
from pipeline.proof.claude_code.reminders import Reminder
from pipeline.proof.claude_code.sent_context import SentContext, closing_prompt, read_request
from pipeline.proof.claude_code.staging import StagedSession, stage_session
from pipeline.proof.process_group import run_in_process_group

__all__ = [
    "CLAUDE_CODE_ENV",
    "CLAUDE_CODE_VERSION",
    "PROBE",
    "ClaudeCodeError",
    "ClaudeCodeNotInstalled",
    "ResumeResult",
    "ResumeTimedOut",
    "find_claude_code",
    "installed_version",
    "require_claude_code",
    "resume",
]

PROBE: Final = "PROBE-PROMPT"  # the prompt sent after resuming (the golden run's)
REFUSAL_MARKER: Final = "No conversation found"
# Off the network apart from the capture server; retirement is compared in local time, so UTC.
_OFFLINE_ENV: Final = {**OFFLINE_ENV, "TZ": "UTC"}
_THROWAWAY_API_KEY: Final = "sk-ant-api03-throwaway-key-for-the-loopback-capture-server"


class ResumeTimedOut(ClaudeCodeError):
    """A resume run exceeded its time limit and was killed."""

    def __init__(self, session_id: str, seconds: float) -> None:
        self.session_id = session_id
        self.seconds = seconds
        super().__init__(f"claude -p --resume {session_id} did not finish within {seconds:g} s")


@dataclass(frozen=True, slots=True)
class ResumeResult:
    """What one `claude -p --resume` run did: exit code, output, and the context it sent.

    `resumed` means Claude Code called the API with the probe; `context` is what Claude Code
    rebuilt from the file and `model` the probe call's model; `compacted_on_resume` says Claude
    Code compacted the session first (`context` is then its compaction request's); and
    `message_requests` counts every Messages call. `rejected` holds the API rules the probe call
    broke: the capture server answered it with the API's 400, as the real API would, after
    recording what was sent.
    """

    session_id: str
    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    model: str | None
    context: SentContext
    message_requests: int
    rejected: tuple[ApiViolation, ...] = ()
    compacted_on_resume: bool = False

    @property
    def refused(self) -> bool:
        """Claude Code said there was no conversation to resume."""
        return not self.resumed and REFUSAL_MARKER in self.stdout + self.stderr


def installed_version(executable: Path) -> str | None:
    """The version an executable reports (`2.1.332 (Claude Code)` gives `2.1.332`), or None."""
    return reported_version(executable, _OFFLINE_ENV)


# running ----------------------------------------------------------------------------------
def _environment(staged: StagedSession, base_url: str, model: str | None) -> dict[str, str]:
    """A clean environment: nothing inherited but PATH, so no user setting leaks in."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(staged.home),
        "CLAUDE_CONFIG_DIR": str(staged.config_dir),
        "TMPDIR": str(staged.home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": _THROWAWAY_API_KEY,
        **_OFFLINE_ENV,
    }
    if model:
        env["ANTHROPIC_MODEL"] = model
    return env


def _run(
    command: list[str], staged: StagedSession, env: dict[str, str], timeout: float
) -> tuple[int, str, str]:
    """Run in a new process group so a timeout ends the binary and anything it started."""
    try:
        return run_in_process_group(command, cwd=staged.project_dir, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ResumeTimedOut(staged.session_id, timeout) from None


def _carries_probe(request: RecordedRequest, probe: str) -> bool:
    return request.is_message and _body_carries(request.body, probe)


def _body_carries(body: Any, probe: str) -> bool:
    """Whether a request body is a Messages call whose texts hold the probe."""
    return isinstance(body, dict) and any(probe in text for text in _texts(body.get("messages")))


def _texts(messages: Any) -> Iterable[str]:
    for message in messages or ():
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            yield content
        for item in content if isinstance(content, list) else ():
            if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                yield item["text"]


def _probe_request(requests: Iterable[RecordedRequest], probe: str) -> RecordedRequest | None:
    """The last message request that carries the probe (other calls, if any, are not the turn).

    A turn the API rejected is retried, and after a few 400s Claude Code retries without tool
    search (every tool's definition, other reminders): the first attempt is then the turn.
    """
    carrying = [request for request in requests if _carries_probe(request, probe)]
    if not carrying:
        return None
    return carrying[0] if carrying[-1].rejected else carrying[-1]


def _compaction_request(
    requests: Sequence[RecordedRequest], probe_request: RecordedRequest
) -> RecordedRequest | None:
    """The request that carried the whole context to be compacted: the largest message call
    made before the probe's (a retry repeats it with longer instructions; the first is taken)."""
    at = next(i for i, request in enumerate(requests) if request is probe_request)
    earlier = [r for r in requests[:at] if r.is_message and isinstance(r.body, dict)]
    return max(earlier, key=lambda r: len(r.body.get("messages") or ()), default=None)


def _wrote_boundary(transcript: Path, staged_bytes: int) -> bool:
    """Whether Claude Code appended a compact boundary to the file it resumed."""
    with transcript.open("rb") as appended:
        appended.seek(staged_bytes)
        return b'"compact_boundary"' in appended.read()


def _rebuilt(
    requests: Sequence[RecordedRequest],
    probe_request: RecordedRequest | None,
    probe: str,
    scratch: tuple[str, ...],
    compacted: bool,
) -> SentContext:
    """The context Claude Code rebuilt from the file (see the module docstring)."""
    body: Mapping[str, Any] = probe_request.body if probe_request is not None else {}
    turn = read_request(body, probe, scratch)
    compaction = _compaction_request(requests, probe_request) if compacted and probe_request else None
    if compaction is None:
        return turn
    whole = read_request(compaction.body, closing_prompt(compaction.body) or probe, scratch)
    last = len(turn.blocks) - 1
    closing = tuple(
        Reminder(len(whole.blocks), r.text)
        for r in turn.reminders
        if r.position > last or (r.inside and r.position == last)
    )
    strings, reminders = whole.strings + turn.strings, whole.reminders + closing
    return SentContext(
        whole.blocks, strings, whole.size, reminders, compacted_on_resume=True, tools=turn.tools
    )


def resume(
    transcript: Path,
    *,
    executable: Path,
    model: str | None = None,
    probe: str = PROBE,
    session_id: str | None = None,
    timeout: float,
    keep: Path | None = None,
) -> ResumeResult:
    """Resume a copy of `transcript` with Claude Code against a fresh capture server.

    `model` pins `ANTHROPIC_MODEL` (see :mod:`pipeline.proof.claude_code.model`); None lets Claude Code
    restore the session's model as of today. `keep` receives the copy as Claude Code left it
    (what it appended: its turn, its state records, a compaction). Raises
    :class:`ResumeTimedOut` after `timeout` s.
    """
    scratch = tempfile.TemporaryDirectory(prefix="cc-resume-", ignore_cleanup_errors=True)
    with scratch, CaptureServer(keep=partial(_body_carries, probe=probe)) as api:
        staged = stage_session(transcript, Path(scratch.name), session_id=session_id)
        staged_bytes = staged.transcript.stat().st_size
        command = [str(executable), "-p", "--resume", staged.session_id, probe]
        returncode, stdout, stderr = _run(command, staged, _environment(staged, api.base_url, model), timeout)
        requests = api.requests
        request = _probe_request(requests, probe)
        compacted = request is not None and _wrote_boundary(staged.transcript, staged_bytes)
        roots = (str(Path(scratch.name).resolve()), scratch.name)
        context = _rebuilt(requests, request, probe, roots, compacted)
        if keep is not None:
            shutil.copyfile(staged.transcript, keep)
    body: Mapping[str, Any] = request.body if request is not None else {}
    return ResumeResult(
        session_id=staged.session_id,
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        resumed=request is not None,
        model=body.get("model"),
        context=context,
        message_requests=sum(1 for r in requests if r.is_message),
        rejected=request.rejected if request is not None else (),
        compacted_on_resume=compacted,
    )
