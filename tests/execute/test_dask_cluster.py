"""The Dask backend against a real `LocalCluster`: the same reports as the local runner, lost
workers retried, a session that keeps killing its worker failed alone, a rerun resumed."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.execute.dask_cluster import ClusterRun, DaskExecutor, loopback_cluster
from pipeline.execute.seam import RunRequest, plan_batches, plan_run
from pipeline.execute.session_tasks import BoundJob
from pipeline.read.discover import discover
from pipeline.report.documents import Failed, Validated
from pipeline.settings import load_settings
from pipeline.testing.invoke import compaction
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import validate_options
from tests.support.jobs import flaky_validate

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "files"
TIMING = ("timing_ms",)  # the only report section allowed to differ between two runs


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Two worker processes on loopback, shared by this module's tests (started once: ~2 s)."""
    import dask

    with (
        dask.config.set(
            {"distributed.scheduler.allowed-failures": 1, "distributed.scheduler.worker-saturation": 1.0}
        ),
        loopback_cluster(2, quiet_below=logging.ERROR) as local,
    ):
        yield local.scheduler_address


def _fleet(root: Path, count: int) -> None:
    for index in range(count):
        build_session(root / f"project-{index % 3}" / f"s{index}.jsonl", turns=2 + index % 6, seed=index)


