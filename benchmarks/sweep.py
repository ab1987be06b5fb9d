"""Benchmark `compaction validate` against plain parsing, over the corpus and a generated fleet.

Throughput is a ratio to a baseline measured in the same run: reading every file and
`orjson.loads` of every line in one process. The sweep is timed as users run it (the CLI, with
its worker processes and report writing). Also measured: scaling with --jobs and each worker's
peak memory against the target (twice the largest session file plus 100 MB).

    python benchmarks/sweep.py            # the corpus x8 + a 1 GiB fleet
    python benchmarks/sweep.py --fleet-mb 256 --corpus-copies 1
    python benchmarks/sweep.py --fleet-mb 0 --corpus-copies 1 --codex   # and the Codex rollouts
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    CACHE,
    CORPUS,
    MB,
    CliRun,
    baseline_seconds,
    corpus_copies,
    emit,
    fleet,
    largest_mb,
    run_cli,
    session_files,
    total_mb,
    worker_peak_mb,
)


def measure(name: str, root: Path, jobs: list[int], rounds: int) -> dict[str, object]:
    """Baseline and each --jobs run alternated `rounds` times, so load elsewhere on the machine
    hits both sides of a ratio; the ratio of the best times is the figure, medians beside it."""
    files = session_files(root)
    size = total_mb(files)
    baselines: list[float] = []
    runs: dict[int, list[CliRun]] = {count: [] for count in jobs}
    for _ in range(rounds):
        baselines.append(baseline_seconds(files))
        for count in jobs:
            report_dir = CACHE / f"reports-{name}-j{count}"
            runs[count].append(
                run_cli(
                    ["validate", str(root), "--jobs", str(count), "--report-dir", str(report_dir)], report_dir
                )
            )
    baseline, baseline_median = min(baselines), statistics.median(baselines)
    result: dict[str, object] = {
        "files": len(files),
        "total_mb": round(size, 1),
        "largest_file_mb": round(largest_mb(files), 1),
        "rounds": rounds,
        "baseline_seconds": [round(value, 2) for value in baselines],
        "baseline_mb_per_s": round(size / baseline, 1),
    }
    target_mb = 2 * largest_mb(files) + 100
    for count, measured in runs.items():
        seconds = [run.seconds for run in measured]
        best, median = min(seconds), statistics.median(seconds)
        per_round = [base / run for base, run in zip(baselines, seconds, strict=True)]
        peak = max(worker_peak_mb(run.reports) for run in measured)
        result[f"jobs_{count}"] = {
            "seconds": [round(value, 2) for value in seconds],
            "mb_per_s": round(size / best, 1),
            "ratio_to_baseline": round(baseline / best, 3),
            "ratio_of_medians": round(baseline_median / median, 3),
            "median_ratio_per_round": round(statistics.median(per_round), 3),
            "worker_peak_rss_mb": peak,
            "memory_target_mb": round(target_mb, 1),
            "memory_within_target": peak <= target_mb,
            "exit_code": measured[-1].exit_code,
            "reports": len(measured[-1].reports),
        }
    if 1 in runs and 2 in runs:  # scaling, per round: both runs share that round's load
        pairs = zip(runs[1], runs[2], strict=True)
        result["speedup_jobs_2_over_1"] = round(statistics.median(a.seconds / b.seconds for a, b in pairs), 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=1024, help="generated fleet size (default 1024)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts to compare")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds per root (default 3)")
    parser.add_argument("--corpus-copies", type=int, default=8, help="the shared corpus this many times (8)")
    parser.add_argument("--codex", action="store_true", help="also the shared Codex rollouts, read in place")
    args = parser.parse_args()
    name = f"corpus_x{args.corpus_copies}"
    results = {name: measure(name, corpus_copies(args.corpus_copies), args.jobs, args.rounds)}
    if args.codex:
        results["codex_corpus"] = measure("codex", CORPUS.parent / "codex" / "files", args.jobs, args.rounds)
    if args.fleet_mb:
        results[f"fleet_{args.fleet_mb}mb"] = measure(
            f"fleet{args.fleet_mb}", fleet(args.fleet_mb * MB), args.jobs, args.rounds
        )
    emit("sweep", results)


if __name__ == "__main__":
    main()
