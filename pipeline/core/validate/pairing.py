"""Tool pairing on the active chain, after merging split assistant and tool-result messages.

Claude Code streams one API assistant message as several lines sharing `message.id`, and
writes the answers to parallel tool calls as several user lines. Validation rebuilds the API
messages first (seed 004, "Tool Use and Tool Result Pairing") and then checks ids and order:
results must answer the calls just before them, open their message, and not repeat. A message
answering only part of a multi-tool call is accepted with a counted warning (seed rule), and so
are results written in completion order: Claude Code writes parallel results as they finish and
the API accepts any order within the message, so the seed's order rule is a warning here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.findings import Finding
from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.vocabulary import FindingCode, Role, Severity

__all__ = [
    "API_PAIRING_CODES",
    "COMPILED_FINDINGS",
    "ApiMessage",
    "PairingResult",
    "api_messages",
    "check_pairing",
    "check_pairing_reference",
]

E = Severity.ERROR
API_PAIRING_CODES: Final = frozenset(
    {
        FindingCode.TOOL_ID_MALFORMED,
        FindingCode.TOOL_USE_ID_DUPLICATE,
        FindingCode.TOOL_RESULT_ID_DUPLICATE,
        FindingCode.TOOL_USE_NOT_FOLLOWED_BY_USER,
        FindingCode.TOOL_RESULT_MISMATCH,
        FindingCode.TOOL_RESULT_WITHOUT_USE,
        FindingCode.TOOL_RESULT_NOT_FIRST,
    }
)
"""The errors of records the Messages API would refuse in a request: a call without its result, a
result without its call, a repeated id, a result not first. Confined to records a summary
replaces, a compaction removes them."""
COMPILED_FINDINGS: Final = (
    (FindingCode.TOOL_ID_MALFORMED, E),
    (FindingCode.TOOL_USE_ID_DUPLICATE, E),
    (FindingCode.TOOL_RESULT_ID_DUPLICATE, E),
    (FindingCode.TOOL_USE_UNANSWERED, Severity.WARNING),
    (FindingCode.TOOL_USE_NOT_FOLLOWED_BY_USER, E),
    (FindingCode.TOOL_RESULT_MISMATCH, E),
    (FindingCode.TOOL_RESULT_WITHOUT_USE, E),
    (FindingCode.TOOL_RESULT_NOT_FIRST, E),
    (FindingCode.TOOL_RESULT_PARTIAL, Severity.WARNING),
    (FindingCode.TOOL_RESULT_ORDER, Severity.INFO),
)
"""The findings the Rust core's pairing returns, by the kind number it gives (`rust/src/pairing.rs`)."""


@dataclass(frozen=True, slots=True)
class ApiMessage:
    """One API message rebuilt from consecutive chain lines."""

    role: str
    lines: tuple[int, ...]
    uuids: tuple[str, ...]
    blocks: str  # one code per content block, in order (see formats.claude_code.BLOCK_CODES)
    block_lines: tuple[int, ...]  # the line each block came from
    uses: tuple[str, ...]
    results: tuple[str, ...]
    message_id: str | None
    source: str | None  # sourceToolAssistantUUID of the first line

    def first_line_of(self, code: str) -> int:
        """Line holding the first block of a kind, or the message's first line."""
        position = self.blocks.find(code)
        return self.block_lines[position] if position >= 0 else self.lines[0]


@dataclass(frozen=True, slots=True)
class PairingResult:
    """Findings of the pairing check and the number of accepted partial or reordered answers."""

    findings: tuple[Finding, ...]
    partial_results: int
    reordered_results: int
    message_count: int


