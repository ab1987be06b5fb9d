"""The text rules every probe shares: normalized facts, bounded identities, searching with edges.

A fact is compared as text with every run of white space made one space (a summary re-wraps and
indents what it quotes), case and every other character kept. A fact is found only where it
stands whole: the characters beside an occurrence must not continue it (`Edge`), so `b.py` is
not found inside `ab.py` or `b.pyc`, `#12` not inside `#123`, and `pytest` not inside `pytests`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import StrEnum
from typing import Final

__all__ = [
    "IDENTITY_CHARS",
    "MIN_QUOTE_CHARS",
    "Edge",
    "found",
    "human_text",
    "identity",
    "normalize",
    "occurrences",
    "standalone",
    "without",
]

IDENTITY_CHARS: Final = 200
"""A long command, todo or message is identified by its first 200 characters (white space made
one): enough to tell it from any other, and far more than the first words a lookup could match."""
MIN_QUOTE_CHARS: Final = 24
"""A shorter human message ("yes", "go on") is found by containment everywhere: it must stand alone
on a line of the summary (the resume proof's `min_excluded_text_chars` draws the same line)."""

_WORD_EXTRA: Final = "_"
_PATH_EXTRA: Final = "_-./~\\+@%"
_URL_STOP: Final = frozenset("\"'<>`()[]{}|\\^")
_CLOSING: Final = ".,:;!?"  # punctuation that ends a sentence right after a fact, not part of it
_CONTEXT_TAGS: Final = re.compile(r"<(system-reminder|ide_[a-z_]+)>.*?</\1>", re.S)


class Edge(StrEnum):
    """Which characters would continue a fact at its ends."""

    WORD = "word"  # letters, digits, underscore
    PATH = "path"  # those and the characters of file paths
    URL = "url"  # anything but white space, quotes and brackets


def normalize(text: str) -> str:
    """The text with every run of white space made one space, and no space at either end."""
    return " ".join(text.split())


def human_text(text: str) -> str:
    """A human message as the human wrote it, normalized: the context the client adds taken out."""
    return normalize(_CONTEXT_TAGS.sub(" ", text))


def identity(text: str) -> str:
    """The normalized text, bounded to its first `IDENTITY_CHARS` characters and the rest of the
    word there (so an identity ends where a word does), or hard at twice the bound."""
    whole = normalize(text)
    if len(whole) <= IDENTITY_CHARS:
        return whole
    end = whole.find(" ", IDENTITY_CHARS)
    return whole[:end] if 0 <= end <= 2 * IDENTITY_CHARS else whole[: 2 * IDENTITY_CHARS]


def _continues(char: str, edge: Edge) -> bool:
    if edge is Edge.URL:
        return not char.isspace() and char not in _URL_STOP
    return char.isalnum() or char in (_PATH_EXTRA if edge is Edge.PATH else _WORD_EXTRA)


def _joined_left(haystack: str, start: int, first: str, edge: Edge) -> bool:
    return start > 0 and _continues(first, edge) and _continues(haystack[start - 1], edge)


def _joined_right(haystack: str, end: int, last: str, edge: Edge) -> bool:
    if end >= len(haystack) or not _continues(last, edge) or not _continues(haystack[end], edge):
        return False
    # `b.py.` at the end of a sentence: the stop closes the sentence, it does not continue the path
    if haystack[end] in _CLOSING:
        return end + 1 < len(haystack) and _continues(haystack[end + 1], edge)
    return True


def occurrences(haystack: str, needle: str, edge: Edge) -> Iterator[int]:
    """Where `needle` stands whole in `haystack` (nothing for an empty needle)."""
    if not needle:
        return
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        if not _joined_left(haystack, start, needle[0], edge) and not _joined_right(
            haystack, end, needle[-1], edge
        ):
            yield start
        start = haystack.find(needle, start + 1)


def found(haystack: str, needle: str, edge: Edge) -> bool:
    """Whether `needle` stands whole somewhere in `haystack`."""
    return next(occurrences(haystack, needle, edge), None) is not None


def without(haystack: str, needle: str, edge: Edge) -> str | None:
    """`haystack` with the first whole occurrence of `needle` taken out, or None when it has none.

    A command or an error is judged by what the text says around it: `echo ok` says nothing about
    its own outcome.
    """
    start = next(occurrences(haystack, needle, edge), None)
    if start is None:
        return None
    return haystack[:start] + " " + haystack[start + len(needle) :]


_CITATION: Final = re.compile(r"\s*\((?:L\d+(?:, )?)+\)\s*$")
_LIST_MARKER: Final = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_LABEL: Final = re.compile(r"^[\w ]{1,20}:\s+")
_QUOTES: Final = "\"'`“”‘’«»"  # noqa: RUF001 - typographic quotes are what summaries use


def standalone(line: str) -> tuple[str, ...]:
    """What a summary line says on its own: list marker, citation and quotes taken away, with and
    without a short label (`User: yes`)."""
    body = _CITATION.sub("", _LIST_MARKER.sub("", line.strip())).strip()
    forms = [body.strip(_QUOTES).strip()]
    labelled = _LABEL.match(body)
    if labelled is not None:
        forms.append(body[labelled.end() :].strip(_QUOTES).strip())
    return tuple(normalize(form) for form in forms)
