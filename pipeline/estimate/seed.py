"""The seed heuristic token estimator, reproduced exactly (seed 004, "Token Ceilings").

ASCII counts 1/4 token a character; Han/Kana/Hangul 1.3; non-BMP, symbol and combining-mark
code points 1.5; any other non-ASCII 0.8; every estimated record adds 12. A record's payload is
the compact JSON of the whole API message minus identity fields, of an attachment's
`attachment` object, or of a system record's subtype/content/error/compactMetadata.

The reference loops over every character in Python. Here the counts are order-independent, so
ASCII is counted from bytes in C and only the distinct non-ASCII characters are classified,
which keeps the estimator off the sweep's critical path.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

import orjson

from pipeline.vocabulary import RecordType

__all__ = [
    "RECORD_ALLOWANCE",
    "char_weight_tenths",
    "estimate_json_parts",
    "estimate_record",
    "estimate_text",
    "estimate_utf8",
    "payload_for_estimate",
    "raw_inventory_is_exact",
]

RECORD_ALLOWANCE: Final = 12
"""Tokens the seed adds for every estimated record (role and framing)."""

_IDENTITY_FIELDS: Final = frozenset({"uuid", "parentUuid", "sessionId", "timestamp", "cwd", "version"})
_SYSTEM_FIELDS: Final = ("subtype", "content", "error", "compactMetadata")
_ASCII_BYTES: Final = bytes(range(0x80))
# orjson writes exponent floats as `1e-7`, Python's json as `1e-07`: the seed serialized with
# Python, so a payload whose bytes may hold an exponent float is re-serialized the slow way.
# Python writes floats below 1e-4 in exponent form (`5e-05`, `1.5e-07`), orjson as `0.00005` and
# `1.5e-7`; both shapes are cheap literal scans, and a false hit only costs the slow path.
_SMALL_FLOAT_PLAIN: Final = b"0.0000"
_SMALL_FLOAT_EXPONENT: Final = re.compile(rb"e-[1-9][,}\]]")
# Beyond this many non-ASCII characters in one payload, float accumulation in the reference could
# drift by more than the 0.001 rounding guard; mimic its arithmetic exactly there.
_EXACT_ARITHMETIC_LIMIT: Final = 1_000_000


@lru_cache(maxsize=65536)
def _weight_tenths(char: str) -> int:
    """Weight of one non-ASCII character, in tenths of a token."""
    cp = ord(char)
    if (
        0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x323AF
        or 0x3040 <= cp <= 0x30FF
        or 0x31F0 <= cp <= 0x31FF
        or 0xAC00 <= cp <= 0xD7AF
        or 0x1100 <= cp <= 0x11FF
    ):
        return 13
    if cp > 0xFFFF or unicodedata.category(char)[0] in "SM":
        return 15
    return 8


def char_weight_tenths(char: str) -> int:
    """Weight of one non-ASCII character in tenths of a token (the compiled scanner asks once each)."""
    return _weight_tenths(char)


def _reference_arithmetic(text: str) -> int:
    """The reference's own float loop, used only where its rounding could differ."""
    weighted = 0.0
    ascii_chars = 0
    for char in text:
        if ord(char) < 0x80:
            ascii_chars += 1
        else:
            weighted += _weight_tenths(char) / 10
    return max(1, int(weighted + ascii_chars / 4 + 0.999))


