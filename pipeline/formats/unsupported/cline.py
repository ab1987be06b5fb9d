"""Cline (and the forks that keep its task files): one directory per task.

VS Code's `globalStorage/saoudrizwan.claude-dev/tasks/<task-id>/` holds
`api_conversation_history.json` (the Anthropic messages sent: `[{role, content, ...}]`, a shape
any tool may write, so the name is part of the identification), `ui_messages.json` (what the panel
showed: `[{ts, type: "say"|"ask", say|ask, text, ...}]`, Cline's own), `task_metadata.json`
(`files_in_context`, `model_usage`) and `context_history.json`.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from pipeline.formats.identity import Signature, is_str, parent_names
from pipeline.vocabulary import SourceFormat

__all__ = ["CLINE"]

_API_HISTORY: Final = "api_conversation_history.json"
_CONTEXT_HISTORY: Final = "context_history.json"
_ROLES: Final = frozenset({"user", "assistant"})
_SAYS: Final = frozenset({"say", "ask"})


def _api_message(item: object) -> bool:
    return isinstance(item, dict) and item.get("role") in _ROLES and "content" in item


def _ui_message(item: object) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("ts"), int):
        return False
    kind = item.get("type")
    return kind in _SAYS and is_str(item.get(str(kind)))


def _named(path: PurePath | None, name: str) -> bool:
    return path is not None and path.name == name and parent_names(path, 2)[1] == "tasks"


def is_cline_document(document: object, path: PurePath | None) -> bool:
    """Whether a whole-file JSON value is one of a Cline task's files."""
    if isinstance(document, dict):
        return "files_in_context" in document or "model_usage" in document
    if not isinstance(document, list):
        return False
    if document and all(_ui_message(item) for item in document):
        return True
    api = path is not None and path.name == _API_HISTORY and all(_api_message(item) for item in document)
    return api or _named(path, _CONTEXT_HISTORY)


CLINE: Final = Signature(SourceFormat.CLINE, document=is_cline_document)
