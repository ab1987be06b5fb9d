"""Benchmark `compaction validate` against plain parsing, over the corpus and a generated fleet.

Throughput is a ratio to a baseline measured in the same run: reading every file and
`orjson.loads` of every line in one process. The sweep is timed as users run it (the CLI, with
its worker processes and report writing). Also measured: scaling with --jobs and each worker's
peak memory against the target (twice the largest session file plus 100 MB).

    python benchmarks/sweep.py            # corpus + 1 GiB fleet
    python benchmarks/sweep.py --fleet-mb 256
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    CACHE,
    CORPUS,
    MB,
    baseline_seconds,
    emit,
    fleet,
    largest_mb,
    run_cli,
    session_files,
    total_mb,
    worker_peak_mb,
)


def measure(name: str, root: Path, jobs: list[int]) -> dict[str, object]:
    files = session_files(root)
    baseline = baseline_seconds(files)
    size = total_mb(files)
    result: dict[str, object] = {
        "files": len(files),
        "total_mb": round(size, 1),
        "largest_file_mb": round(largest_mb(files), 1),
        "baseline_seconds": round(baseline, 2),
        "baseline_mb_per_s": round(size / baseline, 1),
    }
    for count in jobs:
        run = run_cli(
            [
                "validate",
                str(root),
                "--jobs",
                str(count),
                "--report-dir",
                str(CACHE / f"reports-{name}-j{count}"),
            ],
            CACHE / f"reports-{name}-j{count}",
        )
        peak = worker_peak_mb(run.reports)
        result[f"jobs_{count}"] = {
            "seconds": round(run.seconds, 2),
            "mb_per_s": round(size / run.seconds, 1),
            "ratio_to_baseline": round(baseline / run.seconds, 3),
            "worker_peak_rss_mb": peak,
            "memory_target_mb": round(2 * largest_mb(files) + 100, 1),
            "memory_within_target": peak <= 2 * largest_mb(files) + 100,
            "exit_code": run.exit_code,
            "reports": len(run.reports),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=1024, help="generated fleet size (default 1024)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts to compare")
    args = parser.parse_args()
    results = {"corpus": measure("corpus", CORPUS, args.jobs)}
    if args.fleet_mb:
        results[f"fleet_{args.fleet_mb}mb"] = measure(
            f"fleet{args.fleet_mb}", fleet(args.fleet_mb * MB), args.jobs
        )
    emit("sweep", results)


if __name__ == "__main__":
    main()
