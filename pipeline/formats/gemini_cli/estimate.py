"""Gemini CLI's own token estimate of a history (`estimateTokenCountSync`, 0.61).

Text: a quarter token per ASCII code unit, 1.5 per other UTF-16 code unit (a text over 100,000
code units: a quarter token each); a function response: its name's and its response JSON's
length / 4; an image 3,000, a PDF 25,800; any other part its JSON's length / 4. Rounded down
once per list of parts. Lengths are JavaScript's (UTF-16 code units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

__all__ = ["estimate_parts"]

_ASCII_PER_CHAR: Final = 0.25
_OTHER_PER_CHAR: Final = 1.5
_FULL_HEURISTIC_CHARS: Final = 100_000
_IMAGE: Final = 3_000
_PDF: Final = 25_800
_MAX_DEPTH: Final = 3


def _js_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _text_tokens(text: str) -> float:
    length = _js_length(text)
    if length > _FULL_HEURISTIC_CHARS:
        return length * _ASCII_PER_CHAR
    ascii_units = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return ascii_units * _ASCII_PER_CHAR + (length - ascii_units) * _OTHER_PER_CHAR


def _json_tokens(value: object) -> float:
    return _js_length(orjson.dumps(value).decode()) * _ASCII_PER_CHAR


def _media(part: Mapping[str, Any]) -> int | None:
    data = part.get("inlineData") or part.get("fileData")
    mime = str(data.get("mimeType") or "") if isinstance(data, Mapping) else ""
    return _IMAGE if mime.startswith("image/") else _PDF if mime.startswith("application/pdf") else None


def _response_tokens(response: Mapping[str, Any], depth: int) -> float:
    tokens = _js_length(str(response.get("name") or "")) * _ASCII_PER_CHAR
    body = response.get("response")
    if isinstance(body, str):
        tokens += _js_length(body) * _ASCII_PER_CHAR
    elif body is not None:
        tokens += _json_tokens(body)
    nested = response.get("parts")
    if isinstance(nested, list) and nested:
        tokens += estimate_parts(nested, depth + 1)
    return tokens


def estimate_parts(parts: Sequence[Any], depth: int = 0) -> int:
    """Gemini CLI's estimate of a list of parts."""
    if depth > _MAX_DEPTH:
        return 0
    total = 0.0
    for part in parts:
        if not isinstance(part, Mapping):
            total += _json_tokens(part)
        elif isinstance(part.get("text"), str):
            total += _text_tokens(part["text"])
        elif isinstance(part.get("functionResponse"), Mapping):
            total += _response_tokens(part["functionResponse"], depth)
        else:
            media = _media(part)
            total += media if media is not None else _json_tokens(part)
    return math.floor(total)
