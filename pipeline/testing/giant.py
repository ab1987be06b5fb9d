"""One giant Claude Code session, streamed to disk: the long chain memory and time are measured on.

``generate_giant(root, target_bytes=..., seed=...)`` writes ``root/<session-id>.jsonl`` of about
``target_bytes`` (and the ``<session-id>/subagents/`` file of a compaction's agent where Claude
Code writes one) and returns its :class:`~pipeline.testing.synth.FleetFile`. The session is what
a months-long one looks like: a few Claude Code compactions early on (prior compact pairs), then
one long active chain of human prompts, streamed assistant turns with thinking, single and
parallel tool calls with their hook ``progress`` records, and a few rewinds that leave side
branches. Its ``usage`` fields bill a context that stays within ``context_window``, as a real
session's calls do. Nothing is kept in memory but the builder's small bookkeeping; the same seed
gives the same bytes.

Command line: ``python -m pipeline.testing.giant --out DIR --bytes 400M --seed 0``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Final

from pipeline.testing._scenario import LastPromptStyle, SessionPlan, SessionScenario
from pipeline.testing._textbank import TextBank
from pipeline.testing._tools import make_project
from pipeline.testing.builder import TranscriptBuilder
from pipeline.testing.synth import WRITE_BUFFER, FleetFile, parse_size

__all__ = ["generate_giant", "giant_plan", "main"]

VERSION: Final = "2.1.39"  # the leading layout: PreToolUse/PostToolUse progress records on the chain
CONTEXT_WINDOW: Final = 200_000  # tokens; the billed context stays under it (see `TranscriptBuilder`)
REWIND_RATE: Final = 0.005  # a few side branches over thousands of turns
TURN_MAX_BYTES: Final = 150_000  # a prompt's work: a few tool rounds, not a fleet session's 900 KB
COMPACT_EVERY: Final = (0.02, 0.04)  # prior compactions every 2-4% of the budget ...
COMPACT_UNTIL: Final = 0.1  # ... in the first tenth only, so the active chain is most of the file
LANGUAGE: Final = "python"
BIG_OUTPUT_RATE: Final = 0.015  # tool calls returning 64-200 KB: lines average ~3 KB, as real files do


def giant_plan(target_bytes: int) -> SessionPlan:
    """What a giant session contains (see the module docstring)."""
    return SessionPlan(
        version=VERSION,
        budget=target_bytes,
        lang="en",
        hooks=True,
        thinking=True,
        rewind_rate=REWIND_RATE,
        compaction=True,
        subagent_rate=0.0,
        image_rate=0.0,
        last_prompt=LastPromptStyle.NONE,
        slug="long-running-session",
        compact_every=COMPACT_EVERY,
        compact_until=COMPACT_UNTIL,
        big_output_rate=BIG_OUTPUT_RATE,
        turn_max_bytes=TURN_MAX_BYTES,
    )


def generate_giant(
    root: Path, *, target_bytes: int, seed: int = 0, context_window: int | None = CONTEXT_WINDOW
) -> FleetFile:
    """Write one giant session of about ``target_bytes`` under ``root`` (created if missing)."""
    if target_bytes <= 0:
        raise ValueError("target_bytes must be positive")
    rng = random.Random(seed)
    bank = TextBank(rng.getrandbits(32))
    project = make_project(rng, bank, 0, LANGUAGE)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{session_id}.jsonl"

    @contextmanager
    def open_subagent(agent_id: str) -> Iterator[IO[bytes]]:
        sub = root / session_id / "subagents" / f"agent-{agent_id}.jsonl"
        sub.parent.mkdir(parents=True, exist_ok=True)
        with sub.open("wb", buffering=WRITE_BUFFER) as fh:
            yield fh

    plan = giant_plan(target_bytes)
    with path.open("wb", buffering=WRITE_BUFFER) as fh:
        builder = TranscriptBuilder(
            session_id,
            seed=rng.getrandbits(63),
            cwd=project.cwd,
            version=plan.version,
            git_branch=project.branch,
            slug=plan.slug,
            sink=fh,
            context_window=context_window,
        )
        SessionScenario(
            rng=rng, bank=bank, project=project, plan=plan, builder=builder, open_subagent=open_subagent
        ).run()
    return FleetFile(
        path.name,
        session_id,
        None,
        builder.version,
        builder.byte_count,
        builder.line_count,
        builder.features,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.testing.giant --out DIR --bytes 400M --seed 0``: write one giant session."""
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.testing.giant", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, required=True, help="directory the session file is written in")
    parser.add_argument("--bytes", type=parse_size, default=parse_size("100M"), help="size, e.g. 400M, 1G")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--context-window", type=int, default=CONTEXT_WINDOW, help="tokens (default 200000)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    made = generate_giant(
        args.out, target_bytes=args.bytes, seed=args.seed, context_window=args.context_window
    )
    elapsed = time.perf_counter() - started
    print(
        f"{made.path}: {made.bytes:,} bytes, {made.lines:,} lines in {elapsed:.1f}s -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
