"""Completion markers written and read back, the same way by every executor.

The options' digest is a SHA-256 of their canonical JSON (sorted keys, type names, only what
decides a report: fields a dataclass leaves out of its equality, and the sweep's worker count,
report directory, log format and resume switch, are not in it). A marker read back is trusted only when it
parses, names this command, this version and these options, the very bytes of the source
(size and SHA-256) and the report file beside it (its SHA-256), and, for a compression, the
candidate it wrote; anything else is ignored (the executor logs a note) and the session runs again.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path, PurePath
from typing import Final

import msgspec

from pipeline import __version__
from pipeline.report.completion import CompletionMarker, SourceStamp
from pipeline.report.compression import OutputSection
from pipeline.report.documents import (
    BriefReport,
    Compressed,
    CompressReport,
    ContextCompressReport,
    ContextTokensReport,
    ContextValidateReport,
    Counted,
    Failed,
    NotATranscript,
    Outcome,
    Refused,
    Report,
    Skipped,
    TokensReport,
    Unreadable,
    Unsupported,
    Validated,
    ValidateReport,
)

__all__ = ["canonical", "marker_bytes", "note_ignored", "options_digest", "sha256_file", "vouched_outcome"]


HASH_BLOCK_BYTES: Final = 1 << 22  # a source is hashed in 4 MiB reads: one block in memory at a time
_RUN_ONLY: Final = frozenset(
    {("SweepSettings", name) for name in ("jobs", "report_dir", "log_format", "resume")}
)
"""Fields that say how a run goes, never what a report says: a rerun with other values resumes."""
_OUTCOMES: Final[Mapping[str, type[Outcome]]] = {
    kind.__name__: kind
    for kind in (
        Validated,
        Compressed,
        Skipped,
        Refused,
        Counted,
        Unsupported,
        NotATranscript,
        Unreadable,
        Failed,
    )
}
_REPORTS: Final[Mapping[str, type[Report]]] = {
    kind.__name__: kind
    for kind in (
        BriefReport,
        ValidateReport,
        ContextValidateReport,
        CompressReport,
        ContextCompressReport,
        TokensReport,
        ContextTokensReport,
    )
}
_MARKER: Final = msgspec.json.Decoder(CompletionMarker)


def _fields(value: object) -> list[str] | None:
    """The fields of a dataclass or struct that say what it is; None for other values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = type(value).__name__
        return [f.name for f in dataclasses.fields(value) if f.compare and (kind, f.name) not in _RUN_ONLY]
    if isinstance(value, msgspec.Struct):
        return list(value.__struct_fields__)
    return None


def canonical(value: object) -> object:
    """`value` as plain JSON values, the same in every process; TypeError for what has none."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, PurePath):
        return str(value)
    fields = _fields(value)
    if fields is not None:
        return {
            "__type__": type(value).__name__,
            **{name: canonical(getattr(value, name)) for name in fields},
        }
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((canonical(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, Mapping):
        return {str(key): canonical(item) for key, item in value.items()}
    raise TypeError(f"{type(value).__name__} has no canonical JSON")


def options_digest(command: str, options: object) -> str | None:
    """The digest of what decides a session's report; None for options holding live objects (a
    model's open client): such a run leaves no markers and resumes nothing."""
    try:
        payload = {"command": command, "version": __version__, "options": canonical(options)}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def sha256_file(path: Path) -> str:
    """The SHA-256 of a local file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def marker_bytes(
    command: str, session: str, outcome: Outcome, report: bytes, digest: str, source: Path
) -> bytes | None:
    """The marker of a finished session; None when its report names no source digest (a crash)."""
    sha256 = outcome.report.session.sha256
    if not isinstance(sha256, str):
        return None  # a crash report names no source: the session runs again
    try:
        stat = source.stat()
    except OSError:
        return None
    marker = CompletionMarker(
        command=command,
        version=__version__,
        session=session,
        source=SourceStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=sha256),
        options_digest=digest,
        outcome=type(outcome).__name__,
        report_type=type(outcome.report).__name__,
        report_sha256=hashlib.sha256(report).hexdigest(),
        report=msgspec.Raw(msgspec.json.encode(outcome.report)),
    )
    return msgspec.json.encode(marker)


def _candidate_in_place(report: Report, outputs: Path | None) -> bool:
    output = getattr(report, "output", None)
    if not isinstance(output, OutputSection):
        return True  # no candidate to check
    path = outputs / output.path if outputs is not None else Path(output.path)
    try:
        return path.stat().st_size == output.bytes and sha256_file(path) == output.sha256
    except OSError:
        return False


def note_ignored(session: str, why: str) -> None:
    """The note of a marker not trusted (logged where the run's logging is: the executor's process)."""
    import structlog  # noqa: PLC0415 - the executor's process only: a worker never starts logging

    structlog.get_logger(__name__).warning("completion_marker_ignored", session=session, why=why)


def _marker(data: bytes, session: str) -> CompletionMarker | str:
    try:
        marker = _MARKER.decode(data)
    except msgspec.DecodeError as exc:
        return f"unreadable: {exc}"
    if marker.session != session or marker.outcome not in _OUTCOMES or marker.report_type not in _REPORTS:
        return "names another session, outcome or report type"
    return marker


def _same_source(marker: CompletionMarker, source: Path) -> bool:
    try:
        return source.stat().st_size == marker.source.size and sha256_file(source) == marker.source.sha256
    except OSError:
        return False


def _vouched_report(
    marker: CompletionMarker, report_data: bytes | None, outputs: Path | None
) -> Report | str:
    """The report the marker carries, or why it cannot be trusted."""
    if report_data is None or hashlib.sha256(report_data).hexdigest() != marker.report_sha256:
        return "its report is missing or was changed"
    try:
        report = msgspec.json.decode(marker.report, type=_REPORTS[marker.report_type])
    except msgspec.DecodeError as exc:
        return f"its report does not read back: {exc}"
    return report if _candidate_in_place(report, outputs) else "its candidate is missing or was changed"


def vouched_outcome(
    data: bytes,
    *,
    command: str,
    session: str,
    label: str,
    digest: str,
    source: Path,
    read_report: Callable[[], bytes | None],
    outputs: Path | None = None,
) -> Outcome | str:
    """The outcome a marker vouches for, if it was made from this source with these options and
    its report (and candidate, under `outputs`) are still the ones it names; otherwise why not."""
    marker = _marker(data, session)
    if isinstance(marker, str):
        return marker
    report: Report | str
    if (marker.command, marker.version, marker.options_digest) != (command, __version__, digest):
        report = "made by another command, version or options"
    elif not _same_source(marker, source):
        report = "the source's bytes changed"
    else:
        report = _vouched_report(marker, read_report(), outputs)
    if isinstance(report, str):
        return report
    return _OUTCOMES[marker.outcome](label, report)
