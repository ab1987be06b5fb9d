"""Discovery: the session files under the roots a user names, in a stable order.

A root may be a directory (walked recursively, Claude Code's `projects/` layout or any tree of
transcripts) or a single file. A session file ends in `.jsonl` or `.json`, or bears one of the
names the caller passes (agents that keep sessions in files named otherwise: the registry's).
Each session gets a label relative to its root, which is also where its report goes under the
report directory. Subagent transcripts (`<session>/subagents/*.jsonl`) are sessions of their own.
A compressed rollout (`.jsonl.zst`) is a session too, unless its plain sibling is there (which
Codex reads instead). A store (a file that holds several sessions, an agent's database, named by
the registry's `stores`) gives one session per stored session, labelled `<store>#<id>.jsonl`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Protocol
from urllib.parse import quote

from pipeline.errors import CompactionError
from pipeline.read.compressed import COMPRESSED_SUFFIXES

__all__ = [
    "NO_STORES",
    "SESSION_SUFFIXES",
    "RootError",
    "SessionFile",
    "SessionStores",
    "discover",
    "is_session_name",
    "root_labels",
    "root_pairs",
    "stored",
]

SESSION_SUFFIXES: Final = (".jsonl", ".json")
STORED_SUFFIX: Final = ".jsonl"  # a stored session is labelled as the JSONL file it is read as


class RootError(CompactionError):
    """A root does not exist or cannot be listed."""


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One transcript to process."""

    path: Path
    root: Path
    root_label: str  # distinguishes roots that share a basename; "" for a file named alone
    label: str  # path relative to its root, with forward slashes
    url: str | None = None  # an fsspec URL (`s3://...`): `path` is then only its key, read by URL
    root_url: str | None = None  # the root as the user named it, for a URL session
    stamp: str | None = None  # a URL session's size and version (ETag or mtime) from the listing
    unsafe_key: bool = False  # an object key with an empty, `.` or `..` segment: reported, never read
    member: str | None = None  # one session of a store (`path`): its id; "" for a store not read

    @property
    def root_name(self) -> str:
        """The root as the user named it (a directory, or a URL)."""
        return self.root_url or str(self.root)

    @property
    def report_label(self) -> str:
        """Where this session's report lives under the report directory (beside the candidate)."""
        return f"{self.root_label}/{self.label}" if self.root_label else self.label


class SessionStores(Protocol):
    """The files that hold several sessions each, known by name, and the sessions each holds."""

    def __contains__(self, name: object) -> bool: ...

    def members(self, path: Path) -> tuple[str, ...] | None:
        """The ids of the sessions a store holds; None when it cannot be read as one."""
        ...


class _NoStores:
    def __contains__(self, name: object) -> bool:
        return False

    def members(self, path: Path) -> tuple[str, ...] | None:
        return ()


NO_STORES: Final[SessionStores] = _NoStores()


def stored(session: SessionFile, stores: SessionStores) -> list[SessionFile]:
    """A store's sessions, each its own session file; the store alone when it cannot be read
    (its job then says why)."""
    members = stores.members(session.path)
    if members is None:
        return [replace(session, member="")]
    return [
        replace(
            session,
            label=f"{session.label}#{quote(member, safe='')}{STORED_SUFFIX}",  # one path segment
            member=member,
        )
        for member in members
    ]


def is_session_name(name: str, file_names: Collection[str]) -> bool:
    """Whether a file's name makes it a session file: a visible `.jsonl`/`.json`, or in `file_names`."""
    return (name.endswith(SESSION_SUFFIXES) and not name.startswith(".")) or name in file_names


def _is_compressed_session(name: str) -> bool:
    """A visible compressed session file (`.jsonl.zst`), which `read_source` decompresses."""
    return name.endswith(COMPRESSED_SUFFIXES) and not name.startswith(".")


def _walk(
    root: Path, root_label: str, file_names: Collection[str], stores: SessionStores
) -> Iterator[SessionFile]:
    """Every session file under a root, labels built from strings (a fleet has many files)."""

    def fail(error: OSError) -> None:
        raise RootError(f"cannot list {error.filename}: {error.strerror}")

    top = os.fspath(root)
    for directory, subdirectories, files in os.walk(top, onerror=fail, followlinks=False):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        chosen = sorted(
            name
            for name in files
            if (is_session_name(name, file_names) or _is_compressed_session(name) or name in stores)
            and not (name.endswith(COMPRESSED_SUFFIXES) and name[: -len(".zst")] in files)
        )  # a compressed rollout beside its plain self: Codex reads the plain one, and so do we
        if not chosen:
            continue
        relative = directory[len(top) :].lstrip(os.sep).replace(os.sep, "/")  # os.walk joins onto `top`
        prefix = f"{relative}/" if relative else ""
        folder = Path(directory)  # once per directory: joining a name is half the cost of a new Path
        for name in chosen:
            found = SessionFile(folder / name, root, root_label, prefix + name)
            yield from stored(found, stores) if name in stores else (found,)


def _root_labels(roots: Sequence[Path]) -> list[str]:
    labels: list[str] = []
    for root in roots:
        base = root.name or "root"
        label, suffix = base, 2
        while label in labels:
            label, suffix = f"{base}-{suffix}", suffix + 1
        labels.append(label)
    return labels


def root_labels(roots: Sequence[Path]) -> list[str]:
    """One label per root: its basename, made unique with a numeric suffix."""
    return _root_labels(roots)


def root_pairs(roots: Sequence[Path]) -> list[tuple[Path, str]]:
    """Each root with the label its sessions get (roots sharing a basename are told apart)."""
    return list(zip(roots, _root_labels(roots), strict=True))


def discover(
    roots: Sequence[Path], file_names: Collection[str] = (), stores: SessionStores = NO_STORES
) -> list[SessionFile]:
    """Every session file under the roots (`file_names`: names taken whatever their suffix; `stores`:
    files that give several sessions); raises `RootError` for a missing or unreadable root."""
    sessions: list[SessionFile] = []
    pairs = root_pairs(roots)
    for root, root_label in pairs:
        if root.is_file():  # named alone, a file's candidate and report go straight under --out
            alone = sum(other.name == root.name for other, _ in pairs) == 1
            found = SessionFile(root, root.parent, "" if alone else root_label, root.name)
            sessions.extend(stored(found, stores) if root.name in stores else (found,))
            continue
        if not root.is_dir():
            raise RootError(f"no such file or directory: {root}")
        if not os.access(root, os.R_OK | os.X_OK):
            raise RootError(f"cannot list {root}: permission denied")
        sessions.extend(_walk(root, root_label, file_names, stores))
    return sessions
