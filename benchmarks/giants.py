"""Benchmark memory and time on giant single sessions of several shapes (issue 20 item 6, issue 35 item 4).

A session of N bytes must validate and compress within a peak resident size of 1.5 x N + 200 MB,
whatever its shape, and its time per MB must stay flat as N grows. For each shape and size this
measures, in one run: the baseline (this process reads the file and `orjson.loads` every line),
then `compaction validate --jobs 1` and `compaction compress --jobs 1` as users run them (the
CLI, its worker, reports, the candidate). It prints seconds per MB of each beside the baseline's
(wall, and CPU of the commands' processes, Claude Code's too when it runs: the machine is
shared), and the peak RSS of the worker that reads and holds the session against the bound.
Extra `compress` arguments go after `--`.

Shapes: `generated` comes from `pipeline.testing.giant` (seed 0); the others are real corpus
sessions grown by `pipeline.testing.grow` (their turns repeated with fresh ids on one chain):
`tool-outputs` (mostly long tool results), `small-records` (1.1 KB a line), `images` (base64
screenshots). Sessions are made once and kept in the work directory.

    python benchmarks/giants.py                        # every shape, 100 MB and 400 MB
    python benchmarks/giants.py --shapes images,tool-outputs --sizes 100M
    python benchmarks/giants.py --sizes 100M,400M,1G   # and 1 GiB (opt-in: ~2 GB of memory, 1 GB of disk)
    python benchmarks/giants.py --verify-resume        # the resume gate too (Claude Code, the originals)
    python benchmarks/giants.py --work-dir /tmp/g --clean   # remove the sessions afterwards
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, CORPUS, MB, REPO, baseline_seconds, emit, run_cli, worker_peak_mb

from pipeline.testing.grow import SHAPES, Shape

BOUND_SLOPE = 1.5  # peak RSS may be 1.5 x the session's size ...
BOUND_MB = 200  # ... plus this much (the interpreter, imports and fixed costs)
SEED = 0
GENERATED = "generated"
ALL_SHAPES = (GENERATED, *SHAPES)


def giant(work: Path, shape: str, size: str) -> Path:
    """The session of `shape` and `size` (e.g. `400M`), made once (in a subprocess: its memory
    is not this process's)."""
    if shape == GENERATED:
        root = work / f"giant-{size}-seed{SEED}"
        command = ["-m", "pipeline.testing.giant", "--bytes", size, "--seed", str(SEED)]
    else:
        root = work / f"{shape}-{size}"
        command = ["-m", "pipeline.testing.grow", str(CORPUS / SHAPES[Shape(shape)]), "--bytes", size]
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        print(f"making a {size} {shape} session in {root}", file=sys.stderr)
        subprocess.run([sys.executable, *command, "--out", str(root)], check=True, cwd=REPO)
        (root / ".complete").touch()
    (session,) = root.glob("*.jsonl")
    return session


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str], report_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """One CLI run's figures, and the session's report (`report_dir` is emptied first)."""
    cpu = _children_cpu()
    run = run_cli([*args, "--report-dir", str(report_dir)], report_dir)
    cpu = _children_cpu() - cpu
    (report,) = run.reports
    figures: dict[str, Any] = {
        "seconds": round(run.seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "worker_peak_rss_mb": worker_peak_mb([report]),
        "status": report["status"],
        "exit_code": run.exit_code,
    }
    return figures, report


def measure(session: Path, work: Path, gate: bool, extra: list[str]) -> dict[str, Any]:
    size_mb = session.stat().st_size / MB
    bound = BOUND_SLOPE * size_mb + BOUND_MB
    started = time.process_time()
    baseline = baseline_seconds([session])
    baseline_cpu = time.process_time() - started
    name = session.parent.name
    print(f"measuring {name}", file=sys.stderr)
    validate, _ = _run(["validate", str(session), "--jobs", "1"], work / f"{name}-validate")
    out = work / f"{name}-out"
    shutil.rmtree(out, ignore_errors=True)
    gate_flag = "--verify-resume" if gate else "--no-verify-resume"
    args = ["compress", str(session), "--jobs", "1", "--out", str(out), gate_flag, *extra]
    compress, report = _run(args, work / f"{name}-compress")
    tokens = report.get("tokens") or {}
    output = report.get("output") or {}
    results: dict[str, Any] = {
        "session_mb": round(size_mb, 1),
        "lines": report["session"]["lines"],
        "chain_tokens": tokens.get("active_chain"),
        "bound_mb": round(bound, 1),
        "baseline_s_per_mb": round(baseline / size_mb, 4),
        "baseline_cpu_s_per_mb": round(baseline_cpu / size_mb, 4),
    }
    for command, figures in (("validate", validate), ("compress", compress)):
        peak = float(figures["worker_peak_rss_mb"])
        figures["s_per_mb"] = round(float(figures["seconds"]) / size_mb, 4)
        figures["cpu_s_per_mb"] = round(float(figures["cpu_seconds"]) / size_mb, 4)
        figures["to_baseline"] = round(float(figures["seconds"]) / baseline, 2)
        figures["peak_per_session_byte"] = round(peak / size_mb, 3)
        figures["within_bound"] = peak <= bound
        results[command] = figures
    results["candidate"] = {
        "tokens": tokens.get("output"),
        "target": tokens.get("target"),
        "target_met": tokens.get("target_met"),
        "bytes": output.get("bytes"),
        "resume_check": (report.get("resume_check") or {}).get("verdict"),
        "reasons": report.get("reasons"),
    }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="100M,400M", help="session sizes (default 100M,400M; 1G is opt-in)"
    )
    parser.add_argument(
        "--shapes",
        default=",".join(ALL_SHAPES),
        help=f"session shapes (default all: {','.join(ALL_SHAPES)})",
    )
    parser.add_argument(
        "--work-dir", type=Path, default=CACHE / "giants", help="where sessions and outputs go"
    )
    parser.add_argument("--verify-resume", action="store_true", help="run the resume gate (Claude Code)")
    parser.add_argument("--clean", action="store_true", help="remove the generated sessions afterwards")
    parser.add_argument("compress_args", nargs="*", help="extra `compress` arguments, after --")
    args = parser.parse_args()
    work: Path = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    shapes = args.shapes.split(",")
    unknown = sorted(set(shapes) - set(ALL_SHAPES))
    if unknown:
        parser.error(f"unknown shapes {unknown}: choose from {', '.join(ALL_SHAPES)}")
    results: dict[str, object] = {
        shape: {
            size: measure(giant(work, shape, size), work, args.verify_resume, args.compress_args)
            for size in args.sizes.split(",")
        }
        for shape in shapes
    }
    emit("giants", results)
    if args.clean:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
