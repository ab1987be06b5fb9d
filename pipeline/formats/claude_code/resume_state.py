"""The attachment records Claude Code derives its resume-time reminders from.

On resume Claude Code 2.1.332 folds the attachment records of the chain it loaded into the state
it announced (deferred tools, agent types, MCP instructions, skills, the environment) and into
the latest of a few snapshots (the model, the date, session context, output style, language,
attribution), and tells the model what changed since: tools no longer available, tools newly
available, a new date. A compaction that summarizes those records away makes it announce
everything afresh, or retract nothing, which the original would not. The records of the
summarized span that the state folds (every one of a delta kind, in chain order; only the newest
of a snapshot kind) are carried into the candidate right after its summary, verbatim but for
their parent, so Claude Code folds the same state. Read off build 2.1.332 (its `fee`, `W9e`,
`Ttt`, `jtl` and listing folds) and checked against it (`tests/jobs/test_resume_gate_state.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from pipeline.formats.claude_code.content import parse_object
from pipeline.formats.claude_code.records import MASK_STAMP_KEY
from pipeline.vocabulary import RecordType, StateAttachment

__all__ = [
    "FOLDED",
    "NEWEST_ONLY",
    "StateRecord",
    "declared_loaded_tools",
    "discovered_tools",
    "resume_state",
]

# Every record counts: Claude Code folds them in order (names added, removed, re-added).
FOLDED: Final = frozenset(
    {
        StateAttachment.DEFERRED_TOOLS_DELTA,
        StateAttachment.AGENT_LISTING_DELTA,
        StateAttachment.MCP_INSTRUCTIONS_DELTA,
        StateAttachment.MCP_DROPPED_TOOLS_DELTA,
        StateAttachment.SKILL_LISTING,
        StateAttachment.DYNAMIC_SKILL,
        StateAttachment.ENVIRONMENT,
    }
)
# Only the newest counts: Claude Code compares the present with the last one it told.
NEWEST_ONLY: Final = frozenset(set(StateAttachment) - FOLDED)


@dataclass(frozen=True, slots=True)
class StateRecord:
    """One attachment record carried into a candidate: its 1-based line and kind."""

    line: int
    kind: StateAttachment


def _kind(line: bytes) -> StateAttachment | None:
    if b'"attachment"' not in line:
        return None
    parsed = parse_object(line)
    if parsed is None or parsed.get("type") != RecordType.ATTACHMENT or parsed.get("isSidechain") is True:
        return None
    attachment = parsed.get("attachment")
    name = attachment.get("type") if isinstance(attachment, dict) else None
    if not isinstance(parsed.get("uuid"), str) or not isinstance(name, str):
        return None
    try:
        return StateAttachment(name)
    except ValueError:
        return None


def resume_state(rows: Iterable[tuple[int, bytes]]) -> tuple[StateRecord, ...]:
    """Of a chain span's (line number, line) rows, root first, the records Claude Code's resume
    state folds."""
    found = [StateRecord(number, kind) for number, line in rows if (kind := _kind(line)) is not None]
    newest = {record.kind: record.line for record in found if record.kind in NEWEST_ONLY}
    return tuple(record for record in found if record.kind in FOLDED or newest[record.kind] == record.line)


def _references(content: object) -> Iterable[str]:
    """The tool names ToolSearch's results reference in a user message's content."""
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        inner = block.get("content")
        for item in inner if isinstance(inner, list) else ():
            if isinstance(item, dict) and item.get("type") == "tool_reference":
                name = item.get("tool_name")
                if isinstance(name, str):
                    yield name


def discovered_tools(rows: Iterable[tuple[int, bytes]]) -> tuple[str, ...]:
    """The deferred tools a chain span loaded, sorted: those its ToolSearch results reference and
    those a compact boundary in it carries (`compactMetadata.preCompactDiscoveredTools`).

    Claude Code sends the definitions of every deferred tool its loaded messages discovered, and
    its own compaction writes them on the new boundary so they stay loaded; a compaction of ours
    does the same for the span it summarizes (read off build 2.1.332, its discovered-tools scan).
    """
    found: set[str] = set()
    for _, line in rows:
        if b'"tool_reference"' not in line and b'"preCompactDiscoveredTools"' not in line:
            continue
        record = parse_object(line)
        if record is None:
            continue
        metadata = record.get("compactMetadata")
        if record.get("subtype") == "compact_boundary" and isinstance(metadata, dict):
            carried = metadata.get("preCompactDiscoveredTools")
            found.update(n for n in (carried if isinstance(carried, list) else ()) if isinstance(n, str))
        message = record.get("message")
        if record.get("type") == RecordType.USER and isinstance(message, dict):
            found.update(_references(message.get("content")))
    return tuple(sorted(found))


def declared_loaded_tools(data: bytes) -> frozenset[str]:
    """The deferred tools a compaction of ours carries as loaded (`preCompactDiscoveredTools` on its
    boundary). Claude Code sends their definitions but, counting as loaded only the ToolSearch
    results after the last boundary, lists them again among the deferred tools at resume, as it
    does after its own compaction: the resume gate notes that listing rather than refusing it."""
    found: set[str] = set()
    for line in data.split(b"\n"):
        if b'"preCompactDiscoveredTools"' not in line or MASK_STAMP_KEY.encode() not in line:
            continue
        record = parse_object(line)
        metadata = record.get("compactMetadata") if record is not None else None
        if record is None or record.get("subtype") != "compact_boundary" or not isinstance(metadata, dict):
            continue
        if isinstance(metadata.get(MASK_STAMP_KEY), dict):
            names = metadata.get("preCompactDiscoveredTools")
            found.update(n for n in (names if isinstance(names, list) else ()) if isinstance(n, str))
    return frozenset(found)
