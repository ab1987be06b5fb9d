"""The fuzz harness: damaged sessions through the real command line, and the invariants they must keep.

`fuzz_cases` mutates builder sessions and real corpus files with every `Mutation`; `run_fleet`
writes them as a fleet and runs `compaction validate` and `compaction compress` over it as a user
would (worker processes, JSON logs); `violations` lists, per case, every broken invariant:
- no session ends as `internal-error`;
- every line lands in exactly one partition set (proved here with set operations);
- every line-level finding names its 1-based line;
- no text held only by excluded or unreadable lines reaches a report, a log or a candidate;
- `compress` either skips or refuses with reasons and writes nothing, or writes a candidate
  that `validate` accepts.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import random
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.core.partition import Partition
from pipeline.formats.claude_code.records import record_strings
from pipeline.formats.json_values import line_strings
from pipeline.jobs.front import Analysis, open_session, topology_options
from pipeline.jobs.validate import sweep_partition, validate_session
from pipeline.proof.excluded import EXCLUDED_SETS
from pipeline.testing.fuzz import Mutation, mutate
from pipeline.testing.invoke import compaction
from pipeline.testing.reminder_scenarios import REMINDER_SCENARIOS, build_reminder_scenario
from pipeline.testing.scenarios import SCENARIOS, build_scenario
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS, validate_options
from pipeline.vocabulary import FindingCode, PartitionSet, SessionStatus

__all__ = [
    "FuzzCase",
    "FuzzRun",
    "builder_sources",
    "corpus_sources",
    "exclusive_texts",
    "fuzz_cases",
    "run_fleet",
    "summary",
    "violations",
]

LINE_CODES: Final = frozenset(
    code.value
    for code in (
        FindingCode.LINE_INVALID_UTF8,
        FindingCode.LINE_NESTING_TOO_DEEP,
        FindingCode.LINE_TOO_LONG,
        FindingCode.LINE_NOT_OBJECT,
        FindingCode.LINE_NOT_JSON,
        FindingCode.LINE_TRUNCATED,
        FindingCode.BLANK_LINE,
    )
)
MIN_EXCLUDED_CHARS: Final = 24  # shorter strings ("continue", ids) cannot be attributed to one line
FOREIGN_SEED: Final = 99  # the session interleaved into others
_WITHOUT_REASONS: Final = frozenset({"unsupported-format", "not-a-transcript", "unreadable"})
_TOPOLOGY: Final = topology_options(validate_options().sweep, None)
CASES_PER_SHARE: Final = 40  # cases a checking worker takes at a time: small enough to balance huge ones


@dataclass(frozen=True, slots=True)
class FuzzCase:
    """One damaged session: where it came from, what was done to it, and its bytes."""

    source: str
    mutation: Mutation
    seed: int
    data: bytes

    @property
    def name(self) -> str:
        return f"{self.source}.{self.mutation.value}.{self.seed}.jsonl"


@dataclass(frozen=True, slots=True)
class FuzzRun:
    """A fleet of cases after both commands ran over it."""

    root: Path
    cases: tuple[FuzzCase, ...]
    validated: dict[str, dict[str, Any]]
    compressed: dict[str, dict[str, Any]]
    out: Path
    logs: str


def builder_sources() -> dict[str, bytes]:
    """Generated sessions of several shapes: tool work, rewinds, damaged lines, every scenario
    (those of a context's end and those of each resume-time reminder's state)."""
    sources = {name: build_scenario(name, seed=3) for name in sorted(SCENARIOS)}
    sources |= {name: build_reminder_scenario(name, seed=3) for name in sorted(REMINDER_SCENARIOS)}
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(2):
            path = Path(folder) / f"session{seed}.jsonl"
            build_session(path, turns=5 + 3 * seed, seed=seed)
            sources[f"session{seed}"] = path.read_bytes()
    return sources


def corpus_sources(corpus: Path, limit: int | None = None) -> dict[str, bytes]:
    """Real Claude Code transcripts of the corpus, by a short stable name."""
    files = sorted(
        p for p in corpus.iterdir() if p.suffix == ".jsonl" and b'"sessionId"' in p.read_bytes()[:4096]
    )
    return {f"corpus{n:02d}": p.read_bytes() for n, p in enumerate(files[:limit])}


def fuzz_cases(
    sources: dict[str, bytes],
    *,
    seed: int,
    count: int,
    kinds: Sequence[Mutation] = tuple(Mutation),
    **knobs: Any,
) -> tuple[FuzzCase, ...]:
    """`count` cases: sources and mutation kinds taken in turn, each with its own seed."""
    rng = random.Random(seed)
    names = sorted(sources)
    foreign = build_scenario("pointer-then-more-turns", seed=FOREIGN_SEED)
    cases = []
    for number in range(count):
        kind = kinds[number % len(kinds)]
        source = names[(number // len(kinds) + number) % len(names)]
        case_seed = rng.randrange(2**32)
        data = mutate(sources[source], random.Random(case_seed), kind, other=foreign, **knobs)
        cases.append(FuzzCase(source, kind, case_seed, data))
    return tuple(cases)


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in folder.rglob("*.report.json"):
        report = json.loads(path.read_text())
        found[Path(report["session"]["label"]).name] = report
    return found


def run_fleet(cases: Iterable[FuzzCase], workdir: Path, *, workers: int = 2) -> FuzzRun:
    """Write the cases as one project and run validate and compress over it."""
    root = workdir / "fleet"
    project = root / "project"
    project.mkdir(parents=True)
    kept = tuple(cases)
    for case in kept:
        (project / case.name).write_bytes(case.data)
    common = ["--jobs", str(workers), "--log-format", "json"]
    swept = compaction("validate", str(root), "--report-dir", str(workdir / "reports"), *common)
    out = workdir / "out"
    compressed = compaction(
        "compress", str(root), "--out", str(out), "--min-tokens", "0", "--no-verify-resume", *common
    )
    for completed in (swept, compressed):
        if completed.returncode not in (0, 1):
            raise RuntimeError(f"compaction exited {completed.returncode}: {completed.stderr[-2000:]}")
    logs = swept.stdout + swept.stderr + compressed.stdout + compressed.stderr
    return FuzzRun(root, kept, _reports(workdir / "reports"), _reports(out), out, logs)


def _partition_problems(opened: Analysis, partition: Partition, report: dict[str, Any]) -> Iterator[str]:
    seen: set[int] = set()
    for name in PartitionSet:
        lines = partition[name].lines
        if seen & lines:
            yield f"line(s) {sorted(seen & lines)[:3]} in two sets"
        seen |= lines
    if seen != set(range(1, len(opened.index) + 1)):
        yield "partition does not cover every line"
    counted = sum(entry["count"] for entry in report.get("partition", {}).values())
    if report.get("partition") and counted != len(opened.index):
        yield f"report partition counts {counted} of {len(opened.index)} lines"


def _excluded(opened: Analysis, partition: Partition) -> tuple[str, ...]:
    """Texts only excluded or unreadable lines hold: in no string of any other line of the file.

    Only text with a blank in it counts: pieces of a broken line also hold ids, timestamps and
    member names, which a candidate and its report rightly repeat.
    """
    data, index = opened.source.data, opened.index
    excluded = set().union(*(partition[name].lines for name in EXCLUDED_SETS))
    # Compared with blanks collapsed: a summary re-indents what it quotes from kept records.
    kept = " ".join(
        " ".join(text.split())
        for n in range(1, len(index) + 1)
        if n not in excluded
        for text in line_strings(index.raw_line(data, n))
    )
    found = {
        text
        for n in sorted(excluded)
        for text in record_strings(index.raw_line(data, n))
        if len(text) >= MIN_EXCLUDED_CHARS
        and any(blank in text for blank in " \n\t")
        and " ".join(text.split()) not in kept
    }
    return tuple(sorted(found))


def _report_problems(validated: dict[str, Any], compressed: dict[str, Any]) -> Iterator[str]:
    for command, report in (("validate", validated), ("compress", compressed)):
        if report["status"] == SessionStatus.INTERNAL_ERROR:
            yield f"{command}: internal-error"
        for finding in report.get("findings", []):
            if finding["code"] in LINE_CODES and not finding.get("line"):
                yield f"{command}: finding {finding['code']} without a line"


def _candidate_problems(candidate: Path, name: str, compressed: dict[str, Any]) -> Iterator[str]:
    if compressed["status"] == SessionStatus.COMPRESSED:
        verdict = validate_session(candidate, name, validate_options())
        if verdict.status not in (SessionStatus.VALID, SessionStatus.WARNINGS):
            yield f"candidate validates as {verdict.status}"
    elif candidate.exists():
        yield f"a candidate was written for a {compressed['status']} session"
    elif not compressed.get("reasons") and compressed["status"] not in _WITHOUT_REASONS:
        yield f"{compressed['status']} without reasons"


def _leaks(excluded: Iterable[str], blobs: Sequence[str], logs: str) -> Iterator[str]:
    for text in excluded:
        escaped = json.dumps(text)[1:-1]
        if any(text in blob or escaped in blob for blob in blobs) or text in logs:
            yield f"excluded text of {len(text)} chars reached a report, log or candidate"


def exclusive_texts(path: Path) -> tuple[str, ...]:
    """The texts of a file that only its excluded or unreadable lines hold."""
    opened = open_session(path, path.name, _TOPOLOGY, command="validate", per_code=9, limits=LIMITS)
    if not isinstance(opened, Analysis):
        return ()
    return _excluded(opened, sweep_partition(opened, validate_options().sweep))


def _case_problems(run: FuzzRun, case: FuzzCase) -> Iterator[str]:
    validated, compressed = run.validated.get(case.name), run.compressed.get(case.name)
    if validated is None or compressed is None:
        yield "no report"
        return
    yield from _report_problems(validated, compressed)
    path = run.root / "project" / case.name
    try:
        opened = open_session(path, path.name, _TOPOLOGY, command="validate", per_code=9, limits=LIMITS)
        excluded: tuple[str, ...] = ()
        if isinstance(opened, Analysis):
            partition = sweep_partition(opened, validate_options().sweep)
            yield from _partition_problems(opened, partition, validated)
            excluded = _excluded(opened, partition)
    except Exception as exc:  # the invariant check reads the file the way the jobs do
        yield f"reading it in process raised {type(exc).__name__}"
        return
    candidate = run.out / "fleet" / "project" / case.name
    yield from _candidate_problems(candidate, case.name, compressed)
    output = candidate.read_text("utf-8", "replace") if candidate.exists() else ""
    yield from _leaks(excluded, (json.dumps(validated), json.dumps(compressed), output), run.logs)


def _checked_in_turn(run: FuzzRun) -> list[str]:
    return [f"{case.name}: {problem}" for case in run.cases for problem in _case_problems(run, case)]


def _share(run: FuzzRun, cases: tuple[FuzzCase, ...]) -> FuzzRun:
    """The part of a run a worker checks: its cases without their bytes (the file on disk is what is
    read again) and only their reports."""
    names = {case.name for case in cases}
    return FuzzRun(
        run.root,
        tuple(dataclasses.replace(case, data=b"") for case in cases),
        {name: report for name, report in run.validated.items() if name in names},
        {name: report for name, report in run.compressed.items() if name in names},
        run.out,
        run.logs,
    )


def violations(run: FuzzRun, *, workers: int = 2, share: int = CASES_PER_SHARE) -> list[str]:
    """`case name: problem` for every broken invariant, in case order.

    A fleet's cases are checked `share` at a time in `workers` processes: reading, partitioning and
    searching every session again in process takes as long as both commands' runs together.
    """
    if workers < 2 or len(run.cases) < share * workers:
        return _checked_in_turn(run)
    shares = [_share(run, run.cases[at : at + share]) for at in range(0, len(run.cases), share)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return [found for part in pool.map(_checked_in_turn, shares) for found in part]


def _status_counts(reports: dict[str, dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports.values():
        counts[report["status"]] = counts.get(report["status"], 0) + 1
    return dict(sorted(counts.items()))


def summary(run: FuzzRun) -> dict[str, Any]:
    """Cases per mutation kind and statuses per command (for the fuzz script's output)."""
    kinds: dict[str, int] = {}
    for case in run.cases:
        kinds[case.mutation.value] = kinds.get(case.mutation.value, 0) + 1
    return {
        "cases": len(run.cases),
        "kinds": kinds,
        "validate": _status_counts(run.validated),
        "compress": _status_counts(run.compressed),
    }
