"""Does compression reach its target? Over the corpus and a generated fleet, per Claude Code session.

Runs `compaction compress` (defaults, no resume gate: `benchmarks/resume.py` measures what Claude
Code sends) and reads every report: of the main sessions whose active chain holds more than twice
`compress.min_tokens`, how many were compressed, skipped or refused and why; and of the compressed
ones, candidate tokens / source chain tokens (median, p90, max), how many candidates still hold
more than 100k tokens, and how many met their own target or said `target-missed`.

    python benchmarks/target.py                 # corpus + 256 MiB fleet
    python benchmarks/target.py --fleet-mb 1024
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, CORPUS, MB, emit, fleet, run_cli

LARGE_OUTPUT = 100_000  # a resumed session this large leaves little of a 200k window to work in


def _quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 4) if ordered else 0.0


def figures(reports: list[dict[str, Any]], min_tokens: int) -> dict[str, object]:
    large = [
        r
        for r in reports
        if r.get("session", {}).get("kind") == "main"
        and (r.get("tokens") or {}).get("active_chain", 0) > 2 * min_tokens
    ]
    statuses: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for report in large:
        statuses[report["status"]] = statuses.get(report["status"], 0) + 1
        if report["status"] != "compressed":
            key = f"{report['status']}: {', '.join(report.get('reasons') or [])}"
            reasons[key] = reasons.get(key, 0) + 1
    done = [r for r in large if r["status"] == "compressed"]
    ratios = [r["tokens"]["output"] / r["tokens"]["active_chain"] for r in done]
    outputs = [r["tokens"]["output"] for r in done]
    missed = [r for r in done if "target-missed" in (r.get("reasons") or [])]
    return {
        "sessions_over_2x_min_tokens": len(large),
        "statuses": dict(sorted(statuses.items())),
        "not_compressed": dict(sorted(reasons.items())),
        "ratio_median": round(statistics.median(ratios), 4) if ratios else None,
        "ratio_p90": _quantile(ratios, 0.9),
        "ratio_max": round(max(ratios), 4) if ratios else None,
        "outputs_over_100k": sum(1 for tokens in outputs if tokens > LARGE_OUTPUT),
        "largest_output_tokens": max(outputs, default=0),
        "target_missed": len(missed),
    }


def measure(name: str, root: Path, jobs: int, min_tokens: int) -> dict[str, object]:
    out = CACHE / f"target-{name}"
    run = run_cli(["compress", str(root), "--jobs", str(jobs), "--out", str(out), "--no-verify-resume"], out)
    return {"exit_code": run.exit_code, **figures(run.reports, min_tokens)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-mb", type=int, default=256, help="generated fleet size (default 256)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--min-tokens", type=int, default=20_000, help="compress.min_tokens in force")
    args = parser.parse_args()
    results = {
        "corpus": measure("corpus", CORPUS, args.jobs, args.min_tokens),
        f"fleet_{args.fleet_mb}mb": measure(
            f"fleet{args.fleet_mb}", fleet(args.fleet_mb * MB), args.jobs, args.min_tokens
        ),
    }
    emit("target", results)


if __name__ == "__main__":
    main()
