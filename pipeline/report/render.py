"""The one renderer: typed reports and summaries to the JSON bytes written to disk.

Indented, keys sorted, a final newline; `UNSET` members absent; a report's findings section
spread into its top level (`findings`, `findings_truncated`, `counts`).
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from pipeline.formats.json_text import well_formed

__all__ = ["json_bytes", "report_bytes", "to_builtins"]

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


def to_builtins(value: object) -> Any:
    """A typed report or summary as plain JSON values (enums as their values)."""
    data = msgspec.to_builtins(value)
    if isinstance(data, dict) and isinstance(data.get("findings"), dict):
        data.update(data.pop("findings"))
    return data


def _well_formed(value: Any) -> Any:
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed(key): _well_formed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_well_formed(item) for item in value]
    return value


def json_bytes(value: object) -> bytes:
    """Any typed value or builtins as the indented, sorted JSON our reports use.

    A metadata string read from a transcript (a client version, a model name) may hold a lone
    surrogate orjson cannot write; it is written as U+FFFD, as Claude Code reads it."""
    data = to_builtins(value)
    try:
        return orjson.dumps(data, option=_OPTIONS) + b"\n"
    except TypeError:
        return orjson.dumps(_well_formed(data), option=_OPTIONS) + b"\n"


def report_bytes(report: object) -> bytes:
    """A session report's file contents."""
    return json_bytes(report)
