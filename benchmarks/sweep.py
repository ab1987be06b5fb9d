"""Benchmark `compaction validate` against plain parsing, over the corpus and a generated fleet.

Throughput is a ratio to a baseline measured in the same run: reading every file and
`orjson.loads` of every line in one process. The sweep is timed as users run it (the CLI, with
its worker processes and report writing), once per line index engine: the Rust core and the
pure-Python reference, each from a package tree holding only its own compiled module (the C
scanner the core replaced was measured beside them before it was retired: benchmarks/README.md).
Also measured: scaling with --jobs and each worker's peak memory against the bound (1.5 x the
largest session file + 200 MB), and every run's CPU seconds (the CLI with its workers), which
the load of a shared machine moves less than elapsed time. Figures are medians.

    python benchmarks/sweep.py            # the corpus x8 + a 1 GiB fleet, every engine
    python benchmarks/sweep.py --fleet-mb 0 --corpus-copies 12 --engines rust python
    python benchmarks/sweep.py --fleet-mb 256 --corpus-copies 1
    python benchmarks/sweep.py --fleet-mb 0 --corpus-copies 1 --codex   # and the Codex rollouts
    python benchmarks/sweep.py --ccusage PATH/TO/ccusage   # and ccusage 20 (its native binary)
    python benchmarks/sweep.py --before /tmp/main   # and a reference checkout's code, alternated

ccusage (`ccusage claude session --json --offline`, timed as is, parallel, and `--single-thread`)
reads the same files through hard links in a `projects` folder of its own (it does not follow
symbolic links); where the files cannot be hard-linked it is left out, never given copies.
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
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    CACHE,
    CORPUS,
    MB,
    REPO,
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

ENGINES: Final = {
    "rust": "_core",  # the Rust core (pipeline/formats/claude_code/rust)
    "python": None,  # the pure-Python reference: no compiled index at all
}


BEFORE: Final = "before_"
"""The engines of `--before`'s checkout are named with this prefix."""


def _own(cache: Path) -> Path:
    """This checkout's part of the benchmark cache: the cache may be shared by several checkouts
    (a linked `.cache`), whose sweeps must not replace each other's package trees or reports."""
    return cache / "checkouts" / REPO.name


def engine_roots(names: Sequence[str], source: Path = REPO, prefix: str = "") -> dict[str, Path]:
    """A package tree per index engine holding only that engine's compiled module (none for
    `python`), so one CLI run measures one engine; engines not built here are left out.

    `source` is the checkout whose `pipeline` and `config` are measured (this one, or `--before`'s
    named `before_<engine>`); the compiled module is always this tree's build.
    """
    here = REPO / "pipeline" / "formats" / "claude_code"
    roots: dict[str, Path] = {}
    for name in names:
        module = ENGINES[name]
        built = sorted(here.glob(f"{module}.*.so")) if module else []
        if module and not built:
            print(f"sweep: the {name} index is not built in this tree; left out", file=sys.stderr)
            continue
        root = _own(CACHE) / "engines" / f"{prefix}{name}"
        if root.exists():
            shutil.rmtree(root)
        ignore = shutil.ignore_patterns("*.so", "__pycache__", "rust")
        shutil.copytree(source / "pipeline", root / "pipeline", ignore=ignore)
        shutil.copytree(source / "config", root / "config")
        for path in built:
            shutil.copy2(path, root / "pipeline" / "formats" / "claude_code" / path.name)
        roots[f"{prefix}{name}"] = root
    return roots


def _figures(
    size: float, baselines: list[float], measured: list[CliRun], target_mb: float
) -> dict[str, object]:
    seconds = [run.seconds for run in measured]
    median = statistics.median(seconds)
    peak = max(worker_peak_mb(run.reports) for run in measured)
    return {
        "seconds": [round(value, 2) for value in seconds],
        "median_seconds": round(median, 3),
        "mb_per_s": round(size / median, 1),
        "ratio_to_baseline": round(statistics.median(baselines) / median, 3),
        "median_ratio_per_round": round(
            statistics.median(base / run for base, run in zip(baselines, seconds, strict=True)), 3
        ),
        "worker_peak_rss_mb": peak,
        "memory_target_mb": round(target_mb, 1),
        "memory_within_target": peak <= target_mb,
        "exit_code": measured[-1].exit_code,
        "reports": len(measured[-1].reports),
    }


def _ratios(runs: dict[tuple[str, int], list[CliRun]], jobs: list[int]) -> dict[str, float]:
    """Per-round ratios of medians: engine over engine at each --jobs, and --jobs 2 over 1."""
    median = {key: statistics.median(run.seconds for run in measured) for key, measured in runs.items()}
    order = [*ENGINES, *(f"{BEFORE}{name}" for name in ENGINES)]
    engines = sorted({engine for engine, _ in runs}, key=order.index)
    ratios: dict[str, float] = {}
    for count in jobs:
        for faster, slower in itertools.combinations(engines, 2):
            ratios[f"{faster}_over_{slower}_jobs_{count}"] = round(
                median[slower, count] / median[faster, count], 3
            )
    if 1 in jobs and 2 in jobs:
        for engine in engines:
            ratios[f"{engine}_jobs_2_over_1"] = round(median[engine, 1] / median[engine, 2], 3)
    return ratios


def ccusage_home(name: str, files: Sequence[Path]) -> Path | None:
    """A CLAUDE_CONFIG_DIR whose `projects` holds hard links to `files` (one folder per parent
    folder, as Claude Code lays projects out); None where they cannot be linked."""
    home = _own(CACHE) / f"ccusage-{name}"
    if home.exists():
        shutil.rmtree(home)
    for path in files:
        folder = home / "projects" / path.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path.resolve(), folder / path.name)
        except OSError as exc:
            print(f"sweep: ccusage left out ({exc.strerror} linking {path.name})", file=sys.stderr)
            shutil.rmtree(home)
            return None
    return home


