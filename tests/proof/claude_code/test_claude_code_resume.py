"""Real Claude Code 2.1.332, resuming offline against the capture server, sends the golden context.

(a) Resuming an original corpus file reproduces its golden context block for block. (b) Resuming
the candidate `compaction compress` wrote for a corpus file gives the compact summary as a user
text followed by a suffix of the source's golden context: compaction changed how much history
the model sees, never what the recent part means.

The model is pinned per file to the one the golden run used (`resumed_model` on the golden day),
because Claude Code otherwise restores the session's model only while it is not retired, judged on
the day of the run; the model decides which thinking blocks are sent. Without Claude Code the
tests fail and say how to install it (skipped only where npm is missing, see conftest). Deselect
with `-m "not claude_code"` on purpose.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from pipeline.proof.claude_code.client import ResumeResult, resume
from pipeline.proof.claude_code.expected import expected_context
from pipeline.proof.claude_code.model import resumed_model
from pipeline.proof.claude_code.prove import summary_texts
from pipeline.proof.claude_code.sent_context import TEXT_PREFIX_CHARS, ContextBlock
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.scenarios import SCENARIOS, build_scenario
from pipeline.testing.settings import default_settings
from tests.conftest import RESUME_GATE_ENV
from tests.support.resolved import resolve

pytestmark = pytest.mark.claude_code

GOLDEN_RECORDED_ON = "2026-11-30"
TIMEOUT = (
    default_settings().verify.resume_timeout_seconds
)  # model retirement is judged as of the golden run's day

# Resumes run concurrently; each is one Claude Code process (~1 core for 10-20 s) plus a fake API.
WORKERS = 3
COMPRESS_TIMEOUT_SECONDS = 240

# Behaviour covered -> original corpus file.
ORIGINALS = {
    "parallel-tool-calls": "codemie-ai__codemie-code__tests_integration_session_fixtures_claude_"
    "-tmp-private_4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
    "compact-boundary": "codemie-ai__codemie-code__tests_integration_session_fixtures_session-624a4a58.jsonl",
    "local-command-ending": "iansherr__claude-code-log__test_test_data_real_projects_-experiments-ideas_"
    "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
    "subagent-refused": "marot__spotter__test_fixtures_transcripts_4d5611e5-241a-462a-8d15-5122611a9569_"
    "subagents_agent-acompact-e1f845.jsonl",
    "sonnet-thinking-dropped": "codemie-ai__codemie-code__tests_integration_session_fixtures_"
    "session-9eda1058.jsonl",
    "unanswered-trailing-call": "slopus__happy__packages_happy-cli_src_claude_utils___fixtures___"
    "task_sdk.jsonl",
    "opus-4-5-thinking-kept": "jimmc414__cctrace__.claude-sessions_phase0-investigation_raw_messages.jsonl",
}
# Behaviour covered -> corpus file compressed, then resumed.
COMPRESSED = {
    "interrupted-turn": "marot__spotter__test_fixtures_transcripts_tool_heavy.jsonl",
    "parallel-tool-calls": ORIGINALS["parallel-tool-calls"],
    "unanswered-trailing-call": ORIGINALS["unanswered-trailing-call"],
}

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Golden:
    """One golden entry: did Claude Code resume the file, and the context it sent."""

    resumed: bool
    context: tuple[ContextBlock, ...]


@dataclass(frozen=True, slots=True)
class CandidateRun:
    """A compressed candidate, its compact summary text, and what resuming it sent."""

    candidate: Path
    summary: str
    result: ResumeResult


def golden_shape(result: ResumeResult) -> tuple[ContextBlock, ...]:
    """What a resume sent, as the golden file records it (texts cut to 120 characters)."""
    return tuple(block.golden() for block in result.context.blocks)


def in_parallel(work: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """Map over a small thread pool (each item waits on a subprocess, so threads suffice)."""
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(work, items))


def describe(actual: Sequence[ContextBlock], expected: Sequence[ContextBlock]) -> str:
    """Lengths and a window around the first difference, for assertion messages."""
    first = next(
        (i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
        min(len(actual), len(expected)),
    )
    lines = [f"{len(actual)} blocks sent, {len(expected)} expected; first difference at {first}"]
    for i in range(max(0, first - 2), first + 3):
        got = actual[i] if i < len(actual) else None
        want = expected[i] if i < len(expected) else None
        lines.append(f"  {i}: sent     {got}\n  {i}: expected {want}")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def golden(golden_dir: Path) -> dict[str, Golden]:
    """The golden resume file, by corpus file name."""
    lines = (golden_dir / "claude_code_resume.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    return {
        e["file"]: Golden(e["resumed"], tuple(ContextBlock.from_golden(b) for b in e["context"]))
        for e in entries
    }


def pinned_model(source: Path, golden: dict[str, Golden]) -> str:
    """The model the golden run of `source` used (fixed, whatever the date of this run)."""
    return resumed_model(source, golden[source.name].context, on=GOLDEN_RECORDED_ON)


@pytest.fixture(scope="module")
def original_resumes(
    claude_code: Path, corpus_files: Path, golden: dict[str, Golden]
) -> dict[str, ResumeResult]:
    """Every file of ORIGINALS resumed once, concurrently."""

    def resume_original(name: str) -> ResumeResult:
        source = corpus_files / name
        return resume(source, executable=claude_code, model=pinned_model(source, golden), timeout=TIMEOUT)

    names = sorted(set(ORIGINALS.values()))
    return dict(zip(names, in_parallel(resume_original, names), strict=True))


@pytest.mark.parametrize("case", sorted(ORIGINALS))
def test_resuming_the_original_gives_the_golden_context(
    case: str, original_resumes: dict[str, ResumeResult], golden: dict[str, Golden], corpus_files: Path
) -> None:
    """Claude Code sends exactly the recorded context (or refuses exactly the refused files)."""
    name = ORIGINALS[case]
    result, expected = original_resumes[name], golden[name]
    assert result.resumed == expected.resumed, (result.returncode, result.stderr[-500:])
    if not expected.resumed:
        assert result.refused, result.stdout[-300:] + result.stderr[-300:]
        return
    assert result.returncode == 0, result.stderr[-500:]
    assert result.model == pinned_model(corpus_files / name, golden), "ANTHROPIC_MODEL was not honoured"
    sent = golden_shape(result)
    assert sent == expected.context, describe(sent, expected.context)


def compress(source: Path, out: Path) -> Path:
    """Run `compaction compress` on one corpus file; the candidate it wrote."""
    args = ("compress", str(source), "--out", str(out), "--min-tokens", "0", "--jobs", "1", "--quiet")
    done = compaction(*args, timeout=COMPRESS_TIMEOUT_SECONDS)
    assert done.returncode == 0, f"compress {source.name}: exit {done.returncode}\n{done.stderr[-2000:]}"
    summary = out / "summary.json"
    statuses = summary.read_text()[:800] if summary.is_file() else "no summary.json"
    candidates = [path for path in out.rglob("*.jsonl") if path.is_file()]
    assert len(candidates) == 1, f"{source.name}: expected one candidate, found {candidates}; {statuses}"
    return candidates[0]


def compact_summary(candidate: Path) -> str:
    """The text of the candidate's (last) compact summary row."""
    summaries = summary_texts(candidate)
    assert summaries, f"{candidate.name}: no compact summary row"
    return summaries[-1]


