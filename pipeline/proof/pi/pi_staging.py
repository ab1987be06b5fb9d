"""Stage a copy of a pi session where pi will resume it, leaving the original untouched.

pi appends the new turn to the file it resumes (and migrates an old layout in place), so it only
ever sees a copy. It refuses a session whose header `cwd` does not exist, so the copy's header
(its first line) names the staged work directory instead; every other line is copied byte for
byte, so what pi rebuilds is what the original holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

__all__ = ["StagedSession", "stage_session"]

_SESSION_NAME: Final = "staged.jsonl"


@dataclass(frozen=True, slots=True)
class StagedSession:
    """Where the copy lives: the agent directory pi is pointed at, its work directory, the file."""

    agent_dir: Path
    work_dir: Path
    session: Path


def _restaged_header(first_line: bytes, work_dir: Path) -> bytes | None:
    """The header line with `cwd` replaced, or None when the first line is not a header."""
    try:
        header = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    header["cwd"] = str(work_dir)
    return orjson.dumps(header)


def stage_session(source: Path, scratch: Path) -> StagedSession:
    """Copy `source` under `scratch` with its header's `cwd` pointing at an existing work directory."""
    agent_dir, work_dir = scratch / "agent", scratch / "work"
    sessions = agent_dir / "sessions" / "staged"
    for folder in (work_dir, sessions):
        folder.mkdir(parents=True, exist_ok=True)
    data = source.read_bytes()
    first, newline, rest = data.partition(b"\n")
    header = _restaged_header(first.rstrip(b"\r"), work_dir)
    staged = sessions / _SESSION_NAME
    staged.write_bytes(data if header is None else header + newline + rest)
    return StagedSession(agent_dir=agent_dir, work_dir=work_dir, session=staged)