def _reports(directory: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(directory.rglob("*.report.json")):
        report = orjson.loads(path.read_bytes())
        for key in TIMING:
            report.pop(key, None)
        found[path.relative_to(directory).as_posix()] = report
    return found


def _summary(directory: Path) -> dict[str, Any]:
    summary: dict[str, Any] = orjson.loads((directory / "summary.json").read_bytes())
    for key in ("elapsed_ms", "timing_ms", "peak_rss_mb", "throughput"):
        summary.pop(key, None)
    totals = summary.get("totals", {})
    for group in [
        totals.get("all", {}),
        *totals.get("by_format", {}).values(),
        *totals.get("by_root", {}).values(),
    ]:
        group.pop("session_ms", None)  # the sessions' own times, as their reports' timing_ms
    return summary


def _without_timing(path: Path) -> bytes:
    """A report's bytes with its timing section dropped, the rest byte for byte."""
    text = path.read_bytes()
    start = text.find(b'  "timing_ms": {')
    end = text.find(b"}", start)
    return text[:start] + text[end + 1 :] if start >= 0 else text


def _same_bytes(local: Path, remote: Path) -> None:
    names = sorted(p.relative_to(local) for p in local.rglob("*.report.json"))
    assert names == sorted(p.relative_to(remote) for p in remote.rglob("*.report.json"))
    for name in names:
        assert _without_timing(local / name) == _without_timing(remote / name), name


@pytest.mark.parametrize("source", ["fleet", "corpus"])
def test_cluster_reports_are_the_local_reports(tmp_path: Path, cluster: str, source: str) -> None:
    if source == "fleet":
        root = tmp_path / "fleet"
        _fleet(root, 24)
    else:
        root = CORPUS
    local = compaction(
        "validate", str(root), "--report-dir", str(tmp_path / "local"), "--jobs", "2", "--quiet"
    )
    remote = compaction(
        "validate",
        str(root),
        "--report-dir",
        str(tmp_path / "cl"),
        "--jobs",
        "2",
        "--quiet",
        "--cluster",
        cluster,
    )
    assert remote.returncode == local.returncode, remote.stderr
    _same_bytes(tmp_path / "local", tmp_path / "cl")
    assert _summary(tmp_path / "local") == _summary(tmp_path / "cl")


def test_tokens_on_a_cluster_match_the_local_run(tmp_path: Path, cluster: str) -> None:
    _fleet(tmp_path / "fleet", 6)
    codes, said = set(), set()
    for name, extra in (("local", []), ("cl", ["--cluster", cluster])):
        done = compaction(
            "tokens", str(tmp_path / "fleet"), "--report-dir", str(tmp_path / name), "--quiet", *extra
        )
        codes.add(done.returncode)
        # --quiet's failure lines, the same on both (a log warning of asyncio's under load is not ours)
        said.add(tuple(line for line in done.stderr.splitlines() if line.startswith("compaction: ")))
    assert len(codes) == 1 and len(said) == 1
    assert _reports(tmp_path / "local") == _reports(tmp_path / "cl")


def _request(sessions: list[Any], report_dir: Path, options: object = None) -> RunRequest:
    work = BoundJob(flaky_validate, options or validate_options())
    return RunRequest(
        command="validate",
        sessions=sessions,
        work_for=lambda session: work,
        destination=str(report_dir),
        per_code=5,
        resume=True,
    )


def _run(sessions: list[Any], report_dir: Path, address: str) -> Any:
    settings = load_settings(environ={})
    executor = DaskExecutor(ClusterRun(address, replace(settings.cluster, task_retries=1)))
    return executor.run(_request(sessions, report_dir))


def test_a_lost_worker_is_retried_and_the_session_written_once(tmp_path: Path, cluster: str) -> None:
    root = tmp_path / "fleet"
    for seed, name in enumerate(["a.jsonl", "dieonce.jsonl"]):
        build_session(root / name, turns=2, seed=seed)
    result = _run(discover([root]), tmp_path / "reports", cluster)
    assert [type(outcome) for outcome in result.outcomes.values()] == [Validated, Validated]
    assert (root / "dieonce.died").exists()  # it did kill a worker once...
    assert len((root / "dieonce.runs").read_text().split()) == 1  # ...and then ran to its end once
    assert len(list((tmp_path / "reports").rglob("*.report.json"))) == 2


def test_a_session_that_keeps_killing_workers_fails_alone(tmp_path: Path, cluster: str) -> None:
    root = tmp_path / "fleet"
    for seed, name in enumerate(["a.jsonl", "kill.jsonl", "z.jsonl"]):
        build_session(root / name, turns=2, seed=seed)
    result = _run(discover([root]), tmp_path / "reports", cluster)
    statuses = {label.split("/", 1)[1]: type(outcome) for label, outcome in result.outcomes.items()}
    assert statuses == {"a.jsonl": Validated, "kill.jsonl": Failed, "z.jsonl": Validated}
    report = orjson.loads((tmp_path / "reports" / "fleet" / "kill.jsonl.report.json").read_bytes())
    assert report["status"] == "internal-error"
    assert result.failed >= 1


def test_a_rerun_skips_what_is_done_and_redoes_what_changed(tmp_path: Path, cluster: str) -> None:
    root, out = tmp_path / "fleet", tmp_path / "reports"
    _fleet(root, 9)
    args = ["validate", str(root), "--report-dir", str(out), "--quiet", "--cluster", cluster]
    compaction(*args)
    kept = out / "fleet" / "project-0" / "s0.jsonl.report.json"
    before = kept.read_bytes()
    gone = out / "fleet" / "project-1" / "s1.jsonl.report.json"
    gone.unlink()
    shutil.rmtree(out / ".resume" / "fleet" / "project-1")
    compaction(*args)
    assert kept.read_bytes() == before  # not run again: even its timing is the first run's
    assert gone.exists()
    build_session(root / "project-0" / "s0.jsonl", turns=3, seed=99)  # the source changed
    compaction(*args)
    assert kept.read_bytes() != before
    changed = compaction(*args, "--max-file-history-snapshots", "3")  # so did the options: all run again
    assert changed.returncode in (0, 1), changed.stderr


def test_batches_hold_small_sessions_together_and_large_ones_apart() -> None:
    sessions = [(f"s{index}", size) for index, size in enumerate([10, 10, 10, 100, 10, 10, 20])]
    grouped = plan_batches(sessions, max_bytes=40, max_sessions=2)  # type: ignore[arg-type]
    assert grouped == [
        ("s3",),
        ("s6",),
        ("s0", "s1"),
        ("s2", "s4"),
        ("s5",),
    ]  # largest first, 170 // 8 bytes each
    assert len(plan_batches(sessions, max_bytes=40, max_sessions=8, workers=2)) == 7  # type: ignore[arg-type]


def test_task_keys_follow_the_session_and_its_options(tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    build_session(root / "a.jsonl", turns=2, seed=1)

    def keys(options: object) -> dict[str, str]:
        request = _request(discover([root]), tmp_path / "r", options)
        return plan_run(request, request.work_for).keys

    first = keys(validate_options())
    assert keys(validate_options()) == first  # resubmitted: the same key, so Dask runs it once
    assert keys(validate_options(max_file_history_snapshots=3)) != first
    build_session(root / "a.jsonl", turns=3, seed=2)
    assert keys(validate_options()) != first


def test_without_the_extra_cluster_is_a_one_line_hint(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked"
    blocker.mkdir()
    (blocker / "distributed.py").write_text("raise ImportError('not installed')\n")
    build_session(tmp_path / "s.jsonl", turns=2)
    done = compaction(
        "validate", str(tmp_path / "s.jsonl"), "--cluster", "local:1", env={"PYTHONPATH": str(blocker)}
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "compaction: error: --cluster needs the cluster extra: pip install 'session-compaction[cluster]'"
    ]


def test_local_cluster_address_starts_its_own_workers(tmp_path: Path) -> None:
    _fleet(tmp_path / "fleet", 3)
    done = compaction(
        "validate",
        str(tmp_path / "fleet"),
        "--report-dir",
        str(tmp_path / "r"),
        "--quiet",
        "--cluster",
        "local:1",
    )
    assert done.returncode in (0, 1), done.stderr
    assert len(_reports(tmp_path / "r")) == 3
    assert "distributed" not in done.stderr  # Dask's own info lines are silenced
    assert os.listdir(tmp_path / "r" / ".resume")


def test_an_unreachable_scheduler_is_a_usage_error(tmp_path: Path) -> None:
    build_session(tmp_path / "s.jsonl", turns=2)
    done = compaction(
        "validate", str(tmp_path / "s.jsonl"), "--report-dir", str(tmp_path / "r"), "--quiet",
        "--cluster", "tcp://127.0.0.1:9", env={"COMPACTION_CLUSTER_CONNECT_TIMEOUT_SECONDS": "1"},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("compaction: error: --cluster tcp://127.0.0.1:9: no scheduler answered")


@pytest.mark.parametrize("address", ["local:two", "scheduler:8786"])
def test_a_malformed_address_is_a_usage_error(tmp_path: Path, address: str) -> None:
    build_session(tmp_path / "s.jsonl", turns=2)
    done = compaction("validate", str(tmp_path / "s.jsonl"), "--cluster", address)
    assert done.returncode == 2 and "expected local:N" in done.stderr


def test_live_commands_stay_on_this_machine(tmp_path: Path) -> None:
    """In place, a local cluster may build candidates (compress --in-place); files are replaced
    here, so no scheduler elsewhere and no URL."""
    build_session(tmp_path / "s.jsonl", turns=2)
    for elsewhere in ("tcp://127.0.0.1:1", f"local:1 s3://bucket/{tmp_path.name}"):
        address, *urls = elsewhere.split()
        done = compaction("compress", str(tmp_path / "s.jsonl"), *urls, "--in-place", "--cluster", address)
        assert done.returncode == 2 and "--cluster local:N at most, no URLs" in done.stderr
    done = compaction("restore", str(tmp_path / "s.jsonl"), "--cluster", "local:1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