def _tokens(ascii_chars: int, non_ascii: Counter[str]) -> int:
    """Seed tokens for a character inventory: ASCII count plus non-ASCII character counts."""
    tenths = sum(_weight_tenths(char) * count for char, count in non_ascii.items())
    # int(w + a/4 + 0.999) on exact values is ceil((2w' + 5a) / 20) with w' in tenths.
    return max(1, -(-(2 * tenths + 5 * ascii_chars) // 20))


def _estimate_counts(ascii_chars: int, non_ascii: str) -> int:
    if len(non_ascii) > _EXACT_ARITHMETIC_LIMIT:
        return _reference_arithmetic(non_ascii + "a" * ascii_chars)
    return _tokens(ascii_chars, Counter(non_ascii))


def estimate_text(text: str) -> int:
    """Estimate tokens of one string exactly as the seed does (0 for the empty string)."""
    if not text:
        return 0
    if text.isascii():
        return max(1, -(-len(text) // 4))
    non_ascii = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    decoded = non_ascii.decode("utf-8", "surrogatepass")
    return _estimate_counts(len(text) - len(decoded), decoded)


def estimate_utf8(encoded: bytes) -> int:
    """Estimate tokens of UTF-8 text without decoding its ASCII part."""
    if not encoded:
        return 0
    if encoded.isascii():
        return max(1, -(-len(encoded) // 4))
    non_ascii = encoded.translate(None, _ASCII_BYTES)
    return _estimate_counts(len(encoded) - len(non_ascii), non_ascii.decode("utf-8"))


def payload_for_estimate(record: Mapping[str, Any]) -> Any:
    """The part of a record the seed estimates, or None when the record is not estimated."""
    record_type = record.get("type")
    if record_type in ("user", "assistant") and isinstance(record.get("message"), dict):
        return {key: value for key, value in record.items() if key not in _IDENTITY_FIELDS}
    if record_type == RecordType.ATTACHMENT and isinstance(record.get("attachment"), dict):
        return record["attachment"]
    if record_type == RecordType.SYSTEM:
        return {key: record[key] for key in _SYSTEM_FIELDS if key in record}
    return None


def _serialize(payload: Any) -> bytes:
    """Compact JSON with the seed's character inventory (key order does not change counts)."""
    try:
        encoded = orjson.dumps(payload)
    except TypeError:  # 64-bit overflow or lone surrogates, which only the stdlib parser yields
        encoded = b""
    if encoded and _SMALL_FLOAT_PLAIN not in encoded and not _SMALL_FLOAT_EXPONENT.search(encoded):
        return encoded
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.encode("utf-8", "surrogatepass")


def estimate_record(record: Mapping[str, Any]) -> int:
    """Seed token estimate of one parsed record (0 for records the seed does not count)."""
    payload = payload_for_estimate(record)
    if payload is None:
        return 0
    return estimate_utf8(_serialize(payload)) + RECORD_ALLOWANCE


def raw_inventory_is_exact(canonical: bytes) -> bool:
    """Whether compact JSON bytes hold exactly the characters Python's json writes for their value.

    JavaScript (Claude Code) and Python spell strings alike; they differ on `\\uXXXX` escapes of
    printable characters (ensure_ascii writers) and on floats below 1e-4. Callers use this on
    lines that may come from such writers; key order never matters to the counts.
    """
    return (
        b"\\u" not in canonical
        and _SMALL_FLOAT_PLAIN not in canonical
        and (b"e-" not in canonical or _SMALL_FLOAT_EXPONENT.search(canonical) is None)
    )


def _split_inventory(encoded: bytes) -> tuple[int, str]:
    if encoded.isascii():
        return len(encoded), ""
    non_ascii = encoded.translate(None, _ASCII_BYTES)
    return len(encoded) - len(non_ascii), non_ascii.decode("utf-8")


def estimate_json_parts(
    parts: tuple[bytes, ...],
    *,
    removed: tuple[bytes, ...] = (),
    structural_ascii: int = 0,
) -> int:
    """Seed estimate of a payload assembled from compact JSON pieces, plus the record allowance.

    The payload's characters are those of `parts`, minus those of `removed`, plus
    `structural_ascii` ASCII characters (negative to take braces and commas away).
    """
    ascii_chars = structural_ascii
    non_ascii: Counter[str] | None = None
    for part in parts:
        if part.isascii():
            ascii_chars += len(part)
            continue
        count, chars = _split_inventory(part)
        ascii_chars += count
        non_ascii = Counter(chars) if non_ascii is None else non_ascii + Counter(chars)
    for part in removed:
        count, chars = _split_inventory(part)
        ascii_chars -= count
        if chars:
            non_ascii = Counter() if non_ascii is None else non_ascii
            non_ascii.subtract(chars)
    if non_ascii is None:
        return max(1, -(-ascii_chars // 4)) + RECORD_ALLOWANCE
    if sum(non_ascii.values()) > _EXACT_ARITHMETIC_LIMIT:
        text = "".join(char * count for char, count in non_ascii.items() if count > 0)
        return _reference_arithmetic(text + "a" * ascii_chars) + RECORD_ALLOWANCE
    return _tokens(ascii_chars, non_ascii) + RECORD_ALLOWANCE
