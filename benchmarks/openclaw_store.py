"""Benchmark OpenClaw's SQLite store against the same sessions as JSONL files: `validate` over
each, and the store's read alone (its log applied, every session taken out of it).

A fleet of generated version-3 pi sessions (`tests/support/pi_builder.py`, seed 7 and on) is
written once under `.cache/benchmarks/` as JSONL files and as one store built the way OpenClaw
writes it (`tests/support/openclaw_stores.py`: WAL mode, one row per line; the sessions' last
lines left in the write-ahead log while a connection stays open, as a running OpenClaw leaves
them). Prints the best of the rounds of each: `compaction validate --jobs N` over the JSONL tree
and over the store (one report per stored session in both), and the store's read
(`read_store` then `stored_sessions`) in this process.

    .venv/bin/python benchmarks/openclaw_store.py                      # 32 sessions of 2 MB, 3 rounds
    .venv/bin/python benchmarks/openclaw_store.py --sessions 64 --mb 1 --jobs 2
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, MB, REPO

sys.path.insert(0, str(REPO))
from pipeline.formats.pi.openclaw_store import stored_sessions
from pipeline.read.load import read_store
from tests.support.openclaw_stores import live_store, store_path
from tests.support.pi_builder import PiSessionBuilder


def fleet(sessions: int, size_mb: int) -> Path:
    """The JSONL sessions, made once: `<cache>/openclaw-<n>x<mb>M/jsonl/<id>.jsonl`."""
    folder = CACHE / f"openclaw-{sessions}x{size_mb}M" / "jsonl"
    if not folder.exists():
        folder.mkdir(parents=True)
        for number in range(sessions):
            builder = PiSessionBuilder(seed=7 + number)
            turn = 0
            while len(builder.to_bytes()) < size_mb * MB:
                builder.turn(f"task {turn}: fix module_{turn}.py", tools=3, output_bytes=4000)
                turn += 1
            builder.write(folder / f"s{number:04d}.jsonl")
    return folder


def _validate(root: Path, jobs: int, reports: Path) -> float:
    shutil.rmtree(reports, ignore_errors=True)
    started = time.perf_counter()
    command = [str(Path(sys.executable).with_name("compaction")), "validate", str(root), "--jobs", str(jobs)]
    subprocess.run([*command, "--report-dir", str(reports), "--quiet"], check=True, cwd=REPO)
    return time.perf_counter() - started


def _read(store: Path) -> float:
    started = time.perf_counter()
    files = read_store(store)
    read = stored_sessions(files.data, files.wal)
    assert read.problem is None
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--mb", type=int, default=2, help="each session's size in MB")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    jsonl = fleet(options.sessions, options.mb)
    home = jsonl.parent / "openclaw"
    shutil.rmtree(home, ignore_errors=True)
    store = store_path(home)
    transcripts = {path.stem: path.read_bytes() for path in sorted(jsonl.glob("*.jsonl"))}
    total = sum(map(len, transcripts.values())) / MB
    with live_store(store, transcripts, logged=3):
        size = (store.stat().st_size + store.with_name(store.name + "-wal").stat().st_size) / MB
        best = {
            "jsonl": min(_validate(jsonl, options.jobs, jsonl.parent / "r1") for _ in range(options.rounds)),
            "store": min(_validate(home, options.jobs, jsonl.parent / "r2") for _ in range(options.rounds)),
            "read": min(_read(store) for _ in range(options.rounds)),
        }
    print(
        f"{len(transcripts)} sessions, {total:.0f} MB of JSONL, store {size:.0f} MB: validate --jobs "
        f"{options.jobs} over the JSONL {best['jsonl']:.2f} s, over the store {best['store']:.2f} s "
        f"({best['store'] / best['jsonl']:.2f}x); the store read alone {best['read']:.2f} s"
    )


if __name__ == "__main__":
    main()
