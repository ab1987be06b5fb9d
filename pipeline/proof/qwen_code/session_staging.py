"""Stage a Qwen Code session in a throwaway home, where Qwen Code resumes it as its own.

Qwen Code finds a session as `~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl` and
resumes it only when it belongs to the project it runs in: its first record's `cwd`, or the
session's runtime-status sidecar `<sessionId>.runtime.json` naming the working directory. The
copy keeps every byte (Qwen Code appends to the file it resumes, so it is never linked); the
sidecar names the staged working directory, so the record's own `cwd` need not exist here.
Settings turn off what would reach the network. The user's own home is never read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from pipeline.proof.qwen_code.qwen_install import QWEN_CODE_VERSION, QwenCodeError

__all__ = ["QwenSessionNotFound", "StagedSession", "sanitized_cwd", "session_id_of", "stage_session"]

_SETTINGS: Final = {
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    # No background memory extraction after the resumed turn: one call is the whole proof.
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
}
_SESSION_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a name Qwen Code's file pattern accepts
_HEAD_LINES: Final = 64  # the first records name the session; a file without one there is not a session


class QwenSessionNotFound(QwenCodeError):
    """A file names no session Qwen Code could look up (no `sessionId` in its first records)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"{name}: no sessionId in its first records")


@dataclass(frozen=True, slots=True)
class StagedSession:
    """A session copied into a throwaway home, ready to resume."""

    session_id: str
    home: Path  # HOME
    work_dir: Path  # the project directory Qwen Code runs in
    transcript: Path  # the staged copy Qwen Code resumes (and appends to)


def sanitized_cwd(cwd: str) -> str:
    """The project folder name Qwen Code derives from a working directory."""
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def session_id_of(session: Path) -> str:
    """The `sessionId` of the first record that names one; raise :class:`QwenSessionNotFound`."""
    with session.open("rb") as lines:
        for _, line in zip(range(_HEAD_LINES), lines, strict=False):
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            found = record.get("sessionId") if isinstance(record, dict) else None
            if isinstance(found, str) and _SESSION_ID.match(found):
                return found
    raise QwenSessionNotFound(session.name)


def stage_session(session: Path, scratch: Path) -> StagedSession:
    """Copy `session` into `scratch` as Qwen Code's own, with the settings and the sidecar."""
    session_id = session_id_of(session)
    home = scratch / "home"
    work_dir = scratch / "project"
    work_dir.mkdir(parents=True)
    qwen = home / ".qwen"
    chats = qwen / "projects" / sanitized_cwd(str(work_dir)) / "chats"
    chats.mkdir(parents=True)
    (qwen / "settings.json").write_text(json.dumps(_SETTINGS))
    transcript = chats / f"{session_id}.jsonl"
    shutil.copyfile(session, transcript)
    sidecar = {
        "schema_version": 1,
        "pid": os.getpid(),
        "session_id": session_id,
        "work_dir": str(work_dir),
        "hostname": socket.gethostname(),
        "started_at": 0.0,
        "qwen_version": QWEN_CODE_VERSION,
    }
    (chats / f"{session_id}.runtime.json").write_text(json.dumps(sidecar))
    return StagedSession(session_id, home, work_dir, transcript)
