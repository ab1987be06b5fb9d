"""Benchmark the nightly in-place job: the first run against `compress --out`, the second against `stat`.

Targets: a second run over an unchanged fleet does no compression work and costs at most 3x a
plain `stat` walk of the same tree; the first in-place run costs at most 1.3x `compress --out`
over the same sessions. The in-place runs use `pipeline.testing.inplace_driver` (one process,
sessions in turn, the resume gate off), so the apples-to-apples baseline is the same sessions
compressed in turn into `--out` in one process; `compress --out --jobs 1` through the command
line (worker process, reports) is reported beside it. Each measurement runs on a fresh copy of a
cached generated fleet (in-place runs change it); times are medians of `--repeat` runs.

    python benchmarks/nightly.py                # a 64 MiB fleet
    python benchmarks/nightly.py --fleet-mb 256 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MB, emit, fleet, run_cli, session_files, total_mb

from pipeline.jobs.compress import CompressOptions, compress_session
from pipeline.read.discover import discover
from pipeline.testing.inplace_driver import _parser, run


def stat_walk(root: Path) -> float:
    """Seconds to walk the tree and `stat` every file: the floor of any incremental pass."""
    started = time.perf_counter()
    for directory, _, files in os.walk(root):
        for name in files:
            os.stat(os.path.join(directory, name))
    return time.perf_counter() - started


def discovery(root: Path) -> float:
    """Seconds `discover` takes over the tree: the walk every command does first."""
    started = time.perf_counter()
    discover([root])
    return time.perf_counter() - started


def compress_out(root: Path, out: Path) -> float:
    """Seconds to compress every session in turn into `out`, in this process (what the driver does)."""
    options = CompressOptions(out_dir=str(out), root_label="projects")
    started = time.perf_counter()
    for path in session_files(root):
        compress_session(path, path.relative_to(root).as_posix(), options)
    return time.perf_counter() - started


def in_place(root: Path, scratch: Path) -> tuple[float, int]:
    """Seconds of one in-place run over `root`, and how many candidates it built."""
    args = _parser().parse_args(
        [
            str(root),
            "--state-dir",
            str(scratch / "state"),
            "--work-dir",
            str(scratch / "work"),
            "--idle-for",
            "0",
        ]
    )
    started = time.perf_counter()
    result = run(args)
    return time.perf_counter() - started, result.compression_work


def measure(source: Path, scratch: Path, repeat: int) -> dict[str, object]:
    first, second, walk, found, out_in_process, built = [], [], [], [], [], []
    for attempt in range(repeat):
        work = scratch / f"run{attempt}"
        copy = work / "projects"
        shutil.copytree(source, copy)
        out_in_process.append(compress_out(copy, work / "out"))
        seconds, first_built = in_place(copy, work)
        first.append(seconds)
        seconds, again_built = in_place(copy, work)
        second.append(seconds)
        walk.append(stat_walk(copy))
        found.append(discovery(copy))
        built.append((first_built, again_built))
        shutil.rmtree(work)
    cli_copy = scratch / "cli" / "projects"
    shutil.copytree(source, cli_copy)
    cli = run_cli(
        ["compress", str(cli_copy), "--out", str(scratch / "cli-out"), "--jobs", "1", "--no-verify-resume"],
        scratch / "cli-out",
    )
    median = statistics.median
    return {
        "files": len(session_files(source)),
        "total_mb": round(total_mb(session_files(source)), 1),
        "first_in_place_seconds": round(median(first), 3),
        "compress_out_in_process_seconds": round(median(out_in_process), 3),
        "compress_out_cli_jobs1_seconds": round(cli.seconds, 3),
        "first_to_compress_out": round(median(first) / median(out_in_process), 2),
        "first_to_compress_out_cli": round(median(first) / cli.seconds, 2),
        "within_target_1_3x": median(first) <= 1.3 * median(out_in_process),
        "second_run_seconds": round(median(second), 4),
        "stat_walk_seconds": round(median(walk), 4),
        "second_to_stat_walk": round(median(second) / median(walk), 2),
        "discover_seconds": round(median(found), 4),
        "second_without_discovery_to_stat_walk": round((median(second) - median(found)) / median(walk), 2),
        "within_target_3x": median(second) <= 3 * median(walk),
        "candidates_built_first_second": built[0],
        "second_run_did_no_compression_work": all(again == 0 for _, again in built),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=64, help="generated fleet size (default 64)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args()
    source = fleet(args.fleet_mb * MB)
    with tempfile.TemporaryDirectory(prefix="nightly-bench-") as scratch:
        results = {f"fleet_{args.fleet_mb}mb": measure(source, Path(scratch), args.repeat)}
    emit("nightly", results)


if __name__ == "__main__":
    main()
