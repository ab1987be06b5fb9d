"""What a Gemini CLI session records of the tokens its model calls were billed for.

Each Gemini reply records its call's `tokens` (`input`, `output`, `cached`, `thoughts`, `tool`,
`total`: the Gemini API's prompt, candidates, cached-content, thoughts and tool-use-prompt counts).
Every call was billed, whether its reply is still loaded or was rewound, superseded or left out of
a snapshot (Gemini CLI's resume snapshots drop it), so each reply id counts once, at its last
recorded version, wherever in the file it is. The report counts as Codex does, where the parts
are within the whole: billed input is the prompt and the tool-use prompt (cached tokens within
it), billed output the candidates and the thoughts (the API bills thoughts as output and counts
them apart: `total` is the four added), reasoning the thoughts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis
from pipeline.formats.gemini_cli.chat_lines import RecordKind

__all__ = ["BilledUsage", "billed_usage", "file_messages"]


@dataclass(frozen=True, slots=True)
class BilledUsage:
    """Sums over the replies recorded (input with the tool-use prompt, output with the thoughts),
    and the last reply's prompt (the context it was billed for)."""

    replies: int
    input: int
    cached_input: int
    output: int
    thoughts: int
    last_input: int | None


def file_messages(analysis: ChatAnalysis) -> Iterator[Mapping[str, Any]]:
    """Every message version the file holds, in file order: records, and each snapshot's messages
    (a legacy document's messages)."""
    if analysis.legacy and analysis.conversation is not None:
        yield from (m.value for m in analysis.conversation.messages)
        return
    for record in analysis.chat.lines():
        if record.kind is RecordKind.MESSAGE:
            yield record.value
        elif record.kind is RecordKind.SET and isinstance(record.value["$set"].get("messages"), list):
            yield from (m for m in record.value["$set"]["messages"] if isinstance(m, Mapping))


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def billed_usage(analysis: ChatAnalysis) -> BilledUsage:
    """Each reply's last recorded `tokens`, summed."""
    by_reply: dict[str, Mapping[str, Any]] = {}
    for message in file_messages(analysis):
        usage = message.get("tokens")
        if message.get("type") == "gemini" and isinstance(usage, Mapping):
            ident = str(message.get("id"))
            by_reply.pop(ident, None)  # re-inserted: the order is that of the last version
            by_reply[ident] = usage
    usages = list(by_reply.values())
    thoughts = sum(_count(u, "thoughts") for u in usages)
    return BilledUsage(
        replies=len(usages),
        input=sum(_count(u, "input") + _count(u, "tool") for u in usages),
        cached_input=sum(_count(u, "cached") for u in usages),
        output=sum(_count(u, "output") for u in usages) + thoughts,
        thoughts=thoughts,
        last_input=_count(usages[-1], "input") if usages else None,
    )
