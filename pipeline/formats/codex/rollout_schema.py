"""The shapes msgspec decodes a Codex rollout line into: only the fields later stages need.

A rollout line is `{timestamp, type, payload}` (CLI 0.4x on; recent versions add `ordinal`, the
record's number in a paginated thread); the oldest layout (0.2x) writes a
bare meta object first, then bare response items and `{"record_type": "state"}` lines. Every
field is `Any` so that a writer's odd type is a fact to judge, never a decode failure; message
and output bodies are skipped by msgspec without being materialized.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["NULL", "ContentHead", "LineHead", "PayloadHead", "TokenInfoHead", "TokenUsageHead"]

NULL = msgspec.Raw(b"null")  # what an absent raw member reads as, like a JSON null


class ContentHead(msgspec.Struct, gc=False):
    """One content item of a message: its kind and, for text, its text (read for turn marks)."""

    type: Any = None
    text: Any = None


class TokenUsageHead(msgspec.Struct, gc=False):
    """`token_count.info.last_token_usage`: what one model request billed."""

    input_tokens: Any = 0
    cached_input_tokens: Any = 0
    output_tokens: Any = 0
    reasoning_output_tokens: Any = 0


class TokenInfoHead(msgspec.Struct, gc=False):
    last_token_usage: TokenUsageHead | None = None
    total_token_usage: TokenUsageHead | None = None


class PayloadHead(msgspec.Struct, gc=False):
    """The payload fields any record kind may carry (absent ones stay None)."""

    type: Any = None
    role: Any = None
    content: msgspec.Raw = NULL
    call_id: Any = None
    turn_id: Any = None
    num_turns: Any = None
    cli_version: Any = None
    id: Any = None
    info: msgspec.Raw = NULL
    replacement_history: msgspec.Raw = NULL
    message: Any = None
    usage: msgspec.Raw = NULL  # `token_usage_record` (0.171): what one model response billed


class LineHead(msgspec.Struct, gc=False):
    """A whole line: the envelope of 0.4x+, or a bare legacy record (its fields at top level)."""

    type: Any = None
    ordinal: Any = None  # recent versions number every record of a paginated thread
    payload: PayloadHead | None = None
    record_type: Any = None
    instructions: Any = msgspec.UNSET
    timestamp: Any = None
    id: Any = None
    role: Any = None
    content: msgspec.Raw = NULL
    call_id: Any = None
