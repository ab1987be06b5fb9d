"""LineRuns is a set of line numbers like a frozenset of them, held as runs of consecutive numbers."""

from __future__ import annotations

import random
import tracemalloc

from pipeline.core.line_runs import LineRuns


def test_it_answers_as_a_frozenset_of_the_same_numbers() -> None:
    rng = random.Random(3)
    for _ in range(200):
        numbers = [rng.randint(1, 60) for _ in range(rng.randint(0, 40))]
        other = frozenset(rng.randint(1, 60) for _ in range(rng.randint(0, 20)))
        runs, plain = LineRuns(numbers), frozenset(numbers)
        assert runs == plain and plain == runs and len(runs) == len(plain)
        assert list(runs) == sorted(plain) and list(reversed(runs)) == sorted(plain, reverse=True)
        assert all((n in runs) == (n in plain) for n in range(-1, 63))
        assert (runs - other, runs | other, runs & other) == (plain - other, plain | other, plain & other)
        assert isinstance(runs - other, LineRuns) and runs.isdisjoint(other) == plain.isdisjoint(other)
        assert (runs.first, runs.last) == ((min(plain), max(plain)) if plain else (None, None))
        assert hash(runs) == hash(plain)
    assert "x" not in LineRuns([1]) and 1.5 not in LineRuns([1, 2])


def test_a_span_of_consecutive_lines_costs_bytes_not_a_number_object_each() -> None:
    lines = [n for n in range(1, 300_001) if n % 1000]  # a span with a few lines taken out
    tracemalloc.start()
    runs = LineRuns(lines)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(runs) == len(lines) and held < 20_000  # a frozenset of them: about 19 MB


def test_runs_made_from_a_set_are_those_made_from_its_numbers_one_by_one() -> None:
    rng = random.Random(5)
    for _ in range(300):
        numbers = {rng.randint(-3, 80) for _ in range(rng.randint(0, 60))}
        from_set, one_by_one = LineRuns(frozenset(numbers)), LineRuns(sorted(numbers) + sorted(numbers))
        assert list(from_set.runs()) == list(one_by_one.runs())
        assert list(from_set) == sorted(numbers) and len(from_set) == len(numbers)
        assert [n for run in from_set.runs() for n in run] == sorted(numbers)
