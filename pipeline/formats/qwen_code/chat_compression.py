"""A candidate in Qwen Code's own compression form: a `chat_compression` record, then the tail.

Qwen Code's `/compress` writes a `system` record of subtype `chat_compression` whose
`systemPayload.compressedHistory` replaces the whole history before it on resume; records after
it are appended as usual. The candidate starts with such a record (a new root, its history one
user content: the summary followed by Qwen Code's own resume instruction), then holds every line
of the original from the cut byte for byte, except that the first kept record's `parentUuid`
names the compression record.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any, Final

import orjson

from pipeline.formats.qwen_code.session_records import QwenRecord

__all__ = ["RESUME_INSTRUCTION", "compose_compression", "summary_message", "summary_text"]

RESUME_INSTRUCTION: Final = (
    "Resume the prior task using the summary above. Continue from the last in-flight step; do not "
    "acknowledge the summary, do not re-introduce, do not greet the user again."
)
"""What Qwen Code 0.24 appends to a compression's summary (its own words)."""
_NAMESPACE: Final = uuid.UUID("5b0e0b8e-6c1a-4f43-9a55-2f0d6c1f7a10")  # this tool's compaction uuids
_PARENT: Final = re.compile(rb'"parentUuid":("(?:[^"\\]|\\.)*"|null)')


def summary_text(summary: str) -> str:
    """The text of the user content a compression carries for `summary`."""
    return f"{summary}\n\n{RESUME_INSTRUCTION}"


def summary_message(summary: str) -> dict[str, Any]:
    """The Chat Completions message Qwen Code sends for that content."""
    return {"role": "user", "content": [{"type": "text", "text": summary_text(summary)}]}


def _record(kept: QwenRecord, record_id: str, summary: str, tokens: tuple[int, int]) -> bytes:
    info = {
        "originalTokenCount": tokens[0],
        "newTokenCount": tokens[1],
        "newTokenCountIsEstimated": True,
        "compressionStatus": 1,
        "triggerReason": "manual",
        "originalTokenCountIsEstimated": True,
    }
    record = {
        "uuid": record_id,
        "parentUuid": None,
        "sessionId": kept.session_id,
        "timestamp": kept.timestamp,
        "type": "system",
        "provenance": "system",
        "cwd": kept.cwd,
        "version": kept.version,
        "subtype": "chat_compression",
        "systemPayload": {
            "info": info,
            "compressedHistory": [{"role": "user", "parts": [{"text": summary_text(summary)}]}],
            "completedToolCallIds": [],
        },
    }
    return orjson.dumps({k: v for k, v in record.items() if v is not None or k == "parentUuid"})


def _reparented(line: bytes, parent: str) -> bytes:
    """`line` with its top-level `parentUuid` set to `parent`, every other byte kept when possible."""
    value = orjson.loads(line)
    found = _PARENT.search(line)
    if found is not None:
        edited = line[: found.start(1)] + orjson.dumps(parent) + line[found.end(1) :]
        again = orjson.loads(edited)
        if again == {**value, "parentUuid": parent}:
            return edited
    value["parentUuid"] = parent  # no top-level match to edit in place: written again whole
    return orjson.dumps(value)


def compose_compression(
    kept: QwenRecord, kept_line: bytes, rest: bytes, summary: str, tokens: tuple[int, int]
) -> bytes:
    """The candidate: the compression record, the first kept record reparented to it, then `rest`
    (the original's bytes after that line, as they are). `tokens`: the original's context and the
    candidate's, as Qwen Code's compression info records them."""
    digest = hashlib.sha256(summary.encode()).hexdigest()[:16]
    record_id = str(uuid.uuid5(_NAMESPACE, f"{kept.session_id}:{kept.uuid}:{digest}"))
    head = _record(kept, record_id, summary, tokens) + b"\n"
    return head + _reparented(kept_line, record_id) + b"\n" + rest
