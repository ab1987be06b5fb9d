"""Benchmark what `compaction validate` costs per session outside the analysis (issue 42, item 3).

Fleets of many small generated sessions (the transcript builder, 2-6 turns, 5-12 KB each) are
validated by the CLI as users run it, from this checkout and optionally from another one
(`--before DIR`, run with this virtualenv), alternated round by round so the load of a shared
machine hits both. Per run: elapsed and CPU seconds (the CLI and its workers). The analysis
itself is timed apart, in one process per checkout (CPU seconds of `validate_session` over the
same files), so

    overhead per session = (CPU of the run - CPU of the analysis) / sessions

and its slope between the two fleet sizes is the marginal cost of one more session (dispatch,
pickling, report and marker writing, gathering), its intercept the fixed cost (start-up,
planning, the summary). Elapsed figures are given too, but on a loaded machine CPU is the one
to compare.

    python benchmarks/orchestration.py --before /work/main --sessions 500 2000 --jobs 1 2 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit

ANALYSIS = """
import sys, time
from pathlib import Path
from pipeline.jobs.validate import validate_session
from pipeline.testing.settings import validate_options
options = validate_options()
files = sorted(Path(sys.argv[1]).rglob("*.jsonl"))
validate_session(files[0], "warm-up", options)
started = time.process_time()
for path in files:
    validate_session(path, path.name, options)
print(time.process_time() - started)
"""


def build_fleet(root: Path, sessions: int) -> Path:
    """`sessions` small generated sessions, 50 to a project folder."""
    from pipeline.testing.sessions import build_session  # noqa: PLC0415 - this checkout's builder

    for index in range(sessions):
        build_session(root / f"project-{index // 50}" / f"s{index}.jsonl", turns=2 + index % 5, seed=index)
    return root


def _environment(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1"}


def analysis_cpu(tree: Path, fleet: Path) -> float:
    """CPU seconds of the analysis alone (`validate_session` per file, one process)."""
    done = subprocess.run(
        [sys.executable, "-c", ANALYSIS, str(fleet)],
        cwd=tree,
        env=_environment(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


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


def _line(xs: list[int], ys: list[float]) -> tuple[float, float]:
    """Slope and intercept through the first and last point."""
    slope = (ys[-1] - ys[0]) / (xs[-1] - xs[0]) if len(xs) > 1 else 0.0
    return slope, ys[0] - slope * xs[0]


def figures(
    sizes: list[int], runs: dict[int, list[tuple[float, float]]], analysis: dict[int, float]
) -> dict[str, object]:
    """Medians per fleet size, and the marginal and fixed costs between sizes."""
    elapsed = [statistics.median(run[0] for run in runs[n]) for n in sizes]
    cpu = [statistics.median(run[1] for run in runs[n]) for n in sizes]
    outside = [total - analysis[n] for total, n in zip(cpu, sizes, strict=True)]
    marginal, fixed = _line(sizes, outside)
    elapsed_slope, elapsed_fixed = _line(sizes, elapsed)
    return {
        "elapsed_s": [round(value, 2) for value in elapsed],
        "cpu_s": [round(value, 2) for value in cpu],
        "cpu_outside_analysis_ms_per_session": [
            round(1000 * value / n, 3) for value, n in zip(outside, sizes, strict=True)
        ],
        "marginal_cpu_outside_analysis_ms_per_session": round(1000 * marginal, 3),
        "fixed_cpu_outside_analysis_s": round(fixed, 2),
        "marginal_elapsed_ms_per_session": round(1000 * elapsed_slope, 3),
        "fixed_elapsed_s": round(elapsed_fixed, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, nargs="+", default=[500, 2000], help="fleet sizes")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (default 3)")
    parser.add_argument("--before", type=Path, help="another checkout to run beside this one")
    args = parser.parse_args()
    trees = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    sizes = sorted(args.sessions)
    scratch = Path(tempfile.mkdtemp(prefix="orchestration-"))
    try:
        fleets = {n: build_fleet(scratch / f"fleet-{n}", n) for n in sizes}
        analysis = {name: {n: analysis_cpu(tree, fleets[n]) for n in sizes} for name, tree in trees.items()}
        runs: dict[tuple[str, int], dict[int, list[tuple[float, float]]]] = {}
        for _ in range(args.rounds):
            for n in sizes:
                for jobs in args.jobs:
                    for name, tree in trees.items():
                        measured = cli_run(tree, fleets[n], jobs, scratch / f"reports-{name}")
                        runs.setdefault((name, jobs), {}).setdefault(n, []).append(measured)
        results: dict[str, object] = {"sessions": sizes, "rounds": args.rounds}
        for name in trees:
            results[f"{name}_analysis_cpu_ms_per_session"] = [
                round(1000 * analysis[name][n] / n, 3) for n in sizes
            ]
            for jobs in args.jobs:
                results[f"{name}_jobs_{jobs}"] = figures(sizes, runs[name, jobs], analysis[name])
        emit("orchestration", results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