@pytest.fixture(scope="module")
def candidate_resumes(
    claude_code: Path, corpus_files: Path, golden: dict[str, Golden], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, CandidateRun]:
    """Every file of COMPRESSED compressed and its candidate resumed, concurrently."""
    root = tmp_path_factory.mktemp("compressed")

    def run(case: str) -> CandidateRun:
        source = corpus_files / COMPRESSED[case]
        candidate = compress(source, Path(tempfile.mkdtemp(prefix=f"{case}-", dir=root)))
        result = resume(
            candidate, executable=claude_code, model=pinned_model(source, golden), timeout=TIMEOUT
        )
        return CandidateRun(candidate, compact_summary(candidate), result)

    cases = sorted(COMPRESSED)
    return dict(zip(cases, in_parallel(run, cases), strict=True))


@pytest.mark.after_compression
@pytest.mark.parametrize("case", sorted(COMPRESSED))
def test_resuming_a_candidate_gives_the_summary_then_a_golden_suffix(
    case: str, candidate_resumes: dict[str, CandidateRun], golden: dict[str, Golden]
) -> None:
    """The compact summary comes first, as a user text; what follows is the end of the source's context."""
    run, expected = candidate_resumes[case], golden[COMPRESSED[case]].context
    result = run.result
    assert result.resumed, f"candidate not resumed (exit {result.returncode}): {result.stderr[-500:]}"
    sent = golden_shape(result)
    assert sent, "empty context"
    head, tail = sent[0], sent[1:]
    assert head == ContextBlock("user", "text", run.summary[:TEXT_PREFIX_CHARS], None), head
    suffix = expected[len(expected) - len(tail) :] if len(tail) <= len(expected) else ()
    assert tail == suffix, describe(tail, suffix)


