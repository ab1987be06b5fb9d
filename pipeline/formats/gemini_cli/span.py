"""The summarized span of a Gemini CLI history, block by block, as typed values.

What a summarizer needs of the sent items before a cut: each prompt, model text, call and
response, with the line its message came from; a compression's summary is a prior summary (its
acknowledgement says nothing). A response holding `error` failed. Raw parts stay in this package.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson

from pipeline.formats.frozen_json import EMPTY_INPUT, FrozenJson, freeze_json
from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis, head_length
from pipeline.formats.gemini_cli.history import SentTurn

__all__ = ["SpanBlock", "SpanKind", "span_blocks"]


class SpanKind(StrEnum):
    """What one block of the summarized span is."""

    PROMPT = "prompt"
    MODEL_TEXT = "model-text"
    PRIOR_SUMMARY = "prior-summary"
    CALL = "call"
    RESULT = "result"


@dataclass(frozen=True, slots=True)
class SpanBlock:
    """One block: its line, kind, text (a result's output), and a call's or result's tool facts."""

    line: int
    kind: SpanKind
    text: str = ""
    tool_name: str | None = None
    tool_id: str | None = None
    arguments: Mapping[str, FrozenJson] = field(default_factory=lambda: EMPTY_INPUT)
    is_error: bool = False


def _call(call: Mapping[str, Any], line: int) -> SpanBlock:
    args = call.get("args")
    frozen = freeze_json(dict(args)) if isinstance(args, Mapping) else EMPTY_INPUT
    arguments = frozen if isinstance(frozen, Mapping) else EMPTY_INPUT
    name, ident = str(call.get("name") or "unknown"), str(call.get("id") or "")
    return SpanBlock(line, SpanKind.CALL, tool_name=name, tool_id=ident, arguments=arguments)


def _result(response: Mapping[str, Any], line: int) -> SpanBlock:
    body = response.get("response")
    failed = isinstance(body, Mapping) and "error" in body
    output = body.get("output", body.get("error")) if isinstance(body, Mapping) else body
    text = output if isinstance(output, str) else orjson.dumps(output).decode()
    name, ident = str(response.get("name") or "unknown"), str(response.get("id") or "")
    return SpanBlock(line, SpanKind.RESULT, text, tool_name=name, tool_id=ident, is_error=failed)


def _text_kind(turn: SentTurn, summary: bool) -> SpanKind | None:
    if summary:
        return SpanKind.PRIOR_SUMMARY if turn.role == "user" else None  # the acknowledgement says nothing
    return SpanKind.PROMPT if turn.role == "user" else SpanKind.MODEL_TEXT


def _turn_blocks(turn: SentTurn, summary: bool) -> Iterator[SpanBlock]:
    for part in turn.content["parts"]:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("functionCall"), Mapping):
            yield _call(part["functionCall"], turn.line)
        elif isinstance(part.get("functionResponse"), Mapping):
            yield _result(part["functionResponse"], turn.line)
        elif isinstance(part.get("text"), str) and part["text"].strip():
            kind = _text_kind(turn, summary)
            if kind is not None:
                yield SpanBlock(turn.line, kind, part["text"])


def span_blocks(analysis: ChatAnalysis, first_kept: int) -> tuple[SpanBlock, ...]:
    """The blocks of the sent items before `first_kept` (the summarized span), in order."""
    head = head_length(analysis.turns)
    turns = [turn for group, _ in analysis.items[:first_kept] for turn in group]
    return tuple(block for index, turn in enumerate(turns) for block in _turn_blocks(turn, index < head))
