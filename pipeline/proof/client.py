"""Run Claude Code offline: find the executable, resume a staged copy, capture what it sends.

`resume` stages a copy of a transcript in a throwaway home (`staging.py`), runs
`claude -p --resume <session-id> <probe>` in a clean environment against a fresh
:class:`~pipeline.proof.capture.CaptureServer` with every kind of outside traffic turned off,
and returns the request that carried the probe, read as a :class:`SentContext`. Nothing of the
user's environment is passed on but `PATH`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
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
    require_claude_code,
)
from pipeline.proof.capture import CaptureServer, RecordedRequest
from pipeline.proof.context import SentContext, read_request
from pipeline.proof.staging import StagedSession, stage_session

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
_VERSION_TIMEOUT_SECONDS: Final = 30.0  # `--version` answers in well under a second
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

    `resumed` means Claude Code called the API with the probe; `context` is what that call sent
    and `model` its model; `message_requests` counts every Messages call.
    """

    session_id: str
    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    model: str | None
    context: SentContext
    message_requests: int

    @property
    def refused(self) -> bool:
        """Claude Code said there was no conversation to resume."""
        return not self.resumed and REFUSAL_MARKER in self.stdout + self.stderr


def installed_version(executable: Path) -> str | None:
    """The version an executable reports (`2.1.332 (Claude Code)` gives `2.1.332`), or None."""
    env = {"PATH": os.environ.get("PATH", ""), **_OFFLINE_ENV}
    try:
        done = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            env=env,
            timeout=_VERSION_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


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
    with subprocess.Popen(
        command,
        cwd=staged.project_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ResumeTimedOut(staged.session_id, timeout) from None
    return process.returncode, stdout, stderr


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
    """The last message request that carries the probe (other calls, if any, are not the turn)."""
    return next((request for request in reversed(tuple(requests)) if _carries_probe(request, probe)), None)


def resume(
    transcript: Path,
    *,
    executable: Path,
    model: str | None = None,
    probe: str = PROBE,
    session_id: str | None = None,
    timeout: float,
) -> ResumeResult:
    """Resume a copy of `transcript` with Claude Code against a fresh capture server.

    `model` pins `ANTHROPIC_MODEL` (see :mod:`pipeline.proof.model`); None lets Claude Code
    restore the session's model as of today. Raises :class:`ResumeTimedOut` after `timeout` s.
    """
    scratch = tempfile.TemporaryDirectory(prefix="cc-resume-", ignore_cleanup_errors=True)
    with scratch, CaptureServer(keep=partial(_body_carries, probe=probe)) as api:
        staged = stage_session(transcript, Path(scratch.name), session_id=session_id)
        command = [str(executable), "-p", "--resume", staged.session_id, probe]
        returncode, stdout, stderr = _run(command, staged, _environment(staged, api.base_url, model), timeout)
        request = _probe_request(api.requests, probe)
    body: Mapping[str, Any] = request.body if request is not None else {}
    return ResumeResult(
        session_id=staged.session_id,
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        resumed=request is not None,
        model=body.get("model"),
        context=read_request(body, probe),
        message_requests=sum(1 for r in api.requests if r.is_message),
    )
