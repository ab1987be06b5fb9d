"""`compress --in-place`: the compress job run on a session's frozen bytes, as the in-place build step.

The in-place run reads and hashes the original once (`pipeline.publish.freeze_source`).
`build_frozen` runs the stages of `compress` on exactly those bytes (no second hash, no re-read
before writing, nothing written; the resume gate's scratch lives in the work directory) and
hands back the checked (and, with the gate, Claude Code-proven) candidate's bytes with the job's
outcome. In a worker process, `build_read` first reads the frozen file from the page cache and
holds it to the frozen digest: cheaper than shipping the bytes through the worker's pipe.
`as_candidate` turns the answer into what the transaction takes: its validator checks, by
digest, that the bytes about to be published are the very bytes the candidate check passed and
Claude Code resumed (the check itself ran on them in the worker).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from msgspec import UNSET

from pipeline import __version__
from pipeline.errors import UnreadableSource
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.context_compress import compress_context, context_output
from pipeline.jobs.compress.job import compress_analysis, output_section
from pipeline.jobs.compress.options import ENGINE_VERSION, CompressOptions
from pipeline.jobs.compress.stages import Candidate as Checked
from pipeline.jobs.compress.stages import Stop
from pipeline.jobs.front import Analysis, open_source
from pipeline.publish.live.decisions import Candidate, Declined
from pipeline.publish.live.session_pass import BuildCandidate
from pipeline.publish.live.source import FrozenSource
from pipeline.read.compressed import compress_as
from pipeline.read.load import SourceBytes, frozen_source, read_source
from pipeline.reasons import Refusal
from pipeline.report.compression import OutputSection
from pipeline.report.documents import CompressReport, ContextCompressReport, Outcome, crashed
from pipeline.report.resume_context import ContextOutputSection
from pipeline.summarize.model.outcomes import SummaryOutcome
from pipeline.vocabulary import SessionStatus, Verdict

__all__ = [
    "CANDIDATE_DIFFERS",
    "Built",
    "as_candidate",
    "build_frozen",
    "build_read",
    "compress_builder",
    "config_digest",
]

CANDIDATE_DIFFERS: Final = "candidate-differs-from-checked"
CHANGED: Final = "source-changed"  # the worker found other bytes than the frozen ones
# Statuses the same bytes would get again under the same configuration: recorded, then skipped
# (the summaries in place are the deterministic summarizer's). Not skipped-run-budget: that is
# the run's, not the session's.
_FINAL: Final = frozenset(
    {
        SessionStatus.SKIPPED_SMALL,
        SessionStatus.SKIPPED_FITS,
        SessionStatus.SKIPPED_NO_CUT,
        SessionStatus.SKIPPED_LOW_GAIN,
        SessionStatus.SKIPPED_SUBAGENT,
        SessionStatus.SKIPPED_NOT_RESUMED,
        SessionStatus.UNSUPPORTED_FORMAT,
        SessionStatus.NOT_A_TRANSCRIPT,
        SessionStatus.REFUSED,
    }
)
# Refusals a later run may not repeat: Claude Code failed to run, the file changed meanwhile, or
# the model's provider failed (unreachable, retries spent) or the run was stopped during the call.
_TRANSIENT: Final = frozenset(
    {
        Refusal.RESUME_CHECK_FAILED.value,
        Refusal.SOURCE_CHANGED.value,
        f"{Refusal.SUMMARY.value}-{SummaryOutcome.PROVIDER_FAILURE.value}",
        f"{Refusal.SUMMARY.value}-{SummaryOutcome.ABORTED.value}",
    }
)
# What does not change a candidate's bytes or the decision to build one.
_NOT_SHAPING: Final = frozenset({"jobs", "report_dir", "log_format", "out_dir", "root_label"})


@dataclass(frozen=True, slots=True)
class Built:
    """A worker's answer for one frozen session: the job's outcome and, when compressed, the candidate.

    No outcome: the file no longer held the frozen bytes when the worker read it.
    """

    outcome: Outcome | None
    candidate: bytes | None
    candidate_sha256: str | None

    @property
    def proven(self) -> bool:
        """Claude Code (Codex, for a rollout) resumed the candidate as the original (the resume
        gate's verdict is a match)."""
        report = self.outcome.report if self.outcome is not None else None
        if not isinstance(report, CompressReport | ContextCompressReport) or report.resume_check is UNSET:
            return False
        return report.resume_check.verdict is Verdict.MATCH


class _Kept:
    """The in-place publisher: keeps the candidate's bytes in memory instead of writing them."""

    def __init__(self) -> None:
        self.data: bytes | None = None

    def __call__(
        self, analysis: Analysis, options: CompressOptions, candidate: Checked
    ) -> OutputSection | Stop:
        self.data = candidate.composed.data
        return output_section(analysis, candidate, analysis.label)


class _KeptContext:
    """The same for a candidate read through the seam (the agent's own compaction form, checked
    in the job)."""

    def __init__(self) -> None:
        self.data: bytes | None = None

    def __call__(
        self, source: SourceBytes, label: str, options: CompressOptions, data: bytes, summary_line: int
    ) -> ContextOutputSection:
        self.data = compress_as(source.compression, data)  # a compressed session goes back compressed
        return context_output(label, data, source, summary_line)


@contextlib.contextmanager
def _scratch_in(directory: str | None) -> Iterator[None]:
    """Temporary files (the resume gate's staged copies and homes) go to the work directory."""
    before = tempfile.tempdir
    if directory:
        tempfile.tempdir = directory
    try:
        yield
    finally:
        tempfile.tempdir = before


def build_frozen(
    data: bytes, sha256: str, path: str, label: str, options: CompressOptions, scratch: str | None
) -> Built:
    """Compress a session's frozen bytes; `path` is only where the resume gate finds the original."""
    return _build_source(frozen_source(Path(path), data, sha256), label, options, scratch)


def _build_source(source: SourceBytes, label: str, options: CompressOptions, scratch: str | None) -> Built:
    started = time.perf_counter()
    kept_context = _KeptContext()
    with _scratch_in(scratch):  # a session's resume gate runs in here
        opened = open_source(
            label,
            source,
            options.topology(),
            command="compress",
            per_code=options.sweep.findings_per_code,
            limits=LineLimits.of(options.sweep),
            contexts=lambda agent, context_label, context_source: compress_context(
                agent, context_label, context_source, options, kept_context
            ),
        )
    if not isinstance(opened, Analysis):
        if kept_context.data is None or opened.status is not SessionStatus.COMPRESSED:
            return Built(opened, None, None)
        return Built(opened, kept_context.data, hashlib.sha256(kept_context.data).hexdigest())
    kept = _Kept()
    with _scratch_in(scratch):
        outcome = compress_analysis(opened, options, kept, started=started)
    report = outcome.report
    if kept.data is None or not isinstance(report, CompressReport) or report.output is UNSET:
        return Built(outcome, None, None)
    return Built(outcome, kept.data, report.output.sha256)


def build_read(path: str, sha256: str, label: str, options: CompressOptions, scratch: str | None) -> Built:
    """`build_frozen` in a worker process, which reads the frozen file itself and holds it to the
    frozen digest (bytes that changed meanwhile are not built on: the session changed during the run).

    Reading the file again from the page cache and hashing it in the worker costs far less than
    shipping the frozen bytes through the worker's pipe, and runs on the worker's core; an
    unexpected exception becomes this session's crash.
    """
    try:
        source = read_source(Path(path))
        if source.sha256 != sha256:
            return Built(None, None, None)
        return _build_source(source, label, options, scratch)
    except UnreadableSource:
        return Built(None, None, None)
    except Exception:
        return Built(
            crashed(label, traceback.format_exc(), per_code=options.sweep.findings_per_code), None, None
        )


def as_candidate(built: Built) -> Candidate | Declined:
    """The in-place run's view of a worker's answer."""
    outcome = built.outcome
    if outcome is None:  # the file changed after it was frozen: nothing to record, nothing to report
        return Declined(CHANGED, (Refusal.SOURCE_CHANGED.value,), final=False)
    if built.candidate is None or built.candidate_sha256 is None:
        report = outcome.report
        reasons = (
            tuple(report.reasons or ()) if isinstance(report, CompressReport | ContextCompressReport) else ()
        )
        final = outcome.status in _FINAL and not _TRANSIENT.intersection(reasons)
        return Declined(outcome.status.value, reasons, final, failed=outcome.failed, job=outcome)
    expected = built.candidate_sha256

    def validate(data: bytes) -> tuple[str, ...]:
        return () if hashlib.sha256(data).hexdigest() == expected else (CANDIDATE_DIFFERS,)

    return Candidate(built.candidate, validate, built.proven, outcome.status.value, job=outcome)


def compress_builder(options: CompressOptions) -> BuildCandidate:
    """The build step in this process (tests, the crash driver): `build_frozen`, then `as_candidate`."""

    def build(frozen: FrozenSource, work_dir: Path) -> Candidate | Declined:
        built = build_frozen(
            frozen.data, frozen.sha256, str(frozen.path), frozen.target.label, options, str(work_dir)
        )
        return as_candidate(built)

    return build


def config_digest(options: CompressOptions, model: Mapping[str, object] | None = None) -> str:
    """Engine, package version and every option that shapes the output or the decision, hashed
    (with a model summarizer: its provider, model, window, output bound and pack bounds too).

    A session declined under one digest is skipped while it and the digest stay the same.
    """
    sections = {
        name: {k: v for k, v in values.items() if k not in _NOT_SHAPING}
        if isinstance(values, dict)
        else values
        for name, values in asdict(options).items()
        if name not in _NOT_SHAPING
    }
    shaping: dict[str, object] = {"engine": ENGINE_VERSION, "version": __version__, "options": sections}
    if model is not None:  # absent for the embedded summarizer: the digests states hold stay valid
        shaping["model"] = model
    text = json.dumps(shaping, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
