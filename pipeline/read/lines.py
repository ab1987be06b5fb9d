"""Where each physical line of a transcript's bytes is: every format's reader splits them the same way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

__all__ = ["BOM", "content_span", "iter_line_spans"]

BOM: Final = b"\xef\xbb\xbf"


def iter_line_spans(data: bytes) -> Iterator[tuple[int, int]]:
    """(offset, end) of every physical line, excluding LF; a trailing LF ends the last line."""
    start = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end < 0:
            yield start, size
            return
        yield start, end
        start = end + 1


def content_span(data: bytes, offset: int, length: int, *, first: bool) -> tuple[int, int]:
    """Where a line's content is: without its CR, and on the first line without the file's BOM."""
    start, end = offset, offset + length
    if end > start and data[end - 1] == 0x0D:
        end -= 1
    if first and data.startswith(BOM, start, end):
        start += len(BOM)
    return start, end
