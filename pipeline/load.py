"""Read a session file's bytes: the pipeline's input edge.

The whole file is read in one call (chunked reads through the OS, never line by line) and kept
as one immutable bytes object; every later stage addresses lines by offset into it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import UnreadableSource

__all__ = ["SourceBytes", "read_source"]


@dataclass(frozen=True, slots=True)
class SourceBytes:
    """One session file's exact bytes and their SHA-256."""

    path: Path
    data: bytes
    sha256: str

    @property
    def size(self) -> int:
        """Size in bytes."""
        return len(self.data)


def read_source(path: Path) -> SourceBytes:
    """Read a whole file; an OS error becomes `UnreadableSource` carrying only the errno name."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableSource(path, exc) from exc
    return SourceBytes(path=path, data=data, sha256=hashlib.sha256(data).hexdigest())
