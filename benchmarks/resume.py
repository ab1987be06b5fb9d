"""How much smaller the context Claude Code actually sends becomes, over the corpus.

Runs `compaction compress` over the corpus with its default resume gate (every candidate is
resumed beside its source in the pinned Claude Code against the loopback capture server) and sums
what the reports' `resume_check` sections measured: messages, characters and seed-estimated
tokens of the request Claude Code sends, before and after, per session (median) and in total.
Also times the gate against `compress --no-verify-resume` over the same files, and gives the
gate's cost per session (median, p90 of `resume_check.elapsed_ms`).

    python benchmarks/resume.py            # needs scripts/install-claude-code first
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, CORPUS, emit, run_cli


def _sizes(reports: list[dict[str, object]]) -> dict[str, object]:
    checks = [r["resume_check"] for r in reports if r.get("status") == "compressed"]
    verdicts: dict[str, int] = {}
    for check in checks:
        verdicts[check["verdict"]] = verdicts.get(check["verdict"], 0) + 1  # type: ignore[index]
    elapsed = sorted(float(c.get("elapsed_ms") or 0) for c in checks)  # type: ignore[union-attr]
    figures: dict[str, object] = {
        "sessions": len(checks),
        "verdicts": verdicts,
        "gate_seconds_per_session": {
            "median": round(statistics.median(elapsed) / 1000, 2) if elapsed else None,
            "p90": round(elapsed[max(0, -(-9 * len(elapsed) // 10) - 1)] / 1000, 2) if elapsed else None,
        },
    }
    for measure in ("messages", "characters", "estimated_tokens"):
        pairs = [
            (c["sent"]["original"][measure], c["sent"]["compacted"][measure])  # type: ignore[index]
            for c in checks
            if c["sent"]["original"] and c["sent"]["compacted"]  # type: ignore[index]
        ]
        before, after = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
        figures[measure] = {
            "before_total": before,
            "after_total": after,
            "total_reduction": round(1 - after / before, 4) if before else None,
            "median_reduction": round(statistics.median(1 - a / b for b, a in pairs if b), 4)
            if pairs
            else None,
            "min_reduction": round(min(1 - a / b for b, a in pairs if b), 4) if pairs else None,
            "max_reduction": round(max(1 - a / b for b, a in pairs if b), 4) if pairs else None,
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="worker processes (each runs two resumes at once)"
    )
    args = parser.parse_args()
    plain_dir, gated_dir = CACHE / "resume-corpus-compress", CACHE / "resume-corpus-verified"
    plain = run_cli(
        ["compress", str(CORPUS), "--jobs", str(args.jobs), "--out", str(plain_dir), "--no-verify-resume"],
        plain_dir,
    )
    gated = run_cli(["compress", str(CORPUS), "--jobs", str(args.jobs), "--out", str(gated_dir)], gated_dir)
    emit(
        "resume",
        {
            "corpus": {
                "jobs": args.jobs,
                "compress_seconds": round(plain.seconds, 2),
                "compress_verify_resume_seconds": round(gated.seconds, 2),
                "exit_codes": [plain.exit_code, gated.exit_code],
                "sent_by_claude_code": _sizes(gated.reports),
            }
        },
    )


if __name__ == "__main__":
    main()