def _message(records: list[DecodedRecord], lines: list[int]) -> ApiMessage:
    """One API message of consecutive chain lines (their records), built once."""
    first = records[0]
    if len(records) == 1:  # most messages are one line: no joins to make
        return ApiMessage(
            role=first.role or first.type or "",
            lines=(lines[0],),
            uuids=(first.uuid,) if first.uuid else (),
            blocks=first.blocks,
            block_lines=(lines[0],) * len(first.blocks),
            uses=first.tool_uses,
            results=first.tool_results,
            message_id=first.message_id,
            source=first.source_tool_assistant,
        )
    return ApiMessage(
        role=first.role or first.type or "",
        lines=tuple(lines),
        uuids=tuple(record.uuid for record in records if record.uuid),
        blocks="".join(record.blocks for record in records),
        block_lines=tuple(line for record, line in zip(records, lines, strict=True) for _ in record.blocks),
        uses=tuple(tool for record in records for tool in record.tool_uses),
        results=tuple(tool for record in records for tool in record.tool_results),
        message_id=first.message_id,
        source=first.source_tool_assistant,
    )


def api_messages(index: LineIndex, chain: tuple[int, ...]) -> tuple[ApiMessage, ...]:
    """The chain's user/assistant lines merged into API messages the way Claude Code sends them.

    Consecutive user lines form one message. An assistant line joins the earlier assistant
    message with the same `message.id` when only tool-result user messages lie between them, so
    parallel calls become one message of calls followed by one message of results. The lines are
    grouped first and each message is built once (joining message by message copied every
    earlier block again: quadratic in a long run of fragments).
    """
    groups: list[tuple[list[DecodedRecord], list[int]]] = []
    roles: list[str] = []  # each group's role, message id and whether some block is not a result
    ids: list[str | None] = []
    other_blocks: list[bool] = []
    for line in chain:
        record = index.record(line)
        if record is None or not record.is_api:
            continue
        role = record.role or record.type or ""
        position = None
        if role == Role.USER and roles and roles[-1] == Role.USER:
            position = len(groups) - 1
        elif role == Role.ASSISTANT and record.message_id is not None:
            position = _same_call_target(roles, ids, other_blocks, record.message_id)
        if position is None:
            groups.append(([record], [line]))
            roles.append(role)
            ids.append(record.message_id)
            other_blocks.append(bool(record.blocks.strip("R")))
            continue
        groups[position][0].append(record)
        groups[position][1].append(line)
        other_blocks[position] = other_blocks[position] or bool(record.blocks.strip("R"))
    return tuple(_message(records, lines) for records, lines in groups)


def _same_call_target(
    roles: list[str], ids: list[str | None], other_blocks: list[bool], message_id: str
) -> int | None:
    """The earlier assistant message this fragment continues, across tool-result-only users."""
    for position in range(len(roles) - 1, -1, -1):
        if roles[position] == Role.ASSISTANT:
            return position if ids[position] == message_id else None
        if other_blocks[position]:
            return None
    return None


def _ordered_subset(items: tuple[str, ...], expected: tuple[str, ...]) -> bool:
    if not items or not expected:
        return False
    position = 0
    for item in items:
        while position < len(expected) and expected[position] != item:
            position += 1
        if position >= len(expected):
            return False
        position += 1
    return True


def _answers(results: tuple[str, ...], uses: tuple[str, ...]) -> bool:
    """Results answer calls when every result names one of them (duplicates are checked apart)."""
    return bool(results) and bool(uses) and set(results) <= set(uses)


def _id_findings(messages: tuple[ApiMessage, ...]) -> list[Finding]:
    findings: list[Finding] = []
    uses: dict[str, list[int]] = defaultdict(list)
    results: dict[str, list[int]] = defaultdict(list)
    for message in messages:
        seen = {"U": 0, "R": 0}  # blocks of each kind so far: the ordinal of the next one's id
        for position, code in enumerate(message.blocks):
            if code not in "UR":
                continue
            line = message.block_lines[position]
            ordinal = seen[code]
            seen[code] = ordinal + 1
            tool_id = (message.uses if code == "U" else message.results)[ordinal]
            if not tool_id:
                findings.append(Finding(FindingCode.TOOL_ID_MALFORMED, E, line=line))
            else:
                (uses if code == "U" else results)[tool_id].append(line)
    for table, code in (
        (uses, FindingCode.TOOL_USE_ID_DUPLICATE),
        (results, FindingCode.TOOL_RESULT_ID_DUPLICATE),
    ):
        findings.extend(
            Finding(code, E, line=lines[1], count=len(lines), ids=(tool_id,))
            for tool_id, lines in table.items()
            if len(lines) > 1
        )
    return findings


