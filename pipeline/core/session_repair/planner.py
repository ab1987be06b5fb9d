"""`compaction repair` planned: a damaged transcript's bytes in, the repaired bytes and receipts out.

Pure. One defect at a time (`defects.next_fix`), re-reading the repaired bytes after each, until
none is left, so a fix that uncovers another (a relinked history holding a broken call) is
repaired too. Every line no fix touched is copied byte for byte; `repair_failures` checks that,
that the repaired file reads without a defect of its own, and that the validator finds no error
the original did not have. A defect no fix can repair safely leaves the whole file as it was,
with the defect's line and code.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from pipeline.core.check.structure import error_codes, new_error_codes
from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.session_repair.defects import SessionView, Unrepaired, next_fix
from pipeline.core.session_repair.edits import RepairAction, RepairEdit, apply_edits, split_lines
from pipeline.core.topology.select import TopologyOptions, resolve_topology
from pipeline.formats.detect import detect_format
from pipeline.formats.line_guard import LineLimits
from pipeline.settings import Settings
from pipeline.vocabulary import ChainEnd, SourceFormat

__all__ = ["SessionRepairOptions", "SessionRepairPlan", "plan_session_repair", "repair_failures"]

UNSUPPORTED = "unsupported-format"
TOO_MANY = "too-many-defects"


@dataclass(frozen=True, slots=True)
class SessionRepairOptions:
    """Which chain is repaired, how lines are read, and whether broken parent links are relinked."""

    topology: TopologyOptions
    limits: LineLimits
    relink: bool
    max_rounds: int  # defects repaired before the file is declared past patching
    read_pages: bool  # also the `Read.pages` compatibility repair

    @classmethod
    def of(cls, settings: Settings) -> SessionRepairOptions:
        """The repair's chain (the `[read_pages]` leaf policy), line limits, relink, round bound and
        whether the `Read.pages` repair is one of its repairs."""
        topology = TopologyOptions(
            settings.read_pages.leaf_policy, None, settings.sweep.max_post_last_prompt_extension
        )
        repair = settings.repair
        return cls(
            topology, LineLimits.of(settings.sweep), repair.relink, repair.max_rounds, repair.read_pages
        )


@dataclass(frozen=True, slots=True)
class SessionRepairPlan:
    """The receipts and the repaired bytes (None: nothing to do, or a defect left it as it was)."""

    receipts: tuple[RepairEdit, ...]
    unrepaired: Unrepaired | None
    repaired: bytes | None
    origin: tuple[int, ...]  # per repaired line, its original line (negative: inserted after that one)

    @property
    def changed(self) -> bool:
        """Whether the plan rewrites the file."""
        return self.repaired is not None

    def count(self) -> Counter[str]:
        """Receipts by defect code."""
        return Counter(receipt.code for receipt in self.receipts)


def _view(data: bytes, options: SessionRepairOptions) -> SessionView:
    index = build_index(data, detect_format(data), options.limits)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, options.topology)
    external = topology.external_parent if topology.chain_end is ChainEnd.EXTERNAL_PARENT else None
    return SessionView(data, index, graph, topology.chain, external)


def _original_line(origin: tuple[int, ...], line: int) -> int:
    return abs(origin[line - 1]) if 0 < line <= len(origin) else line


def _final_sizes(
    receipts: list[RepairEdit], original: bytes, repaired: bytes, origin: tuple[int, ...]
) -> tuple[RepairEdit, ...]:
    """Receipts with the bytes of their line in the original and in the repaired file."""
    before = [len(content) for content, _ in split_lines(original)]
    after = {o: len(content) for o, (content, _) in zip(origin, split_lines(repaired), strict=True) if o > 0}
    sized = []
    for receipt in receipts:
        if receipt.action is RepairAction.INSERT_INTERRUPTED_RESULT:
            sized.append(receipt)
            continue
        line = receipt.line
        sized.append(replace(receipt, bytes_before=before[line - 1], bytes_after=after.get(line, 0)))
    return tuple(sized)


def plan_session_repair(data: bytes, options: SessionRepairOptions) -> SessionRepairPlan:
    """Every defect repaired, one at a time; or the first one that cannot be, and nothing changed."""
    if detect_format(data) not in (SourceFormat.CLAUDE_CODE, SourceFormat.EMPTY):
        return SessionRepairPlan((), Unrepaired(0, UNSUPPORTED, detect_format(data).value), None, ())
    current, origin = data, tuple(range(1, len(split_lines(data)) + 1))
    receipts: list[RepairEdit] = []
    for _ in range(options.max_rounds):
        found = next_fix(_view(current, options), relink=options.relink, read_pages=options.read_pages)
        if found is None:
            if not receipts:
                return SessionRepairPlan((), None, None, origin)
            return SessionRepairPlan(_final_sizes(receipts, data, current, origin), None, current, origin)
        if isinstance(found, Unrepaired):
            return SessionRepairPlan(
                tuple(receipts), replace(found, line=_original_line(origin, found.line)), None, ()
            )
        receipts += [replace(r, line=_original_line(origin, r.line)) for r in found.receipts]
        current, origin = apply_edits(current, found.edits, origin)
    return SessionRepairPlan(tuple(receipts), Unrepaired(0, TOO_MANY, str(options.max_rounds)), None, ())


def repair_failures(
    original: bytes, repaired: bytes, plan: SessionRepairPlan, options: SessionRepairOptions
) -> tuple[str, ...]:
    """Failure codes of a repair's bytes: not the plan's, a line changed without a receipt, more
    to repair, or an error the original did not have."""
    failures = []
    if plan.repaired is None or repaired != plan.repaired:
        failures.append("bytes-differ-from-plan")
        return tuple(failures)
    touched = {r.line for r in plan.receipts}
    source = split_lines(original)
    for origin, line in zip(plan.origin, split_lines(repaired), strict=True):
        if origin > 0 and origin not in touched and line[0] != source[origin - 1][0]:
            failures.append("untouched-line-changed")
            break
    again = plan_session_repair(repaired, options)
    if again.changed or again.unrepaired is not None:
        failures.append("second-pass-not-clean")
    before = error_codes(original, options.topology, options.limits)
    failures += [
        f"new-{code}" for code in new_error_codes(before, repaired, options.topology, options.limits)
    ]
    return tuple(failures)
