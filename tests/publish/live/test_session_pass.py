"""In-place runs over real fleets: what is replaced, what is skipped and why, and at what cost."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.jobs.compress.in_place import compress_builder, config_digest
from pipeline.live_vocabulary import (
    BackupCompression,
    BackupPlacement,
    Disposition,
    OperationState,
    PublishStrategy,
    StateSync,
)
from pipeline.publish.live.activity import ActivityOptions, platform_probe
from pipeline.publish.live.backups import BackupOptions, read_backup
from pipeline.publish.live.decisions import Candidate, Declined
from pipeline.publish.live.reporting import in_place_section
from pipeline.publish.live.session_pass import BuildCandidate, InPlaceOptions
from pipeline.publish.live.source import FrozenSource, SessionTarget
from pipeline.publish.live.state_db import RecordedResult, StateDb, StateOptions, open_state
from pipeline.publish.live.transaction import ReplaceOptions
from pipeline.read.discover import discover
from pipeline.report.render import to_builtins
from pipeline.testing.settings import compress_options
from pipeline.testing.synth import generate_fleet
from tests.publish.conftest import InPlaceRun, drive_in_place

COMPRESS = compress_options(Path(), min_tokens=0, min_recent_records=8)
HOUR_NS = 3600 * 10**9


def options(work: Path, **activity: object) -> InPlaceOptions:
    chosen = {
        "idle_for_seconds": 0.0,
        "confirm_sessions_closed": False,
        "detect_open_files": True,
        **activity,
    }
    return InPlaceOptions(
        activity=ActivityOptions(**chosen),  # type: ignore[arg-type]
        replace=ReplaceOptions(
            BackupOptions(None, BackupCompression.NONE, 0, BackupPlacement.BESIDE), PublishStrategy.AUTO, True
        ),
        work_dir=work,
        config_digest=config_digest(COMPRESS),
        require_resume_proof=False,
        result=RecordedResult.COMPACTED,
    )


def targets(root: Path) -> list[SessionTarget]:
    return [SessionTarget(s.path, s.root, s.root_label, s.label) for s in discover([root])]


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    generate_fleet(tmp_path / "fleet", target_bytes=600_000, seed=3)
    return tmp_path / "fleet" / "projects"


@pytest.fixture
def state(tmp_path: Path) -> Iterator[StateDb]:
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)) as db:
        yield db


def run(
    fleet: Path,
    state: StateDb,
    chosen: InPlaceOptions,
    build: BuildCandidate | None = None,
    clock: Callable[[], int] = time.time_ns,
    **extra: object,
) -> InPlaceRun:
    builder = build or compress_builder(COMPRESS)
    return drive_in_place(
        targets(fleet),
        builder,
        chosen,
        state,
        clock_ns=clock,
        probe=platform_probe(),
        **extra,  # type: ignore[arg-type]
    )


def dispositions(result: InPlaceRun) -> dict[str, str]:
    return {o.target.label: o.disposition.value for o in result.outcomes}


def test_a_first_run_compacts_with_backups_and_a_second_does_no_work_at_the_cost_of_a_stat(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    originals = {p: p.read_bytes() for p in fleet.rglob("*.jsonl")}
    first = run(fleet, state, options(tmp_path / "work"))
    committed = [o for o in first.outcomes if o.disposition is Disposition.COMMITTED]
    assert committed and first.compression_work == len(originals)
    for outcome in committed:
        path = outcome.target.path
        assert outcome.receipt is not None and outcome.receipt.backup is not None
        assert read_backup(outcome.receipt.backup.path) == originals[path]
        assert path.read_bytes() != originals[path]
    second = run(fleet, state, options(tmp_path / "work"))
    assert second.compression_work == 0
    assert set(dispositions(second).values()) == {"skipped-unchanged-output", "skipped-unchanged-declined"}
    assert not any(o.hashed for o in second.outcomes), "an unchanged file needs only a stat"


def test_a_touched_file_costs_a_hash_once_and_a_grown_one_is_compacted_again(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    first = run(fleet, state, options(tmp_path / "work"))
    done = next(o.target.path for o in first.outcomes if o.disposition is Disposition.COMMITTED)
    os.utime(done)  # a touch rewrites no byte
    touched = {o.target.path: o for o in run(fleet, state, options(tmp_path / "work")).outcomes}
    assert touched[done].disposition is Disposition.UNCHANGED_OUTPUT and touched[done].hashed
    again = {o.target.path: o for o in run(fleet, state, options(tmp_path / "work")).outcomes}
    assert not again[done].hashed  # the refreshed fingerprint makes it a stat again
    with done.open("ab") as handle:  # the session went on
        handle.write(done.read_bytes().splitlines(keepends=True)[-1])
    grown = {o.target.path: o for o in run(fleet, state, options(tmp_path / "work")).outcomes}
    assert grown[done].built


def test_a_declined_session_is_rebuilt_when_the_configuration_changes(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    first = run(fleet, state, options(tmp_path / "work"))
    declined = {o.target.path for o in first.outcomes if o.disposition is Disposition.DECLINED}
    assert declined
    other = replace(options(tmp_path / "work"), config_digest="another-configuration")
    second = {o.target.path: o for o in run(fleet, state, other).outcomes}
    assert all(second[path].built for path in declined)


def test_recently_modified_sessions_wait_unless_the_user_confirms_they_are_closed(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    idle = options(tmp_path / "work", idle_for_seconds=12 * 3600.0)
    newest = max(p.stat().st_mtime_ns for p in fleet.rglob("*.jsonl"))
    waited = run(fleet, state, idle, clock=lambda: newest + HOUR_NS)
    assert set(dispositions(waited).values()) == {"skipped-recently-modified"}
    assert waited.compression_work == 0
    later = run(fleet, state, idle, clock=lambda: newest + 13 * HOUR_NS)
    assert "committed" in dispositions(later).values()


def test_confirmation_replaces_the_idle_rule(fleet: Path, state: StateDb, tmp_path: Path) -> None:
    confirmed = options(tmp_path / "work", idle_for_seconds=12 * 3600.0, confirm_sessions_closed=True)
    result = run(fleet, state, confirmed)
    assert "committed" in dispositions(result).values()


@pytest.mark.skipif(platform_probe() is None, reason="no open-file probe on this platform")
def test_a_session_held_open_by_a_process_is_never_replaced(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    paths = sorted(fleet.rglob("*.jsonl"))
    before = {p: p.read_bytes() for p in paths}
    handles = [p.open("rb") for p in paths]  # this process holds every session open
    try:
        result = run(fleet, state, options(tmp_path / "work"))
    finally:
        for handle in handles:
            handle.close()
    assert set(dispositions(result).values()) == {"skipped-held-open"}
    assert all(o.holders == (os.getpid(),) for o in result.outcomes)
    assert all(p.read_bytes() == before[p] for p in paths)


def test_a_session_that_changes_while_its_candidate_is_built_is_skipped_and_kept(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    inner = compress_builder(COMPRESS)
    appended = b'{"type":"user","note":"Claude Code wrote while we worked"}\n'

    def racing(frozen: FrozenSource, work: Path) -> Candidate | Declined:
        built = inner(frozen, work)
        with frozen.path.open("ab") as handle:
            handle.write(appended)
        return built

    result = run(fleet, state, options(tmp_path / "work"), build=racing)
    assert set(dispositions(result).values()) == {"skipped-changed-during-run"}
    assert all(o.target.path.read_bytes().endswith(appended) for o in result.outcomes)
    assert not list(fleet.rglob("*.backup*")) or all(
        o.receipt is None or o.receipt.operation_state is OperationState.NOT_COMMITTED
        for o in result.outcomes
    )


def test_an_unproven_candidate_is_refused_when_the_resume_proof_is_required(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in fleet.rglob("*.jsonl")}
    strict = replace(options(tmp_path / "work"), require_resume_proof=True)
    result = run(fleet, state, strict)
    assert "refused-unproven" in dispositions(result).values()
    assert "committed" not in dispositions(result).values()
    assert before == {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in fleet.rglob("*.jsonl")}


def test_a_report_that_cannot_be_written_after_a_commit_says_committed_report_failed(
    fleet: Path, state: StateDb, tmp_path: Path
) -> None:
    blocked = tmp_path / "reports"
    blocked.write_bytes(b"a file where the report directory should be")  # every report write fails
    result = run(
        fleet, state, options(tmp_path / "work"), report_of=lambda outcome: b"{}", report_dir=blocked / "r"
    )
    committed = [o for o in result.outcomes if o.disposition is Disposition.COMMITTED]
    assert committed
    for outcome in committed:
        assert outcome.receipt is not None
        assert outcome.receipt.operation_state is OperationState.COMMITTED_REPORT_FAILED
        section = to_builtins(in_place_section(outcome))
        assert section["receipt"]["operation_state"] == "committed-report-failed"


def test_symlinks_never_lead_a_replacement_out_of_the_root(tmp_path: Path, state: StateDb) -> None:
    outside = tmp_path / "outside"
    generate_fleet(outside, target_bytes=300_000, seed=4)
    root = tmp_path / "root"
    root.mkdir()
    victim = next(outside.rglob("*.jsonl"))
    (root / "linked.jsonl").symlink_to(victim)
    (root / "linked-dir").symlink_to(victim.parent, target_is_directory=True)
    before = victim.read_bytes()
    chosen = [
        SessionTarget(root / "linked.jsonl", root, "root", "linked.jsonl"),
        SessionTarget(root / "linked-dir" / victim.name, root, "root", f"linked-dir/{victim.name}"),
    ]
    result = drive_in_place(
        chosen,
        compress_builder(COMPRESS),
        options(tmp_path / "work"),
        state,
        clock_ns=time.time_ns,
        probe=None,
    )
    assert [o.disposition for o in result.outcomes] == [Disposition.UNSAFE_TARGET] * 2
    assert {o.target.label: o.reasons for o in result.outcomes} == {
        "linked.jsonl": ("symlink",),
        f"linked-dir/{victim.name}": ("outside-root",),
    }
    assert victim.read_bytes() == before and not list(outside.rglob("*.backup*"))