def check_pairing(index: LineIndex, graph: UuidGraph, chain: tuple[int, ...]) -> PairingResult:
    """Check tool_use/tool_result pairing over the API messages of a chain.

    The Rust core checks it where it is built (`scan.pair_tools`: the same rules over the same
    records, compiled); `check_pairing_reference` is what it is held to, and decides the sessions
    the core hands back (ids and blocks that disagree, strings that are not UTF-8).
    """
    paired = scan.pair_tools(index.records, chain, graph.line_of) if scan.COMPILED else None
    if paired is None:
        return check_pairing_reference(index, graph, chain)
    found, partial, reordered, message_count = paired
    findings = tuple(
        Finding(COMPILED_FINDINGS[kind][0], COMPILED_FINDINGS[kind][1], line=line, count=count, ids=ids)
        for kind, line, count, ids in found
    )
    return PairingResult(findings, partial, reordered, message_count)


def check_pairing_reference(index: LineIndex, graph: UuidGraph, chain: tuple[int, ...]) -> PairingResult:
    """The pure-Python pairing check: the reference the compiled one is held to."""
    messages = api_messages(index, chain)
    findings = _id_findings(messages)
    uses_by_uuid = {
        uuid: message.uses
        for message in messages
        if message.role == Role.ASSISTANT and message.uses
        for uuid in message.uuids
    }
    partial = reordered = 0
    for position, message in enumerate(messages):
        if message.uses:
            line = message.first_line_of("U")
            following = messages[position + 1] if position + 1 < len(messages) else None
            if following is None:  # the session stopped mid-call; Claude Code answers it as interrupted
                findings.append(
                    Finding(FindingCode.TOOL_USE_UNANSWERED, Severity.WARNING, line=line, ids=message.uses)
                )
            elif following.role != Role.USER:
                findings.append(
                    Finding(FindingCode.TOOL_USE_NOT_FOLLOWED_BY_USER, E, line=line, ids=message.uses)
                )
            elif not _answers(following.results, message.uses):
                findings.append(
                    Finding(
                        FindingCode.TOOL_RESULT_MISMATCH,
                        E,
                        line=following.first_line_of("R"),
                        ids=following.results,
                    )
                )
            else:
                reordered += not _ordered_subset(following.results, message.uses)
                partial += len(set(following.results)) < len(set(message.uses))
        if message.results:
            findings.extend(_result_findings(index, graph, messages, position, uses_by_uuid))
    if partial:
        findings.append(Finding(FindingCode.TOOL_RESULT_PARTIAL, Severity.WARNING, count=partial))
    if reordered:
        findings.append(Finding(FindingCode.TOOL_RESULT_ORDER, Severity.INFO, count=reordered))
    return PairingResult(tuple(findings), partial, reordered, len(messages))


def _result_findings(
    index: LineIndex,
    graph: UuidGraph,
    messages: tuple[ApiMessage, ...],
    position: int,
    uses_by_uuid: dict[str, tuple[str, ...]],
) -> list[Finding]:
    message = messages[position]
    line = message.first_line_of("R")
    if position == 0:
        return [Finding(FindingCode.TOOL_RESULT_WITHOUT_USE, E, line=line, ids=message.results)]
    findings = []
    previous = messages[position - 1]
    source_uses = uses_by_uuid.get(message.source or "")
    if source_uses is None and message.source:
        source_line = graph.line_of.get(message.source)
        source_record = index.record(source_line) if source_line else None
        source_uses = source_record.tool_uses if source_record is not None else ()
    # After an assistant message the check was made from the calls' side; here only results that
    # follow another user message are judged, against the calls their source names.
    if previous.role != Role.ASSISTANT and not _answers(message.results, source_uses or ()):
        findings.append(Finding(FindingCode.TOOL_RESULT_MISMATCH, E, line=line, ids=message.results))
    if message.blocks[: len(message.results)] != "R" * len(message.results):
        misplaced = next(i for i, code in enumerate(message.blocks[: len(message.results)]) if code != "R")
        findings.append(Finding(FindingCode.TOOL_RESULT_NOT_FIRST, E, line=message.block_lines[misplaced]))
    return findings
