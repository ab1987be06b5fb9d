"""`compaction repair` over the corpus: damage planted in each session's recent tail, repaired, proven.

For every Claude Code corpus session: each pairing defect planted at the latest tool result of the
protected last round where the validator sees it, and the file torn inside its last record; with
`--relink`, a parent link broken in the later half of the chain. Each damaged copy is repaired in
this process (`pipeline.proof.damage_repair`, the job the command runs) and resumed
beside its repair in the pinned Claude Code. Counts: planted, repaired, refused (with the defect and
reason), lines changed, every other line byte-identical, Claude Code's verdicts, and seconds per proof.

    python benchmarks/repair.py            # needs scripts/install-claude-code first
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, emit

from pipeline.agents.claude_code.claude_judge import CLAUDE_CODE_JUDGE
from pipeline.core.session_repair import SessionRepairOptions, repair_failures
from pipeline.core.topology.select import AUTO
from pipeline.formats.detect import detect_format
from pipeline.installed import require_claude_code
from pipeline.proof.damage_repair import ProofSetup, repair_session
from pipeline.testing.settings import LIMITS
from pipeline.testing.tail_damage import break_link, tail_plants, torn_tail
from pipeline.vocabulary import SourceFormat

OPTIONS = SessionRepairOptions(AUTO, LIMITS, relink=False, max_rounds=500, read_pages=False)
TIMEOUT_SECONDS = 180.0


def _plants(data: bytes) -> list[tuple[str, bytes]]:
    found = [(kind.value, damaged) for kind, _, damaged in tail_plants(data)]
    return [*found, ("torn-tail", torn_tail(data))]


def _tally(
    totals: Counter[str],
    kind: str,
    data: bytes,
    name: str,
    setup: ProofSetup,
    scratch: Path,
    options: SessionRepairOptions,
) -> None:
    job = repair_session(data, name, options, setup, scratch)
    totals["planted"] += 1
    totals[f"planted:{kind}"] += 1
    plan = job.plan
    if plan.repaired is None:
        reason = f"{plan.unrepaired.code}/{plan.unrepaired.reason}" if plan.unrepaired else "nothing-found"
        totals[f"refused:{kind}:{reason}"] += 1
        return
    totals["repaired"] += 1
    totals["lines_changed"] += len({r.line for r in plan.receipts})
    totals["identical" if not repair_failures(data, plan.repaired, plan, options) else "check_failed"] += 1
    verdict = job.proof.verdict.value if job.proof else "none"
    totals[f"claude:{verdict}"] += 1
    if verdict not in ("proven", "not-resumable"):
        totals[f"claude:{verdict}:{kind}"] += 1
    if job.proof is not None and options.relink:
        totals["relinked_blocks"] += max(0, job.proof.repaired_blocks - job.proof.damaged_blocks)
        totals["history_restored"] += job.proof.repaired_blocks > job.proof.damaged_blocks


def main() -> None:
    setup = ProofSetup(require_claude_code().resolve(), TIMEOUT_SECONDS, CLAUDE_CODE_JUDGE)
    files = [
        p for p in sorted(CORPUS.glob("*.jsonl")) if detect_format(p.read_bytes()) is SourceFormat.CLAUDE_CODE
    ]
    tail: Counter[str] = Counter()
    relink: Counter[str] = Counter()
    relinking = SessionRepairOptions(AUTO, LIMITS, relink=True, max_rounds=500, read_pages=False)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="repair-bench-") as scratch:
        for path in files:
            data = path.read_bytes()
            for kind, damaged in _plants(data):
                _tally(tail, kind, damaged, path.name, setup, Path(scratch), OPTIONS)
            broken = break_link(data)
            if broken is not None:
                _tally(relink, "broken-link", broken[0], path.name, setup, Path(scratch), relinking)
    elapsed = time.perf_counter() - started
    emit(
        "repair",
        {
            "sessions": len(files),
            "tail": dict(sorted(tail.items())),
            "relink": dict(sorted(relink.items())),
            "seconds": round(elapsed, 1),
            "seconds_per_repair": round(elapsed / max(1, tail["planted"] + relink["planted"]), 2),
        },
    )


if __name__ == "__main__":
    main()
