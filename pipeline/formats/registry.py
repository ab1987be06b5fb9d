"""The registry of formats: every agent whose session files are recognized, by its signature.

`PROCESSED` are the formats the jobs read; `RECOGNIZED` adds the agents whose files are named and
reported `unsupported-format`. Adding an agent is one module with its `Signature` and one line
here. The default roots of a run without paths are the processed formats' session directories
found on this machine. A format the active-chain jobs read also names here the reader that cuts
its lines into content pieces (`CONTENT_PIECES`), which the token benchmark counts, and what its
client sends that no line records (`UNRECORDED_CONTEXT`), which `auto`'s sent context adds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Final

from pipeline.errors import NotARegularFile, UnreadableSource
from pipeline.formats.claude_code.compiled import NOTICE as CLAUDE_CODE_CORE_NOTICE
from pipeline.formats.claude_code.compiled import scanner_built
from pipeline.formats.claude_code.content_classes import split_records
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.formats.claude_code.plan_mode import plan_mode_reminders
from pipeline.formats.claude_code.signature import CLAUDE_CODE
from pipeline.formats.codewhale.whale_signature import CODEWHALE
from pipeline.formats.codex.rollout_signature import CODEX
from pipeline.formats.content_pieces import LinePieces
from pipeline.formats.gemini_cli.signature import GEMINI_CLI
from pipeline.formats.identity import SessionStore, Signature, StoreRead
from pipeline.formats.pi.signature import PI
from pipeline.formats.qwen_code.signature import QWEN_CODE
from pipeline.formats.unsupported.aider import AIDER
from pipeline.formats.unsupported.cline import CLINE
from pipeline.formats.unsupported.copilot_cli import COPILOT_CLI
from pipeline.formats.unsupported.opencode import OPENCODE
from pipeline.read.discover import RootError
from pipeline.read.load import WAL_SUFFIX, read_store
from pipeline.vocabulary import SourceFormat

__all__ = [
    "CONTENT_PIECES",
    "PROCESSED",
    "RECOGNIZED",
    "UNRECORDED_CONTEXT",
    "ContentPieces",
    "SessionFileNames",
    "SessionStores",
    "UnrecordedContext",
    "content_pieces",
    "default_roots",
    "looked_for_roots",
    "missing_compiled_cores",
    "session_file_names",
    "session_stores",
    "stored_session",
    "unrecorded_context",
]

PROCESSED: Final[tuple[Signature, ...]] = (CLAUDE_CODE, CODEX, PI, GEMINI_CLI, QWEN_CODE, CODEWHALE)
RECOGNIZED: Final[tuple[Signature, ...]] = (
    *PROCESSED,
    OPENCODE,
    COPILOT_CLI,
    CLINE,
    AIDER,
)

ContentPieces = Callable[[Iterable[tuple[int, DecodedRecord, bytes]]], Iterator[LinePieces]]
"""A chain format's reader of content: (1-based line, decoded record, its bytes) in file order ->
the pieces of every content line, in physical order."""

CONTENT_PIECES: Final[Mapping[SourceFormat, ContentPieces]] = MappingProxyType(
    {SourceFormat.CLAUDE_CODE: split_records}
)


def content_pieces(source_format: SourceFormat) -> ContentPieces:
    """The reader that cuts a chain format's lines into content pieces (the formats read through
    the context seam tally theirs in their own session: `agents/protocol.py`)."""
    return CONTENT_PIECES[source_format]


UnrecordedContext = Callable[[bytes, Iterable[tuple[int, DecodedRecord, bytes]]], Mapping[int, int]]
"""A chain format's reader of what its client sent that no line records: (the session's bytes,
its record lines in file order) -> assistant line (a message's first) -> tokens its request held
beyond the lines before it."""

UNRECORDED_CONTEXT: Final[Mapping[SourceFormat, UnrecordedContext]] = MappingProxyType(
    {SourceFormat.CLAUDE_CODE: plan_mode_reminders}
)


def unrecorded_context(source_format: SourceFormat) -> UnrecordedContext:
    """The reader of a chain format's unrecorded context (`CONTENT_PIECES`' formats)."""
    return UNRECORDED_CONTEXT[source_format]


@dataclass(frozen=True, slots=True)
class SessionFileNames:
    """The names discovery takes as sessions whatever their suffix: the agents' exact names (what
    iterating gives), and any name one of their tests passes (`in` asks both)."""

    exact: frozenset[str]
    tests: tuple[Callable[[str], bool], ...]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.exact or any(test(name) for test in self.tests))

    def __iter__(self) -> Iterator[str]:
        return iter(self.exact)

    def __len__(self) -> int:
        return len(self.exact)


def session_file_names() -> SessionFileNames:
    """The names of agents' session files that discovery takes whatever their suffix."""
    exact = frozenset().union(*(signature.file_names for signature in RECOGNIZED))
    return SessionFileNames(exact, tuple(signature.named for signature in RECOGNIZED if signature.named))


