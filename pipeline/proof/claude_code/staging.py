"""Stage a transcript as a session in a throwaway Claude Code home.

Claude Code looks a session up as `<CLAUDE_CONFIG_DIR>/projects/<slug of cwd>/<session-id>.jsonl`
and appends to the file it resumes, so the transcript is copied (never linked) into a scratch
folder with its own `HOME`, configuration folder and working directory. The user's own
configuration is never read or written.
"""

from __future__ import annotations

import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from pipeline.formats.claude_code.content import iter_line_contents
from pipeline.read.load import iter_file_lines

__all__ = ["StagedSession", "project_slug", "stage_session", "transcript_session_id"]


@dataclass(frozen=True, slots=True)
class StagedSession:
    """A transcript copied into a throwaway Claude Code home, ready to resume."""

    session_id: str
    home: Path
    config_dir: Path
    project_dir: Path
    transcript: Path


def project_slug(directory: Path) -> str:
    """Claude Code's project folder name for a working directory (`/a/b_c` gives `-a-b-c`)."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(directory))


def _is_uuid(value: object) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def transcript_session_id(path: Path) -> str | None:
    """The first `sessionId` in the file that is a UUID (what `--resume` accepts), if any."""
    return next(
        (row.session_id for row in iter_line_contents(iter_file_lines(path)) if _is_uuid(row.session_id)),
        None,
    )


def stage_session(transcript: Path, scratch: Path, *, session_id: str | None = None) -> StagedSession:
    """Copy `transcript` to `<scratch>/home/.claude/projects/<slug>/<session-id>.jsonl`.

    The session id is `session_id`, else the file's own, else a fresh UUID.
    """
    sid = session_id or transcript_session_id(transcript) or str(uuid.uuid4())
    home = scratch / "home"
    config_dir = home / ".claude"
    project_dir = scratch / "project"
    project_dir.mkdir(parents=True, exist_ok=True)
    sessions = config_dir / "projects" / project_slug(project_dir)
    sessions.mkdir(parents=True, exist_ok=True)
    staged = sessions / f"{sid}.jsonl"
    shutil.copyfile(transcript, staged)
    return StagedSession(sid, home, config_dir, project_dir, staged)
