"""The mutation fuzzer itself: deterministic, damaging, and able to shrink a failing input."""

from __future__ import annotations

import random

import pytest

from pipeline.testing.fuzz import Mutation, minimize, mutate
from pipeline.testing.sessions import build_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("fuzz") / "s.jsonl"
    build_session(path, turns=4)
    return path.read_bytes()


@pytest.mark.parametrize("kind", list(Mutation))
def test_each_kind_changes_the_file_the_same_way_for_the_same_seed(session: bytes, kind: Mutation) -> None:
    first = mutate(session, random.Random(7), kind, depth=2000, huge_bytes=50_000)
    again = mutate(session, random.Random(7), kind, depth=2000, huge_bytes=50_000)
    assert first == again and first != session


def test_minimize_keeps_only_the_lines_that_make_it_fail(session: bytes) -> None:
    lines = session.split(b"\n")
    culprit = lines[7]
    smallest = minimize(session, lambda data: culprit in data.split(b"\n"))
    assert smallest == culprit
