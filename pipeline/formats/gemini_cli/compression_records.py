"""A compaction of a Gemini CLI session in Gemini CLI's own compression form.

Gemini CLI persists a compression as a `$set` `messages` snapshot: its summary as a user
message, its fixed acknowledgement as a Gemini message, then the kept messages. The candidate is
that: one header of the original's merged metadata, the snapshot of summary and acknowledgement,
then every message Gemini CLI loads from the cut on, each its original line byte for byte (or as
its snapshot held it). A legacy JSON document's candidate is written in this JSONL form, the one
Gemini CLI itself has moved to. The cut falls where Gemini CLI's own compression splits: before a
user prompt (text, no tool responses), so no call is parted from its response.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import orjson

from pipeline.formats.context_items import SentItem, TailPlan
from pipeline.formats.gemini_cli.chat_analysis import ACKNOWLEDGEMENT, ChatAnalysis, group_digest
from pipeline.formats.gemini_cli.chat_lines import RecordKind
from pipeline.formats.gemini_cli.history import SentTurn
from pipeline.formats.gemini_cli.vacuum import message_lines
from pipeline.vocabulary import PartitionSet

__all__ = ["SUMMARY_LINE", "compose_compression", "compress_sets", "plan_tail", "summary_sent"]

SUMMARY_LINE: Final = 2  # the snapshot holding the summary comes right after the header
_PLACEHOLDER_LINE: Final = 0  # summary turns come from no line of the original


def _summary_turns(summary: str) -> tuple[SentTurn, SentTurn]:
    user = {"role": "user", "parts": [{"text": summary}]}
    model = {"role": "model", "parts": [{"text": ACKNOWLEDGEMENT}]}
    return SentTurn("summary", _PLACEHOLDER_LINE, user), SentTurn("ack", _PLACEHOLDER_LINE, model)


def summary_sent(summary: str) -> SentItem:
    """The one item Gemini CLI sends for a candidate's summary (with its acknowledgement)."""
    return group_digest(_summary_turns(summary))


def _is_prompt(turn: SentTurn) -> bool:
    parts = [p for p in turn.content["parts"] if isinstance(p, dict)]
    return (
        turn.role == "user"
        and not turn.results
        and any("text" in p for p in parts)
        and not any("functionResponse" in p for p in parts)
    )


def _safe_starts(analysis: ChatAnalysis) -> list[int]:
    """Item indices a kept tail may start at: a user prompt right after a model turn (so it is a
    `Content` of its own on the wire), with something before it to summarize."""
    items = analysis.items
    return [
        index
        for index, (turns, _) in enumerate(items)
        if index > 0 and _is_prompt(turns[0]) and items[index - 1][0][-1].role == "model"
    ]


def plan_tail(analysis: ChatAnalysis, room: int) -> TailPlan | None:
    """The largest tail within `room` tokens starting at a prompt; the smallest one when none fits."""
    safe = _safe_starts(analysis)
    if not safe:
        return None
    tokens = [item.tokens for _, item in analysis.items]
    fitting = [index for index in safe if sum(tokens[index:]) <= room]
    first = fitting[0] if fitting else safe[-1]
    line = analysis.items[first][0][0].line
    return TailPlan(first_item=first, cut_line=line, target_met=bool(fitting), at_turn=True)


def _kept_messages(analysis: ChatAnalysis, plan: TailPlan) -> Sequence[Any]:
    conversation = analysis.conversation
    assert conversation is not None, "a plan is made only for a session Gemini CLI loads"
    first_id = analysis.items[plan.first_item][0][0].message_id
    ids = [message.id for message in conversation.messages]
    return conversation.messages[ids.index(first_id) :]


def _head(summary: str, session: str, timestamp: object) -> bytes:
    ident = hashlib.sha256(f"{session}\0{summary}".encode()).hexdigest()[:32]
    messages = [
        {"id": f"{ident}-summary", "timestamp": timestamp, "type": "user", "content": [{"text": summary}]},
        {
            "id": f"{ident}-ack",
            "timestamp": timestamp,
            "type": "gemini",
            "content": [{"text": ACKNOWLEDGEMENT}],
        },
    ]
    return orjson.dumps({"$set": {"messages": messages}})


def compose_compression(analysis: ChatAnalysis, plan: TailPlan, summary: str) -> bytes:
    """The candidate: the header, the summary snapshot, the kept messages."""
    conversation = analysis.conversation
    assert conversation is not None, "a plan is made only for a session Gemini CLI loads"
    kept = _kept_messages(analysis, plan)
    timestamp = kept[0].value.get("timestamp") if kept else conversation.metadata.get("lastUpdated")
    lines = [
        orjson.dumps(dict(conversation.metadata)),
        _head(summary, str(conversation.session_id), timestamp),
        *message_lines(analysis, kept),
    ]
    return b"".join(line + b"\n" for line in lines)


def compress_sets(analysis: ChatAnalysis, plan: TailPlan) -> dict[PartitionSet, frozenset[int]]:
    """The six sets of a compaction cutting at `plan`: summarized, kept, projected, excluded."""
    everything = frozenset(range(1, len(analysis.chat) + 1))
    sweep = analysis.sweep_sets()
    if analysis.legacy:
        return {**sweep}
    kept = frozenset(message.line for message in _kept_messages(analysis, plan))
    summarized = (
        frozenset(turn.line for turns, _ in analysis.items[: plan.first_item] for turn in turns) - kept
    )
    control = (
        frozenset(
            record.line
            for record in analysis.chat.lines()
            if record.kind is RecordKind.HEADER
            or (record.kind is RecordKind.SET and "messages" not in record.value["$set"])
        )
        - kept
    )
    unattributed = sweep[PartitionSet.EXCLUDED_UNATTRIBUTED]
    return {
        PartitionSet.SUMMARY: summarized,
        PartitionSet.RAW_KEEP: kept,
        PartitionSet.SIDE_KEEP: frozenset(),
        PartitionSet.CONTROL_PROJECTION: control,
        PartitionSet.EXCLUDED_BRANCH: everything - kept - summarized - control - unattributed,
        PartitionSet.EXCLUDED_UNATTRIBUTED: unattributed,
    }
