"""The whole-file chat documents Gemini CLI saves and its fork Qwen Code saves alike: a legacy
one-document chat (`sessionId` or `projectHash` beside `messages`) and a `/chat save` checkpoint
(the Gemini API history). Which agent's a file is depends on the home it lies under, so each
agent's signature asks `under_home` too.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from pipeline.formats.identity import is_str

__all__ = ["is_api_history", "is_chat_document", "under_home"]

_CHECKPOINT_PREFIX: Final = "checkpoint-"


def _is_content(item: object) -> bool:
    """One Gemini API history entry: `{role, parts: [...]}`."""
    return isinstance(item, dict) and isinstance(item.get("parts"), list) and is_str(item.get("role"))


def is_api_history(document: object, path: PurePath | None) -> bool:
    """A `/chat save` checkpoint's shape: `{"history": [Content]}`, or the bare list (old versions);
    an empty history counts only under a checkpoint's own name."""
    history = document.get("history") if isinstance(document, dict) else document
    if not isinstance(history, list) or not all(_is_content(item) for item in history):
        return False
    named = path is not None and path.name.startswith(_CHECKPOINT_PREFIX)
    return bool(history) or named


def under_home(path: PurePath | None, home: str) -> bool:
    """Whether a file lies under an agent's home directory (`.gemini`, `.qwen`, ...)."""
    return path is not None and any(parent.name == home for parent in path.parents)


def is_chat_document(document: object, path: PurePath | None) -> bool:
    """A legacy one-document chat or a checkpoint, whoever of Gemini CLI and its fork wrote it."""
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return "sessionId" in document or "projectHash" in document
    return is_api_history(document, path)
