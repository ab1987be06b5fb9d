"""CodeWhale's session documents, identified positively.

`$CODEWHALE_HOME/sessions/<uuid>.json` (default `~/.codewhale/sessions/`; the legacy
`$DEEPSEEK_HOME` or `~/.deepseek/sessions/` of DeepSeek-TUI). One JSON object: `metadata` with
the session's `id`, `title`, `created_at`, `model` and `workspace` (the fields `SessionMetadata`
requires), and `messages`, a list of `{role, content: [...]}`; a `journal` when present holds
`entries`. The shape alone is specific (no other agent's document carries that metadata); the
path is not needed, and a file elsewhere (a backup, an export) is still CodeWhale's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Final

from pipeline.formats.identity import Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["CODEWHALE", "is_codewhale_document"]

_METADATA_FIELDS: Final = ("id", "title", "created_at", "updated_at", "model")


def _is_message(item: object) -> bool:
    return isinstance(item, dict) and is_str(item.get("role")) and isinstance(item.get("content"), list)


def is_codewhale_document(document: object, path: PurePath | None) -> bool:
    """Whether a JSON document is a CodeWhale saved session (`SavedSession`)."""
    if not isinstance(document, dict):
        return False
    metadata = document.get("metadata")
    if not isinstance(metadata, dict) or not all(is_str(metadata.get(f)) for f in _METADATA_FIELDS):
        return False
    if "workspace" not in metadata or not isinstance(metadata.get("message_count"), int):
        return False
    messages = document.get("messages")
    journal = document.get("journal")
    if journal is not None and not (
        isinstance(journal, dict) and isinstance(journal.get("entries", []), list)
    ):
        return False
    return isinstance(messages, list) and all(_is_message(m) for m in messages[:8])


def _roots(environ: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """`$CODEWHALE_HOME/sessions` (or `~/.codewhale/sessions`), and the legacy DeepSeek-TUI one."""
    primary = Path(environ["CODEWHALE_HOME"]) if environ.get("CODEWHALE_HOME") else home / ".codewhale"
    legacy = Path(environ["DEEPSEEK_HOME"]) if environ.get("DEEPSEEK_HOME") else home / ".deepseek"
    return (primary / "sessions", legacy / "sessions")


CODEWHALE: Final = Signature(SourceFormat.CODEWHALE, document=is_codewhale_document, roots=_roots)
