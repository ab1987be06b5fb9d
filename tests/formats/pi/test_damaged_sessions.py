"""Damaged pi sessions: whatever happens to the lines, the reader reports findings, never raises,
puts every line in exactly one set, and a compaction of what it can cut still checks."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from pipeline.formats.pi.chat_form import MessageOrigin
from pipeline.formats.pi.session_analysis import analyze_session, compress_sets
from pipeline.vocabulary import LineKind
from tests.support.pi_files import FIXTURES, LIMITS

Damage = Callable[[list[bytes], random.Random], list[bytes]]


def _drop(lines: list[bytes], rng: random.Random) -> list[bytes]:
    del lines[rng.randrange(len(lines))]
    return lines


def _truncate(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines))
    lines[at] = lines[at][: len(lines[at]) // 2]
    return lines


def _join(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines) - 1)
    lines[at : at + 2] = [lines[at] + lines[at + 1]]
    return lines


def _swap(lines: list[bytes], rng: random.Random) -> list[bytes]:
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return lines


def _duplicate(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines)), lines[at])
    return lines


def _garbage(lines: list[bytes], rng: random.Random) -> list[bytes]:
    lines.insert(
        rng.randrange(len(lines)), rng.choice([b"\xff\xfe{", b"[1,2]", b"", b"   ", b'"text"', b"{}"])
    )
    return lines


def _bad_utf8(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines))
    lines[at] = lines[at].replace(b"a", b"\xc3", 1)
    return lines


def _big_number(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(1, len(lines))
    lines[at] = lines[at].replace(b'"type"', b'"n":123456789012345678901234567890,"type"', 1)
    return lines


def _crlf(lines: list[bytes], rng: random.Random) -> list[bytes]:
    return [line + b"\r" for line in lines]


DAMAGES: list[Damage] = [_drop, _truncate, _join, _swap, _duplicate, _garbage, _bad_utf8, _big_number, _crlf]


@pytest.mark.parametrize("name", ["tools.jsonl", "compacted.jsonl", "branched.jsonl"])
@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.__name__.strip("_"))
def test_damage_is_reported_never_raised_and_every_line_is_in_one_set(name: str, damage: Damage) -> None:
    source = (FIXTURES / name).read_bytes().splitlines()
    for seed in range(8):
        rng = random.Random(seed)
        data = b"\n".join(damage(list(source), rng)) + b"\n"
        analysis = analyze_session(data, LIMITS)
        sets = analysis.sweep_sets()
        every = sorted(line for lines in sets.values() for line in lines)
        assert every == list(range(1, len(analysis.session) + 1))
        found = {f.line for f in analysis.findings}
        bad = {n for n, kind in enumerate(analysis.session.kinds, 1) if kind is not LineKind.RECORD}
        assert bad <= found
        tokens = [sent.tokens for _, sent in analysis.sent()]
        plan = analysis.plan_tail(tokens, sum(tokens) // 3)
        if plan is None:
            continue
        candidate = analyze_session(analysis.compose(plan.cut_line, "SUMMARY"), LIMITS)
        assert candidate.messages[0].origin is MessageOrigin.SUMMARY
        assert [m.body for m in candidate.messages[1:]] == [
            m.body for m in analysis.messages[plan.first_item :]
        ]
        split = compress_sets(analysis, plan.first_item)
        assert sorted(line for lines in split.values() for line in lines) == every
