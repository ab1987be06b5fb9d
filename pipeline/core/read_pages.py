"""The `Read.pages` compatibility repair, planned (seed 004, "`Read.pages` Compatibility Repair").

Pure: transcript bytes in, byte patches out. A call is repaired only when it is an assistant
`tool_use` block named exactly `Read` whose `input` object holds `pages`, with a non-empty
`file_path`, exactly one later `tool_result` for its id, the same non-empty `sessionId` on both
records, and the result's `sourceToolAssistantUUID` equal to the tool-use record's uuid. A call
without a result yet is pending: reported, never changed. Duplicate keys on the way to the
member, or patches whose spans overlap, block the call. Each patch deletes the member's exact
byte span and one adjacent comma, nothing else, so BOM, line endings, Unicode spelling, unknown
fields, record count, uuids, parents and tool ids all stay as they were; `repair_failures` checks
exactly that, and that a second plan over the repaired bytes finds nothing.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from pipeline.core.check.structure import error_codes, new_error_codes
from pipeline.core.graph import build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology.select import TopologyOptions, resolve_topology
from pipeline.formats.claude_code.spans import (
    ObjectSpan,
    SpanError,
    array_elements,
    deletion_span,
    member_value,
    scan_object,
    string_value,
)
from pipeline.formats.detect import detect_format
from pipeline.formats.line_guard import LineLimits
from pipeline.live_vocabulary import RepairScope
from pipeline.vocabulary import LineKind

__all__ = [
    "READ_PAGES_CODE",
    "CallVerdict",
    "Patch",
    "ReadPagesCall",
    "RepairPlan",
    "apply_patches",
    "patched_line",
    "plan_lines",
    "plan_repair",
    "repair_failures",
]

READ_PAGES_CODE = "read-pages-member"  # a session repair's receipt code for this repair
_TOOL = "Read"
_MEMBER = "pages"


class CallVerdict(StrEnum):
    """What the plan makes of one `Read` call with `pages`."""

    REPAIRABLE = "repairable"
    PENDING = "pending"  # no result yet: reported, never changed
    MISSING_FILE_PATH = "missing-file-path"
    MULTIPLE_RESULTS = "multiple-results"
    SESSION_MISMATCH = "session-mismatch"
    SOURCE_MISMATCH = "source-tool-assistant-mismatch"
    DUPLICATE_KEY = "duplicate-key"
    OVERLAPPING_SPAN = "overlapping-span"


@dataclass(frozen=True, slots=True)
class Patch:
    """Delete bytes [start, end) of the file (absolute offsets) on one line."""

    line: int
    start: int
    end: int
    tool_use_id: str


@dataclass(frozen=True, slots=True)
class ReadPagesCall:
    """One `Read` tool_use whose input holds `pages`, and the verdict on it."""

    line: int
    tool_use_id: str
    verdict: CallVerdict
    result_line: int | None


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """Every call found and the patches of the repairable ones, in file order."""

    calls: tuple[ReadPagesCall, ...]
    patches: tuple[Patch, ...]
    unscannable_lines: tuple[int, ...]  # assistant lines whose JSON the span scanner could not walk

    def count(self, verdict: CallVerdict) -> int:
        """How many calls got this verdict."""
        return sum(call.verdict is verdict for call in self.calls)


@dataclass(frozen=True, slots=True)
class _Found:
    line: int
    tool_use_id: str
    file_path: str | None
    ambiguous: bool
    span: tuple[int, int] | None  # absolute deletion span


def _line_start(index: LineIndex, line: int) -> int:
    """Absolute offset of `raw_line`'s first byte (after the BOM on line 1)."""
    return index.offsets[line - 1] + (3 if line == 1 and index.has_bom else 0)


def _duplicated(span: ObjectSpan, keys: tuple[str, ...] | None = None) -> bool:
    counts = Counter(member.key for member in span.members)
    return any(counts[key] > 1 for key in (keys or tuple(counts)))


