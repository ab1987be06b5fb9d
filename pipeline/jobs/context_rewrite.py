"""`repair` and `vacuum` of a session read through the seam (`agents/protocol.py`): the file
rewritten, its client sending the same context.

read -> gate (a subagent's session, a file its client does not resume) -> the format's rewrite
-> the check, pure: the rewritten bytes re-read send the original's items digest for digest (with
the items the rewrite declares it changes, `Rewrite.sent`, put in), hold none of the findings the
rewrite removes and no finding the original did not -> the judge (the agent's own client resumes
both and must send the same, item for item, but the declared items) -> the bytes to publish
(`--out`: a candidate file; `--in-place`: the live-replacement transaction). A session that stops
at any step gets a report saying why, and nothing is written.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec
from msgspec import UnsetType

from pipeline.agents.protocol import ContextFormat, ContextSession, JudgedPair, SentEditsJudge
from pipeline.findings import Finding
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteKind, RewriteRefusal, expected_sent
from pipeline.installed import JudgeError
from pipeline.read.load import SourceBytes
from pipeline.reasons import Reason, Refusal, SkipReason
from pipeline.report.resume_check import ResumeCheckSection, judge_not_found, resume_check_failed
from pipeline.report.rewrite_documents import RewriteEditEntry, RewriteReport, RewriteStatus
from pipeline.vocabulary import ResumeGate, SessionKind, Severity, SourceFormat

__all__ = [
    "NOT_RESUMED",
    "REREAD_DIFFERS",
    "NoJudgeOfSentEdits",
    "RewriteOptions",
    "Rewritten",
    "check_rewrite",
    "no_such_rewrite",
    "rewrite_session",
    "written_status",
]

NOT_RESUMED = SkipReason.NOT_RESUMED.value  # a checkpoint, a legacy document: nothing to rewrite
REREAD_DIFFERS = "rewrite-reread-differs"  # the rewritten file does not send what the original sends


class NoJudgeOfSentEdits(JudgeError):
    """The format's judge cannot prove a rewrite that changes what its client sends."""


def no_such_rewrite(source_format: SourceFormat | str, kind: RewriteKind) -> str:
    """The reason a session of a format without that rewrite is skipped."""
    return f"no-{kind.value}-for-{source_format}"


@dataclass(frozen=True, slots=True)
class RewriteOptions:
    """What one rewrite run needs: the kind, the readers' limits, the resume gate and its clients."""

    kind: RewriteKind
    limits: LineLimits
    gate: ResumeGate
    judges: Mapping[SourceFormat, str]  # the client found for each format
    timeout_seconds: float


@dataclass(frozen=True, slots=True)
class Rewritten:
    """The session's report, and the checked (and, with the gate, proven) bytes to publish."""

    report: RewriteReport
    data: bytes | None = None

    @property
    def proven(self) -> bool:
        """The agent's client resumed both files and sent the same."""
        check = self.report.resume_check
        return not isinstance(check, UnsetType) and check.verdict.value == "match"


def written_status(kind: RewriteKind) -> RewriteStatus:
    """The status of a session whose rewrite was published."""
    return RewriteStatus.REPAIRED if kind is RewriteKind.REPAIR else RewriteStatus.VACUUMED


def _by_code(findings: tuple[Finding, ...]) -> dict[str, int]:
    return dict(sorted(Counter(f.code.value for f in findings).items()))


def _gate(
    agent: ContextFormat, session: ContextSession, kind: RewriteKind
) -> tuple[RewriteStatus, str] | None:
    if kind not in agent.rewrites:
        return RewriteStatus.SKIPPED, no_such_rewrite(agent.format, kind)
    if session.kind is SessionKind.SUBAGENT:
        return RewriteStatus.SKIPPED_SUBAGENT, SkipReason.SUBAGENT.value
    if session.resumable:
        return None
    errors = sorted({f.code.value for f in session.findings if f.severity is Severity.ERROR})
    if errors:  # resumable by its kind, broken: refused with what is wrong
        return RewriteStatus.REFUSED, ",".join([str(Reason(Refusal.TOPOLOGY)), *errors])
    return RewriteStatus.SKIPPED, NOT_RESUMED


def check_rewrite(session: ContextSession, after: ContextSession, rewrite: Rewrite) -> list[str]:
    """Why the rewritten file (`after`, re-read) is not the original as its client rebuilds it
    (with the items the rewrite declares put in): other items sent, a repaired finding left, a
    finding the original did not have (empty: none)."""
    problems: list[str] = []
    expected = expected_sent([i.digest for i in session.sent()], rewrite.sent)
    if [i.digest for i in after.sent()] != expected:
        problems.append(REREAD_DIFFERS)
    before, now = Counter(f.code for f in session.findings), Counter(f.code for f in after.findings)
    problems += [f"finding-remains-{code.value}" for code in sorted(rewrite.repaired) if now[code]]
    problems += [
        f"finding-new-{code.value}"
        for code in sorted(now)
        if code not in rewrite.repaired and now[code] > before[code]
    ]
    return problems


