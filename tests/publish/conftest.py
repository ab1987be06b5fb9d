"""Fixtures of the in-place tests: a real session and the candidate `compress` builds for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.core.check.structure import structural_failures
from pipeline.core.topology.select import AUTO
from pipeline.execute.in_place_drive import InPlaceRequest, ReportOf, check_all
from pipeline.execute.process_pool import ProcessPoolInPlaceRunner
from pipeline.execute.stop_request import StopRequest
from pipeline.jobs.compress import compress_session
from pipeline.publish.live.activity import OpenFileProbe
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.publish.live.faults import NO_FAULTS, FaultSeam
from pipeline.publish.live.recovery import Recovered
from pipeline.publish.live.session_pass import BuildCandidate, InPlaceOptions, InPlacePass
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import StateDb
from pipeline.testing import TranscriptBuilder
from pipeline.testing.invoke import candidate_of
from pipeline.testing.settings import LIMITS, compress_options


@dataclass(frozen=True, slots=True)
class Compacted:
    """A session's bytes and a validated compaction of them."""

    original: bytes
    candidate: bytes


def build_original(path: Path, *, turns: int = 6, seed: int = 5) -> bytes:
    """A multi-turn session with tool work, large enough for compress to cut."""
    builder = TranscriptBuilder(seed=seed)
    for turn in range(turns):
        builder.user(f"Turn {turn}: refactor module {turn} and keep the public API stable")
        for step in range(4):
            builder.tool_call(
                "Bash", {"command": f"pytest tests/test_{turn}_{step}.py -q"}, "." * 900 + "\n12 passed"
            )
        builder.assistant(builder.text(f"Turn {turn} is done; the tests pass."))
    builder.last_prompt()
    builder.write(path)
    return path.read_bytes()


def validator(data: bytes) -> tuple[str, ...]:
    """The shared structural validator, as the transaction runs it."""
    return structural_failures(data, AUTO, LIMITS)


@pytest.fixture(scope="session")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Compacted:
    """One real session and the candidate compress writes for it (built once)."""
    root = tmp_path_factory.mktemp("compacted")
    source = root / "session.jsonl"
    original = build_original(source)
    options = compress_options(root / "out", min_tokens=0, min_recent_records=8)
    outcome = compress_session(source, "session.jsonl", options)
    assert outcome.status.value == "compressed", outcome.report
    candidate = candidate_of(root / "out", source).read_bytes()
    assert not validator(candidate)
    return Compacted(original, candidate)


@dataclass(frozen=True)
class InPlaceRun:
    """What one in-place pass did: the intents of earlier runs it recovered, one outcome a session."""

    recovered: tuple[Recovered, ...]
    outcomes: tuple[InPlaceOutcome, ...]

    @property
    def compression_work(self) -> int:
        """Sessions for which a candidate was built (zero on an unchanged fleet's second night)."""
        return sum(outcome.built for outcome in self.outcomes)


def drive_in_place(
    targets: Iterable[SessionTarget],
    build: BuildCandidate,
    options: InPlaceOptions,
    state: StateDb,
    *,
    clock_ns: Callable[[], int],
    probe: OpenFileProbe | None,
    report_of: ReportOf = lambda outcome: None,
    report_dir: Path | None = None,
    roots: Sequence[tuple[Path, str]] = (),
    seam: FaultSeam = NO_FAULTS,
) -> InPlaceRun:
    """One pass the way the in-place commands run it: recovery and the cheap checks, then the
    rest on the local in-place runner with one job (candidates built in this process's threads)."""
    run = InPlacePass(options, state, clock_ns=clock_ns, probe=probe, seam=seam)
    stop = StopRequest()  # no signal: every session is driven to its end
    pending, outcomes = check_all(run, targets, roots, stop)
    if pending:
        where = report_dir or options.work_dir
        request = InPlaceRequest(run, pending, build, None, options.work_dir, report_of, where, stop)
        outcomes += ProcessPoolInPlaceRunner(1).run(request)
    ordered = tuple(sorted(outcomes, key=lambda outcome: outcome.target.report_label))
    return InPlaceRun(run.recovered, ordered)
