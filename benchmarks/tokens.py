"""Benchmark `compaction tokens`: its cost beside `validate`, real tokenizer speed, estimator error.

Three measurements, all in one run so the machine's load is shared between what is compared:

1. overhead: `compaction tokens --estimators seed,calibrated` against `compaction validate` over
   the same files (the corpus and a generated fleet), alternated for several rounds, each timed
   as users run it (the CLI, worker processes, report writing). Target: at most +20%.
2. real tokenizers: load time and throughput of each one over the text of the corpus's pieces,
   in one process (workers each load their own copy).
3. error: seed and calibrated against o200k and the legacy Claude tokenizer per content class,
   and every estimator against the billed usage the corpus carries (per-session slope and
   residual), from the command's own tokens.json.

    python benchmarks/tokens.py                # corpus + 64 MiB fleet
    python benchmarks/tokens.py --fleet-mb 256 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, CORPUS, REPO, emit, fleet, session_files, total_mb

sys.path.insert(0, str(REPO))
from pipeline.core.topology.select import AUTO
from pipeline.estimate.calibrated import measure
from pipeline.estimate.real import MissingExtra, load_tokenizer
from pipeline.formats.claude_code.content_classes import split_records
from pipeline.jobs.front import open_session
from pipeline.read.discover import discover
from pipeline.testing.settings import LIMITS

REAL = ("o200k", "cl100k", "claude-legacy", "deepseek", "qwen")
OVERHEAD_TARGET = 1.20


def _timed(args: list[str], report_dir: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the command and its workers, exit code) of one CLI run."""
    subprocess.run(["rm", "-rf", str(report_dir)], check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "pipeline", *args, "--quiet"],
        cwd=REPO,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, completed.returncode


def overhead(name: str, root: Path, rounds: int, jobs: int) -> dict[str, Any]:
    """validate and tokens alternated `rounds` times over the same files; best and median ratios.

    Wall time is what users wait for; CPU time (the command plus its worker processes) is less
    disturbed by other load on a shared machine. Both are reported, best of the rounds first.
    """
    validate_dir, tokens_dir = CACHE / f"tokens-{name}-validate", CACHE / f"tokens-{name}-tokens"
    runs: dict[str, list[tuple[float, float]]] = {"validate": [], "tokens": []}
    codes: set[int] = set()
    for _ in range(rounds):
        wall, cpu, code = _timed(
            ["validate", str(root), "--jobs", str(jobs), "--report-dir", str(validate_dir)], validate_dir
        )
        runs["validate"].append((wall, cpu))
        codes.add(code)
        wall, cpu, code = _timed(
            ["tokens", str(root), "--jobs", str(jobs), "--estimators", "seed,calibrated", "--report-dir",
             str(tokens_dir)],
            tokens_dir,
        )  # fmt: skip
        runs["tokens"].append((wall, cpu))
        codes.add(code)
    files = session_files(root)
    result: dict[str, Any] = {"files": len(files), "total_mb": round(total_mb(files), 1), "jobs": jobs,
                              "rounds": rounds}  # fmt: skip
    for position, clock in enumerate(("wall", "cpu")):
        validate = [run[position] for run in runs["validate"]]
        tokens = [run[position] for run in runs["tokens"]]
        result[clock] = {
            "validate_seconds": [round(v, 2) for v in validate],
            "tokens_seconds": [round(t, 2) for t in tokens],
            "ratio_best": round(min(tokens) / min(validate), 3),
            "ratio_median": round(statistics.median(t / v for t, v in zip(tokens, validate, strict=True)), 3),
        }
    result["within_target"] = result["cpu"]["ratio_best"] <= OVERHEAD_TARGET  # the steadier clock
    result["exit_codes"] = sorted(codes)
    return result


def _corpus_texts() -> list[str]:
    texts = []
    for session in discover([CORPUS]):
        analysis = open_session(
            session.path, session.label, AUTO, command="benchmark", per_code=1, limits=LIMITS
        )
        if hasattr(analysis, "index"):
            texts.extend(
                p.text()
                for line in split_records(analysis.index.record_lines(analysis.source.data))
                for p in line.pieces
            )
    return texts


def throughput() -> dict[str, Any]:
    """Load time and single-process throughput of each real tokenizer, and of the byte estimators."""
    texts = _corpus_texts()
    encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
    size = sum(map(len, encoded)) / 1e6
    results: dict[str, Any] = {"pieces": len(texts), "text_mb": round(size, 2)}
    started = time.perf_counter()
    for raw in encoded:
        measure(raw)
    seconds = time.perf_counter() - started
    results["seed+calibrated"] = {"mb_per_s": round(size / seconds, 1)}
    for name in REAL:
        try:
            started = time.perf_counter()
            tokenizer = load_tokenizer(name)
            loaded = time.perf_counter() - started
        except MissingExtra as exc:
            results[name] = {"skipped": str(exc)}
            continue
        started = time.perf_counter()
        total = sum(tokenizer.count(text) for text in texts)
        seconds = time.perf_counter() - started
        results[name] = {
            "load_seconds": round(loaded, 2),
            "tokens": total,
            "mb_per_s": round(size / seconds, 2),
            "mtok_per_s": round(total / seconds / 1e6, 3),
        }
    return results


def errors(jobs: int) -> dict[str, Any]:
    """Per-class error of seed and calibrated against the real tokenizers, and the billed-usage fits."""
    out = CACHE / "tokens-errors"
    seconds, _, code = _timed(
        [
            "tokens",
            str(CORPUS),
            "--jobs",
            str(jobs),
            "--estimators",
            "seed,calibrated,o200k,claude-legacy",
            "--report-dir",
            str(out / "sessions"),
            "--out",
            str(out),
        ],
        out,
    )
    summary = json.loads((out / "tokens.json").read_text())
    overall = summary["all"]
    return {
        "seconds": round(seconds, 2),
        "exit_code": code,
        "calibration_version": summary["calibration_version"],
        "error_vs": {
            reference: {name: row for name, row in per.items() if name in ("seed", "calibrated")}
            for reference, per in overall["errors"].items()
        },
        "billed_usage": overall["usage"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=64, help="generated fleet size (default 64; 0: none)")
    parser.add_argument("--rounds", type=int, default=3, help="validate/tokens alternations (default 3)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for the timed runs (default 1)")
    args = parser.parse_args()
    results: dict[str, Any] = {"target_ratio": OVERHEAD_TARGET, "overhead": {}}
    results["overhead"]["corpus"] = overhead("corpus", CORPUS, args.rounds, args.jobs)
    if args.fleet_mb:
        root = fleet(args.fleet_mb * 1024 * 1024)
        results["overhead"][f"fleet_{args.fleet_mb}mb"] = overhead(
            f"fleet{args.fleet_mb}", root, args.rounds, args.jobs
        )
    results["throughput"] = throughput()
    results["errors"] = errors(args.jobs)
    emit("tokens", results)


if __name__ == "__main__":
    main()
