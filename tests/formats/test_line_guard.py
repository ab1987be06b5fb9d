"""Line guards: nesting measured outside strings, UTF-8 read the way Claude Code reads it."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from pipeline.formats.line_guard import nesting_depth, readable_utf8, too_deep
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


KEY_NOISE = '[{"\\'


def _random_value(rng: random.Random, depth: int) -> object:
    pick = rng.random()
    if depth > 12 or pick < 0.3:
        return "".join(rng.choice('ab[]{}"\\\n é') for _ in range(rng.randint(0, 12)))
    if pick < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["k" + str(n) + rng.choice(KEY_NOISE) for n in range(rng.randint(0, 3))]
    return {key: _random_value(rng, depth + 1) for key in keys}


def _true_depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_true_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_true_depth(v) for v in value.values()), default=0)
    return 0


def test_the_depth_of_random_json_is_measured_exactly() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        value = _random_value(rng, 0)
        for line in (
            orjson.dumps(value),
            json.dumps(value).encode(),
            json.dumps(value, ensure_ascii=False).encode(),
        ):
            assert nesting_depth(line) == _true_depth(value), line
