"""Run the Codex CLI offline: resume a staged copy of a rollout, capture the context it sends.

`resume` stages a copy of a rollout in a throwaway `CODEX_HOME` (`codex_staging.py`), runs
`codex exec --skip-git-repo-check resume <thread-id> <probe>` in a clean environment against a
fresh :class:`~pipeline.proof.codex.responses_capture.ResponsesCaptureServer`, and returns the `input`
of the Responses call that carried the probe, split in three: what Codex puts before the history
(its base instructions as a developer message, recorded nowhere), the history it rebuilt from
the file (`context`, what the verdict and the goldens compare), and the new turn's items (the
settings it re-sends, the environment, the probe), which Codex appends to the rollout before
calling: that is how they are told apart. Nothing of the user's environment is passed on but
`PATH`.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from pipeline.installed import (
    CODEX_VERSION,
    CodexError,
    CodexNotInstalled,
    CodexNotStarted,
    find_codex,
    require_codex,
)
from pipeline.proof.codex.codex_staging import StagedThread, stage_thread
from pipeline.proof.codex.responses_capture import ResponsesCaptureServer
from pipeline.proof.process_group import run_in_process_group

__all__ = [
    "CODEX_VERSION",
    "PROBE",
    "CodexError",
    "CodexNotInstalled",
    "CodexResumeResult",
    "CodexResumeTimedOut",
    "find_codex",
    "require_codex",
    "resume_codex",
]

PROBE: Final = "PROBE-PROMPT"  # the prompt sent after resuming (the golden run's)
# Any model works against the loopback server; a fixed one keeps the goldens stable, and this one
# has the largest window in 0.171's catalogue (872k tokens), so Codex compacts no history first.
RESUME_MODEL: Final = "gpt-6-sol"
_MAX_LEADING_ITEMS: Final = 4  # Codex puts one item (its base instructions) before the history
_OFFLINE_ENV: Final = {"NO_COLOR": "1", "TZ": "UTC", "NO_PROXY": "127.0.0.1,localhost", "RUST_LOG": "error"}


class CodexResumeTimedOut(CodexError):
    """A resume run exceeded its time limit and was killed."""

    def __init__(self, thread_id: str, seconds: float) -> None:
        self.thread_id = thread_id
        self.seconds = seconds
        super().__init__(f"codex exec resume {thread_id} did not finish within {seconds:g} s")


@dataclass(frozen=True, slots=True)
class CodexResumeResult:
    """What one `codex exec resume` run did: exit code, output, and the context it sent.

    `resumed` means Codex called the API with the probe; `context` is the history it rebuilt from
    the file, `leading` what it put before it and `turn` the new turn's items (the probe last).
    """

    thread_id: str
    returncode: int
    stdout: str
    stderr: str
    resumed: bool
    context: tuple[Any, ...]
    leading: tuple[Any, ...] = ()
    turn: tuple[Any, ...] = ()
    response_requests: int = 0


def _environment(staged: StagedThread) -> dict[str, str]:
    """A clean environment: nothing inherited but PATH, so no user setting or key leaks in."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(staged.home),
        "CODEX_HOME": str(staged.codex_home),
        "TMPDIR": str(staged.home),
        **_OFFLINE_ENV,
    }


def _run(command: list[str], staged: StagedThread, timeout: float) -> tuple[int, str, str]:
    """Run in a new process group so a timeout ends Codex and anything it started; the ways it
    can fail to run become Codex's own errors here (a report never names a builtin's)."""
    try:
        return run_in_process_group(command, cwd=staged.work_dir, env=_environment(staged), timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CodexResumeTimedOut(staged.thread_id, timeout) from None
    except OSError as exc:
        raise CodexNotStarted(command[0], exc.strerror or type(exc).__name__) from exc


def _texts(item: Any) -> Iterator[str]:
    content = item.get("content") if isinstance(item, Mapping) else None
    for part in content if isinstance(content, list) else ():
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            yield part["text"]


def _carries_probe(item: Any, probe: str) -> bool:
    return isinstance(item, Mapping) and item.get("role") == "user" and probe in "".join(_texts(item))


def _appended_turn(rollout: Path, staged_bytes: int, probe: str) -> int:
    """How many response items Codex appended to the rollout up to the probe (the new turn's)."""
    count = 0
    with rollout.open("rb") as lines:
        lines.seek(staged_bytes)
        for line in lines:
            with contextlib.suppress(orjson.JSONDecodeError):
                record = orjson.loads(line)
                if isinstance(record, dict) and record.get("type") == "response_item":
                    count += 1
                    if _carries_probe(record.get("payload"), probe):
                        return count
    return 0


def _recorded(rollout: Path, ids: Sequence[str]) -> set[str]:
    """Which of `ids` occur in the file (a scan of its bytes, so a large file is never loaded)."""
    if not ids or rollout.stat().st_size == 0:
        return set()
    with rollout.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return {found for found in ids if data.find(found.encode()) >= 0}


def _leading(items: Sequence[Any], rollout: Path) -> int:
    """How many first items Codex made up for this request: they carry an id the file lacks."""
    head = list(items[:_MAX_LEADING_ITEMS])
    ids = [item["id"] for item in head if isinstance(item, Mapping) and isinstance(item.get("id"), str)]
    recorded = _recorded(rollout, ids)
    count = 0
    for item in head:
        made_up = isinstance(item, Mapping) and isinstance(item.get("id"), str) and item["id"] not in recorded
        if not made_up:
            break
        count += 1
    return count


def _probe_input(inputs: Sequence[tuple[Any, ...]], probe: str) -> tuple[Any, ...] | None:
    """The last Responses `input` whose last user item carries the probe."""
    carrying = [items for items in inputs if any(_carries_probe(item, probe) for item in items[-8:])]
    return carrying[-1] if carrying else None


def resume_codex(
    rollout: Path, *, executable: Path, timeout: float, probe: str = PROBE, keep: Path | None = None
) -> CodexResumeResult:
    """Resume a copy of `rollout` with Codex against a fresh capture server.

    `keep` receives the staged copy as Codex left it. Raises :class:`CodexResumeTimedOut` after
    `timeout` s, :class:`CodexThreadNotFound` for a file Codex could not look up (no thread id) and
    :class:`CodexNotStarted` when the executable does not run.
    """
    scratch = tempfile.TemporaryDirectory(prefix="codex-resume-", ignore_cleanup_errors=True)
    with scratch, ResponsesCaptureServer() as api:
        staged = stage_thread(rollout, Path(scratch.name), base_url=f"{api.base_url}/v1", model=RESUME_MODEL)
        staged_bytes = staged.rollout.stat().st_size
        # Absolute: Codex runs in the staged work directory, where a relative path means nothing.
        program = str(executable.absolute())
        command = [program, "exec", "--skip-git-repo-check", "resume", staged.thread_id, probe]
        returncode, stdout, stderr = _run(command, staged, timeout)
        items = _probe_input(api.inputs, probe)
        turn = _appended_turn(staged.rollout, staged_bytes, probe) if items is not None else 0
        lead = _leading(items, staged.rollout) if items is not None else 0
        if keep is not None:
            keep.write_bytes(staged.rollout.read_bytes())
        calls = len(api.inputs)
    sent = items or ()
    end = len(sent) - turn if turn else len(sent)
    return CodexResumeResult(
        thread_id=staged.thread_id,
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        resumed=items is not None,
        context=tuple(sent[lead:end]),
        leading=tuple(sent[:lead]),
        turn=tuple(sent[end:]),
        response_requests=calls,
    )
