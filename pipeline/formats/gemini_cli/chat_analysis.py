"""One Gemini CLI session read and judged: its lines, the context Gemini CLI rebuilds, its
findings, its sent items (digest and Gemini CLI's own estimate) and the six sets of a sweep.

The sent items are the history's turns, except that a compression head (Gemini CLI's summary as a
user turn, then its fixed acknowledgement) at the start is one item, the summary: that is what a
compaction's check compares a candidate's first item with. The sweep's partition of the lines:
`raw_keep` the lines whose messages Gemini CLI sends, `control_projection` the headers and
metadata updates and the lines of kept messages it loads but does not send (info, errors, its
environment message), `excluded_branch` superseded message versions, stale snapshots and rewound
records, `excluded_unattributed` damaged lines and records of no kind Gemini CLI reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from pipeline.findings import Finding, LineFacts, reading_findings
from pipeline.formats.context_items import SentItem
from pipeline.formats.gemini_cli.chat_findings import chat_findings, pairing_findings
from pipeline.formats.gemini_cli.chat_lines import ChatFile, RecordKind, decode_chat
from pipeline.formats.gemini_cli.conversation import (
    Conversation,
    load_checkpoint,
    load_conversation,
    load_legacy,
)
from pipeline.formats.gemini_cli.estimate import estimate_parts
from pipeline.formats.gemini_cli.history import SentTurn, rebuild_history
from pipeline.formats.gemini_cli.parts import is_resumable_message
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import PartitionSet

__all__ = [
    "ACKNOWLEDGEMENT",
    "SUBAGENT_KIND",
    "ChatAnalysis",
    "analyze_chat",
    "analyze_checkpoint",
    "group_digest",
    "head_length",
]

ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"  # Gemini CLI's reply to its summary
SUBAGENT_KIND = "subagent"  # a subagent's header says `kind: subagent`; Gemini CLI never lists it


def group_digest(turns: Sequence[SentTurn]) -> SentItem:
    """One sent item of one or more turns: SHA-256 of their canonical JSON, Gemini CLI's estimate."""
    contents = [turn.content for turn in turns]
    body = orjson.dumps(contents[0] if len(contents) == 1 else contents, option=orjson.OPT_SORT_KEYS)
    tokens = sum(estimate_parts(turn.content["parts"]) for turn in turns)
    return SentItem(hashlib.sha256(body).hexdigest(), tokens)


def _is_text_turn(turn: SentTurn, role: str) -> bool:
    parts = turn.content["parts"]
    return turn.role == role and bool(parts) and all(set(p) == {"text"} for p in parts if isinstance(p, dict))


def head_length(turns: Sequence[SentTurn]) -> int:
    """2 when the history opens with a compression head (summary, acknowledgement), else 0."""
    if (
        len(turns) >= 2
        and _is_text_turn(turns[0], "user")
        and turns[1].content["parts"] == [{"text": ACKNOWLEDGEMENT}]
    ):
        return 2
    return 0


