"""The compact record of a context Codex sent: per item its type, role and canonical digest.

The Codex goldens (`tests/fixtures/codex_resume.jsonl`, written by scripts/record-codex-goldens)
keep one JSON object per corpus rollout: `{"file", "resumable", "items": [{"type", "role",
"sha256"}]}`. A digest, not the text: the corpus's texts stay in the corpus, and two contexts are
equal item for item exactly when their digests are. The digest is sha256 over the item's
canonical JSON (`orjson`, keys sorted), so a reader that rebuilds the context from the file can
compare its own items without running Codex.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

__all__ = ["golden_entry", "item_digest", "item_shape"]


def item_digest(item: Any) -> str:
    """sha256 (hex) of the item's canonical JSON: `orjson.dumps(item, option=OPT_SORT_KEYS)`."""
    return hashlib.sha256(orjson.dumps(item, option=orjson.OPT_SORT_KEYS)).hexdigest()


def item_shape(item: Any) -> dict[str, Any]:
    """One golden item: `{"type", "role", "sha256"}` (`role` None for items without one)."""
    fields = item if isinstance(item, Mapping) else {}
    return {"type": fields.get("type"), "role": fields.get("role"), "sha256": item_digest(item)}


def golden_entry(file: str, resumable: bool, items: Sequence[Any]) -> dict[str, Any]:
    """One golden line: the file (relative to the corpus folder), whether Codex resumed it, its items."""
    return {"file": file, "resumable": resumable, "items": [item_shape(item) for item in items]}
