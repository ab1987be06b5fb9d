"""Resume a staged copy of a Gemini CLI session in the real Gemini CLI; capture what it sent.

`resume_gemini` copies a session file into a fresh throwaway home's chats folder for the project
Gemini CLI runs in (where `--resume latest` looks), runs `gemini --resume latest -p PROBE`
against a fresh `GeminiApiServer`, and returns the `contents` of the stream call that carried the
probe, split as the verdict and the golden compare them: the context Gemini CLI rebuilt from the
file (`context`), without the environment part it puts first (made up for each run, recorded
nowhere) and the probe it puts last.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.proof.gemini_cli.api_capture import GeminiApiServer, GeminiRequest
from pipeline.proof.gemini_cli.gemini_run import GeminiCliError, make_home, run_gemini

__all__ = [
    "PROBE",
    "GeminiResumeFailed",
    "GeminiResumeResult",
    "GeminiResumeTimedOut",
    "resume_gemini",
    "split_sent",
    "staged_name",
]

PROBE: Final = "PROBE-PROMPT"
SESSION_PREFIX: Final = "session-"
ENVIRONMENT_TAG: Final = "<session_context>"  # how Gemini CLI's environment part begins


class GeminiResumeTimedOut(GeminiCliError):
    """A resume run exceeded its time limit and was killed."""

    def __init__(self, name: str, seconds: float) -> None:
        self.name = name
        self.seconds = seconds
        super().__init__(f"gemini --resume of {name} did not finish within {seconds:g} s")


class GeminiResumeFailed(GeminiCliError):
    """Gemini CLI exited non-zero resuming a file: the client failed, whatever the file holds."""

    def __init__(self, name: str, returncode: int) -> None:
        self.name = name
        self.returncode = returncode
        super().__init__(f"gemini --resume of {name} exited {returncode}")


@dataclass(frozen=True, slots=True)
class GeminiResumeResult:
    """What one resume run did: exit code, output, and the context it sent.

    `resumed`: Gemini CLI called the model with the probe; `context`: the `contents` it rebuilt
    from the file (the environment part and the probe removed); `model_calls`: every
    `generateContent`/`streamGenerateContent` call, each answered.
    """

    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    context: tuple[Any, ...]
    sent: tuple[Any, ...] = ()
    model_calls: int = 0


def _texts(content: Any) -> list[str]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [p["text"] for p in parts or () if isinstance(p, Mapping) and isinstance(p.get("text"), str)]


def _carries_probe(contents: Sequence[Any], probe: str) -> bool:
    return bool(contents) and any(probe in text for text in _texts(contents[-1]))


def _without_part(content: Mapping[str, Any], index: int) -> Mapping[str, Any] | None:
    parts = list(content.get("parts") or ())
    del parts[index]
    return {**content, "parts": parts} if parts else None


def split_sent(contents: Sequence[Any], probe: str = PROBE) -> tuple[Any, ...]:
    """The rebuilt history in a stream call's `contents`: its first part (the environment) and
    its last part (the probe) removed, and a content left empty by that dropped."""
    items = list(contents)
    if items and any(t.startswith(ENVIRONMENT_TAG) for t in _texts(items[0])[:1]):
        first = _without_part(items[0], 0)
        items[0:1] = [first] if first is not None else []
    if items and _texts(items[-1]) and probe in _texts(items[-1])[-1]:
        last = _without_part(items[-1], len(items[-1]["parts"]) - 1)
        items[-1:] = [last] if last is not None else []
    return tuple(items)


def staged_name(name: str) -> str:
    """The name a staged copy gets: Gemini CLI lists only `session-*.json[l]` files."""
    return name if name.startswith(SESSION_PREFIX) else f"{SESSION_PREFIX}{name}"


def _probe_call(requests: Sequence[GeminiRequest], probe: str) -> tuple[Any, ...] | None:
    carrying = [
        r.contents
        for r in requests
        if r.model_method == "streamGenerateContent" and r.contents and _carries_probe(r.contents, probe)
    ]
    return carrying[-1] if carrying else None


def resume_gemini(
    session: Path, *, script: Path, timeout: float, probe: str = PROBE, keep: Path | None = None
) -> GeminiResumeResult:
    """Resume a copy of `session` with Gemini CLI against a fresh capture server.

    `keep` receives the staged copy as Gemini CLI left it. Raises `GeminiResumeTimedOut` after
    `timeout` s and `GeminiCliError` when node does not start.
    """
    scratch = tempfile.TemporaryDirectory(prefix="gemini-resume-", ignore_cleanup_errors=True)
    with scratch, GeminiApiServer() as api:
        staged = make_home(Path(scratch.name))
        copy = staged.chats / staged_name(session.name)
        shutil.copyfile(session, copy)
        try:
            run = run_gemini(
                script, staged, ["--resume", "latest", "-p", probe], base_url=api.base_url, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise GeminiResumeTimedOut(session.name, timeout) from None
        if keep is not None:
            keep.write_bytes(copy.read_bytes())
        sent = _probe_call(api.requests, probe)
        calls = sum(1 for r in api.requests if r.model_method in {"generateContent", "streamGenerateContent"})
    return GeminiResumeResult(
        returncode=run.returncode,
        stdout=run.stdout,
        stderr=run.stderr,
        resumed=sent is not None,
        context=split_sent(sent) if sent is not None else (),
        sent=sent or (),
        model_calls=calls,
    )
