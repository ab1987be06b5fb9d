"""Run Qwen Code offline: resume a staged copy of a session, capture the history it sends.

`resume_qwen_code` stages the session (`staging.py`), runs `qwen --resume <id> -p <probe>
--auth-type openai` in a clean environment against a fresh
:class:`~pipeline.proof.chat_capture.ChatCaptureServer`, and splits the first Chat Completions
request that carries the probe in three: what Qwen Code puts before the history (its system
prompt, and the startup context it prepends to the first user message as `<system-reminder>`
parts: recorded nowhere), the history it rebuilt from the file (`context`, what the verdict and
the golden compare), and the new turn (its date reminder and the probe). Qwen Code then makes
more calls of its own (memory extraction); only the first one carrying the probe is the resume.
Nothing of the user's environment is passed on but `PATH`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.proof.chat_capture import ChatCaptureServer
from pipeline.proof.process_group import run_in_process_group
from pipeline.proof.qwen_code.qwen_install import QwenCode, QwenCodeError
from pipeline.proof.qwen_code.session_staging import StagedSession, stage_session

__all__ = [
    "PROBE",
    "RESUME_MODEL",
    "QwenResumeResult",
    "QwenResumeTimedOut",
    "qwen_environment",
    "resume_qwen_code",
]

PROBE: Final = "PROBE-PROMPT"  # the prompt sent after resuming
RESUME_MODEL: Final = "fake-model"  # any model name works against the loopback server
REMINDER: Final = "<system-reminder>"  # how Qwen Code opens the context parts it makes up
_OFFLINE_ENV: Final = {
    "NO_COLOR": "1",
    "TZ": "UTC",
    "NO_PROXY": "127.0.0.1,localhost",
    "OPENAI_API_KEY": "loopback",
    "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
}


class QwenResumeTimedOut(QwenCodeError):
    """A resume run exceeded its time limit and was killed."""

    def __init__(self, session_id: str, seconds: float) -> None:
        self.session_id = session_id
        self.seconds = seconds
        super().__init__(f"qwen --resume {session_id} did not finish within {seconds:g} s")


class QwenNotStarted(QwenCodeError):
    """Node.js or the Qwen Code script could not be started."""

    def __init__(self, executable: str, reason: str) -> None:
        super().__init__(f"{executable} could not be started: {reason}")


@dataclass(frozen=True, slots=True)
class QwenResumeResult:
    """What one resume run did: exit code, output, and the messages it sent, split in three.

    `resumed` means Qwen Code called the API with the probe; `context` is the history it rebuilt
    from the file as Chat Completions messages, `leading` what it put before it and `turn` the new
    turn (the probe last). `calls` counts the completions calls the run made.
    """

    session_id: str
    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    context: tuple[Any, ...]
    leading: tuple[Any, ...] = ()
    turn: tuple[Any, ...] = ()
    calls: int = 0


def qwen_environment(home: Path, base_url: str, model: str = RESUME_MODEL) -> dict[str, str]:
    """A clean environment pointing Qwen Code at `base_url`: nothing inherited but PATH."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_MODEL": model,
        **_OFFLINE_ENV,
    }


def _run(
    qwen: QwenCode, staged: StagedSession, base_url: str, probe: str, timeout: float
) -> tuple[int, str, str]:
    command = qwen.command("--resume", staged.session_id, "-p", probe, "--auth-type", "openai")
    try:
        env = qwen_environment(staged.home, base_url)
        return run_in_process_group(command, cwd=staged.work_dir, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise QwenResumeTimedOut(staged.session_id, timeout) from None
    except OSError as exc:
        raise QwenNotStarted(command[0], exc.strerror or type(exc).__name__) from exc


def _texts(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return [content]
    parts = content if isinstance(content, list) else ()
    return [part["text"] for part in parts if isinstance(part, Mapping) and isinstance(part.get("text"), str)]


def _carries_probe(message: Any, probe: str) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "user" and probe in _texts(message)


def _is_reminder(part: Any) -> bool:
    return isinstance(part, Mapping) and str(part.get("text", "")).startswith(REMINDER)


def _without_parts(message: Mapping[str, Any], keep: slice) -> dict[str, Any] | None:
    """`message` with only the content parts in `keep`; None when none is left."""
    parts = message["content"][keep]
    return {**message, "content": parts} if parts else None


def split_request(
    messages: Sequence[Any], probe: str
) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
    """(leading, context, turn) of one request's messages; the last message carries the probe."""
    leading: list[Any] = [messages[0]] if messages and isinstance(messages[0], Mapping) else []
    body = list(messages[len(leading) :])
    turn: list[Any] = []
    if body and isinstance(body[-1].get("content"), list):
        last = body.pop()
        parts = last["content"]
        start = max(
            i for i, part in enumerate(parts) if isinstance(part, Mapping) and part.get("text") == probe
        )
        while start > 0 and _is_reminder(parts[start - 1]):
            start -= 1
        turn.append(_without_parts(last, slice(start, None)))
        if (kept := _without_parts(last, slice(None, start))) is not None:
            body.append(kept)
    if body and body[0].get("role") == "user" and isinstance(body[0].get("content"), list):
        first = body.pop(0)
        made_up = next(
            (i for i, part in enumerate(first["content"]) if not _is_reminder(part)), len(first["content"])
        )
        leading.append(_without_parts(first, slice(None, made_up)))
        if (kept := _without_parts(first, slice(made_up, None))) is not None:
            body.insert(0, kept)
    return tuple(m for m in leading if m is not None), tuple(body), tuple(turn)


def resume_qwen_code(
    session: Path, *, qwen: QwenCode, timeout: float, probe: str = PROBE, keep: Path | None = None
) -> QwenResumeResult:
    """Resume a copy of `session` with Qwen Code against a fresh capture server.

    `keep` receives the staged copy as Qwen Code left it. Raises :class:`QwenResumeTimedOut`
    after `timeout` s and :class:`QwenSessionNotFound` for a file naming no session.
    """
    scratch = tempfile.TemporaryDirectory(prefix="qwen-resume-", ignore_cleanup_errors=True)
    with scratch, ChatCaptureServer() as api:
        staged = stage_session(session, Path(scratch.name))
        returncode, stdout, stderr = _run(qwen, staged, f"{api.base_url}/v1", probe, timeout)
        if keep is not None:
            keep.write_bytes(staged.transcript.read_bytes())
        sent = next((m for m in api.conversations if m and _carries_probe(m[-1], probe)), None)
        calls = len(api.conversations)
    leading, context, turn = split_request(sent, probe) if sent is not None else ((), (), ())
    return QwenResumeResult(
        staged.session_id, returncode, stdout, stderr, sent is not None, context, leading, turn, calls
    )
