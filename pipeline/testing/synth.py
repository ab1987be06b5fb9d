"""Deterministic synthetic fleets of Claude Code sessions, for benchmarks, demos and tests.

``generate_fleet(root, target_bytes=..., seed=...)`` writes ``root/projects/<project>/<session>.jsonl``
(and ``<session>/subagents/agent-<id>.jsonl`` for sessions that delegate) until about
``target_bytes`` are on disk, streaming every file, and returns a :class:`FleetManifest` listing
each file with its size, line count and features. The same seed gives the same bytes.

Command line: ``python -m pipeline.testing.synth --out DIR --bytes 1G --seed 0``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import orjson

from pipeline.testing import Feature, TranscriptBuilder
from pipeline.testing._records import profile_for
from pipeline.testing._scenario import LastPromptStyle, SessionOutcome, SessionPlan, SessionScenario
from pipeline.testing._textbank import LANGUAGES, TextBank
from pipeline.testing._tools import Project, make_project

__all__ = ["FleetFile", "FleetManifest", "generate_fleet", "main", "parse_size"]

# Claude Code versions in the fleet, with weights. 2.1.140 stands for versions whose last-prompt
# records carry a leafUuid (assumed; the corpus only shows text-only pointers, from 2.1.114).
VERSION_MIX: tuple[tuple[str, int], ...] = (
    ("2.1.39", 30),
    ("2.1.42", 10),
    ("2.0.76", 14),
    ("1.0.98", 8),
    ("2.1.114", 22),
    ("2.1.140", 16),
)
FOREIGN_LANGS = ("zh", "ja", "ru", "ar")
NON_ENGLISH_RATE = 0.15  # share of sessions held in a language other than English
SESSION_MEDIAN_BYTES = 90_000  # log-normal session sizes: many small ones, a long tail
SESSION_SIGMA = 1.6
MIN_SESSION_BYTES = 3_000
MAX_SESSION_BYTES = 64 * 1024 * 1024  # the largest single session (tens of MB on big fleets)
MAX_SESSION_SHARE = 0.25  # no session takes more than this share of the target
GIANT_EVERY_BYTES = 400 * 1024 * 1024  # one extra "giant" session per this many target bytes
BYTES_PER_PROJECT = 64 * 1024 * 1024
MAX_PROJECTS = 16
WRITE_BUFFER = 1 << 20
FLEET_EPOCH = datetime(2025, 9, 1, 8, 0, tzinfo=UTC)
_SIZE_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

# The first sessions of every fleet of at least COVERAGE_MIN_TARGET bytes are steered so that any
# seed yields each structural feature: (minimum budget, plan overrides).
COVERAGE_MIN_TARGET = 2 * 1024 * 1024
_COVERAGE: tuple[tuple[int, dict[str, Any]], ...] = (
    (
        600_000,
        {
            "version": "2.1.39",
            "compaction": True,
            "hooks": True,
            "subagent_rate": 0.05,
            "big_output_rate": 0.5,
        },
    ),
    (300_000, {"version": "2.1.114", "rewind_rate": 0.35, "lang": "ja", "hooks": True}),
    (250_000, {"version": "2.1.140", "subagent_rate": 0.08, "thinking": True, "rewind_rate": 0.2}),
    (120_000, {"version": "1.0.98", "tail_summary": True, "lang": "ru", "subagent_rate": 0.1}),
    (350_000, {"version": "2.0.76", "compaction": True, "image_rate": 0.1}),
)


@dataclass(frozen=True, slots=True)
class FleetFile:
    """One generated transcript file."""

    path: str  # relative to the fleet root, POSIX separators
    session_id: str
    agent_id: str | None
    version: str
    bytes: int
    lines: int
    features: frozenset[Feature]

    def to_json(self) -> dict[str, object]:
        """A JSON-ready mapping (features sorted)."""
        return {
            "path": self.path,
            "session_id": self.session_id,
            "agent_id": self.agent_id,
            "version": self.version,
            "bytes": self.bytes,
            "lines": self.lines,
            "features": sorted(self.features),
        }


@dataclass(frozen=True, slots=True)
class FleetManifest:
    """Every file of a generated fleet, in the order written."""

    seed: int
    target_bytes: int
    files: tuple[FleetFile, ...]

    @property
    def total_bytes(self) -> int:
        """Bytes of all files."""
        return sum(f.bytes for f in self.files)

    @property
    def session_count(self) -> int:
        """Number of main session files (subagent files excluded)."""
        return sum(1 for f in self.files if f.agent_id is None)

    def to_json(self) -> bytes:
        """The manifest as indented JSON."""
        doc = {
            "seed": self.seed,
            "target_bytes": self.target_bytes,
            "total_bytes": self.total_bytes,
            "files": [f.to_json() for f in self.files],
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2)


def parse_size(text: str) -> int:
    """Parse ``"5M"``, ``"1G"``, ``"300K"`` or ``"12345"`` (binary multiples) into bytes."""
    s = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = s[-1] if s and s[-1] in _SIZE_SUFFIX else ""
    number = s[: len(s) - len(unit)]
    try:
        value = float(number)
    except ValueError as exc:
        raise ValueError(f"not a size: {text!r}") from exc
    return int(value * _SIZE_SUFFIX[unit])


def _session_sizes(rng: random.Random, target: int) -> list[int]:
    """Planned session budgets: log-normal sizes plus a few giants, shuffled."""
    cap = max(MIN_SESSION_BYTES, min(MAX_SESSION_BYTES, int(target * MAX_SESSION_SHARE)))
    sizes = [min(cap, int(target * rng.uniform(0.02, 0.05))) for _ in range(target // GIANT_EVERY_BYTES)]
    total = sum(sizes)
    while total < target:
        size = int(rng.lognormvariate(math.log(SESSION_MEDIAN_BYTES), SESSION_SIGMA))
        size = max(MIN_SESSION_BYTES, min(cap, size))
        sizes.append(size)
        total += size
    rng.shuffle(sizes)
    return sizes


def _plan(rng: random.Random, bank: TextBank, budget: int, leaves: list[tuple[str, str]]) -> SessionPlan:
    """Decide what one session will contain."""
    versions, weights = zip(*VERSION_MIX, strict=True)
    version = rng.choices(versions, weights)[0]
    profile = profile_for(version)
    modern = profile.source_tool_uuid
    old = not profile.prompt_permission_mode  # 1.0.x and 2.0.x: summary records, no pointers
    style = {"2.1.114": LastPromptStyle.TEXT, "2.1.140": LastPromptStyle.LEAF}.get(
        version, LastPromptStyle.NONE
    )
    heads: tuple[tuple[str, str], ...] = ()
    if old and leaves and rng.random() < 0.5:
        heads = tuple(rng.sample(leaves, min(len(leaves), rng.randint(1, 3))))
    return SessionPlan(
        version=version,
        budget=budget,
        lang=rng.choice(FOREIGN_LANGS) if rng.random() < NON_ENGLISH_RATE else "en",
        hooks=modern and rng.random() < 0.65,
        thinking=rng.random() < 0.55,
        rewind_rate=rng.choice((0.0, 0.06, 0.12, 0.2)),
        compaction=budget > 200_000 and rng.random() < 0.8,
        subagent_rate=0.0 if budget < 40_000 else rng.choice((0.0, 0.02, 0.05)),
        image_rate=rng.choice((0.0, 0.0, 0.0, 0.03)),
        last_prompt=style,
        head_summaries=heads,
        tail_summary=version.startswith("1.") and rng.random() < 0.5,
        slug=bank.slug(rng),
    )


def _steer(plan: SessionPlan, overrides: dict[str, Any]) -> SessionPlan:
    """Apply coverage overrides, keeping the pointer style consistent with the version."""
    version = overrides.get("version", plan.version)
    style = {"2.1.114": LastPromptStyle.TEXT, "2.1.140": LastPromptStyle.LEAF}.get(
        version, LastPromptStyle.NONE
    )
    return replace(plan, **overrides, last_prompt=style)


class _FleetWriter:
    """Writes sessions of one fleet and collects their manifest entries."""

    def __init__(self, root: Path, rng: random.Random, bank: TextBank, projects: list[Project]) -> None:
        self._root = root
        self._rng = rng
        self._bank = bank
        self._projects = projects
        self._leaves: dict[int, list[tuple[str, str]]] = {i: [] for i in range(len(projects))}
        # Each project has its own clock; sessions start a few minutes to hours apart and may overlap.
        self._clocks = [FLEET_EPOCH + timedelta(hours=rng.randint(0, 24 * 30)) for _ in projects]
        self._dirs: set[Path] = set()
        self.files: list[FleetFile] = []
        self.total = 0

    def session(self, budget: int, overrides: dict[str, Any] | None = None) -> None:
        """Write one session (and its subagent files) of about ``budget`` bytes."""
        rng = self._rng
        index = min(int(rng.paretovariate(1.2)) - 1, len(self._projects) - 1)
        project = self._projects[index]
        srng = random.Random(rng.getrandbits(64))
        plan = _plan(srng, self._bank, budget, self._leaves[index])
        if overrides:
            plan = _steer(plan, overrides)
        self._clocks[index] += timedelta(minutes=rng.randint(5, 300))
        session_id = str(uuid.UUID(int=srng.getrandbits(128), version=4))
        rel = f"projects/{project.dir_name}/{session_id}.jsonl"
        subs: list[tuple[str, str]] = []

        @contextmanager
        def open_subagent(agent_id: str) -> Iterator[IO[bytes]]:
            sub_rel = f"projects/{project.dir_name}/{session_id}/subagents/agent-{agent_id}.jsonl"
            path = self._root / sub_rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb", buffering=WRITE_BUFFER) as fh:
                yield fh
            subs.append((agent_id, sub_rel))

        path = self._root / rel
        if path.parent not in self._dirs:  # one mkdir per project, not per session
            path.parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(path.parent)
        with path.open("wb", buffering=WRITE_BUFFER) as fh:
            builder = TranscriptBuilder(
                session_id,
                seed=srng.getrandbits(63),
                cwd=project.cwd,
                version=plan.version,
                git_branch=project.branch,
                slug=plan.slug,
                start=self._clocks[index],
                sink=fh,
            )
            outcome = SessionScenario(
                rng=srng,
                bank=self._bank,
                project=project,
                plan=plan,
                builder=builder,
                open_subagent=open_subagent,
            ).run()
        self._record(rel, builder, outcome, dict(subs))
        if outcome.leaf_uuid is not None:
            self._leaves[index].append((self._bank.sentences(srng, 1)[:70], outcome.leaf_uuid))

    def _record(self, rel: str, b: TranscriptBuilder, outcome: SessionOutcome, subs: dict[str, str]) -> None:
        self.files.append(
            FleetFile(rel, b.session_id, None, b.version, b.byte_count, b.line_count, b.features)
        )
        self.total += b.byte_count
        for sub in outcome.subagents:
            self.files.append(
                FleetFile(
                    subs[sub.agent_id],
                    b.session_id,
                    sub.agent_id,
                    b.version,
                    sub.bytes,
                    sub.lines,
                    sub.features,
                )
            )
            self.total += sub.bytes


def generate_fleet(
    root: Path,
    *,
    target_bytes: int,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> FleetManifest:
    """Write a deterministic synthetic fleet of about ``target_bytes`` under ``root``.

    ``progress`` is called with the running byte total after each session.
    """
    if target_bytes <= 0:
        raise ValueError("target_bytes must be positive")
    rng = random.Random(seed)
    bank = TextBank(rng.getrandbits(32))
    n_projects = max(2, min(MAX_PROJECTS, target_bytes // BYTES_PER_PROJECT + 2))
    projects = [make_project(rng, bank, i, rng.choice(LANGUAGES)) for i in range(n_projects)]
    writer = _FleetWriter(Path(root), rng, bank, projects)
    sizes = _session_sizes(rng, target_bytes)
    coverage = _COVERAGE if target_bytes >= COVERAGE_MIN_TARGET else ()
    for i, planned in enumerate(sizes):
        remaining = target_bytes - writer.total
        if remaining < MIN_SESSION_BYTES // 2:
            break
        floor, overrides = coverage[i] if i < len(coverage) else (0, None)
        writer.session(max(MIN_SESSION_BYTES, min(max(planned, floor), remaining)), overrides)
        if progress is not None:
            progress(writer.total)
    return FleetManifest(seed, target_bytes, tuple(writer.files))


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.testing.synth --out DIR --bytes 1G --seed 0``: write a fleet and its manifest."""
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.testing.synth", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, required=True, help="fleet root (projects/ is created inside)")
    parser.add_argument(
        "--bytes", type=parse_size, default=parse_size("100M"), help="target size, e.g. 500M, 1G"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    live = not args.quiet and sys.stderr.isatty()  # a log file gets the final line only

    def report(done: int) -> None:
        if live:
            rate = done / max(1e-9, time.perf_counter() - started) / 1e6
            print(f"\r{done / 1e6:10.1f} MB  {rate:6.1f} MB/s", end="", file=sys.stderr)

    manifest = generate_fleet(args.out, target_bytes=args.bytes, seed=args.seed, progress=report)
    elapsed = time.perf_counter() - started
    (args.out / "fleet-manifest.json").write_bytes(manifest.to_json())
    print(
        f"\n{len(manifest.files)} files ({manifest.session_count} sessions), {manifest.total_bytes:,} bytes "
        f"in {elapsed:.1f}s ({manifest.total_bytes / elapsed / 1e6:.1f} MB/s) -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
