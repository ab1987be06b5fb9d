"""The typed values a Qwen Code line decodes to: records, their Gemini-style contents and parts.

A record keeps what resuming needs (identity, links, kind, the message's parts, a compression's
history, a slash command's outcome, usage) and never the raw line: kept lines are re-read by
offset. A part keeps its text, or a call's id, name and arguments (as Qwen Code serializes them
to send), or a response's id and the text Qwen Code sends for it, and Qwen Code's own estimate
of its tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

__all__ = [
    "ARTIFACT_SUBTYPES",
    "KNOWN_SUBTYPES",
    "NON_CONVERSATION_SUBTYPES",
    "Content",
    "Part",
    "PartKind",
    "QwenRecord",
    "RecordType",
    "SlashOutcome",
    "Usage",
]


class RecordType(StrEnum):
    """A record's `type`: the four Qwen Code writes."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL_RESULT = "tool_result"
    SYSTEM = "system"


class PartKind(StrEnum):
    """What one `message.parts` entry holds."""

    TEXT = "text"
    THOUGHT = "thought"  # a `text` with `thought: true`: sent back as `reasoning_content`
    FUNCTION_CALL = "function-call"
    FUNCTION_RESPONSE = "function-response"
    MEDIA = "media"  # inlineData / fileData
    OTHER = "other"  # a part of no shape Qwen Code sends (skipped when converting)


ARTIFACT_SUBTYPES: Final = frozenset({"session_artifact_event", "session_artifact_snapshot"})
NON_CONVERSATION_SUBTYPES: Final = frozenset(
    {
        "session_sources_snapshot",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)
KNOWN_SUBTYPES: Final = frozenset(
    {
        "chat_compression", "slash_command", "ui_telemetry", "at_command", "attribution_snapshot",
        "notification", "background_task_completed", "cron", "mid_turn_user_message", "realtime_message",
        "custom_title", "parent_session", "rewind", "agent_bootstrap", "agent_launch_prompt", "agent_retry",
        "agent_session_ready", "file_history_snapshot", "session_source", "session_model", "omni_recall",
        "branch_checkpoint", "goal_state", "goal_runtime", "goal_turn_end", "turn_result",
        *ARTIFACT_SUBTYPES, *NON_CONVERSATION_SUBTYPES,
    }
)  # fmt: skip
"""Every subtype Qwen Code 0.24 knows (its `KNOWN_RECORD_SUBTYPES`)."""


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a content, as much of it as Qwen Code sends."""

    kind: PartKind
    text: str = ""  # a text's or thought's text; a response's text as sent (output, error or JSON)
    call_id: str | None = None  # a call's or response's `id`
    name: str = ""
    arguments: str = "{}"  # a call's `args` serialized as Qwen Code sends them
    nested: tuple[str, ...] = ()  # a response's own text parts, sent after its text
    empty: bool = False  # `{}`, or a non-thought text part with text "": Qwen Code calls it invalid
    signed: bool = False  # carries a `thoughtSignature`
    failed: bool = False  # a response that reports an `error` (a failed tool call)
    tokens: int = 0  # Qwen Code's own estimate of the part (`part_estimate`)


@dataclass(frozen=True, slots=True)
class Content:
    """A Gemini API content: `user` or `model`, and its parts."""

    role: str
    parts: tuple[Part, ...]

    def extended(self, more: tuple[Part, ...]) -> Content:
        """This content with `more` parts after its own."""
        return replace(self, parts=self.parts + more)


@dataclass(frozen=True, slots=True)
class Usage:
    """What one assistant record says its request billed (`usageMetadata`)."""

    prompt: int
    output: int
    thoughts: int
    cached: int
    total: int


@dataclass(frozen=True, slots=True)
class SlashOutcome:
    """A `slash_command` record's result phase: whether it hides the command line from the model."""

    hides_command: bool  # a local command whose output was all assistant text, never sent
    raw_command: str | None


@dataclass(frozen=True, slots=True)
class QwenRecord:
    """One JSON-object line that Qwen Code takes as a record (1-based `line`)."""

    line: int
    uuid: str
    parent_uuid: str | None
    session_id: str
    type: RecordType
    subtype: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    version: str | None = None
    message: Content | None = None
    compressed: tuple[Content, ...] | None = None  # a chat_compression's history (None: none given)
    compression_malformed: bool = False  # a compressedHistory that is truthy but not a list
    slash: SlashOutcome | None = None
    usage: Usage | None = None  # an assistant record's `usageMetadata`
    api_usage: Usage | None = None  # a `qwen-code.api_response` telemetry event: any call, billed
    replaced_utf8: bool = False
    sidechain: bool = False  # `isSidechain`: a subagent's transcript record, never the main session's

    @property
    def is_conversation(self) -> bool:
        """A record on the conversation tree (not an artifact or a sidecar snapshot)."""
        if self.type is not RecordType.SYSTEM or self.subtype is None:
            return True
        return self.subtype not in ARTIFACT_SUBTYPES and self.subtype not in NON_CONVERSATION_SUBTYPES

    @property
    def is_prompt(self) -> bool:
        """A user's own prompt (a `user` record of no subtype holding text)."""
        return (
            self.type is RecordType.USER
            and self.subtype is None
            and self.message is not None
            and any(part.kind is PartKind.TEXT for part in self.message.parts)
            and not any(part.kind is PartKind.FUNCTION_RESPONSE for part in self.message.parts)
        )
