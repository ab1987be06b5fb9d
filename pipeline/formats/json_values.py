"""The values a JSON Lines session holds, read without trusting it: one line's object (or None), every
string inside a value, and the quoted pieces of a line that is no JSON at all. Every agent's
format reads its lines through these; what a record's fields mean is each format's own."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

import orjson

from pipeline.formats.line_guard import readable_utf8, too_deep
from pipeline.settings import READER_DEPTH_CEILING

__all__ = ["line_strings", "parse_object", "plain_strings", "string_pieces"]

_STRING_LITERAL: Final = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|$)', re.DOTALL)


def parse_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object a line holds, or None.

    Bytes that are not UTF-8 read as U+FFFD, as Claude Code reads them; the stdlib also reads
    the lone surrogates orjson rejects. A line nested beyond what the recursive readers of its
    value can walk is no object to them.
    """
    if too_deep(line, READER_DEPTH_CEILING):
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(readable_utf8(line))
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def plain_strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (tool inputs, nested result content), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from plain_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from plain_strings(item)


def string_pieces(line: bytes) -> Iterator[str]:
    """The string literals of a broken line, unescaped where they are whole (the last may be cut)."""
    for match in _STRING_LITERAL.finditer(line.decode("utf-8", "replace")):
        literal = match.group(0)
        try:
            yield json.loads(literal if literal.endswith('"') and len(literal) > 1 else literal + '"')
        except ValueError:
            yield literal.strip('"')


def line_strings(line: bytes) -> Iterator[str]:
    """Every string of a line's object; a damaged line's pieces between quotes."""
    record = parse_object(line)
    if record is None:
        yield from string_pieces(line)
        return
    yield from plain_strings(record)
