"""Compact JSON of values read from transcripts, lone surrogates included.

JavaScript's `JSON.parse` and Python's `json` accept an escaped lone surrogate (`"\\ud800"`), so a
record Claude Code keeps can hold one; orjson refuses to write it. Such a value is written by
the standard library with each lone surrogate escaped again, so the bytes are valid UTF-8 and
read back as the same value.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

__all__ = ["dumps", "well_formed"]

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")  # pairs were joined by the parser


def dumps(value: Any) -> bytes:
    """orjson's compact JSON, or for a value holding a lone surrogate the same with it escaped."""
    try:
        return orjson.dumps(value)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text).encode()


def well_formed(text: str) -> str:
    """`text` with each lone surrogate read as U+FFFD, as Claude Code sends a text it did not read."""
    return _LONE_SURROGATE.sub("\ufffd", text)
