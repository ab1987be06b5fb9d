"""Line guards: nesting measured outside strings, UTF-8 read the way Claude Code reads it."""

from __future__ import annotations

import random

import pytest

from pipeline.formats.claude_code.guard import nesting_depth, readable_utf8, too_deep
from pipeline.testing.fuzz import INVALID_UTF8, nested


@pytest.mark.parametrize(
    ("line", "depth"),
    [
        (b'{"a":1}', 1),
        (b'{"a":[1,{"b":[]}]}', 4),
        (b'{"a":"[[[[{{{{"}', 1),
        (b'{"a":"quote \\" [[[ inside"}', 1),
        (b'{"a":"backslash \\\\", "b":[[1]]}', 3),
        (b'{"cut":"[[[[', 1),  # an unterminated string hides its brackets too
        (b"no json at all", 0),
        (nested(100_000), 100_000),
    ],
)
def test_nesting_depth_counts_structure_only(line: bytes, depth: int) -> None:
    assert nesting_depth(line) == depth


def test_too_deep_settles_shallow_lines_by_counting() -> None:
    text = b'{"code":"' + b"{[" * 5000 + b'"}'  # thousands of brackets, all inside a string
    assert not too_deep(text, 10)
    assert too_deep(b'{"x":' + nested(11) + b"}", 10) and not too_deep(b'{"x":' + nested(9) + b"}", 10)


def test_valid_lines_are_returned_as_they_are() -> None:
    line = '{"text":"héllo wörld, 世界 🌍"}'.encode()
    assert readable_utf8(line) is line
    assert readable_utf8(b'{"ascii":1}') is not None


@pytest.mark.parametrize("bad", INVALID_UTF8)
@pytest.mark.parametrize("size", [100, 3_000_000])  # the second is checked a megabyte at a time
def test_bad_sequences_read_as_python_and_claude_code_replace_them(bad: bytes, size: int) -> None:
    rng = random.Random(size)
    body = bytearray("é".encode() * (size // 2))
    at = rng.randrange(len(body) // 2) * 2  # on a character boundary
    line = bytes(body[:at]) + bad + bytes(body[at:])
    assert readable_utf8(line) == line.decode("utf-8", "replace").encode()


def test_a_sequence_split_across_a_chunk_boundary_is_still_valid() -> None:
    line = b"a" * ((1 << 20) - 1) + "€".encode() + b"b" * 10  # the euro sign straddles 1 MiB
    assert readable_utf8(line) is line
