"""Benchmark reading and vacuuming giant Gemini CLI sessions (issue 37, items 2 and 3).

A bloated session is generated as Gemini CLI grows one: each turn appends the prompt, the reply
(re-appended whole when its tool call completes), the tool's response, a `$set` of `lastUpdated`
after each, and every `--resume-every` turns a resume repeats the header and appends a full
`messages` snapshot. For each size this measures, in this process and alternating rounds: the
baseline (read the file, `orjson.loads` every line), `analyze_chat` (decode, Gemini CLI's loader,
the rebuilt history, findings, sent items) and `vacuum` (the rewrite and its re-reading proof).
It prints seconds per MB of each, their ratio to the baseline, the peak RSS, and the bytes
before and after vacuum.

    python benchmarks/gemini_vacuum.py                      # 16 MB and 64 MB
    python benchmarks/gemini_vacuum.py --sizes 16,64,256 --rounds 3
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, MB, REPO, baseline_seconds

sys.path.insert(0, str(REPO))
from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.vacuum import VacuumOutcome, vacuum
from pipeline.formats.line_guard import LineLimits

LIMITS = LineLimits(256 * MB, 512)
OUTPUT_BYTES = 2_000  # a tool output's size: a file read, a command's log


def _lines_of_turn(turn: int, messages: list[dict[str, object]]) -> list[dict[str, object]]:
    stamp = f"2026-12-07T00:00:{turn % 60:02d}.000Z"
    call_id = f"read_file__read_file_{turn}_0"
    prompt = {
        "id": f"u{turn}",
        "timestamp": stamp,
        "type": "user",
        "content": [{"text": f"step {turn}: read it"}],
    }
    reply = {
        "id": f"g{turn}",
        "timestamp": stamp,
        "type": "gemini",
        "content": "",
        "model": "gemini-3.8-flash",
        "tokens": {
            "input": 1000 + turn,
            "output": 20,
            "cached": 0,
            "thoughts": 0,
            "tool": 0,
            "total": 1020 + turn,
        },
    }
    output = f"line {turn} " * (OUTPUT_BYTES // 8)
    response = {"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": output}}}
    call = {
        "id": call_id,
        "name": "read_file",
        "args": {"file_path": f"f{turn}.txt"},
        "status": "success",
        "result": [response],
    }
    done = {**reply, "toolCalls": [call]}
    result = {"id": f"r{turn}", "timestamp": stamp, "type": "user", "content": [response]}
    messages.extend([prompt, done, result])
    updated = {"$set": {"lastUpdated": stamp}}
    return [prompt, updated, reply, updated, done, result, updated]


def generate(path: Path, size: int, resume_every: int) -> Path:
    """A bloated session of about `size` bytes (kept under .cache/benchmarks)."""
    header = {
        "sessionId": "00000000-0000-4000-8000-000000000000",
        "projectHash": "0" * 64,
        "startTime": "2026-12-07T00:00:00.000Z",
        "lastUpdated": "2026-12-07T00:00:00.000Z",
        "kind": "main",
    }
    messages: list[dict[str, object]] = []
    written, turn = 0, 0
    with path.open("wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        while written < size:
            turn += 1
            if turn % resume_every == 0:
                for record in (header, {"$set": {"messages": messages}}):
                    line = orjson.dumps(record) + b"\n"
                    out.write(line)
                    written += len(line)
            for record in _lines_of_turn(turn, messages):
                line = orjson.dumps(record) + b"\n"
                out.write(line)
                written += len(line)
    return path


def _timed(step: str, data: bytes) -> float:
    started = time.perf_counter()
    if step == "analyze":
        analyze_chat(data, LIMITS)
    else:
        vacuum(data, LIMITS)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="16,64", help="sizes in MB, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--resume-every", type=int, default=200, help="turns between resumes")
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    for size in (int(s) for s in args.sizes.split(",")):
        path = CACHE / f"gemini-giant-{size}M-{args.resume_every}.jsonl"
        if not path.exists():
            generate(path, size * MB, args.resume_every)
        data = path.read_bytes()
        rows: dict[str, list[float]] = {"baseline": [], "analyze": [], "vacuum": []}
        result = vacuum(data, LIMITS)
        for _ in range(args.rounds):
            rows["baseline"].append(baseline_seconds([path]))
            rows["analyze"].append(_timed("analyze", data))
            rows["vacuum"].append(_timed("vacuum", data))
        megabytes = len(data) / MB
        base = statistics.median(rows["baseline"])
        sizes = f"{result.bytes_before:,} -> {result.bytes_after:,} bytes"
        print(f"{path.name}: {megabytes:.1f} MB, vacuum {result.outcome} {sizes}")
        for name, times in rows.items():
            median = statistics.median(times)
            per_mb = median / megabytes * 1000
            print(f"  {name:8} median {median:6.2f} s  {per_mb:7.1f} ms/MB  x{median / base:5.1f} baseline")
        assert result.outcome is VacuumOutcome.VACUUMED
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
