"""How an agent's session files are recognized: the `Signature` each format declares.

A signature is a positive identification, never "not the others": a JSON-lines agent says which
one record is its own, a JSON-document agent which whole document, a text agent which opening
line; the file's path helps only where the content alone is a generic shape (a JSON list of
chat messages). `detect.py` shows every signature in the registry the same head of a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from pipeline.vocabulary import SourceFormat

__all__ = [
    "Record",
    "SessionRoots",
    "SessionStore",
    "Signature",
    "StoreRead",
    "StoredSession",
    "is_str",
    "parent_names",
]

Record = dict[str, Any]
"""One JSON-lines record, as parsed (raw JSON stays inside `formats`)."""

SessionRoots = Callable[[Mapping[str, str], Path], tuple[Path, ...]]
"""Where an agent keeps its sessions, from the environment and the home directory."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """One session of a store: its id in the store, its transcript as the agent's own JSONL bytes,
    and how many stored records made it."""

    session_id: str
    data: bytes
    events: int


@dataclass(frozen=True, slots=True)
class StoreRead:
    """A store's sessions in id order, or why it could not be read (no text of it)."""

    sessions: tuple[StoredSession, ...]
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class SessionStore:
    """A file that holds several sessions (an agent's database): the names it has, and how its
    bytes (with its write-ahead log's, empty when there is none) become each session's transcript,
    which is then read as any of the agent's session files is. Pure: the caller reads the files."""

    file_names: frozenset[str]
    sessions: Callable[[bytes, bytes], StoreRead]


@dataclass(frozen=True, slots=True)
class Signature:
    """One agent's positive identification, and where it keeps its sessions.

    `record` names one JSON line as the agent's own record; `document` a file that is one JSON
    value (with its path, or None); `text` a text file from its first non-blank line (and path).
    `roots` is set for the formats this tool processes: their default session directories.
    `file_names` and `named` take files as sessions whatever their suffix: by exact name, or by a
    test of the name (an agent's archives, `<id>.jsonl.reset.<ts>`). `store` names the files
    that hold several of its sessions each (one report per stored session).
    """

    format: SourceFormat
    record: Callable[[Record], bool] | None = None
    document: Callable[[object, PurePath | None], bool] | None = None
    text: Callable[[str, PurePath | None], bool] | None = None
    roots: SessionRoots | None = None
    file_names: frozenset[str] = frozenset()  # session files named so, whatever their suffix
    named: Callable[[str], bool] | None = None  # session files whose name passes it, whatever their suffix
    store: SessionStore | None = None  # files that hold several sessions, read one session at a time


def is_str(value: object) -> bool:
    """Whether a JSON value is a string (the shape checks read as sentences with it)."""
    return isinstance(value, str)


def parent_names(path: PurePath | None, depth: int) -> tuple[str, ...]:
    """The names of a path's nearest `depth` parent directories, nearest first ("" when none)."""
    if path is None:
        return ("",) * depth
    names = [parent.name for parent in list(path.parents)[:depth]]
    return (*names, *("",) * (depth - len(names)))
