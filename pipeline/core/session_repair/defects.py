"""The next defect of a session and the smallest line edits that repair it (one fix per call).

Pure: the current bytes and their index, graph and active chain in, a `Fix` out. The planner
calls it again on the repaired bytes until nothing is left, so each fix only has to be right on
its own. Order: lines no reader can take, the missing final newline, with `--relink` the parent
links never written, then tool pairing over the chain's API messages as Claude Code sends them
(a repeated call id, calls left without results, results without their call or repeated,
results behind another block), and with `--read-pages` the `Read.pages` compatibility repair.
A defect no edit here can repair safely is `Unrepaired`: the planner then leaves the file as it
was.
"""

from __future__ import annotations

import itertools
import string
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.core.read_pages import READ_PAGES_CODE, Patch, patched_line, plan_lines
from pipeline.core.session_repair.edits import LineEdit, RepairAction, RepairEdit
from pipeline.core.validate.pairing import ApiMessage, api_messages
from pipeline.formats.claude_code.build import replace_parent
from pipeline.formats.claude_code.repair_records import (
    interrupted_record,
    with_blocks_dropped,
    with_results_added,
    with_results_first,
    with_tool_id_renamed,
)
from pipeline.vocabulary import FindingCode, LineKind, Role

__all__ = ["Fix", "SessionView", "Unrepaired", "next_fix"]

C = FindingCode
A = RepairAction
_UNREADABLE = {
    LineKind.NOT_JSON: C.LINE_NOT_JSON,
    LineKind.NOT_OBJECT: C.LINE_NOT_OBJECT,
    LineKind.TRUNCATED: C.LINE_TRUNCATED,
}
_ID_ALPHABET = string.digits + string.ascii_letters
_NAMESPACE = uuid.UUID("6d1b3c52-8f0e-4f55-9d51-3c0e2a7b9a11")  # inserted records' uuids: stable across runs


@dataclass(frozen=True, slots=True)
class SessionView:
    """The current bytes as the planner sees them."""

    data: bytes
    index: LineIndex
    graph: UuidGraph
    chain: tuple[int, ...]
    external_parent: str | None  # the parent the chain's root names and the file never wrote


@dataclass(frozen=True, slots=True)
class Fix:
    """Edits on the current lines, and their receipts (lines of the current bytes)."""

    edits: tuple[LineEdit, ...]
    receipts: tuple[RepairEdit, ...]


@dataclass(frozen=True, slots=True)
class Unrepaired:
    """A defect left as it was: where, which, why (a reason code, no text)."""

    line: int
    code: str
    reason: str


def _raw(view: SessionView, line: int) -> bytes:
    return view.index.raw_line(view.data, line)


def _replaced(
    view: SessionView, line: int, new: bytes, code: str, action: RepairAction, ids: Sequence[str] = ()
) -> tuple[LineEdit, RepairEdit]:
    return LineEdit(line, new), RepairEdit(line, code, action, len(_raw(view, line)), len(new), tuple(ids))


def _unreadable(view: SessionView) -> Fix | None:
    dropped = [(n, code) for n, kind in enumerate(view.index.kinds, 1) if (code := _UNREADABLE.get(kind))]
    if dropped:
        return Fix(
            tuple(LineEdit(n, None) for n, _ in dropped),
            tuple(RepairEdit(n, c, A.DROP_LINE, view.index.lengths[n - 1], 0) for n, c in dropped),
        )
    last = len(view.index)
    if last and not view.index.final_newline and view.index.kinds[last - 1] is LineKind.RECORD:
        size = len(_raw(view, last))
        return Fix(
            (LineEdit(last, _raw(view, last)),),
            (RepairEdit(last, C.MISSING_FINAL_NEWLINE, A.TERMINATE_LINE, size, size),),
        )
    return None


def _relink(view: SessionView) -> Fix | Unrepaired | None:
    """The chain's root hung onto the record physically before it in its session."""
    if view.external_parent is None or not view.chain:
        return None
    root = view.chain[0]
    record = view.index.entry(root)
    on_chain = set(view.chain)
    for line in reversed([n for n in view.graph.uuid_lines if n < root and n not in on_chain]):
        earlier = view.index.entry(line)
        if earlier.sidechain or (record.session and earlier.session and earlier.session != record.session):
            continue
        if earlier.uuid is None or view.graph.line_of.get(earlier.uuid) != line:
            continue
        edit, receipt = _replaced(
            view,
            root,
            replace_parent(_raw(view, root), earlier.uuid),
            C.DANGLING_PARENT,
            A.RELINK,
            (earlier.uuid,),
        )
        return Fix((edit,), (receipt,))
    return Unrepaired(root, C.DANGLING_PARENT, "no-earlier-record")


