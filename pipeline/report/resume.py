"""Resume markers: what a finished session leaves beside its report so a rerun can skip it.

A marker names the source's SHA-256 and the digest of the options its report was made with, and
carries the typed outcome, so a skipped session still counts in `summary.json` exactly as when it
ran. It is a pickle read back by an unpickler that builds report values only (msgspec cannot
decode every report type back from JSON: some fields are unions of several string enums). The
report file stays the bytes a local run writes; the marker lives beside it under `.resume/`.
"""

from __future__ import annotations

import enum
import hashlib
import io
import pickle
from dataclasses import dataclass, replace
from typing import Any, Final

import msgspec

from pipeline import __version__
from pipeline.report.documents import Outcome

__all__ = ["MARKER_DIR", "ResumeMarker", "config_digest", "marker_bytes", "marker_label", "resumed_outcome"]

MARKER_DIR: Final = ".resume"
_TRUSTED_MODULES: Final = ("pipeline.report.", "pipeline.vocabulary", "pipeline.reasons", "pipeline.findings")
_TRUSTED_NAMES: Final = frozenset({("msgspec._core", "UNSET"), ("msgspec._utils", "rebuild")})


@dataclass(frozen=True, slots=True)
class ResumeMarker:
    """A finished session: which source, which options, and what came of it."""

    sha256: str
    config_digest: str
    outcome: Outcome


class _ReportUnpickler(pickle.Unpickler):
    """Loads report values only: enums, report structs and outcomes of this package, nothing else.

    A marker may come from a shared bucket; restricting globals (the `pickle` documentation's
    recipe) means a forged one can build our own frozen values at worst, never run code.
    """

    def find_class(self, module: str, name: str, /) -> Any:
        if (module, name) in _TRUSTED_NAMES:
            return super().find_class(module, name)
        if module.startswith(_TRUSTED_MODULES):
            found = super().find_class(module, name)
            if isinstance(found, type) and issubclass(
                found, msgspec.Struct | enum.Enum | Outcome | ResumeMarker
            ):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a report")


def config_digest(command: str, options: object) -> str:
    """A digest of what decides a session's report: the command, this version, its options.

    Options are frozen dataclasses of settings values, whose `repr` is stable across processes.
    """
    text = f"{command}\0{__version__}\0{options!r}"
    return hashlib.sha256(text.encode()).hexdigest()


def marker_label(report_label: str) -> str:
    """Where a session's marker lives under the report directory."""
    return f"{MARKER_DIR}/{report_label}.done.pickle"


def marker_bytes(outcome: Outcome, digest: str) -> bytes | None:
    """The marker of a finished session; None when its report names no source digest (a crash)."""
    sha256 = outcome.report.session.sha256
    if not isinstance(sha256, str):
        return None  # a crash report names no source: the session runs again on resume
    return pickle.dumps(ResumeMarker(sha256, digest, replace(outcome, error=None)), protocol=5)


def resumed_outcome(data: bytes, sha256: str, digest: str) -> Outcome | None:
    """The outcome a marker records, if it was made from this source with these options."""
    try:
        marker = _ReportUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError, ImportError):
        return None  # an unreadable or foreign marker: run the session again
    if not isinstance(marker, ResumeMarker) or (marker.sha256, marker.config_digest) != (sha256, digest):
        return None
    return marker.outcome
