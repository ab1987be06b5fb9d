"""What a line must pass before any JSON reader sees it: its size, its nesting depth, its UTF-8.

Python's JSON readers (the stdlib, msgspec, the seed estimator's walk) recurse once per nesting
level and give up near the interpreter's recursion limit, orjson at 1024 levels; a line nested
deeper than `max_json_depth` is therefore reported and never parsed, and so is a line longer
than `max_line_bytes`. Invalid UTF-8 is not a reason to drop a record: Claude Code reads such a
line with each bad sequence replaced by U+FFFD and keeps the record, so the line is read the same
way here (`readable_utf8`) and the record kept with a warning.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pipeline.settings import SweepSettings

__all__ = ["LineLimits", "nesting_depth", "readable_utf8", "too_deep"]

_STRING: Final = re.compile(rb'"[^"]*+(?:"|\Z)')  # over a skeleton with no escapes left
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_STRUCTURE: Final = bytes(b for b in range(256) if b not in b'[]{}"')
_STEP: Final = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")  # +1 or -1 as a signed byte
_DECODE_CHUNK: Final = 1 << 20  # huge lines are checked a megabyte at a time, never decoded whole


@dataclass(frozen=True, slots=True)
class LineLimits:
    """The largest line and the deepest nesting a record may have (from `[sweep]`)."""

    max_line_bytes: int
    max_json_depth: int

    @classmethod
    def of(cls, sweep: SweepSettings) -> LineLimits:
        """The limits `[sweep]` sets."""
        return cls(sweep.max_line_bytes, sweep.max_json_depth)


def nesting_depth(line: bytes) -> int:
    """The deepest array/object nesting of a JSON line, brackets inside strings not counted.

    Escaped backslashes, then escaped quotes, are dropped first, so every quote left delimits a
    string; after that only quotes and brackets matter, and the string scan runs over those. A
    cut line's unclosed openers count as the levels they open.
    """
    unescaped = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = unescaped.translate(None, _NOT_STRUCTURE)
    brackets = _STRING.sub(b"", skeleton).translate(None, _NOT_BRACKETS)
    return max(accumulate(brackets.translate(_STEP), _add_signed, initial=0))


def _add_signed(depth: int, step: int) -> int:
    return depth + (step if step < 128 else step - 256)


def too_deep(line: bytes, limit: int) -> bool:
    """Whether `line` nests deeper than `limit` (a count of brackets settles almost every line)."""
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    return nesting_depth(line) > limit


def _valid_utf8(line: bytes) -> bool:
    if len(line) <= _DECODE_CHUNK:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(line), _DECODE_CHUNK):
            decoder.decode(line[start : start + _DECODE_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def readable_utf8(line: bytes) -> bytes:
    """`line` itself when it is valid UTF-8, else a copy with every bad sequence made U+FFFD.

    Python's replacement yields one U+FFFD per maximal invalid subpart, as Claude Code's
    reader (Bun) does for every sequence tried.
    """
    if line.isascii() or _valid_utf8(line):
        return line
    return line.decode("utf-8", "replace").encode("utf-8")