# Builder scenarios where the seed's pointer and Claude Code disagree (pipeline.testing.scenarios):
# Claude Code's context must be, block for block with full texts, the chain `validate` selects.
@pytest.fixture(scope="module")
def scenario_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scenarios")
    for seed, name in enumerate(sorted(SCENARIOS)):
        (root / f"{name}.jsonl").write_bytes(build_scenario(name, seed=seed))
    return root


@pytest.fixture(scope="module")
def scenario_resumes(claude_code: Path, scenario_root: Path) -> dict[str, ResumeResult]:
    names = sorted(SCENARIOS)
    runs = in_parallel(
        lambda name: resume(scenario_root / f"{name}.jsonl", executable=claude_code, timeout=TIMEOUT), names
    )
    return dict(zip(names, runs, strict=True))


def selected_context(path: Path) -> tuple[ContextBlock, ...]:
    session = resolve(path.read_bytes())
    assert not session.topology.refused, session.topology.refusal
    return expected_context(session.data, session.index, session.chain)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_scenario_resumes_as_exactly_the_chain_validate_selects(
    name: str, scenario_resumes: dict[str, ResumeResult], scenario_root: Path
) -> None:
    result = scenario_resumes[name]
    assert result.resumed and result.returncode == 0, result.stderr[-500:]
    sent, selected = result.context.blocks, selected_context(scenario_root / f"{name}.jsonl")
    assert sent == selected, describe(sent, selected)


@pytest.fixture(scope="module")
def scenarios_compressed(
    claude_code: Path, scenario_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Every scenario compressed with the default gate (no flag; Claude Code found through the environment)."""
    out = tmp_path_factory.mktemp("scenarios-compressed")
    config = out / "config.toml"
    config.write_text("[compress]\nmin_gain = 0.0\n")
    done = compaction(
        "compress", str(scenario_root), "--out", str(out / "out"), "--config", str(config),
        "--min-tokens", "0", "--min-recent-records", "2", "--target-ratio", "0.1", "--jobs", "2", "--quiet",
        env={"COMPACTION_CLAUDE_CODE": str(claude_code)}, unset=(RESUME_GATE_ENV,), timeout=COMPRESS_TIMEOUT_SECONDS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return out / "out"


@pytest.mark.after_compression
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_scenario_compacts_through_the_default_gate(name: str, scenarios_compressed: Path) -> None:
    report = next(r for r in reports(scenarios_compressed) if r["session"]["label"] == f"{name}.jsonl")
    assert report["status"] == "compressed", report.get("reasons")
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    assert check["kept_blocks"] > 0 and check["elapsed_ms"] > 0