def _staged(scratch: Path, side: str, name: str, data: bytes) -> Path:
    folder = scratch / side
    folder.mkdir()
    (folder / name).write_bytes(data)
    return folder / name


def _prove(
    agent: ContextFormat, staged: tuple[Path, Path], rewrite: Rewrite, options: RewriteOptions
) -> JudgedPair:
    """The judge's verdict: the same context from both, or the original's with the declared items."""
    executable = Path(options.judges[agent.format])
    if not rewrite.sent:
        return agent.judge.prove(
            *staged,
            executable=executable,
            timeout=options.timeout_seconds,
            limits=options.limits,
            excluded=(),  # a rewrite drops nothing the client sends, and adds no text of its own
            summaries=(),  # no summary: every item the same
        )
    if not isinstance(agent.judge, SentEditsJudge):
        raise NoJudgeOfSentEdits
    return agent.judge.prove_edits(
        *staged,
        executable=executable,
        timeout=options.timeout_seconds,
        limits=options.limits,
        edits=rewrite.sent,
    )


def _judged(
    agent: ContextFormat, source: SourceBytes, rewrite: Rewrite, options: RewriteOptions
) -> tuple[ResumeCheckSection, str | None]:
    """The judge's section, and a refusal unless the client sends the same for both files."""
    executable = options.judges.get(agent.format)
    if executable is None:
        client = agent.judge.client
        note = f"{client.name} not found, so the resume check could not run ({client.install_hint})"
        refusal = Refusal.RESUME_CHECK_FAILED.value if options.gate is ResumeGate.ON else None
        return judge_not_found(client.not_installed, note), refusal
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compaction-rewrite-") as scratch:
        name = source.path.name.removesuffix(".zst")
        original = _staged(Path(scratch), "original", name, source.data)
        rewritten = _staged(Path(scratch), "candidate", name, rewrite.data)
        try:
            judged = _prove(agent, (original, rewritten), rewrite, options)
        except JudgeError as exc:
            elapsed = round((time.perf_counter() - started) * 1000, 1)
            return resume_check_failed(exc.code, elapsed), Refusal.RESUME_CHECK_FAILED.value
    check = judged.section(round((time.perf_counter() - started) * 1000, 1))
    return check, None if judged.ok else Refusal.RESUME_MISMATCH.value


def rewrite_session(
    agent: ContextFormat, label: str, source: SourceBytes, options: RewriteOptions, *, mode: str, prove: bool
) -> Rewritten:
    """Rewrite one session's bytes, checked and (with `prove` and the gate on) judged; nothing is
    written here: the caller publishes `Rewritten.data`."""
    session = agent.read(source.data, source.path, options.limits)
    base = RewriteReport(
        command=options.kind.value,
        session=label,
        format=agent.format.value,
        mode=mode,
        status=RewriteStatus.UNCHANGED,
        findings_before=_by_code(session.findings),
        bytes_before=source.size,
        frozen_sha256=source.sha256,
    )
    stop = _gate(agent, session, options.kind)
    if stop is not None:
        return Rewritten(_with(base, status=stop[0], reasons=[stop[1]]))
    rewrite = session.rewrite(options.kind, options.limits)
    if isinstance(rewrite, RewriteRefusal):
        return Rewritten(_with(base, status=RewriteStatus.REFUSED, reasons=[rewrite.reason]))
    if rewrite is None or rewrite.data == source.data:
        return Rewritten(_with(base, sent_items=len(session.sent())))
    return _checked(agent, (source, session), rewrite, base, options, prove=prove)


def _checked(
    agent: ContextFormat,
    original: tuple[SourceBytes, ContextSession],
    rewrite: Rewrite,
    base: RewriteReport,
    options: RewriteOptions,
    *,
    prove: bool,
) -> Rewritten:
    """The rewrite re-read and checked against the original, then judged when asked."""
    source, session = original
    after = agent.read(rewrite.data, None, options.limits)
    made = _with(
        base,
        edits=[
            RewriteEditEntry(
                line=e.line, code=e.code.value if e.code else None, change=e.change, count=e.count
            )
            for e in rewrite.edits
        ],
        findings_after=_by_code(after.findings),
        sent_items=len(session.sent()),
        bytes_after=len(rewrite.data),
        candidate_sha256=hashlib.sha256(rewrite.data).hexdigest(),
        status=RewriteStatus.PLANNED,
    )
    problems = check_rewrite(session, after, rewrite)
    if problems:
        return Rewritten(_with(made, status=RewriteStatus.REFUSED, reasons=problems))
    if not prove or options.gate is ResumeGate.OFF:
        return Rewritten(made, rewrite.data)
    check, refusal = _judged(agent, source, rewrite, options)
    judged = _with(made, resume_check=check)
    if refusal is not None:
        return Rewritten(_with(judged, status=RewriteStatus.REFUSED, reasons=[refusal]))
    return Rewritten(judged, rewrite.data)


def _with(report: RewriteReport, **changes: object) -> RewriteReport:
    return msgspec.structs.replace(report, **changes)
