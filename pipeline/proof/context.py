"""The size of what a client sent on resume, measured alike for every judge.

A request's conversation (Claude Code's messages, Codex's items, the Chat Completions agents'
messages) is measured as sent: items, characters of their JSON, seed-estimated tokens. Claude
Code's reading of its request into blocks is `pipeline.proof.claude_code.sent_context`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_utf8

__all__ = ["ContextSize", "json_size"]


@dataclass(frozen=True, slots=True)
class ContextSize:
    """How big a request's conversation is: messages, characters of their JSON, seed tokens."""

    messages: int
    characters: int
    estimated_tokens: int


def json_size(messages: Sequence[Any]) -> ContextSize:
    """Items, characters of their JSON, seed-estimated tokens (Claude Code's messages, Codex's items)."""
    encoded = [orjson.dumps(message) for message in messages]
    return ContextSize(
        messages=len(messages),
        characters=sum(len(data.decode("utf-8")) for data in encoded),
        estimated_tokens=sum(estimate_utf8(data) + RECORD_ALLOWANCE for data in encoded),
    )
