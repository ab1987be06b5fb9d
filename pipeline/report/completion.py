"""Completion markers: what a finished session leaves beside its report so a later run can skip it.

A marker is JSON (never a pickle: it may be read back from a shared bucket) and names what its
report was made from: the source's size, mtime and SHA-256, a digest of the canonical JSON of the
options, the command and this version; and which report it vouches for (the report file's
SHA-256) with the typed report itself (its type, the outcome's kind, its values), so a skipped
session counts in `summary.json` exactly as when it ran. The report file stays the bytes any run
writes; the marker lives beside it under `.resume/`.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = ["COMPLETION_SCHEMA", "MARKER_DIR", "CompletionMarker", "SourceStamp", "marker_label"]

COMPLETION_SCHEMA: Final = "compaction.completion/1"
MARKER_DIR: Final = ".resume"


class SourceStamp(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The bytes a report was made from."""

    size: int
    mtime_ns: int
    sha256: str


class CompletionMarker(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One finished session: which source, which options, and which report came of it."""

    schema: str = COMPLETION_SCHEMA
    command: str
    version: str
    session: str  # the report label
    source: SourceStamp
    options_digest: str
    outcome: str  # the outcome's kind (`Validated`, `Compressed`, ...)
    report_type: str  # the report's type (`ValidateReport`, ...)
    report_sha256: str  # the report file this marker vouches for
    report: msgspec.Raw  # the typed report's own JSON (the rendered file flattens some sections)


def marker_label(report_label: str) -> str:
    """Where a session's marker lives under the report directory."""
    return f"{MARKER_DIR}/{report_label}.done.json"
