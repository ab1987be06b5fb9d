"""The seed estimate of a line taken from the line's own bytes, where that is provably exact.

The seed (`pipeline.estimate.seed`) estimates a record from the compact JSON of its API payload
(the message minus identity members), of an attachment object, or of a system record's fields.
Claude Code writes compact JSON in a fixed key order, so that payload can be measured on the
line as written, without re-serializing it: the identity members' characters are subtracted and
the raw members of other kinds counted in place. `raw_estimate` returns None where only the slow,
re-serializing path is exact.
"""

from __future__ import annotations

from typing import Any, Final

import orjson
from msgspec import UNSET

from pipeline.estimate import seed
from pipeline.formats.claude_code.schema import TypedHead
from pipeline.vocabulary import RecordType

__all__ = ["member_bytes", "raw_estimate"]

_IDENTITY_KEYS: Final = ("uuid", "parentUuid", "sessionId", "timestamp", "cwd", "version")
_SYSTEM_RAW_KEYS: Final = ("content", "error", "compactMetadata")
_PYTHON_EXPONENT_BELOW: Final = 1e-4  # Python writes smaller floats as 5e-05, JavaScript as 0.00005


def member_bytes(key: str, value: Any) -> bytes:
    """Compact JSON of one object member `"key":value`."""
    return b'"' + key.encode() + b'":' + orjson.dumps(value)


# `"key":` plus the comma each identity member takes with it, by key.
_IDENTITY_OVERHEAD: Final = {key: len(key) + 4 for key in _IDENTITY_KEYS}
_ALL_IDENTITY_OVERHEAD: Final = sum(_IDENTITY_OVERHEAD.values())


def _identity_members(head: TypedHead) -> tuple[int, tuple[bytes, ...]]:
    """The identity members the seed leaves out of an API payload.

    Returns the ASCII characters they take (with their commas) and, for the rare value holding
    non-ASCII text, the member itself so its characters can be subtracted one by one.
    """
    values_in_order = (head.uuid, head.parentUuid, head.sessionId, head.timestamp, head.cwd, head.version)
    if UNSET not in values_in_order:  # the usual record: all six present, one dump, no key loop
        dumped = orjson.dumps(values_in_order)
        if dumped.isascii():
            return len(dumped) - 2 - (len(_IDENTITY_KEYS) - 1) + _ALL_IDENTITY_OVERHEAD, ()
    present = [(key, value) for key in _IDENTITY_KEYS if (value := getattr(head, key)) is not UNSET]
    values = orjson.dumps([value for _, value in present])  # one call: "[v1,v2,...]"
    if values.isascii():
        # Each value's JSON plus its key and comma; the array's brackets and separators are not.
        ascii_size = (
            len(values) - 2 - max(len(present) - 1, 0) + sum(_IDENTITY_OVERHEAD[k] for k, _ in present)
        )
        return ascii_size, ()
    others = tuple(member_bytes(key, value) for key, value in present)
    return len(present), others


def raw_estimate(head: TypedHead, canonical: bytes, is_api: bool) -> int | None:
    """Seed estimate from the line's bytes, or None when only re-serializing is exact.

    The caller has ruled out writers that escape printable characters; the one JavaScript
    spelling Python writes differently that Claude Code records carry is a tiny `costUSD`.
    """
    kind = head.type
    if kind not in ("user", "assistant", "attachment", "system"):
        return 0
    cost = head.costUSD
    if cost is not None and 0 < abs(cost) < _PYTHON_EXPONENT_BELOW:
        return None
    if is_api:
        ascii_size, members = _identity_members(head)
        # Without non-ASCII values the first figure is every removed character, commas included;
        # otherwise it is the member count (their commas) and the members are removed as bytes.
        return seed.estimate_json_parts((canonical,), removed=members, structural_ascii=-ascii_size)
    if kind == RecordType.ATTACHMENT:
        raw = bytes(head.attachment)
        return seed.estimate_json_parts((raw,)) if raw.startswith(b"{") else 0
    if kind != RecordType.SYSTEM:
        return 0
    parts = (
        [member_bytes("subtype", head.subtype)]
        if head.subtype is not None or b'"subtype":null' in canonical
        else []
    )
    for key in _SYSTEM_RAW_KEYS:
        raw = bytes(getattr(head, key))
        if raw:
            parts.append(b'"' + key.encode() + b'":' + raw)
    return seed.estimate_json_parts(tuple(parts), structural_ascii=2 + max(len(parts) - 1, 0))