@dataclass(frozen=True, slots=True)
class SessionStores:
    """The files that hold several sessions each (agents' databases), by name, read through their
    format's `SessionStore` (`read/discover.SessionStores`)."""

    by_name: Mapping[str, SessionStore]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.by_name

    def members(self, path: Path) -> tuple[str, ...] | None:
        read = _read_store(path)  # not kept: discovery holds no store's transcripts afterwards
        return None if read.problem is not None else tuple(s.session_id for s in read.sessions)


def session_stores() -> SessionStores:
    """Every processed format's store files, by name."""
    stores = [signature.store for signature in PROCESSED if signature.store is not None]
    return SessionStores({name: store for store in stores for name in store.file_names})


def _stamp(path: Path) -> tuple[int, int]:
    try:
        status = path.stat()
    except OSError:
        return (-1, -1)
    return (status.st_size, status.st_mtime_ns)


def _read_store(path: Path) -> StoreRead:
    store = session_stores().by_name.get(path.name)
    if store is None:
        return StoreRead((), "no format keeps its sessions in a file of this name")
    try:
        files = read_store(path)
    except UnreadableSource as exc:
        return StoreRead((), f"cannot read the store ({exc.reason})")
    except NotARegularFile as exc:
        return StoreRead((), f"the store is a {exc.kind}")
    return store.sessions(files.data, files.wal)


@lru_cache(maxsize=1)  # a store's sessions reach a worker one after another: read it once a version
def _store_read_at(path: Path, stamps: tuple[tuple[int, int], ...]) -> StoreRead:
    return _read_store(path)


def _store_read(path: Path) -> StoreRead:
    wal = path.with_name(path.name + WAL_SUFFIX)
    return _store_read_at(path, (_stamp(path), _stamp(wal)))


def stored_session(path: Path, member: str) -> bytes | str:
    """One stored session's transcript, or why the store cannot give it (no text of it)."""
    read = _store_read(path)
    if read.problem is not None:
        return read.problem
    found = next((s.data for s in read.sessions if s.session_id == member), None)
    return found if found is not None else "the store no longer holds this session"


def looked_for_roots(environ: Mapping[str, str] | None = None, user_home: Path | None = None) -> list[Path]:
    """Every processed format's session directory, found or not, in registry order (`user_home`:
    the home directory, `Path.home()` unless a test names another)."""
    environ = os.environ if environ is None else environ
    home = Path.home() if user_home is None else user_home
    return [root for signature in PROCESSED if signature.roots for root in signature.roots(environ, home)]


def roots_help() -> str:
    """The default roots as `--help` names them: every processed format's, under `~`, where they
    are when no agent's own variable moves them."""
    return ", ".join(str(root) for root in looked_for_roots({}, Path("~")))


def default_roots(environ: Mapping[str, str] | None = None, user_home: Path | None = None) -> list[Path]:
    """The session directories of the processed formats that exist on this machine (a run without
    paths reads them all); `RootError` naming where it looked when there is none."""
    looked = looked_for_roots(environ, user_home)
    found = [root for root in looked if root.is_dir()]
    if not found:
        places = ", ".join(map(str, looked))
        raise RootError(f"no session directory found (looked in {places}): name the paths to read")
    return found


def missing_compiled_cores() -> tuple[str, ...]:
    """What each format with a compiled reader says when its core was not built (a run logs it
    once): the pure-Python reference reads its sessions, several times slower."""
    return () if scanner_built() else (CLAUDE_CODE_CORE_NOTICE,)
