"""Read a session file's bytes: the pipeline's input edge.

The whole file is read in one call (chunked reads through the OS, never line by line) and kept
as one immutable bytes object; every later stage addresses lines by offset into it. Anything
else that reads a file whole streams it: its SHA-256 by chunks (`file_sha256`, the check before
publishing) and its lines one at a time (`iter_file_lines`), so no second copy of a giant
session is ever held.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pipeline.errors import NotARegularFile, UnreadableSource
from pipeline.read.compressed import Compression, compression_of, decompress

__all__ = [
    "WAL_SUFFIX",
    "SourceBytes",
    "StoreFiles",
    "file_sha256",
    "frozen_source",
    "iter_file_lines",
    "read_source",
    "read_store",
]


_BACKGROUND_DIGEST_FROM: Final = 256 * 1024  # bytes; below this the hand-over outweighs the hash
_BOM: Final = b"\xef\xbb\xbf"
_STORE_READS: Final = 3  # a database checkpointed this often while it is read is read next run
WAL_SUFFIX: Final = "-wal"  # SQLite's write-ahead log beside its database


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _HashingThreads:
    """The process's hashing threads, started once and reused: a thread started per file made
    every session wait for it to be scheduled (3-4 ms a file on a loaded machine). A forked child
    inherits none of the threads, so it starts its own pool."""

    def __init__(self) -> None:
        self._pid, self._pool = os.getpid(), ThreadPoolExecutor(thread_name_prefix="sha256")

    def submit(self, data: bytes) -> Future[str]:
        if self._pid != os.getpid():
            self._pid, self._pool = os.getpid(), ThreadPoolExecutor(thread_name_prefix="sha256")
        return self._pool.submit(_sha256_hex, data)


_HASHING: Final = _HashingThreads()


class _Digest:
    """SHA-256 computed on another core while the file is indexed (hashlib releases the GIL).

    A small file is hashed at once: handing it to another thread costs more than hashing it.
    """

    def __init__(self, data: bytes, known: str | None = None) -> None:
        self._value = known or ""
        self._future: Future[str] | None = None
        if known is not None:
            return
        if len(data) < _BACKGROUND_DIGEST_FROM:
            self._value = _sha256_hex(data)
            return
        self._future = _HASHING.submit(data)

    def value(self) -> str:
        if self._future is not None:
            self._value, self._future = self._future.result(), None
        return self._value


@dataclass(frozen=True, slots=True)
class SourceBytes:
    """One session file's bytes (decompressed, for a compressed file) and the SHA-256 of the file.

    The digest is always the file's own bytes' (what `file_sha256` and an in-place run's frozen
    copy hash), so a compressed session is held to the file as stored.
    """

    path: Path
    data: bytes
    _digest: _Digest = field(repr=False, compare=False)
    compression: Compression = Compression.NONE  # how the file stores `data`

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the bytes (waits for the background digest if still running)."""
        return self._digest.value()

    @property
    def size(self) -> int:
        """Size in bytes."""
        return len(self.data)


_KINDS: Final = ((stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"))


def _kind(mode: int) -> str:
    return next((kind for test, kind in _KINDS if test(mode)), "block device" if stat.S_ISBLK(mode) else "")


def read_source(path: Path) -> SourceBytes:
    """Read a whole file; an OS error becomes `UnreadableSource` carrying only the errno name.

    Opened non-blocking and checked before any read: a named pipe, socket or device (or a link to
    one) raises `NotARegularFile` instead of waiting for a writer or reading without end.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO or stat.S_ISSOCK(_mode_of(path)):  # a socket cannot be opened
            raise NotARegularFile(path, "socket") from exc
        raise UnreadableSource(path, exc) from exc
    with os.fdopen(descriptor, "rb") as stream:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, _kind(mode) or "directory")
        try:
            os.set_blocking(descriptor, True)
            data = stream.read()
        except OSError as exc:
            raise UnreadableSource(path, exc) from exc
    return _decoded(path, data, _Digest(data))


def _decoded(path: Path, stored: bytes, digest: _Digest) -> SourceBytes:
    """The source of a file's stored bytes: decompressed when its name says it is compressed
    (`UndecodableSource`, an `UnreadableSource`, when that cannot be done here)."""
    compression = compression_of(path)
    data = decompress(path, stored)
    return SourceBytes(path=path, data=data, _digest=digest, compression=compression)


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode
    except OSError:
        return 0


def frozen_source(path: Path, data: bytes, sha256: str) -> SourceBytes:
    """Bytes another step already read and hashed (an in-place run's frozen original): no re-read."""
    return _decoded(path, data, _Digest(data, sha256))


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file read by chunks (an OS error is the caller's to handle)."""
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def iter_file_lines(path: Path) -> Iterator[bytes]:
    """Every physical line of a file without its LF (the BOM removed), read one line at a time.

    The same lines as `data.removeprefix(BOM).split(b"\n")` of the whole file, except the empty
    piece that split leaves after a final newline (or for an empty file).
    """
    with path.open("rb") as stream:
        first = True
        for raw in stream:
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if first:
                line, first = line.removeprefix(_BOM), False
            yield line


@dataclass(frozen=True, slots=True)
class StoreFiles:
    """A database holding several sessions: its main file's bytes and its write-ahead log's
    (empty when there is none), read so that the one matches the other."""

    data: bytes
    wal: bytes


def _read_plain(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise UnreadableSource(path, exc) from exc


def read_store(path: Path) -> StoreFiles:
    """A database's main file, then its log, then the main file again: a checkpoint between the
    two reads (the log's pages copied in, the log restarted) changes the main file, and the pair is
    read again. `UnreadableSource` when it never holds still, or cannot be read."""
    data = read_source(path).data
    for _ in range(_STORE_READS):
        wal = _read_plain(path.with_name(path.name + WAL_SUFFIX))
        again = read_source(path).data
        if again == data:
            return StoreFiles(data, wal)
        data = again
    raise UnreadableSource(path, OSError(errno.EAGAIN, "changed while read"))
