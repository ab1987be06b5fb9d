"""What one resume in the pinned Codex CLI costs, over the Codex corpus.

Resumes every rollout of ../shared/corpus/codex/files once in Codex 0.171 against the loopback
Responses API (as `verify-resume` and scripts/record-codex-goldens do) and reports per file the
wall time, the history items and characters Codex sent, and the totals and median/p90 time.

    python benchmarks/codex_resume.py      # needs scripts/install-codex first
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import CORPUS, emit

from pipeline.installed import require_codex
from pipeline.proof.codex.codex_client import resume_codex
from pipeline.proof.codex.codex_verdict import context_size

CODEX_CORPUS = CORPUS.parent / "codex" / "files"


def main() -> None:
    executable = require_codex()
    rows: list[dict[str, object]] = []
    for rollout in sorted(CODEX_CORPUS.glob("*.jsonl")):
        started = time.perf_counter()
        result = resume_codex(rollout, executable=executable, timeout=180.0)
        seconds = time.perf_counter() - started
        size = context_size(result.context)
        rows.append(
            {
                "file": rollout.name[:60],
                "bytes": rollout.stat().st_size,
                "resumed": result.resumed,
                "seconds": round(seconds, 2),
                "items": size.messages,
                "characters": size.characters,
            }
        )
    times = sorted(float(row["seconds"]) for row in rows)  # type: ignore[arg-type]
    emit(
        "codex_resume",
        {
            "rollouts": len(rows),
            "resumed": sum(1 for row in rows if row["resumed"]),
            "seconds_total": round(sum(times), 2),
            "seconds_median": round(statistics.median(times), 2) if times else None,
            "seconds_p90": times[max(0, -(-9 * len(times) // 10) - 1)] if times else None,
            "files": rows,
        },
    )


if __name__ == "__main__":
    main()