@dataclass(frozen=True)
class ChatAnalysis:
    """A chat file (JSONL, or a legacy JSON document), what Gemini CLI loads and sends from it."""

    data: bytes
    chat: ChatFile
    conversation: Conversation | None  # None: Gemini CLI reads nothing from it
    legacy: bool
    turns: tuple[SentTurn, ...]
    findings: tuple[Finding, ...]
    checkpoint: bool = False  # a `/chat save` checkpoint: its API history, restored by `/chat resume`

    @property
    def resumable(self) -> bool:
        """Whether Gemini CLI lists it to resume: a session it loads, not a subagent's, with a
        message it would resume (a prompt it does not skip, or a reply with text, calls or thoughts)."""
        conversation = self.conversation
        if conversation is None or conversation.metadata.get("kind") == SUBAGENT_KIND:
            return False
        return any(is_resumable_message(message.value) for message in conversation.messages)

    @cached_property
    def items(self) -> tuple[tuple[tuple[SentTurn, ...], SentItem], ...]:
        """Each sent item with the turns it stands for (a compression head is one item)."""
        head = head_length(self.turns)
        groups = [self.turns[:head]] if head else []
        groups.extend((turn,) for turn in self.turns[head:])
        return tuple((group, group_digest(group)) for group in groups)

    def sent(self) -> tuple[SentItem, ...]:
        """Each item of the rebuilt context as Gemini CLI sends it, in order."""
        return tuple(item for _, item in self.items)

    def context_tokens(self) -> int:
        """Gemini CLI's estimate of the rebuilt context."""
        return sum(item.tokens for item in self.sent())

    def sent_lines(self) -> frozenset[int]:
        """Lines whose messages Gemini CLI sends."""
        return frozenset(turn.line for turn in self.turns)

    def live_lines(self) -> frozenset[int]:
        """Lines holding a message Gemini CLI loads (sent or not)."""
        loaded = self.conversation.messages if self.conversation is not None else ()
        return frozenset(message.line for message in loaded)

    def sweep_sets(self) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a sweep (no cut), before the partition checks them."""
        everything = frozenset(range(1, len(self.chat) + 1))
        if self.legacy or self.checkpoint:
            return _sets(raw=everything, control=frozenset(), branch=frozenset(), everything=everything)
        raw = self.sent_lines()
        control, branch = set(self.live_lines() - raw), set()
        for record in self.chat.lines():
            if record.line in raw or record.line in control:
                continue
            if record.kind is RecordKind.HEADER or (
                record.kind is RecordKind.SET and "messages" not in record.value["$set"]
            ):
                control.add(record.line)
            elif record.kind is not RecordKind.OTHER:
                branch.add(record.line)
        return _sets(raw=raw, control=frozenset(control), branch=frozenset(branch), everything=everything)


def _sets(
    *, raw: frozenset[int], control: frozenset[int], branch: frozenset[int], everything: frozenset[int]
) -> dict[PartitionSet, frozenset[int]]:
    return {
        PartitionSet.SUMMARY: frozenset(),
        PartitionSet.RAW_KEEP: raw,
        PartitionSet.SIDE_KEEP: frozenset(),
        PartitionSet.CONTROL_PROJECTION: control,
        PartitionSet.EXCLUDED_BRANCH: branch,
        PartitionSet.EXCLUDED_UNATTRIBUTED: everything - raw - control - branch,
    }


def _facts(chat: ChatFile) -> LineFacts:
    replaced = [record.line for record in chat.lines() if record.replaced_utf8]
    return LineFacts(chat.kinds, replaced, chat.has_bom, chat.crlf_lines, chat.final_newline)


def _checkpoint_turns(contents: Sequence[Mapping[str, Any]]) -> tuple[SentTurn, ...]:
    return tuple(
        SentTurn(f"history-{index}", 1, {"role": str(c.get("role")), "parts": list(c["parts"])})
        for index, c in enumerate(contents)
    )


def analyze_checkpoint(data: bytes, limits: LineLimits) -> ChatAnalysis | None:
    """A `/chat save` checkpoint read whole (its history is what `/chat resume` restores; Gemini
    CLI's `--resume` never lists it); None when the bytes are no checkpoint."""
    contents = load_checkpoint(data)
    if contents is None:
        return None
    turns = _checkpoint_turns(contents)
    return ChatAnalysis(
        data, decode_chat(data, limits), None, False, turns, tuple(pairing_findings(turns)), checkpoint=True
    )


def analyze_chat(data: bytes, limits: LineLimits) -> ChatAnalysis:
    """Decode, rebuild and judge one Gemini CLI file's bytes (JSONL, a legacy document, or a
    `/chat save` checkpoint)."""
    chat = decode_chat(data, limits)
    loaded = load_conversation(chat)
    conversation, legacy = (loaded, False) if loaded.identified else (load_legacy(data), True)
    if conversation is None:
        checkpoint = analyze_checkpoint(data, limits)
        if checkpoint is not None:
            return checkpoint
    turns = rebuild_history(conversation.messages) if conversation is not None else ()
    findings = [] if legacy else reading_findings(_facts(chat))
    findings.extend(chat_findings(chat, conversation, turns, legacy=legacy))
    return ChatAnalysis(data, chat, conversation, legacy and conversation is not None, turns, tuple(findings))
