"""Shared pieces of the benchmarks: the baseline, the fleet cache, running the CLI, reading reports."""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "files"
CACHE = REPO / ".cache" / "benchmarks"
MB = 1024 * 1024


def session_files(root: Path) -> list[Path]:
    """Every transcript under a root, as discovery sees them."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json") and not p.name.startswith(".")
    )


def baseline_seconds(files: Sequence[Path]) -> float:
    """Read every file and orjson.loads every line, in this process: the reference throughput."""
    started = time.perf_counter()
    for path in files:
        data = path.read_bytes()
        for line in data.split(b"\n"):
            if line:
                with contextlib.suppress(orjson.JSONDecodeError):
                    orjson.loads(line)
    return time.perf_counter() - started


def corpus_copies(copies: int) -> Path:
    """The corpus `copies` times over, as symbolic links into it (read in place, never copied)."""
    root = CACHE / f"corpus-x{copies}"
    if not (root / ".complete").exists():
        for copy in range(1, copies + 1):
            folder = root / f"copy{copy}"
            folder.mkdir(parents=True, exist_ok=True)
            for path in session_files(CORPUS):
                link = folder / path.name
                if not link.is_symlink():
                    link.symlink_to(path)
        (root / ".complete").touch()
    return root


def fleet(size_bytes: int, seed: int = 11) -> Path:
    """A generated fleet of at least `size_bytes`, cached between runs."""
    root = CACHE / f"fleet-{size_bytes // MB}M-seed{seed}"
    if not (root / ".complete").exists():
        if root.exists():
            subprocess.run(["rm", "-rf", str(root)], check=True)
        print(f"generating a {size_bytes // MB} MB fleet in {root} (cached for later runs)", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pipeline.testing.synth",
                "--out",
                str(root),
                "--bytes",
                str(size_bytes),
                "--seed",
                str(seed),
            ],
            check=True,
            cwd=REPO,
        )
        (root / ".complete").touch()
    return root / "projects"


@dataclass(frozen=True)
class CliRun:
    """One timed CLI run and what its reports say."""

    seconds: float
    exit_code: int
    reports: list[dict[str, object]]
    children_max_rss_mb: float


def run_cli(args: Sequence[str], report_dir: Path, package_root: Path = REPO) -> CliRun:
    """Run `compaction ...` as users do (from `package_root`) and collect its per-session reports.

    The package is byte-compiled first, as an installed package is: otherwise an environment
    with PYTHONDONTWRITEBYTECODE would charge every run (and worker) for compiling it.
    """
    compileall.compile_dir(package_root / "pipeline", quiet=1)
    if report_dir.exists():
        subprocess.run(["rm", "-rf", str(report_dir)], check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "pipeline", *args, "--quiet"],
        cwd=package_root,
        env={**os.environ, "PYTHONPATH": str(package_root)},
        capture_output=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    reports = [json.loads(p.read_text()) for p in report_dir.rglob("*.report.json")]
    return CliRun(seconds, completed.returncode, reports, max(before, after) / 1024)


def worker_peak_mb(reports: Sequence[dict[str, object]]) -> float:
    """The largest peak resident size a worker reported while processing its sessions."""
    peaks = [float((r.get("timing_ms") or {}).get("worker_peak_rss_mb", 0)) for r in reports]  # type: ignore[union-attr]
    return max(peaks, default=0.0)


def largest_mb(files: Sequence[Path]) -> float:
    return max((p.stat().st_size for p in files), default=0) / MB


def total_mb(files: Sequence[Path]) -> float:
    return sum(p.stat().st_size for p in files) / MB


def emit(name: str, results: dict[str, object]) -> None:
    """Print the figures and keep them under benchmarks/results/ for the record."""
    out = REPO / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


def chunks(items: Sequence[Path], size: int) -> Iterator[Sequence[Path]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
