"""The fleet summary of validate and compress, built from typed outcomes (never from files)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from pipeline.jobs.compress import compress_session
from pipeline.jobs.validate import validate_session
from pipeline.proof.claude_code.resume_verdict import ResumeVerdict
from pipeline.proof.claude_code.sent_context import SentContext
from pipeline.proof.context import ContextSize
from pipeline.report.documents import Compressed, CompressReport, ContextCompressReport, Outcome
from pipeline.report.fleet import ValidateRun, summary_report
from pipeline.report.render import to_builtins
from pipeline.report.resume_check import resume_check_section
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import compress_options, validate_options
from pipeline.vocabulary import Verdict
from tests.support.rollout_builder import RolloutBuilder

RUN = ValidateRun(
    leaf_policy="auto", resume_leaf=None, max_extension=0, checkpoint_policy="active-correlated",
    max_snapshots=80, jobs=1, settings_sources=[],
)  # fmt: skip


def summary_of(outcomes: dict[str, Outcome], command: str = "compress") -> dict[str, object]:
    built = summary_report(outcomes, command=command, options=RUN, report_paths={}, elapsed_ms=1, roots=[])
    data: dict[str, object] = to_builtins(built)
    return data


def proved(outcome: Outcome, before: int, after: int, ms: float) -> Compressed:
    """A compressed outcome whose report carries a resume check of these sizes and cost."""
    sent = (
        SentContext((), (), ContextSize(2, before, before // 4)),
        SentContext((), (), ContextSize(1, after, after // 4)),
    )
    check = resume_check_section(ResumeVerdict(Verdict.MATCH, (), 1, 1, *sent), ms)
    assert isinstance(outcome.report, CompressReport | ContextCompressReport)
    return Compressed(outcome.label, msgspec.structs.replace(outcome.report, resume_check=check))


def test_statuses_verdicts_sources_bytes_and_tokens_are_totalled(tmp_path: Path) -> None:
    paths = [tmp_path / f"s{i}.jsonl" for i in range(3)]
    for i, path in enumerate(paths):
        build_session(path, turns=2 + i, seed=i)
    outcomes = {p.name: validate_session(p, p.name, validate_options()) for p in paths}
    summary = summary_of(outcomes, "validate")
    assert summary["sessions"] == 3 and summary["command"] == "validate"
    assert summary["bytes"] == sum(p.stat().st_size for p in paths)
    assert summary["seed_tokens"] == sum(
        to_builtins(o.report)["tokens"]["session"] for o in outcomes.values()
    )
    assert sum(summary["by_status"].values()) == 3  # type: ignore[attr-defined]
    assert summary["by_leaf_source"] == {"last-prompt": 3}
    assert "resume_checks" not in summary


def test_resume_checks_are_totalled_with_their_cost(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=8)
    base = compress_session(
        source, source.name, compress_options(tmp_path / "out", min_tokens=0, min_recent_records=8)
    )
    assert isinstance(base, Compressed), to_builtins(base.report).get("reasons")
    outcomes: dict[str, Outcome] = {f"s{i}": proved(base, 100 * i, 40 * i, 1000.0 * i) for i in range(1, 11)}
    assert summary_of(outcomes)["resume_checks"] == {
        "by_verdict": {"match": 10},
        "sent_by_claude_code": {
            "original": {"characters": 5500, "estimated_tokens": 1375, "messages": 20},
            "compacted": {"characters": 2200, "estimated_tokens": 550, "messages": 10},
        },
        # what the gate cost: per session (nearest-rank median and p90) and summed
        "cost_ms": {"total": 55000.0, "median": 5000.0, "p90": 9000.0},
    }


def test_codex_resume_checks_are_totalled_apart_from_claude_codes(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=8)
    claude = compress_session(
        source, source.name, compress_options(tmp_path / "out", min_tokens=0, min_recent_records=8)
    )
    rollout = RolloutBuilder(seed=2)
    for number in range(12):
        rollout.exchange(f"task {number}: fix module_{number}.py", tools=3, output_bytes=3000)
    written = rollout.write(tmp_path / "rollout-2026-03-01T12-00-00-x.jsonl")
    codex = compress_session(written, written.name, compress_options(tmp_path / "out", min_tokens=0))
    assert isinstance(claude, Compressed) and isinstance(codex, Compressed)
    outcomes: dict[str, Outcome] = {
        "claude": proved(claude, 400, 100, 10.0),
        "codex": proved(codex, 800, 80, 30.0),
    }
    checks = summary_of(outcomes)["resume_checks"]
    assert checks["by_verdict"] == {"match": 2}
    assert checks["sent_by_claude_code"]["original"]["characters"] == 400
    assert checks["sent_by_format"]["codex-rollout"] == {
        "original": {"characters": 800, "estimated_tokens": 200, "messages": 2},
        "compacted": {"characters": 80, "estimated_tokens": 20, "messages": 1},
    }
    assert checks["cost_ms"]["total"] == 40.0