def _fresh_id(view: SessionView, old: str) -> str:
    """`old` with its last characters changed: Claude Code pairs a call and its results only by
    ids of the API's shape (`toolu_` and letters and digits; a `_2` suffix leaves the result
    unmatched, observed in 2.1.332), so the id keeps its length and alphabet."""
    taken = {i for r in view.index.records if r is not None for i in r.tool_uses + r.tool_results}
    for width in (1, 2, 3):
        for tail in itertools.product(_ID_ALPHABET, repeat=width):
            new = old[:-width] + "".join(tail)
            if len(old) > width and new not in taken:
                return new
    return old + "".join(_ID_ALPHABET[:4])  # unreachable in practice: 62**3 ids all taken


def _later_lines(
    message: ApiMessage, code: str, ids: tuple[str, ...], old: str, first_here: bool
) -> list[int] | None:
    """The lines of `message` holding the blocks of `old` that are not the first call's (None: a
    line holds both, so no whole-line edit can tell them apart)."""
    positions = [p for p, c in enumerate(message.blocks) if c == code]
    lines = [message.block_lines[p] for p, tool_id in zip(positions, ids, strict=True) if tool_id == old]
    later = lines[1:] if first_here else lines
    return None if first_here and lines[0] in later else sorted(set(later))


def _renamed(
    view: SessionView, messages: Sequence[ApiMessage], at: int, old: str, first_here: bool
) -> Fix | Unrepaired:
    """The later call with a used id, and the results that answer it, given a fresh id."""
    new = _fresh_id(view, old)
    message = messages[at]
    lines = _later_lines(message, "U", message.uses, old, first_here)
    following = messages[at + 1] if at + 1 < len(messages) and messages[at + 1].role == Role.USER else None
    answers = (
        _later_lines(following, "R", following.results, old, first_here) if following is not None else []
    )
    if lines is None or answers is None:
        return Unrepaired(message.lines[0], C.TOOL_USE_ID_DUPLICATE, "same-record")
    pairs = []
    for line in (*lines, *answers):
        renamed = with_tool_id_renamed(_raw(view, line), old, new)
        if renamed is None:
            return Unrepaired(line, C.TOOL_USE_ID_DUPLICATE, "unreadable-content")
        pairs.append(_replaced(view, line, renamed, C.TOOL_USE_ID_DUPLICATE, A.RENAME_TOOL_ID, (old, new)))
    return Fix(tuple(e for e, _ in pairs), tuple(r for _, r in pairs))


def _inserted(
    view: SessionView,
    message: ApiMessage,
    missing: Sequence[str],
    code: str = C.TOOL_USE_NOT_FOLLOWED_BY_USER,
) -> Fix | Unrepaired:
    """A new record answering `missing` as interrupted, between the calls and the chain's next record."""
    last = message.lines[-1]
    parent = view.index.entry(last).uuid or ""
    uid = str(uuid.uuid5(_NAMESPACE, parent + "\x00" + "\x00".join(missing)))
    record = interrupted_record(_raw(view, last), uid, missing)
    if record is None:
        return Unrepaired(last, code, "unreadable-content")
    edits = [LineEdit(last, None, (record,), keep=True)]
    receipts = [RepairEdit(last, code, A.INSERT_INTERRUPTED_RESULT, 0, len(record), tuple(missing))]
    position = view.chain.index(last)
    if position + 1 < len(view.chain):
        child = view.chain[position + 1]
        edit, receipt = _replaced(
            view, child, replace_parent(_raw(view, child), uid), code, A.REPARENT, (uid,)
        )
        edits.append(edit)
        receipts.append(receipt)
    return Fix(tuple(edits), tuple(receipts))


def _unwanted(message: ApiMessage, calls: Sequence[str]) -> dict[int, list[int]]:
    """Per line, the positions (in that line's content) of results no call asks for, or repeated."""
    wanted, seen = set(calls), set()
    found: dict[int, list[int]] = {}
    ordinal = 0
    for position, code in enumerate(message.blocks):
        if code != "R":
            continue
        tool_id = message.results[ordinal]
        ordinal += 1
        if tool_id not in wanted or tool_id in seen:
            line = message.block_lines[position]
            found.setdefault(line, []).append(position - message.block_lines.index(line))
        seen.add(tool_id)
    return found


def _reparented_children(view: SessionView, line: int, code: str) -> list[tuple[LineEdit, RepairEdit]]:
    parent = view.index.entry(line).parent
    children = view.graph.children.get(line, ())
    return [
        _replaced(
            view, child, replace_parent(_raw(view, child), parent or ""), code, A.REPARENT, (parent or "",)
        )
        for child in children
    ]