def _read_calls(raw: bytes) -> Iterator[tuple[str, ObjectSpan, ObjectSpan, bool]]:
    """(tool_use id, block, input, ambiguous) of every Read tool_use block whose input has pages."""
    record = scan_object(raw)
    ambiguous = _duplicated(record, ("message",))
    messages = record.find("message")
    message = member_value(raw, messages[0]) if messages else None
    if message is None:
        return
    ambiguous |= _duplicated(message, ("content",))
    contents = message.find("content")
    elements = array_elements(raw, contents[0].value_start) if contents else None
    for start, _ in elements or ():
        if raw[start] != 0x7B:
            continue
        block = scan_object(raw, start)
        kinds, names, ids, inputs = (block.find(key) for key in ("type", "name", "id", "input"))
        if not (kinds and names and inputs):
            continue
        if string_value(raw, kinds[0].value_start, kinds[0].value_end) != "tool_use":
            continue
        if string_value(raw, names[0].value_start, names[0].value_end) != _TOOL:
            continue
        tool_input = member_value(raw, inputs[0])
        if tool_input is None or not tool_input.find(_MEMBER):
            continue
        tool_id = string_value(raw, ids[0].value_start, ids[0].value_end) if ids else None
        duplicate = _duplicated(block, ("type", "name", "id", "input")) or _duplicated(tool_input)
        yield tool_id or "", block, tool_input, ambiguous or duplicate


def _found_on(data: bytes, index: LineIndex, line: int) -> list[_Found]:
    raw = index.raw_line(data, line)
    base = _line_start(index, line)
    found = []
    for tool_id, _, tool_input, ambiguous in _read_calls(raw):
        paths = tool_input.find("file_path")
        path = string_value(raw, paths[0].value_start, paths[0].value_end) if len(paths) == 1 else None
        members = tool_input.find(_MEMBER)
        span = None
        if len(members) == 1:
            start, end = deletion_span(tool_input, members[0])
            span = (base + start, base + end)
        found.append(_Found(line, tool_id, path, ambiguous, span))
    return found


def _results_by_id(index: LineIndex) -> dict[str, list[int]]:
    """Lines carrying a tool_result for each tool_use id, in file order (one pass)."""
    found: dict[str, list[int]] = {}
    for number, record in enumerate(index.records, 1):
        for tool_id in record.tool_results if record is not None else ():
            found.setdefault(tool_id, []).append(number)
    return found


def _pairing(index: LineIndex, line: int, result: int) -> CallVerdict:
    """The one result belongs to this call: same session, and it names the call's record."""
    use, answer = index.entry(line), index.entry(result)
    if not use.session or use.session != answer.session:
        return CallVerdict.SESSION_MISMATCH
    if not use.uuid or answer.source_tool_assistant != use.uuid:
        return CallVerdict.SOURCE_MISMATCH
    return CallVerdict.REPAIRABLE


def _verdict(
    index: LineIndex, call: _Found, results_by_id: dict[str, list[int]]
) -> tuple[CallVerdict, int | None]:
    if call.ambiguous or call.span is None:
        return CallVerdict.DUPLICATE_KEY, None
    if not call.file_path:
        return CallVerdict.MISSING_FILE_PATH, None
    results = [line for line in results_by_id.get(call.tool_use_id, ()) if line > call.line]
    if len(results) != 1:
        return (CallVerdict.PENDING if not results else CallVerdict.MULTIPLE_RESULTS), None
    return _pairing(index, call.line, results[0]), results[0]


def _scope_lines(data: bytes, index: LineIndex, scope: RepairScope, topology: TopologyOptions) -> list[int]:
    if scope is RepairScope.ALL:
        return [n for n, kind in enumerate(index.kinds, 1) if kind is LineKind.RECORD]
    return sorted(resolve_topology(index, build_graph(index), topology).chain)


