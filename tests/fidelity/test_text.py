"""The shared text rules: a fact is found only where it stands whole."""

from __future__ import annotations

import pytest

from pipeline.fidelity.text import (
    IDENTITY_CHARS,
    Edge,
    found,
    human_text,
    identity,
    normalize,
    standalone,
    without,
)


@pytest.mark.parametrize(
    ("haystack", "needle", "edge", "expected"),
    [
        ("- Modified 2 paths: src/a.py, src/b.py (L4)", "src/a.py", Edge.PATH, True),
        ("read src/a.py.", "src/a.py", Edge.PATH, True),  # a full stop ends the sentence, not the path
        ("read src/a.pyc", "src/a.py", Edge.PATH, False),
        ("read lib/src/a.py", "src/a.py", Edge.PATH, False),
        ("read src/a.py.bak", "src/a.py", Edge.PATH, False),
        ("see `src/a.py`", "src/a.py", Edge.PATH, True),
        ("ran pytests", "pytest", Edge.WORD, False),
        ("ran `pytest`", "pytest", Edge.WORD, True),
        ("see https://x.org/a/b, then", "https://x.org/a/b", Edge.URL, True),
        ("see https://x.org/a/bc", "https://x.org/a/b", Edge.URL, False),
        ("(https://x.org/a/b)", "https://x.org/a/b", Edge.URL, True),
        ("anything", "", Edge.WORD, False),
    ],
)
def test_a_fact_is_found_only_where_it_stands_whole(
    haystack: str, needle: str, edge: Edge, expected: bool
) -> None:
    assert found(haystack, needle, edge) is expected


def test_normalizing_makes_every_run_of_white_space_one_space() -> None:
    assert normalize("  run\n\tthe   tests\n  ") == "run the tests"


def test_an_identity_is_bounded_and_ends_where_a_word_does() -> None:
    words = " ".join(f"word{n}" for n in range(100))
    key = identity(words)
    assert IDENTITY_CHARS <= len(key) < IDENTITY_CHARS + 8
    assert words.startswith(key) and words[len(key)] == " "
    assert identity("short  command") == "short command"
    assert len(identity("x" * 5000)) == 2 * IDENTITY_CHARS  # one huge word: a hard bound


def test_the_context_a_client_adds_to_a_human_message_is_not_the_message() -> None:
    text = "<ide_opened_file>The user opened a.py</ide_opened_file>Fix the bug\n<system-reminder>x</system-reminder>"
    assert human_text(text) == "Fix the bug"


def test_without_takes_out_the_fact_so_its_own_words_are_not_read_as_an_outcome() -> None:
    assert without("passed: echo failed (L3)", "echo failed", Edge.WORD) == "passed:   (L3)"
    assert without("nothing here", "echo", Edge.WORD) is None


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("- yes (L12)", "yes"),
        ('- "yes"', "yes"),
        ("- User: yes", "yes"),
        ("1. `go on` (L3, L4)", "go on"),
    ],
)
def test_a_summary_line_standing_alone_is_read_without_its_marker_quotes_and_citation(
    line: str, says: str
) -> None:
    assert says in standalone(line)


def test_a_line_of_prose_is_not_a_short_message_standing_alone() -> None:
    assert "yes" not in standalone("- The user said yes to the plan and asked for tests")
