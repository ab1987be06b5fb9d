"""The one renderer: typed reports and summaries to the JSON bytes written to disk.

Indented, keys sorted, a final newline; `UNSET` members absent; a report's findings section
spread into its top level (`findings`, `findings_truncated`, `counts`).
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

__all__ = ["json_bytes", "report_bytes", "to_builtins"]

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


def to_builtins(value: object) -> Any:
    """A typed report or summary as plain JSON values (enums as their values)."""
    data = msgspec.to_builtins(value)
    if isinstance(data, dict) and isinstance(data.get("findings"), dict):
        data.update(data.pop("findings"))
    return data


def json_bytes(value: object) -> bytes:
    """Any typed value or builtins as the indented, sorted JSON our reports use."""
    return orjson.dumps(to_builtins(value), option=_OPTIONS) + b"\n"


def report_bytes(report: object) -> bytes:
    """A session report's file contents."""
    return json_bytes(report)
