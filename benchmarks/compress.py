"""Benchmark `compaction compress` against `compaction validate` over the same files, in one run.

Target: compression costs at most twice the sweep. Both are timed as users run them (the CLI,
worker processes, reports; compress also writes candidates). Peak memory is each worker's own
peak resident size as reported in the session reports.

    python benchmarks/compress.py              # corpus + 1 GiB fleet
    python benchmarks/compress.py --fleet-mb 256
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
    emit,
    fleet,
    largest_mb,
    run_cli,
    session_files,
    total_mb,
    worker_peak_mb,
)


def measure(name: str, root: Path, jobs: int) -> dict[str, object]:
    files = session_files(root)
    size = total_mb(files)
    sweep_dir = CACHE / f"bench-{name}-validate"
    out_dir = CACHE / f"bench-{name}-compress"
    sweep = run_cli(["validate", str(root), "--jobs", str(jobs), "--report-dir", str(sweep_dir)], sweep_dir)
    # The resume gate (two Claude Code resumes per candidate) is measured by benchmarks/resume.py.
    compress = run_cli(
        ["compress", str(root), "--jobs", str(jobs), "--out", str(out_dir), "--no-verify-resume"], out_dir
    )
    statuses: dict[str, int] = {}
    for report in compress.reports:
        statuses[str(report["status"])] = statuses.get(str(report["status"]), 0) + 1
    written = sum(p.stat().st_size for p in out_dir.rglob("*.jsonl")) / MB
    return {
        "files": len(files),
        "total_mb": round(size, 1),
        "largest_file_mb": round(largest_mb(files), 1),
        "jobs": jobs,
        "validate_seconds": round(sweep.seconds, 2),
        "compress_seconds": round(compress.seconds, 2),
        "compress_to_validate": round(compress.seconds / sweep.seconds, 2),
        "within_target_2x": compress.seconds <= 2 * sweep.seconds,
        "validate_worker_peak_rss_mb": worker_peak_mb(sweep.reports),
        "compress_worker_peak_rss_mb": worker_peak_mb(compress.reports),
        "compress_statuses": dict(sorted(statuses.items())),
        "candidates_mb": round(written, 1),
        "exit_codes": [sweep.exit_code, compress.exit_code],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=1024, help="generated fleet size (default 1024)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for both commands")
    args = parser.parse_args()
    results = {"corpus": measure("corpus", CORPUS, args.jobs)}
    if args.fleet_mb:
        results[f"fleet_{args.fleet_mb}mb"] = measure(
            f"fleet{args.fleet_mb}", fleet(args.fleet_mb * MB), args.jobs
        )
    emit("compress", results)


if __name__ == "__main__":
    main()
