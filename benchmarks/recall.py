"""Recall of the deterministic summary per probe class and size band: does what it keeps fall with size?

Runs `compaction compress --strategy summary --no-verify-resume` (the embedded deterministic
summarizer) over the corpus and over a generated fleet of wide sessions (hundreds of distinct
files read and modified, hundreds of distinct commands, tracebacks, exit-code failures, MCP tool
errors and the user's refusals of tool calls, padded with long tool outputs to reach each size
band), then reads every compressed report's `fidelity` section and pools, per class and per band
of the source chain's tokens (<200k, 200k-1M, >1M), the probes and those the candidate keeps. It
also checks every summary against its budget (`summary_char_budget`, read from the report's
summary figures when present, else the config's).

    python benchmarks/recall.py                      # corpus + generated fleet
    python benchmarks/recall.py --repo /work/main    # the same sessions through another checkout
    python benchmarks/recall.py --wider              # and two wider sessions, past what the budget holds
    python benchmarks/recall.py --wider --floor      # and what their probed facts need, every list whole
    python benchmarks/recall.py --wider --config chunks.toml   # e.g. [summary] chunk_evidence_items = 500
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CORPUS, REPO, emit

BANDS: tuple[tuple[str, int, int | None], ...] = (
    ("<200k", 0, 200_000),
    ("200k-1M", 200_000, 1_000_000),
    (">1M", 1_000_000, None),
)
CLASSES = ("human-instruction", "file-modified", "file-read", "command", "error")
FLEET_SEED = 35
# (name, turns, filler characters per Read of a large log): one session per band at least.
WIDE_SESSIONS: tuple[tuple[str, int, int], ...] = (
    ("wide-tiny", 30, 300),
    ("wide-small", 60, 2_000),
    ("wide-medium", 120, 10_000),
    ("wide-large", 180, 30_000),
    ("wide-giant", 240, 60_000),
)
# `--wider`: past the fleet, where a 60,000-character summary can no longer hold every fact whole.
WIDER_SESSIONS: tuple[tuple[str, int, int], ...] = (("wide-300", 300, 10_000), ("wide-480", 480, 10_000))
REUSE = 0.5  # a session works on the same files and reruns the same commands: half the calls repeat
PROGRAMS = ("git", "pytest", "npm", "make", "cargo", "docker", "python", "ruff", "ls", "grep")
EXCEPTIONS = ("ValueError", "KeyError", "RuntimeError", "TypeError", "FileNotFoundError")


REFUSED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)


class _WideSession:
    """Writes one wide session: distinct names from a counter, half the files and commands again."""

    def __init__(self, seed: int, filler: int) -> None:
        from pipeline.testing import TranscriptBuilder  # noqa: PLC0415 - after sys.path is set

        self.rng = random.Random(seed)
        self.filler = filler
        self.builder = TranscriptBuilder(seed=seed, cwd="/home/dev/wide", version="2.1.39")
        self.dirs = [
            f"/home/dev/wide/{top}/{sub}" for top in ("src", "lib", "tests", "docs") for sub in range(12)
        ]
        self.counter = 0
        self.files: list[str] = []
        self.commands: list[str] = []

    def unique(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}_{self.rng.randrange(10**6):06d}"

    def turn(self, number: int) -> None:
        b = self.builder
        b.user(f"Request {number}: please look at {self.unique('module_')} and fix what fails there, thanks")
        b.assistant(b.text(f"Looking at part {number} now."))
        for _ in range(3):
            self.read()
        target = f"{self.rng.choice(self.dirs)}/{self.unique('m_')}.py"
        b.tool_call("Edit", {"file_path": target, "old_string": "a", "new_string": "b"}, "ok")
        for _ in range(2):
            self.command()
        self.failure(number % 10)  # a failure of its own every few turns
        b.assistant(b.text(f"Done with part {number}."))

    def read(self) -> None:
        if self.files and self.rng.random() < REUSE:
            file = self.rng.choice(self.files)
        else:
            file = f"{self.rng.choice(self.dirs)}/{self.unique('f_')}.py"
            self.files.append(file)
        body = "\n".join(f"{n:6}\tline {n} of {file}" for n in range(1, 40))
        self.builder.tool_call("Read", {"file_path": file}, body + "x" * self.rng.randrange(self.filler))

    def command(self) -> None:
        program = self.rng.choice(PROGRAMS)
        if self.commands and self.rng.random() < REUSE:
            command = self.rng.choice(self.commands)
        else:
            command = f"{program} {self.unique('run-')} --flag {self.rng.randrange(100)}"
            self.commands.append(command)
        if self.rng.random() < 0.9:
            output = f"done {command}\n" + "." * self.rng.randrange(self.filler)
            self.builder.tool_call("Bash", {"command": command}, output)
            return
        first = f"{program}: error: cannot process {self.unique('item-')} (code {self.rng.randrange(9)})"
        self.builder.tool_call(
            "Bash", {"command": command}, f"Exit code 1\n{first}\nmore detail", is_error=True
        )

    def failure(self, kind: int) -> None:
        b, unique = self.builder, self.unique
        if kind == 0:  # a traceback
            exc = f"{self.rng.choice(EXCEPTIONS)}: bad value {unique('v')} in handler"
            trace = (
                f'Exit code 1\nTraceback (most recent call last):\n  File "x.py", line 3, in <module>\n{exc}'
            )
            b.tool_call("Bash", {"command": f"python {unique('job_')}.py"}, trace, is_error=True)
        elif kind == 1:  # an MCP tool's error
            error = f"MCP error -32603: upstream rejected request {unique('req-')}"
            b.tool_call("mcp__tracker__create_issue", {"title": unique("issue-")}, error, is_error=True)
        elif kind == 2:  # the user refuses a call
            b.tool_call("Bash", {"command": f"rm -rf {unique('build_')}"}, REFUSED, is_error=True)
        elif kind == 3:  # a file that is not there
            missing = f"{self.rng.choice(self.dirs)}/{unique('gone_')}.py"
            error = "<tool_use_error>File does not exist.</tool_use_error>"
            b.tool_call("Read", {"file_path": missing}, error, is_error=True)


def _wide_session(path: Path, turns: int, filler: int, seed: int) -> None:
    """One session of `turns` prompts, each with a handful of calls and, every few turns, a failure."""
    session = _WideSession(seed, filler)
    for number in range(turns):
        session.turn(number)
    b = session.builder
    b.user("Thanks, now summarize where we are.")
    b.assistant(b.text("Here is where we are."))
    b.last_prompt()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b.to_bytes())


def wide_fleet(
    work: Path, sessions: Sequence[tuple[str, int, int]] = WIDE_SESSIONS, tag: str = "fleet"
) -> Path:
    """A generated fleet of wide sessions, cached between runs."""
    root = work / f"recall-{tag}-seed{FLEET_SEED}"
    if not (root / ".complete").exists():
        for number, (name, turns, filler) in enumerate(sessions):
            _wide_session(
                root / "projects" / "-home-dev-wide" / f"{name}.jsonl", turns, filler, FLEET_SEED + number
            )
        (root / ".complete").touch()
    return root / "projects"


def _band(tokens: int) -> str:
    return next(name for name, low, high in BANDS if tokens >= low and (high is None or tokens < high))


def run(
    repo: Path, python: str, root: Path, out: Path, jobs: int, config: Path | None = None
) -> tuple[list[dict[str, Any]], float]:
    """`compaction compress` of `root` through `repo`'s code (with `config` over the defaults when
    given); its per-session reports."""
    if out.exists():
        subprocess.run(["rm", "-rf", str(out)], check=True)
    args = ["compress", str(root), "--jobs", str(jobs), "--out", str(out), "--no-verify-resume"]
    args += [] if config is None else ["--config", str(config.resolve())]
    started = time.perf_counter()
    subprocess.run(
        [python, "-m", "pipeline", *args, "--strategy", "summary", "--quiet"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        check=False,
    )
    reports = [json.loads(p.read_text()) for p in out.rglob("*.report.json")]
    return reports, time.perf_counter() - started


def banded(reports: Sequence[dict[str, Any]]) -> dict[str, dict[str, object]]:
    """Per band: sessions, and per class the pooled probes, kept and recall."""
    table: dict[str, dict[str, Any]] = {}
    for report in reports:
        if report.get("status") != "compressed" or "fidelity" not in report:
            continue
        band = table.setdefault(_band(report["tokens"]["active_chain"]), {"sessions": 0, "classes": {}})
        band["sessions"] += 1
        band["summary_chars_max"] = max(band.get("summary_chars_max", 0), report["summary"]["chars"])
        for name in CLASSES:
            entry = report["fidelity"]["classes"].get(name, {"probes": 0, "kept": 0})
            pooled = band["classes"].setdefault(name, {"probes": 0, "kept": 0})
            pooled["probes"] += entry["probes"]
            pooled["kept"] += entry["kept"]
    for band in table.values():
        for pooled in band["classes"].values():
            pooled["recall"] = round(pooled["kept"] / pooled["probes"], 4) if pooled["probes"] else None
    return {name: table[name] for name, _, _ in BANDS if name in table}


def over_budget(reports: Sequence[dict[str, Any]]) -> int:
    """Compressed sessions whose summary text is longer than its budget (the report's own figures)."""
    over = 0
    for report in reports:
        summary = report.get("summary") or {}
        if report.get("status") == "compressed" and summary.get("chars", 0) > summary.get("budget", 0):
            over += 1
    return over


FLOOR_SECTIONS = (
    ("human", "User constraints and preferences"),
    ("files", "Files changed/read"),
    ("commands", "Commands and validation"),
    ("errors", "Errors and blockers"),
)


def floor(path: Path, lines: int) -> dict[str, int]:
    """The characters the probed facts of a session's summarized span (its first `lines` lines)
    take written whole: every human message and every list, the assistant's prose at one bullet
    of 60 characters a section. A fitted summary needs somewhat less (a command its Errors name
    is not named again), but no reduction of the span holds much more of them than its budget."""
    from pipeline.agents.claude_code.chain_evidence import extract_evidence  # noqa: PLC0415
    from pipeline.core.index import build_index  # noqa: PLC0415 - after sys.path is set
    from pipeline.summarize import write_summary  # noqa: PLC0415
    from pipeline.testing.settings import LIMITS, summary_options  # noqa: PLC0415
    from pipeline.vocabulary import SourceFormat  # noqa: PLC0415

    data = path.read_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    tight = summary_options(
        char_budget=10**9, max_bullets_per_section=1, max_quote_chars=60, max_file_operations=1
    )
    text = write_summary(extract_evidence(data, index, range(1, lines + 1)), tight).text
    parts = {part.split("\n", 1)[0]: len(part) for part in text.split("\n## ")}
    return {"total": len(text), **{name: parts.get(title, 0) for name, title in FLOOR_SECTIONS}}


def floors(root: Path, reports: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """`floor` of every compressed session, by its label."""
    found = {}
    for report in reports:
        if report.get("status") == "compressed" and "fidelity" in report:
            name = report["session"]["label"]
            found[name] = floor(root / name, report["fidelity"]["summarized_lines"])
            print(f"{name}: the probed facts need {found[name]}", file=sys.stderr)
    return found


def print_table(title: str, table: dict[str, dict[str, object]]) -> None:
    print(f"\n{title}", file=sys.stderr)
    print(f"{'band':<9}{'sessions':>9}" + "".join(f"{c:>19}" for c in CLASSES), file=sys.stderr)
    for band, figures in table.items():
        classes: dict[str, dict[str, Any]] = figures["classes"]  # type: ignore[assignment]
        cells = []
        for name in CLASSES:
            pooled = classes.get(name, {})
            recall = pooled.get("recall")
            shown = "-" if recall is None else f"{recall:.3f}"
            cells.append(f"{shown} ({pooled.get('kept', 0)}/{pooled.get('probes', 0)})")
        print(f"{band:<9}{figures['sessions']:>9}" + "".join(f"{c:>19}" for c in cells), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="the checkout whose CLI runs (default: this one)"
    )
    parser.add_argument("--python", default=sys.executable, help="its interpreter (default: this one)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-corpus", action="store_true", help="the generated fleet only")
    parser.add_argument(
        "--wider", action="store_true", help="also sessions of 300 and 480 turns, past what the budget holds"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also the characters each compressed session's probed facts need, every list whole",
    )
    parser.add_argument(
        "--config", type=Path, help="a config file over the defaults (a small chunk_evidence_items chunks)"
    )
    parser.add_argument("--tag", default="recall", help="names its report folders under --work")
    parser.add_argument("--work", type=Path, default=Path("/tmp/recall-benchmark"), help="fleet and reports")
    args = parser.parse_args()
    results: dict[str, object] = {"repo": str(args.repo)}
    roots = {"fleet": wide_fleet(args.work)}
    if args.wider:
        roots["wider"] = wide_fleet(args.work, WIDER_SESSIONS, "wider")
    if not args.no_corpus:
        roots["corpus"] = CORPUS
    for name, root in roots.items():
        out = args.work / f"{args.tag}-{name}"
        reports, seconds = run(args.repo, args.python, root, out, args.jobs, args.config)
        table = banded(reports)
        print_table(f"{name} ({args.repo}): recall per class and band", table)
        figures: dict[str, object] = {
            "seconds": round(seconds, 1),
            "by_status": _statuses(reports),
            "bands": table,
            "over_budget": over_budget(reports),
        }
        if args.floor and name != "corpus":
            figures["floor_chars"] = floors(root, reports)
        results[name] = figures
    emit("recall", results)


def _statuses(reports: Sequence[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports:
        counts[str(report.get("status"))] = counts.get(str(report.get("status")), 0) + 1
    return counts


if __name__ == "__main__":
    main()