def _without_overlaps(calls: list[ReadPagesCall], spans: dict[int, tuple[int, int]]) -> list[ReadPagesCall]:
    """Block every repairable call whose span overlaps another's."""
    ordered = sorted(spans.items(), key=lambda item: item[1])
    clashing: set[int] = set()
    for (left, (_, left_end)), (right, (right_start, _)) in itertools.pairwise(ordered):
        if right_start < left_end:
            clashing |= {left, right}
    return [
        ReadPagesCall(c.line, c.tool_use_id, CallVerdict.OVERLAPPING_SPAN, c.result_line)
        if i in clashing
        else c
        for i, c in enumerate(calls)
    ]


def plan_repair(data: bytes, scope: RepairScope, topology: TopologyOptions, limits: LineLimits) -> RepairPlan:
    """Every Read call with `pages` in scope, its verdict, and the patches that repair it."""
    index = build_index(data, detect_format(data), limits)
    return plan_lines(data, index, _scope_lines(data, index, scope, topology))


def plan_lines(data: bytes, index: LineIndex, lines: Iterable[int]) -> RepairPlan:
    """The plan over the given record lines of `data` (indexed by `index`), in file order."""
    calls: list[ReadPagesCall] = []
    spans: dict[int, tuple[int, int]] = {}
    unscannable: list[int] = []
    results_by_id = _results_by_id(index)
    for line in sorted(lines):
        record = index.record(line)
        if record is None or record.role != "assistant" or "U" not in record.blocks:
            continue
        try:
            found = _found_on(data, index, line)
        except SpanError:
            unscannable.append(line)
            continue
        for call in found:
            verdict, result = _verdict(index, call, results_by_id)
            if verdict is CallVerdict.REPAIRABLE and call.span is not None:
                spans[len(calls)] = call.span
            calls.append(ReadPagesCall(call.line, call.tool_use_id, verdict, result))
    calls = _without_overlaps(calls, spans)
    patches = tuple(
        Patch(calls[i].line, *spans[i], calls[i].tool_use_id)
        for i in sorted(spans, key=lambda i: spans[i])
        if calls[i].verdict is CallVerdict.REPAIRABLE
    )
    return RepairPlan(tuple(calls), patches, tuple(unscannable))


def apply_patches(data: bytes, patches: tuple[Patch, ...]) -> bytes:
    """The bytes with every patch's span deleted (patches are disjoint, in file order)."""
    pieces, position = [], 0
    for patch in sorted(patches, key=lambda p: p.start):
        pieces.append(data[position : patch.start])
        position = patch.end
    pieces.append(data[position:])
    return b"".join(pieces)


def patched_line(data: bytes, index: LineIndex, line: int, patches: Iterable[Patch]) -> bytes:
    """The raw bytes of `line` with the patches on it applied (its terminator not included)."""
    start = _line_start(index, line)
    local = tuple(Patch(p.line, p.start - start, p.end - start, p.tool_use_id) for p in patches)
    return apply_patches(index.raw_line(data, line), local)


def _signature(index: LineIndex) -> tuple[object, ...]:
    """What a repair must not change: lines, kinds, identities, links, blocks and tool ids."""
    records = tuple(
        None if r is None else (r.type, r.uuid, r.parent, r.session, r.blocks, r.tool_uses, r.tool_results)
        for r in index.records
    )
    return (index.kinds, records, index.has_bom, index.crlf_lines, index.final_newline)


def repair_failures(
    original: bytes,
    repaired: bytes,
    plan: RepairPlan,
    scope: RepairScope,
    topology: TopologyOptions,
    limits: LineLimits,
) -> tuple[str, ...]:
    """Failure codes of a repair's bytes: not the planned bytes, invariants changed, not idempotent."""
    failures = []
    if repaired != apply_patches(original, plan.patches):
        failures.append("bytes-differ-from-plan")
    before = build_index(original, detect_format(original), limits)
    after = build_index(repaired, detect_format(repaired), limits)
    if _signature(before) != _signature(after):
        failures.append("invariants-changed")
    if plan_repair(repaired, scope, topology, limits).patches:
        failures.append("second-pass-found-patches")
    failures += [
        f"new-{code}"
        for code in new_error_codes(error_codes(original, topology, limits), repaired, topology, limits)
    ]
    return tuple(failures)
