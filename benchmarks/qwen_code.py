"""What reading and cutting a large Qwen Code session costs, as a ratio to reading it.

A session is grown from tests/fixtures/qwen_code/long.jsonl (written by Qwen Code 0.24.4) by
repeating its records on one branch with fresh ids, to about `--mb` MB. Each round times the
baseline (split the bytes into lines and `orjson.loads` each) and the reader (`analyze_session`:
decode, branch, history, call repair, messages, findings), then the cut and the candidate
(`plan_tail` at a tenth of the context, `compose`); rounds alternate so both see the same load.

    .venv/bin/python benchmarks/qwen_code.py --mb 30 --rounds 3
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import REPO, emit

from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.session_analysis import analyze_session

SEED = REPO / "tests" / "fixtures" / "qwen_code" / "long.jsonl"
LIMITS = LineLimits(max_line_bytes=300_000_000, max_json_depth=500)


def _renamed(record: dict[str, Any], copy: int, parent: str | None) -> dict[str, Any]:
    """A record of copy `copy`, its ids (and its calls' ids) suffixed, its parent `parent`."""
    message = record.get("message")
    if isinstance(message, dict):
        parts = [
            {
                k: ({**v, "id": f"{v['id']}-{copy}"} if k in ("functionCall", "functionResponse") else v)
                for k, v in p.items()
            }
            for p in message.get("parts", [])
        ]
        record = {**record, "message": {**message, "parts": parts}}
    return {**record, "uuid": f"{record['uuid']}-{copy}", "parentUuid": parent}


def grown(megabytes: float) -> bytes:
    """The seed's records repeated on one branch to about `megabytes` MB."""
    seed = [orjson.loads(line) for line in SEED.read_bytes().splitlines()]
    copies = max(1, round(megabytes * 1e6 / SEED.stat().st_size))
    lines, parent = [], None
    for copy in range(copies):
        for record in seed:
            renamed = _renamed(record, copy, parent)
            parent = renamed["uuid"]
            lines.append(orjson.dumps(renamed))
    return b"\n".join(lines) + b"\n"


def _timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    data = grown(options.mb)
    baseline, reader, cutting = [], [], []
    for _ in range(options.rounds):
        baseline.append(_timed(lambda: [orjson.loads(line) for line in data.splitlines()]))
        analysis = analyze_session(data, LIMITS)
        reader.append(_timed(lambda: analyze_session(data, LIMITS)))
        room = sum(item.tokens for item in analysis.items) // 10

        def cut(analysis: Any = analysis, room: int = room) -> None:
            plan = analysis.plan_tail(room)
            analysis.compose(plan.cut_line, "S" * 2000)

        cutting.append(_timed(cut))
    megabytes = len(data) / 1e6
    emit(
        "qwen_code",
        {
            "megabytes": round(megabytes, 1),
            "lines": data.count(b"\n"),
            "baseline_s": round(min(baseline), 3),
            "reader_s": round(min(reader), 3),
            "reader_mb_per_s": round(megabytes / min(reader), 1),
            "reader_to_baseline_best": round(min(reader) / min(baseline), 2),
            "reader_to_baseline_median": round(statistics.median(reader) / statistics.median(baseline), 2),
            "cut_and_compose_s": round(min(cutting), 3),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        },
    )


if __name__ == "__main__":
    main()
