"""The one writer of `compress --out` candidates, whatever the format: re-read the source and
refuse if it changed since it was read, refuse a destination that is the source itself, and
write the candidate atomically under the output directory, stored as the source is (a
compressed session's candidate compressed the same way)."""

from __future__ import annotations

from pathlib import Path

from pipeline.jobs.compress.options import CompressOptions, candidate_path
from pipeline.publish.files import write_bytes_atomic
from pipeline.read.compressed import compress_as
from pipeline.read.load import SourceBytes, file_sha256
from pipeline.reasons import Reason, Refusal

__all__ = ["write_candidate_at", "write_candidate_file"]


def write_candidate_file(
    source: SourceBytes, label: str, options: CompressOptions, data: bytes
) -> str | Reason:
    """Write the candidate of `source` (named `label` in the run); the path written, relative to
    the output directory, or the refusal why nothing was written."""
    out_dir = Path(options.out_dir)
    return write_candidate_at(source, out_dir, candidate_path(out_dir, options.root_label, label), data)


def write_candidate_at(source: SourceBytes, out_dir: Path, destination: Path, data: bytes) -> str | Reason:
    """Write `data` as the candidate of `source` at `destination` under `out_dir` (any command's
    candidate: compress's, a repair's or a vacuum's); the path written relative to `out_dir`."""
    if file_sha256(source.path) != source.sha256:
        return Reason(Refusal.SOURCE_CHANGED)
    if destination.resolve() == source.path.resolve():
        return Reason(Refusal.OUTPUT_WOULD_OVERWRITE_SOURCE)
    write_bytes_atomic(destination, compress_as(source.compression, data))
    return destination.relative_to(out_dir).as_posix()
