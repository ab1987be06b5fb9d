"""Gemini CLI: chat JSONL, the legacy one-document chats, `/chat save` checkpoints.

`~/.gemini/tmp/<project>/chats/session-*.jsonl` (since April 2026; a subagent's under
`chats/<parent-session>/`): a metadata line (`sessionId`, `projectHash`, `startTime`, ...), then
message records (`id`, `timestamp`, `type` user|gemini|info|error|warning, `content`), re-appended
by id when updated, and `{"$set": ...}` / `{"$rewindTo": id}` lines. Before that, `session-*.json`
held one document with `sessionId`, `projectHash` and `messages`. `checkpoint-<tag>.json` holds the
API history (`{"history": [{role, parts}]}`, or the bare list in old versions). `logs.json`
(the prompts typed, for the up-arrow history) is no session, and Qwen Code writes it too: it
stays nobody's transcript.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Final

from pipeline.formats.chat_documents import is_chat_document, under_home
from pipeline.formats.identity import Record, Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["GEMINI_CLI", "GEMINI_HOME_ENV", "is_subagent_path", "session_roots"]

_MESSAGE_TYPES: Final = frozenset({"user", "gemini", "info", "error", "warning"})
_CHATS: Final = "chats"
_FORK_HOME: Final = ".qwen"  # Qwen Code, a fork, saves the same documents under its own home


def is_gemini_record(record: Record) -> bool:
    """Whether one JSON line is a Gemini CLI chat record (metadata, message or update)."""
    if is_str(record.get("sessionId")) and is_str(record.get("projectHash")):
        return True
    if isinstance(record.get("$set"), dict) or is_str(record.get("$rewindTo")):
        return True
    return (
        record.get("type") in _MESSAGE_TYPES
        and is_str(record.get("id"))
        and "timestamp" in record
        and "content" in record
    )


def is_subagent_path(path: PurePath | None) -> bool:
    """Whether a session file lies in `chats/<parent-session>/`, where subagents' sessions are."""
    return path is not None and len(path.parents) > 1 and path.parent.parent.name == _CHATS


def is_gemini_document(document: object, path: PurePath | None) -> bool:
    """Whether a whole-file JSON value is a Gemini CLI chat or checkpoint.

    Qwen Code, a fork, writes the same documents under `~/.qwen`: those are its own.
    """
    return is_chat_document(document, path) and not under_home(path, _FORK_HOME)


GEMINI_HOME_ENV: Final = "GEMINI_CLI_HOME"  # Gemini CLI's relocation of the home its `.gemini` is in
SANDBOX_RUNTIME: Final = Path(".cache") / ".gemini"  # its runtime folder inside macOS's seatbelt sandbox


def session_roots(environ: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """`$GEMINI_CLI_HOME/.gemini/tmp` when set, else `~/.gemini/tmp`: every project's chats, in a
    folder named by the slug `.gemini/projects.json` gives the project or, before Gemini CLI
    migrated it, by its path's hash. Gemini CLI run in its seatbelt sandbox (`SANDBOX=sandbox-exec`)
    keeps them in `.cache/.gemini/tmp` of that home instead: that one too, where it exists."""
    base = Path(environ[GEMINI_HOME_ENV]) if environ.get(GEMINI_HOME_ENV) else home
    sandboxed = base / SANDBOX_RUNTIME / "tmp"
    return (base / ".gemini" / "tmp", *((sandboxed,) if sandboxed.is_dir() else ()))


GEMINI_CLI: Final = Signature(
    SourceFormat.GEMINI_CLI, record=is_gemini_record, document=is_gemini_document, roots=session_roots
)
