"""What each part of a Gemini CLI history is, as a content class of the token benchmark.

The classes mirror Claude Code's and Codex's where the roles match: `human` (a prompt's text),
`assistant` (the model's text), `reasoning` (its thoughts), `tool_use` and `tool_result` by tool
name, `summary` (a compression's summary and acknowledgement), `context` (what Gemini CLI records
and never sends back: its environment message, info, warnings and errors).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from pipeline.formats.context_items import ClassTallies, Key, Tally
from pipeline.formats.gemini_cli.billed_tokens import file_messages
from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis, head_length
from pipeline.formats.gemini_cli.estimate import estimate_parts
from pipeline.formats.gemini_cli.parts import as_parts

__all__ = ["class_tallies", "file_tokens", "part_class", "visible_text"]

ClassedPart = tuple[Key, Mapping[str, Any]]


def part_class(part: Mapping[str, Any], role: str) -> Key:
    """(class, tool name or None) of one part of a `role` turn."""
    if part.get("thought"):
        return "reasoning", None
    for key, kind in (("functionCall", "tool_use"), ("functionResponse", "tool_result")):
        if isinstance(part.get(key), Mapping):
            return kind, str(part[key].get("name") or "unknown")
    return ("human" if role == "user" else "assistant"), None


def visible_text(part: Mapping[str, Any]) -> str:
    """The text of a part a tokenizer can count: its text, a call's arguments, a response's body."""
    if isinstance(part.get("text"), str):
        return str(part["text"])
    for key, field in (("functionCall", "args"), ("functionResponse", "response")):
        inner = part.get(key)
        if isinstance(inner, Mapping):
            return f"{inner.get('name', '')}\n{orjson.dumps(inner.get(field)).decode()}"
    return ""


def _sent_parts(analysis: ChatAnalysis) -> Iterator[ClassedPart]:
    head = head_length(analysis.turns)
    for index, turn in enumerate(analysis.turns):
        for part in turn.content["parts"]:
            if isinstance(part, Mapping):
                yield (("summary", None) if index < head else part_class(part, turn.role)), part


def _message_parts(message: Mapping[str, Any]) -> Iterator[ClassedPart]:
    kind = message.get("type")
    content = message.get("content")
    parts = [p for p in as_parts(content) if isinstance(p, Mapping)] if content else []
    if kind not in ("user", "gemini"):
        yield from ((("context", None), p) for p in parts)
        return
    role = "user" if kind == "user" else "model"
    yield from ((part_class(p, role), p) for p in parts)
    for call in message.get("toolCalls") or ():
        if isinstance(call, Mapping):
            yield ("tool_use", str(call.get("name") or "unknown")), {"functionCall": call}


def file_tokens(analysis: ChatAnalysis) -> int:
    """Gemini CLI's estimate of every message version the file holds, each with its tool calls
    (their results included): what the file costs, where the sent history is what a resume costs.
    A checkpoint holds the API history itself."""
    if analysis.checkpoint:
        return sum(estimate_parts(turn.content["parts"]) for turn in analysis.turns)
    return sum(estimate_parts([part for _, part in _message_parts(m)]) for m in file_messages(analysis))


def _tally(
    parts: Iterable[ClassedPart], counters: Mapping[str, Callable[[Mapping[str, Any]], int]]
) -> dict[Key, Tally]:
    table: dict[Key, Tally] = defaultdict(Tally)
    for (kind, name), part in parts:
        counts = {estimator: count(part) for estimator, count in counters.items()}
        for key in ((kind, None), (kind, name)) if name else ((kind, None),):
            table[key].items += 1
            for estimator, value in counts.items():
                table[key].tokens[estimator] += value
    return table


def _text_counter(count: Callable[[str], int]) -> Callable[[Mapping[str, Any]], int]:
    """A tokenizer's count of a part's visible text."""
    return lambda part: count(visible_text(part))


def class_tallies(
    analysis: ChatAnalysis, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]
) -> ClassTallies:
    """Parts and tokens by class over every message version in the file and over what is sent:
    Gemini CLI's own estimate (named `estimator`) and each tokenizer over a part's visible text."""
    counters: dict[str, Callable[[Mapping[str, Any]], int]] = {estimator: lambda part: estimate_parts([part])}
    counters.update({name: _text_counter(count) for name, count in tokenizers.items()})
    file_parts = (classed for message in file_messages(analysis) for classed in _message_parts(message))
    return ClassTallies(_tally(file_parts, counters), _tally(_sent_parts(analysis), counters))
