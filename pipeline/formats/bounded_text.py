"""A text bounded to its head and tail around one marker line that says how much was left out and
its digest: how every agent's tool output is kept as summary evidence, and how a declared bound
rewrites Claude Code's outputs (`formats/claude_code/bounded_output.py`)."""

from __future__ import annotations

import hashlib

__all__ = ["bound_text", "marker"]


def marker(size: int, digest: str) -> str:
    """The line that stands for the middle of a bounded output."""
    return f"\n[session-compaction: {size} bytes of tool output, sha256 {digest}; the middle is left out]\n"


def _cut_bytes(encoded: bytes, keep: int, *, from_end: bool) -> str:
    """At most `keep` bytes from one end, on a character boundary."""
    piece = encoded[len(encoded) - keep :] if from_end else encoded[:keep]
    return piece.decode("utf-8", "ignore")  # a split character at the cut is dropped, never mangled


def bound_text(text: str, limit: int) -> str:
    """`text` when it fits `limit` bytes, else its head and tail around the marker, within the limit."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return text
    middle = marker(len(encoded), hashlib.sha256(encoded).hexdigest())
    room = max(0, limit - len(middle.encode()))
    head = room - room // 2
    return (
        _cut_bytes(encoded, head, from_end=False) + middle + _cut_bytes(encoded, room - head, from_end=True)
    )
