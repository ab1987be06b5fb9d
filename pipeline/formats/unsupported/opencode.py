"""OpenCode's JSON storage: one file per session, message and part.

Under `~/.local/share/opencode/storage/`: `session/<project>/ses_*.json` (`id` "ses_...",
`projectID`, `directory`, `title`, `time`), `message/<session>/msg_*.json` (`id` "msg_...",
`sessionID`, `role`), `part/<message>/prt_*.json` (`id` "prt_...", `messageID`, `type`), and a
session's `todo/ses_*.json` and `session_diff/ses_*.json` lists. The identifiers' prefixes are
OpenCode's own.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from pipeline.formats.identity import Signature, is_str, parent_names
from pipeline.vocabulary import SourceFormat

__all__ = ["OPENCODE"]

_SESSION_LISTS: Final = frozenset({"todo", "session_diff"})


def _prefixed(value: object, prefix: str) -> bool:
    return is_str(value) and str(value).startswith(prefix)


def _entity(document: dict[str, object]) -> bool:
    """A session, message or part, by its id and the ids it points to."""
    identifier = document.get("id")
    if _prefixed(identifier, "ses_"):
        return isinstance(document.get("time"), dict) or "projectID" in document
    if _prefixed(identifier, "msg_"):
        return _prefixed(document.get("sessionID"), "ses_") and "role" in document
    if _prefixed(identifier, "prt_"):
        return _prefixed(document.get("messageID"), "msg_") and "type" in document
    return False


def is_opencode_document(document: object, path: PurePath | None) -> bool:
    """Whether a whole-file JSON value is one of OpenCode's stored sessions, messages or parts."""
    if isinstance(document, dict):
        return _entity(document)
    named = path is not None and path.name.startswith("ses_") and parent_names(path, 1)[0] in _SESSION_LISTS
    return isinstance(document, list) and named


OPENCODE: Final = Signature(SourceFormat.OPENCODE, document=is_opencode_document)