def ccusage_seconds(binary: Path, home: Path, *, single_thread: bool) -> float:
    """One timed `ccusage claude session --json --offline` over `home`'s projects."""
    command = [str(binary), "claude", "session", "--json", "--offline"]
    command += ["--single-thread"] if single_thread else []
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home), "NO_COLOR": "1"}
    started = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def _ccusage_figures(size: float, runs: dict[str, list[float]], jobs_1: float | None) -> dict[str, object]:
    figures: dict[str, object] = {}
    for mode, seconds in runs.items():
        median = statistics.median(seconds)
        figures[f"ccusage_{mode}"] = {
            "seconds": [round(value, 2) for value in seconds],
            "median_seconds": round(median, 3),
            "mb_per_s": round(size / median, 1),
            "rust_jobs_1_over_ccusage": round(median / jobs_1, 3) if jobs_1 else None,
        }
    return figures


def measure(
    name: str,
    root: Path,
    jobs: list[int],
    rounds: int,
    engines: dict[str, Path],
    ccusage: Path | None = None,
) -> dict[str, object]:
    """Baseline and each engine's --jobs runs alternated `rounds` times, so load elsewhere on the
    machine hits every side of a ratio; medians are the figures."""
    files = session_files(root)
    size = total_mb(files)
    baselines: list[float] = []
    runs: dict[tuple[str, int], list[CliRun]] = {(e, count): [] for e in engines for count in jobs}
    cpu: dict[str, list[float]] = {}  # CPU seconds by run, the load on the machine aside
    home = ccusage_home(name, files) if ccusage is not None else None
    peer_run = partial(ccusage_seconds, ccusage, home) if ccusage is not None and home is not None else None
    peer: dict[str, list[float]] = {"parallel": [], "single_thread": []} if peer_run is not None else {}
    for _ in range(rounds):
        started = time.process_time()
        baselines.append(baseline_seconds(files))
        cpu.setdefault("baseline", []).append(time.process_time() - started)
        for mode, seconds in peer.items():
            if peer_run is not None:
                started = _children_cpu()
                seconds.append(peer_run(single_thread=mode == "single_thread"))
                cpu.setdefault(f"ccusage_{mode}", []).append(_children_cpu() - started)
        for (engine, count), measured in runs.items():
            report_dir = _own(CACHE) / f"reports-{name}-{engine}-j{count}"
            args = ["validate", str(root), "--jobs", str(count), "--report-dir", str(report_dir)]
            started = _children_cpu()
            measured.append(run_cli(args, report_dir, engines[engine]))
            cpu.setdefault(f"{engine}_jobs_{count}", []).append(_children_cpu() - started)
    result: dict[str, object] = {
        "files": len(files),
        "total_mb": round(size, 1),
        "largest_file_mb": round(largest_mb(files), 1),
        "rounds": rounds,
        "baseline_seconds": [round(value, 2) for value in baselines],
        "baseline_mb_per_s": round(size / statistics.median(baselines), 1),
    }
    target_mb = 1.5 * largest_mb(files) + 200
    for (engine, count), measured in runs.items():
        result[f"{engine}_jobs_{count}"] = _figures(size, baselines, measured, target_mb)
    result["ratios"] = _ratios(runs, jobs)
    if peer:
        rust = runs.get(("rust", 1))
        jobs_1 = statistics.median(run.seconds for run in rust) if rust else None
        result.update(_ccusage_figures(size, peer, jobs_1))
    medians = {label: statistics.median(values) for label, values in cpu.items()}
    result["cpu_seconds"] = {label: round(value, 2) for label, value in medians.items()}
    result["cpu_mb_per_s"] = {label: round(size / value, 1) for label, value in medians.items()}
    return result


def _children_cpu() -> float:
    """User + system seconds of finished child processes and their own waited-for children (the
    CLI and its workers; its report folder's removal too, a few milliseconds)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=1024, help="generated fleet size (default 1024)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts to compare")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds per root (default 3)")
    parser.add_argument("--corpus-copies", type=int, default=8, help="the shared corpus this many times (8)")
    parser.add_argument("--codex", action="store_true", help="also the shared Codex rollouts, read in place")
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=list(ENGINES),
        default=list(ENGINES),
        help="line index engines to compare (default: every one built here)",
    )
    parser.add_argument(
        "--ccusage", type=Path, help="ccusage 20's native binary, timed on the same files (default: not run)"
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of the reference revision (its pipeline and config), measured in the same "
        "rounds as this one, with this tree's compiled core (engines named before_<engine>)",
    )
    args = parser.parse_args()
    engines = engine_roots(args.engines)
    if args.before is not None:
        engines |= engine_roots(args.engines, source=args.before, prefix=BEFORE)
    name = f"corpus_x{args.corpus_copies}"
    copies = corpus_copies(args.corpus_copies)
    results = {name: measure(name, copies, args.jobs, args.rounds, engines, args.ccusage)}
    if args.codex:
        codex = CORPUS.parent / "codex" / "files"
        results["codex_corpus"] = measure("codex", codex, args.jobs, args.rounds, engines)
    if args.fleet_mb:
        results[f"fleet_{args.fleet_mb}mb"] = measure(
            f"fleet{args.fleet_mb}", fleet(args.fleet_mb * MB), args.jobs, args.rounds, engines, args.ccusage
        )
    emit("sweep", results)


if __name__ == "__main__":
    main()
