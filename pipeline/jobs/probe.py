"""`compaction probe ORIGINAL COMPACTED`: what a resumed agent still knows of the summarized span.

Rebuilds the summarized span from the two files alone (`jobs.fidelity`), probes its facts in the
compacted file's resumed context, and prints each class's probes, kept and recall, the session's
fidelity and the lost probes by anchor (line, class, kind, id; never their text). `--json`
prints the report's `fidelity` section instead, with its `schema` version. Exit 0, or 1 below
`--min-fidelity` when given, 2 for a usage error or a pair of files that is not a source and its compaction.
"""

from __future__ import annotations

import argparse
import sys

import msgspec
from rich.console import Console
from rich.table import Table

from pipeline.jobs.fidelity_inputs import ProbeFailure, probe_files
from pipeline.report.fidelity import FidelitySection, ProbeReport, fidelity_section
from pipeline.report.render import json_bytes
from pipeline.settings import Settings
from pipeline.vocabulary import ProbeExit

__all__ = ["run"]


def _usage(message: str) -> ProbeExit:
    print(f"compaction: error: {message}", file=sys.stderr)
    return ProbeExit.USAGE


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _print(section: FidelitySection) -> None:
    console = Console(highlight=False, soft_wrap=True)
    table = Table(title=f"probes of {section.summarized_lines:,} summarized lines", title_justify="left")
    for column in ("class", "probes", "kept", "recall"):
        table.add_column(column, justify="left" if column == "class" else "right")
    for name, entry in section.classes.items():
        table.add_row(name, f"{entry.probes:,}", f"{entry.kept:,}", _share(entry.recall))
    table.add_row("fidelity", f"{section.probes:,}", f"{section.kept:,}", _share(section.fidelity))
    console.print(table)
    for lost in section.lost:
        kind = f" ({lost.kind})" if isinstance(lost.kind, str) else ""
        console.print(f"  lost L{lost.line} {lost.klass}{kind} {lost.id}")
    if section.lost_unlisted:
        console.print(f"  ... {section.lost_unlisted} more lost probes")


def run(args: argparse.Namespace, settings: Settings) -> ProbeExit:
    """Probe one pair of files; print the result; return the exit code."""
    for path in (args.original, args.compacted):
        if not path.is_file():
            return _usage(f"not a file: {path}")
    floor = args.min_fidelity if args.min_fidelity is not None else 0.0
    if not 0.0 <= floor <= 1.0:
        return _usage(f"--min-fidelity must be in [0, 1] (got {floor})")
    measured = probe_files(args.original, args.compacted, settings.sweep)
    if isinstance(measured, ProbeFailure):
        return _usage(measured.value)
    section = fidelity_section(
        measured.score,
        span=measured.span.value,
        summarized_lines=measured.summarized_lines,
        lost_per_class=settings.compress.lost_probes_per_class,
        floor=floor,
    )
    if args.json:
        sys.stdout.buffer.write(json_bytes(ProbeReport(**msgspec.structs.asdict(section))))
        sys.stdout.flush()
    else:
        _print(section)
    return ProbeExit.BELOW_FLOOR if measured.score.below(floor) else ProbeExit.OK
