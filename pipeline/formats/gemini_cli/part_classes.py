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
from pipeline.formats.gemini_cli.history import result_parts, thought_parts
from pipeline.formats.gemini_cli.parts import as_parts, content_text, is_ignored_user_text

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


def _summary_ids(analysis: ChatAnalysis) -> frozenset[str]:
    """The messages of the compression head Gemini CLI sends (its summary and acknowledgement)."""
    return frozenset(turn.message_id for turn in analysis.turns[: head_length(analysis.turns)])


def _message_parts(message: Mapping[str, Any], summary_ids: frozenset[str]) -> Iterator[ClassedPart]:
    """A message version's parts by class: its recorded thoughts, its content, each tool call
    (without its result) as `tool_use` and the result's parts as `tool_result`, as the history
    Gemini CLI sends splits them; a prompt it leaves out (its environment message) is `context`."""
    kind = message.get("type")
    content = message.get("content")
    parts = [p for p in as_parts(content) if isinstance(p, Mapping)] if content else []
    if kind not in ("user", "gemini") or (kind == "user" and is_ignored_user_text(content_text(content))):
        yield from ((("context", None), p) for p in parts)
        return
    if message.get("id") in summary_ids:
        yield from ((("summary", None), p) for p in parts)
        return
    role = "user" if kind == "user" else "model"
    own = any(p.get("functionCall") or p.get("thought") for p in parts)  # then Gemini CLI sends these
    thoughts = thought_parts(message) if role == "model" and not own else []
    yield from ((("reasoning", None), p) for p in thoughts)
    yield from ((part_class(p, role), p) for p in parts)
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, Mapping):
            name = str(call.get("name") or "unknown")
            yield ("tool_use", name), {"functionCall": {k: v for k, v in call.items() if k != "result"}}
            for result in result_parts([call]):
                if isinstance(result, Mapping):
                    yield ("tool_result", name), result


def _file_messages(analysis: ChatAnalysis) -> Iterator[list[ClassedPart]]:
    """The parts the file holds, by class, one list per message version (a checkpoint's per turn:
    it holds the API history itself)."""
    if analysis.checkpoint:
        head = head_length(analysis.turns)
        for index, turn in enumerate(analysis.turns):
            parts = [p for p in turn.content["parts"] if isinstance(p, Mapping)]
            yield [(("summary", None) if index < head else part_class(p, turn.role), p) for p in parts]
        return
    summary_ids = _summary_ids(analysis)
    for message in file_messages(analysis):
        yield list(_message_parts(message, summary_ids))


def file_tokens(analysis: ChatAnalysis) -> int:
    """Gemini CLI's estimate of every message version the file holds (each estimated whole, as it
    estimates one), its tool calls and their results included: what the file costs, where the sent
    history is what a resume costs."""
    return sum(estimate_parts([part for _, part in message]) for message in _file_messages(analysis))


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
    file_parts = (classed for message in _file_messages(analysis) for classed in message)
    return ClassTallies(_tally(file_parts, counters), _tally(_sent_parts(analysis), counters))
