"""Benchmark the nightly in-place job: the first run against `compress --out`, the second against `stat`.

Targets: the first `compress --in-place` run over a fleet costs at most 1.3x `compress --out`
over the same sessions with the same `--jobs`; a second run over the unchanged fleet does no
compression work and costs at most 3x a plain `stat` walk of the same tree.

Both first runs go through the command line as users run it (a process each, worker processes
under `--jobs`, reports written, the resume gate off on both sides since it costs the same
there). The second night is timed twice: the command line's own `main` called in this process
(what the run itself costs, without the interpreter's start-up and imports), and as a separate
process beside it. Each measurement runs on a fresh copy of a cached generated fleet (in-place
runs change it); times are medians of `--repeat` runs.

    python benchmarks/nightly.py                # a 64 MiB fleet, --jobs 2
    python benchmarks/nightly.py --fleet-mb 256 --jobs 2 --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MB, emit, fleet, run_cli, session_files, total_mb

from pipeline.cli import compress_in_place_command  # noqa: F401 - imported before timing, as a warm process has it
from pipeline.cli.main import main as cli_main

NIGHT_FLAGS = ("--idle-for", "0", "--no-verify-resume", "--quiet")


def stat_walk(root: Path) -> float:
    """Seconds to walk the tree and `stat` every file: the floor of any incremental pass."""
    started = time.perf_counter()
    for directory, _, files in os.walk(root):
        for name in files:
            os.stat(os.path.join(directory, name))
    return time.perf_counter() - started


def in_place_args(root: Path, scratch: Path, jobs: int, night: str) -> list[str]:
    return [
        "compress", str(root), "--in-place", "--jobs", str(jobs), "--state-dir", str(scratch / "state"),
        "--report-dir", str(scratch / f"reports-{night}"), *NIGHT_FLAGS,
    ]  # fmt: skip


def in_process(argv: list[str]) -> tuple[float, int]:
    """Seconds of the command line's `main` in this process, and its exit code."""
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(argv)
    return time.perf_counter() - started, code


def built(reports: Path) -> int:
    import json  # noqa: PLC0415

    return int(json.loads((reports / "summary.json").read_text())["in_place"]["built"])


def one_attempt(source: Path, work: Path, jobs: int) -> dict[str, float]:
    copy = work / "projects"
    shutil.copytree(source, copy)
    out_args = ["compress", str(copy), "--out", str(work / "out"), "--jobs", str(jobs), "--no-verify-resume"]
    out = run_cli(out_args, work / "out")
    first = run_cli(in_place_args(copy, work, jobs, "first"), work / "reports-first")
    assert first.exit_code == 0, first.exit_code
    second_process = run_cli(in_place_args(copy, work, jobs, "second-cli"), work / "reports-second-cli")
    second, code = in_process(in_place_args(copy, work, jobs, "second"))
    assert code == 0
    assert built(work / "reports-second") == 0
    walk = min(stat_walk(copy) for _ in range(5))  # the page cache warm, as for the second run
    return {
        "out": out.seconds,
        "first": first.seconds,
        "first_built": built(work / "reports-first"),
        "second": second,
        "second_cli": second_process.seconds,
        "walk": walk,
    }


def measure(source: Path, scratch: Path, repeat: int, jobs: int) -> dict[str, object]:
    attempts = []
    for attempt in range(repeat):
        work = scratch / f"run{attempt}"
        attempts.append(one_attempt(source, work, jobs))
        shutil.rmtree(work)

    def median(key: str) -> float:
        return statistics.median(a[key] for a in attempts)

    files = session_files(source)
    return {
        "files": len(files),
        "total_mb": round(total_mb(files), 1),
        "jobs": jobs,
        "compress_out_seconds": round(median("out"), 3),
        "first_in_place_seconds": round(median("first"), 3),
        "first_to_compress_out": round(median("first") / median("out"), 3),
        "within_target_1_3x": median("first") <= 1.3 * median("out"),
        "candidates_built_first": int(median("first_built")),
        "second_in_process_seconds": round(median("second"), 4),
        "stat_walk_seconds": round(median("walk"), 4),
        "second_to_stat_walk": round(median("second") / median("walk"), 2),
        "within_target_3x": median("second") <= 3 * median("walk"),
        "second_as_a_process_seconds": round(median("second_cli"), 3),
        "second_run_did_no_compression_work": True,  # asserted per attempt
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=64, help="generated fleet size (default 64)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes on both sides (default 2)")
    args = parser.parse_args()
    source = fleet(args.fleet_mb * MB)
    with tempfile.TemporaryDirectory(prefix="nightly-bench-") as scratch:
        results = {f"fleet_{args.fleet_mb}mb": measure(source, Path(scratch), args.repeat, args.jobs)}
    emit(f"nightly-{args.fleet_mb}mb", results)


if __name__ == "__main__":
    main()
