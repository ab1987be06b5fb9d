"""Session files an agent stores compressed: Codex's cold rollouts (`rollout-*.jsonl.zst`).

Recent Codex versions compress a rollout they no longer write to into one zstd stream beside
where the plain file was, and read both forms alike (the plain `.jsonl` wins when both exist).
Such a file is decompressed here, on read, so every stage sees the lines Codex sees, and a
candidate for it is compressed again before it is written, so Codex finds it where and as it
left it. zstd is the optional `zstd` extra: without it, or for a stream that does not decode,
the file is unreadable with a precise reason, never a traceback.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Final

from pipeline.errors import CompactionError, UnreadableSource

__all__ = [
    "COMPRESSED_SUFFIXES",
    "Compression",
    "UndecodableSource",
    "compress_as",
    "compression_of",
    "decompress",
]

COMPRESSED_SUFFIXES: Final = (".jsonl.zst",)
"""Session names read compressed (the plain suffix, then the compression's)."""
_ZSTD_LEVEL: Final = 3  # zstd's own default: what Codex's cold rollouts use


class Compression(StrEnum):
    """How a session file's bytes are stored."""

    NONE = "none"
    ZSTD = "zstd"


class UndecodableSource(UnreadableSource):
    """A compressed session file that cannot be decompressed here: unreadable, `reason` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        # UnreadableSource's own __init__ names an OSError's errno; there is none behind this.
        CompactionError.__init__(self, f"cannot decompress {path.name}: {reason}")


def compression_of(path: Path) -> Compression:
    """The compression a session file's name says it holds."""
    return Compression.ZSTD if path.name.endswith(COMPRESSED_SUFFIXES) else Compression.NONE


def decompress(path: Path, data: bytes) -> bytes:
    """The bytes a compressed session holds (the plain bytes when it is not compressed)."""
    if compression_of(path) is Compression.NONE:
        return data
    try:
        import zstandard  # noqa: PLC0415 - the optional `zstd` extra, loaded for compressed files only
    except ImportError as exc:
        raise UndecodableSource(path, "zstandard-not-installed") from exc
    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            return reader.read()
    except zstandard.ZstdError as exc:
        raise UndecodableSource(path, "zstd-stream-invalid") from exc


def compress_as(compression: Compression, data: bytes) -> bytes:
    """`data` stored as `compression` (a candidate written back as its source was stored)."""
    if compression is Compression.NONE:
        return data
    import zstandard  # noqa: PLC0415 - present: the source was decompressed with it

    return zstandard.ZstdCompressor(level=_ZSTD_LEVEL, write_content_size=True).compress(data)
