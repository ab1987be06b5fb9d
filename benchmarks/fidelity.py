"""What a resumed agent still knows, per compaction strategy: recall per probe class and tokens saved.

Runs `compaction compress` (the embedded deterministic summarizer, no resume gate) over the corpus
and a generated fleet, once per strategy, and reads every compressed report's `fidelity` section:
per probe class, the probes of all summarized spans and the share the candidates keep (pooled
over sessions, and the median of the sessions' own recalls), the sessions' fidelity (median, p10),
and the tokens saved (1 - candidate tokens / source chain tokens, pooled, and the median
session's). A strategy is a name and the compress flags that select it (`summary`, `mask`,
`hybrid`); for `hybrid` the span probed holds the masked middle too, for `mask` it is the masked
middle alone (nothing is summarized), and the sessions clearing alone left over their target
(`masking-alone-short-of-target`) are counted.

It also times what the fidelity costs: the CPU time of the compress job's fidelity stage within
`compress_session` (in this process, every session of the corpus, best of `--rounds`; the fleet
once), as a share of the job's.

    python benchmarks/fidelity.py                       # corpus + 48 MB fleet (seed 7)
    python benchmarks/fidelity.py --fleet-mb 0          # corpus only
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, CORPUS, MB, emit, fleet, run_cli

STRATEGIES: dict[str, list[str]] = {
    "summary": ["--strategy", "summary"],  # the embedded deterministic summary + the verbatim tail
    "mask": ["--strategy", "mask"],  # no summary: every record kept, old outputs cleared
    "hybrid": ["--strategy", "hybrid"],  # the summary, kept outputs before the protected round cleared
}
FLEET_SEED = 7


def _quantile(values: Sequence[float], share: float) -> float | None:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 4) if ordered else None


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def class_figures(sections: Sequence[dict[str, Any]]) -> dict[str, dict[str, object]]:
    """Per class: probes and kept pooled over sessions, their share, and the median session recall."""
    names = list(sections[0]["classes"]) if sections else []
    figures: dict[str, dict[str, object]] = {}
    for name in names:
        entries = [section["classes"][name] for section in sections]
        probes = sum(entry["probes"] for entry in entries)
        kept = sum(entry["kept"] for entry in entries)
        recalls = [entry["recall"] for entry in entries if entry["recall"] is not None]
        figures[name] = {
            "probes": probes,
            "kept": kept,
            "recall": round(kept / probes, 4) if probes else None,
            "sessions": len(recalls),
            "median_session_recall": _median(recalls),
        }
    return figures


def figures(reports: Sequence[dict[str, Any]]) -> dict[str, object]:
    done = [r for r in reports if r["status"] == "compressed" and "fidelity" in r]
    sections = [r["fidelity"] for r in done]
    fidelity = [s["fidelity"] for s in sections if s["fidelity"] is not None]
    chain = sum(r["tokens"]["active_chain"] for r in done)
    output = sum(r["tokens"]["output"] for r in done)
    return {
        "sessions_compressed": len(done),
        "sessions_without_fidelity": sum(
            1 for r in reports if r["status"] == "compressed" and "fidelity" not in r
        ),
        "classes": class_figures(sections),
        "fidelity_median": _median(fidelity),
        "fidelity_p10": _quantile(fidelity, 0.1),
        "tokens_saved": round(1 - output / chain, 4) if chain else None,
        "tokens_saved_median": _median(
            [1 - r["tokens"]["output"] / r["tokens"]["active_chain"] for r in done]
        ),
        "source_chain_tokens": chain,
        "candidate_tokens": output,
        "outputs_cleared": sum(r.get("bounded", {}).get("cleared", 0) for r in done),
        "short_of_target": sum(1 for r in done if r.get("mask", {}).get("short_of_target")),
    }


def measure(name: str, root: Path, jobs: int, tag: str = "fidelity") -> dict[str, object]:
    results: dict[str, object] = {}
    for strategy, flags in STRATEGIES.items():
        out = CACHE / f"{tag}-{name}-{strategy}"
        args = ["compress", str(root), "--jobs", str(jobs), "--out", str(out), "--no-verify-resume", *flags]
        run = run_cli(args, out)
        results[strategy] = {
            "exit_code": run.exit_code,
            "seconds": round(run.seconds, 2),
            **figures(run.reports),
        }
    return results


def stage_cost(root: Path, rounds: int) -> dict[str, object]:
    """The fidelity stage's CPU time within `compress_session`, in this process, over every session
    of a root (the stage timed where the job calls it; best round of `rounds`)."""
    from pipeline.jobs.compress import compress_session, job  # noqa: PLC0415 - after sys.path is set
    from pipeline.testing.settings import compress_options  # noqa: PLC0415

    stage = job.fidelity_stage
    spent = [0.0]

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return stage(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - started

    job.fidelity_stage = timed  # type: ignore[assignment]
    sources = [p for p in sorted(root.rglob("*.jsonl")) if p.parent.name != "subagents"]
    best: tuple[float, float] | None = None
    with tempfile.TemporaryDirectory() as scratch:
        options = compress_options(Path(scratch))
        for _ in range(rounds + 1):  # the first round warms imports and caches
            spent[0] = 0.0
            started = time.process_time()
            for source in sources:
                compress_session(source, source.name, options)
            total = time.process_time() - started
            best = (spent[0], total) if best is None or total < best[1] else best
    job.fidelity_stage = stage  # type: ignore[assignment]
    assert best is not None
    return {
        "sessions": len(sources),
        "compress_cpu_seconds": round(best[1], 3),
        "fidelity_stage_cpu_seconds": round(best[0], 3),
        "stage_share": round(best[0] / best[1], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--fleet-mb", type=int, default=48, help="generated fleet size, 0 for none (default 48)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--rounds", type=int, default=3, help="timing rounds of the stage cost (default 3, 0: not timed)"
    )
    parser.add_argument(
        "--tag", default="fidelity", help="names its folders under .cache/benchmarks (default fidelity)"
    )
    args = parser.parse_args()
    results: dict[str, object] = {
        "strategies": list(STRATEGIES),
        "corpus": measure("corpus", CORPUS, args.jobs, args.tag),
    }
    if args.fleet_mb:
        root = fleet(args.fleet_mb * MB, seed=FLEET_SEED)
        results[f"fleet_{args.fleet_mb}mb_seed{FLEET_SEED}"] = measure(
            f"fleet{args.fleet_mb}", root, args.jobs, args.tag
        )
    if args.rounds:
        results["stage_cost_corpus"] = stage_cost(CORPUS, args.rounds)
    if args.fleet_mb and args.rounds:
        results[f"stage_cost_fleet_{args.fleet_mb}mb"] = stage_cost(
            fleet(args.fleet_mb * MB, seed=FLEET_SEED), 1
        )
    emit("fidelity", results)


if __name__ == "__main__":
    main()
