"""Benchmark what `compaction validate` costs per session outside the analysis (issue 42, item 3).

Fleets of many small generated sessions (the transcript builder, 2-6 turns, 5-12 KB each) are
validated from this checkout and optionally from another one (`--before DIR`, run with this
virtualenv), alternated round by round so the load of a shared machine hits both. Two ways:

- the executor itself (`ProcessPoolExecutor.run`, in a process of its own), with a job that
  notes its own CPU time in each worker (`_timed_job.py`): the overhead per session is the
  executor's CPU during the run plus each worker's CPU after its start-up, less the analysis,
  over the sessions; measured inside one run, so the load of the machine cancels out;
- the CLI as users run it (`validate --quiet`): elapsed and CPU seconds of it and its workers,
  start-up included.

    python benchmarks/orchestration.py --before /work/main --sessions 2000 --jobs 1 2 --rounds 3
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit
from _timed_job import NOTES

HERE = Path(__file__).resolve().parent

POOL = """
import sys, time
from pathlib import Path
from pipeline.execute.process_pool import ProcessPoolExecutor
from pipeline.execute.seam import RunRequest
from pipeline.execute.session_tasks import BoundJob
from pipeline.read.discover import discover
from pipeline.testing.settings import validate_options
from _timed_job import timed_validate
fleet, reports, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
work = BoundJob(timed_validate, validate_options())
request = RunRequest(command="validate", sessions=discover([Path(fleet)]), work_for=lambda session: work,
                     destination=reports, per_code=200, resume=True)
cpu, wall = time.process_time(), time.perf_counter()
ProcessPoolExecutor(jobs).run(request)
print(time.process_time() - cpu, time.perf_counter() - wall)
"""


def build_fleet(root: Path, sessions: int) -> Path:
    """`sessions` small generated sessions, 50 to a project folder."""
    from pipeline.testing.sessions import build_session  # noqa: PLC0415 - this checkout's builder

    for index in range(sessions):
        build_session(root / f"project-{index // 50}" / f"s{index}.jsonl", turns=2 + index % 5, seed=index)
    return root


def _environment(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{HERE}", "NO_COLOR": "1"}


@dataclass(frozen=True)
class PoolRun:
    """CPU seconds of one executor run: the executor's process, the workers' start-up, the
    workers' per-session work outside the analysis, the analysis; and the elapsed seconds."""

    executor: float
    start_up: float
    workers: float
    analysis: float
    elapsed: float


def pool_run(tree: Path, fleet: Path, jobs: int, reports: Path) -> PoolRun:
    """The executor over `fleet` with `jobs` workers, its CPU split as `PoolRun` says."""
    shutil.rmtree(reports, ignore_errors=True)
    notes = reports.with_name(reports.name + "-notes")
    shutil.rmtree(notes, ignore_errors=True)
    notes.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", POOL, str(fleet), str(reports), str(jobs)],
        cwd=tree,
        env={**_environment(tree), NOTES: str(notes)},
        capture_output=True,
        text=True,
        check=True,
    )
    executor, elapsed = (float(value) for value in done.stdout.split()[-2:])
    start_up = workers = analysis = 0.0
    for worker in notes.iterdir():
        rows = [tuple(float(value) for value in line.split()) for line in worker.read_text().splitlines()]
        start_up += rows[0][0]
        analysis += sum(row[1] for row in rows)
        workers += rows[-1][0] + rows[-1][1] - rows[0][0] - sum(row[1] + row[2] for row in rows)
    shutil.rmtree(notes)
    return PoolRun(executor, start_up, workers, analysis, elapsed)


def cli_run(tree: Path, fleet: Path, jobs: int, reports: Path) -> tuple[float, float]:
    """Elapsed and CPU seconds (the CLI and its workers) of one `validate --jobs N --quiet`."""
    shutil.rmtree(reports, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "pipeline", "validate", str(fleet), "--jobs", str(jobs)]
    done = subprocess.run(
        [*command, "--report-dir", str(reports), "--quiet"],
        cwd=tree,
        env=_environment(tree),
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode()[-2000:])
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def _median(values: list[float], digits: int = 3) -> float:
    return round(statistics.median(values), digits)


def pool_figures(n: int, runs: list[PoolRun]) -> dict[str, float]:
    """Medians of the executor runs, per session in milliseconds where they scale with sessions."""
    return {
        "overhead_ms_per_session": _median([1000 * (r.executor + r.workers) / n for r in runs]),
        "executor_ms_per_session": _median([1000 * r.executor / n for r in runs]),
        "workers_outside_analysis_ms_per_session": _median([1000 * r.workers / n for r in runs]),
        "analysis_ms_per_session": _median([1000 * r.analysis / n for r in runs]),
        "workers_start_up_s": _median([r.start_up for r in runs], 2),
        "elapsed_s": _median([r.elapsed for r in runs], 2),
    }


def cli_figures(runs: list[tuple[float, float]]) -> dict[str, float]:
    return {"elapsed_s": _median([r[0] for r in runs], 2), "cpu_s": _median([r[1] for r in runs], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[2000], help="fleet sizes")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (default 3)")
    parser.add_argument("--before", type=Path, help="another checkout to run beside this one")
    args = parser.parse_args()
    trees = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    scratch = Path(tempfile.mkdtemp(prefix="orchestration-"))
    try:
        fleets = {n: build_fleet(scratch / f"fleet-{n}", n) for n in args.sessions}
        pools: dict[tuple[str, int, int], list[PoolRun]] = {}
        clis: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for (n, fleet), jobs, (name, tree) in itertools.product(fleets.items(), args.jobs, trees.items()):
                reports = scratch / f"reports-{name}"
                pools.setdefault((name, n, jobs), []).append(pool_run(tree, fleet, jobs, reports))
                clis.setdefault((name, n, jobs), []).append(cli_run(tree, fleet, jobs, reports))
        results: dict[str, object] = {"rounds": args.rounds}
        for (name, n, jobs), runs in pools.items():
            results[f"{name}_{n}_sessions_jobs_{jobs}"] = {
                "executor": pool_figures(n, runs),
                "cli": cli_figures(clis[name, n, jobs]),
            }
        emit("orchestration", results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
