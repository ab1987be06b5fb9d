"""Benchmark reading and compacting giant pi sessions: time against the baseline, peak memory.

For each size, a version-3 pi session is generated once (`tests/support/pi_builder.py`, seed 7:
turns of three bash calls with 4 KB outputs) and kept under `.cache/benchmarks/`. Each round runs
in a fresh process: the baseline (read the file, `orjson.loads` every line), then the pi reader
(`analyze_session`: decode, branch, the context pi rebuilds, findings), then a compaction (the cut
at a tenth of the context, the appended compaction entry, and the candidate read again). It prints
the best of the rounds of each, the reader's ratio to the baseline, and the peak RSS of the
process against the bound giants are held to (1.5 x N + 200 MB).

    .venv/bin/python benchmarks/pi_sessions.py                    # 64 MB and 256 MB, 3 rounds
    .venv/bin/python benchmarks/pi_sessions.py --sizes 16,64 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, MB, REPO

BOUND_SLOPE, BOUND_MB = 1.5, 200
_ROUND = r"""
import json, resource, sys, time, contextlib, orjson
from pathlib import Path
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.pi.session_analysis import analyze_session
limits = LineLimits(max_line_bytes=300_000_000, max_json_depth=1000)
started = time.perf_counter()
data = Path(sys.argv[1]).read_bytes()
for line in data.split(b"\n"):
    if line:
        with contextlib.suppress(orjson.JSONDecodeError):
            orjson.loads(line)
baseline = time.perf_counter() - started
started = time.perf_counter()
analysis = analyze_session(data, limits)
read = time.perf_counter() - started
started = time.perf_counter()
tokens = [sent.tokens for _, sent in analysis.sent()]
plan = analysis.plan_tail(tokens, sum(tokens) // 10)
candidate = analysis.compose(plan.cut_line, "benchmark summary")
reread = analyze_session(candidate, limits)
compact = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"baseline": baseline, "read": read, "compact": compact, "peak_mb": peak,
                  "messages": len(analysis.messages), "kept": len(reread.messages) - 1}))
"""


def giant(size_mb: int) -> Path:
    """The generated session of about `size_mb` MB, made once."""
    path = CACHE / f"pi-giant-{size_mb}M-seed7.jsonl"
    if not path.exists():
        sys.path.insert(0, str(REPO))
        from tests.support.pi_builder import PiSessionBuilder  # noqa: PLC0415 - the repo's test support

        builder = PiSessionBuilder(seed=7)
        turn = 0
        while turn % 200 or len(builder.to_bytes()) < size_mb * MB:
            builder.turn(f"task {turn}: fix the parser in module_{turn}.py", tools=3, output_bytes=4000)
            turn += 1
        builder.write(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,256", help="session sizes in MB, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    for size in (int(s) for s in options.sizes.split(",")):
        path = giant(size)
        runs = []
        for _ in range(options.rounds):
            done = subprocess.run(
                [sys.executable, "-c", _ROUND, str(path)],
                capture_output=True,
                text=True,
                check=True,
                cwd=REPO,
            )
            runs.append(json.loads(done.stdout))
        best = {key: min(run[key] for run in runs) for key in ("baseline", "read", "compact", "peak_mb")}
        mb = path.stat().st_size / MB
        bound = BOUND_SLOPE * mb + BOUND_MB
        print(
            f"{mb:.0f} MB, {runs[0]['messages']} messages: baseline {best['baseline']:.2f} s, "
            f"read {best['read']:.2f} s ({best['read'] / best['baseline']:.1f}x), "
            f"compact + re-read {best['compact']:.2f} s, peak {best['peak_mb']:.0f} MB (bound {bound:.0f} MB)"
        )


if __name__ == "__main__":
    main()