def _answers_fixed(view: SessionView, at: int, messages: Sequence[ApiMessage]) -> Fix | Unrepaired:
    """Unwanted results dropped, and calls still unanswered given the interrupted result."""
    message, calls = messages[at], messages[at - 1].uses if at else ()
    unwanted = _unwanted(message, calls)
    missing = [c for c in dict.fromkeys(calls) if c not in set(message.results)]
    code = (
        C.TOOL_RESULT_WITHOUT_USE
        if not calls
        else C.TOOL_RESULT_MISMATCH
        if unwanted
        else C.TOOL_RESULT_PARTIAL
    )
    pairs: list[tuple[LineEdit, RepairEdit]] = []
    for line, positions in unwanted.items():
        ids = tuple(i for i in view.index.entry(line).tool_results if i not in calls)
        empties = len(positions) == len(view.index.entry(line).blocks)
        new = with_blocks_dropped(_raw(view, line), frozenset(positions), interrupted=missing)
        if new is None:
            pairs.append(
                (LineEdit(line, None), RepairEdit(line, code, A.DROP_LINE, len(_raw(view, line)), 0, ids))
            )
            pairs += _reparented_children(view, line, code)
            continue
        pairs.append(_replaced(view, line, new, code, A.DROP_RESULT, ids))
        if empties and missing:
            pairs.append(
                (pairs[-1][0], RepairEdit(line, code, A.ADD_INTERRUPTED_RESULT, 0, len(new), tuple(missing)))
            )
            missing = []
    if missing:
        first = next(
            (n for n in message.lines if view.index.entry(n).tool_results and n not in unwanted), None
        )
        if first is None:
            return _inserted(view, messages[at - 1], missing, code)
        new = with_results_added(_raw(view, first), missing)
        if new is None:
            return Unrepaired(first, code, "unreadable-content")
        pairs.append(_replaced(view, first, new, code, A.ADD_INTERRUPTED_RESULT, missing))
    edits = {e.line: e for e, _ in pairs}
    return Fix(tuple(edits.values()), tuple(r for _, r in pairs))


def _results_first(view: SessionView, message: ApiMessage) -> Fix | Unrepaired | None:
    opening = len(message.blocks) - len(message.blocks.lstrip("R"))
    if "R" not in message.blocks[opening:]:
        return None
    line = message.block_lines[opening]
    own = view.index.entry(line).blocks
    later = [n for n in message.block_lines[opening:] if n != line]
    if "R" not in own.lstrip("R") or any("R" in view.index.entry(n).blocks for n in later):
        return Unrepaired(line, C.TOOL_RESULT_NOT_FIRST, "across-records")
    new = with_results_first(_raw(view, line))
    if new is None:
        return Unrepaired(line, C.TOOL_RESULT_NOT_FIRST, "unreadable-content")
    edit, receipt = _replaced(view, line, new, C.TOOL_RESULT_NOT_FIRST, A.MOVE_RESULTS_FIRST)
    return Fix((edit,), (receipt,))


def _pairing(view: SessionView) -> Fix | Unrepaired | None:
    messages = api_messages(view.index, view.chain)
    used: set[str] = set()
    for at, message in enumerate(messages):
        if message.role == Role.ASSISTANT:
            here: set[str] = set()
            for use in message.uses:
                if use in used or use in here:
                    return _renamed(view, messages, at, use, first_here=use not in used)
                here.add(use)
            used.update(here)
            following = messages[at + 1] if at + 1 < len(messages) else None
            if message.uses and following is not None and following.role != Role.USER:
                return _inserted(view, message, list(dict.fromkeys(message.uses)))
            continue
        calls = messages[at - 1].uses if at else ()  # the message before a user one is an assistant's
        if (message.results or calls) and (
            not set(calls) <= set(message.results) or _unwanted(message, calls)
        ):
            return _answers_fixed(view, at, messages)
        fixed = _results_first(view, message)
        if fixed is not None:
            return fixed
    return None


def _read_pages(view: SessionView) -> Fix | None:
    """Every repairable `Read.pages` member on the chain removed (`core.read_pages`' rules: a
    call it holds back, pending or ambiguous, is left as it is, no defect)."""
    patches = plan_lines(view.data, view.index, view.chain).patches
    by_line: dict[int, list[Patch]] = {}
    for patch in patches:
        by_line.setdefault(patch.line, []).append(patch)
    pairs = []
    for line, on_line in by_line.items():
        new = patched_line(view.data, view.index, line, on_line)
        ids = tuple(p.tool_use_id for p in on_line)
        pairs.append(_replaced(view, line, new, READ_PAGES_CODE, A.DROP_READ_PAGES, ids))
    return Fix(tuple(e for e, _ in pairs), tuple(r for _, r in pairs)) if pairs else None


def next_fix(view: SessionView, *, relink: bool, read_pages: bool) -> Fix | Unrepaired | None:
    """The edits that repair the session's first defect; None when it has none."""
    found: Fix | Unrepaired | None = _unreadable(view)
    if found is None and relink:
        found = _relink(view)
    if found is None:
        found = _pairing(view)
    return _read_pages(view) if found is None and read_pages else found
