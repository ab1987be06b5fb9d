"""Minimal records with exact links, for tests that need a precise shape rather than a realistic one.

The transcript builder writes records the way Claude Code writes them; these write just the
members a test is about (`uuid`, `parentUuid`, `sessionId`, a message), so a test can state a
broken or unusual topology in a line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import orjson

__all__ = ["SESSION_A", "SESSION_B", "jsonl", "pointer", "rec"]

SESSION_A: Final = "11111111-1111-4111-8111-111111111111"
SESSION_B: Final = "22222222-2222-4222-8222-222222222222"
_NO_LEAF: Final = "MISSING"


def rec(
    kind: str, uuid: str | None, parent: Any = None, *, session: str = SESSION_A, **extra: Any
) -> dict[str, Any]:
    """A record of `kind` with explicit links; a user or assistant record gets a small message.

    `text=` sets a user message's content, `mid=` an assistant message's id and `content=` its
    blocks; other keywords are added as members.
    """
    record: dict[str, Any] = {"type": kind}
    if uuid is not None:
        record["uuid"] = uuid
    record["parentUuid"] = parent
    record["sessionId"] = session
    if kind == "user":
        record["message"] = {"role": "user", "content": extra.pop("text", f"prompt {uuid}")}
    elif kind == "assistant":
        record["message"] = {
            "role": "assistant",
            "id": extra.pop("mid", f"msg-{uuid}"),
            "content": extra.pop("content", [{"type": "text", "text": f"answer {uuid}"}]),
        }
    record.update(extra)
    return record


def pointer(leaf: Any = _NO_LEAF, *, session: str = SESSION_A, **extra: Any) -> dict[str, Any]:
    """A `last-prompt` pointer; without `leaf` it carries no `leafUuid` member at all."""
    record: dict[str, Any] = {"type": "last-prompt", "lastPrompt": "prompt", "sessionId": session, **extra}
    if leaf != _NO_LEAF:
        record["leafUuid"] = leaf
    return record


def jsonl(records: Iterable[dict[str, Any]]) -> bytes:
    """Records as JSONL bytes, one compact line each."""
    return b"".join(orjson.dumps(record) + b"\n" for record in records)
