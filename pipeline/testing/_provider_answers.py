"""What the local provider server answers: scripted behaviors and a model that cites its pack.

The default answer reads the evidence pack in the prompt (the `L<line>` records, the partial
checkpoints, the human anchor list) and writes the nine headings with bullets citing those
anchors and every listed human anchor, which passes the grounding gate. The other behaviors break
one rule each. Tokens are characters / 4: a stand-in tokenizer, deliberately simple.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from pipeline.summarize.checkpoint.document import Heading
from pipeline.summarize.model.grounding import UNKNOWN_LINE
from pipeline.summarize.model.pack import HUMAN_ANCHORS_LABEL

__all__ = [
    "Answer",
    "Behavior",
    "ServedRequest",
    "WireUsage",
    "answer_text",
    "cache_prefixes",
    "grounded_answer",
    "prompt_text",
    "tokens_of",
]

CHARS_PER_TOKEN: Final = 4  # the server's own tokenizer
ANCHORS_PER_BULLET: Final = 16  # human anchors cited per bullet, so long lists stay readable
_ANCHOR_LINE: Final = re.compile(r"^L(\d+) ", re.M)
_PARTIAL_LINE: Final = re.compile(r"^P\d+ \(L\d+-L\d+\): (\".*\")$", re.M)
_CITED: Final = re.compile(r"\bL(\d+)\b")


class Behavior(StrEnum):
    """What the server does with one model request."""

    GROUNDED = "grounded"
    TRUNCATED = "truncated"
    REFUSAL = "refusal"
    CONTENT_FILTER = "content-filter"
    EMPTY = "empty"
    BROKEN_STRUCTURE = "broken-structure"
    UNSUPPORTED_CLAIMS = "unsupported-claims"
    CONTEXT_EXCEEDED = "context-exceeded"
    STATUS = "status"  # an error status (429, 500, 529...) with the API's error envelope
    STREAM_CUT = "stream-cut"  # streamed: the connection ends halfway, no stop event, no [DONE]
    STREAM_ERROR = "stream-error"  # streamed: an error event midway (Anthropic's overloaded_error)


@dataclass(frozen=True, slots=True)
class Answer:
    """One scripted answer: a behavior, a delay before it, and for a status its code and retry-after."""

    behavior: Behavior = Behavior.GROUNDED
    delay: float = 0.0
    status: int = 200
    retry_after: float | None = None
    usage: bool = True

    @classmethod
    def rate_limited(cls, retry_after: float) -> Answer:
        """HTTP 429 with `retry-after` seconds."""
        return cls(Behavior.STATUS, status=429, retry_after=retry_after)

    @classmethod
    def error(cls, status: int) -> Answer:
        """An error status without `retry-after` (500, 529, ...)."""
        return cls(Behavior.STATUS, status=status)

    @classmethod
    def held(cls, seconds: float) -> Answer:
        """A grounded answer sent only after `seconds` (longer than the client waits: a timeout)."""
        return cls(delay=seconds)

    @classmethod
    def of(cls, behavior: Behavior, *, usage: bool = True) -> Answer:
        """A plain answer of one behavior."""
        return cls(behavior, usage=usage)


@dataclass(frozen=True, slots=True)
class ServedRequest:
    """One model request as received and answered (arrival on the monotonic clock)."""

    arrived: float
    protocol: str
    stream: bool
    raw: bytes
    status: int
    behavior: Behavior
    input_tokens: int  # every input token, cached ones included
    output_tokens: int
    cache_read_tokens: int = 0  # of the input: read from the server's prompt cache
    cache_write_tokens: int = 0  # of the input: written to it (Anthropic's marked prefixes only)
    reported: bool = False  # the answer told the caller its usage: what the server billed

    @property
    def billed_tokens(self) -> int:
        """Tokens counted against the caller: input and output of an answered request, else 0."""
        return self.input_tokens + self.output_tokens if self.status == 200 else 0


@dataclass(frozen=True, slots=True)
class WireUsage:
    """The usage one answer reports: input (cached included), output, cache reads and writes."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


def cache_prefixes(protocol: str, body: dict[str, Any]) -> tuple[str, ...]:
    """The prompt prefixes a request offers the cache, shortest first, in `prompt_text`'s joining.

    Anthropic caches up to each block marked `cache_control`; OpenAI caches on its own, so every
    message's end is a prefix (without OpenAI's 1024-token floor: small test prompts cache too).
    The server counts a read when a prefix was offered before.
    """
    blocks = list(_blocks(body.get("system")))
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            texts = list(_blocks(message.get("content")))
            if protocol != "anthropic" and texts:  # automatic: a prefix at every message's end
                texts[-1] = (texts[-1][0], True)
            blocks.extend(texts)
    joined = [text for text, _ in blocks]
    return tuple("\n".join(joined[: i + 1]) for i, (_, marked) in enumerate(blocks) if marked)


def _blocks(content: Any) -> Iterable[tuple[str, bool]]:
    if isinstance(content, str):
        yield content, False
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"], isinstance(block.get("cache_control"), dict)


def prompt_text(body: dict[str, Any]) -> str:
    """All text a request carries (system and messages), as the server bills it."""
    parts: list[str] = []
    system = body.get("system")
    parts.extend(_texts(system))
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            parts.extend(_texts(message.get("content")))
    return "\n".join(parts)


def _texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]


def grounded_answer(prompt: str) -> str:
    """A checkpoint that cites the pack: every listed human anchor, and a few others."""
    humans = _human_anchors(prompt)
    shown = [int(match) for match in _ANCHOR_LINE.findall(prompt)]
    for match in _PARTIAL_LINE.finditer(prompt):
        shown.extend(int(line) for line in _CITED.findall(json.loads(match.group(1))))
    others = sorted(set(shown) - set(humans))[:3]
    goal = _bullet("Continue the work the session records", (humans or others)[:1])
    wants = [
        _bullet("The user asked for this", humans[i : i + ANCHORS_PER_BULLET])
        for i in range(0, len(humans), ANCHORS_PER_BULLET)
    ]
    done = [_bullet("Work recorded in the evidence", others)] if others else ["- None"]
    sections = {Heading.GOAL: [goal], Heading.CONSTRAINTS: wants or ["- None"], Heading.COMPLETED: done}
    sections[Heading.NEXT_STEPS] = [f"- {UNKNOWN_LINE}"]
    return "\n".join(f"## {h.value}\n" + "\n".join(sections.get(h, ["- None"])) for h in Heading)


def _human_anchors(prompt: str) -> list[int]:
    for line in prompt.split("\n"):
        if line.startswith(HUMAN_ANCHORS_LABEL):
            return [int(found) for found in _CITED.findall(line[len(HUMAN_ANCHORS_LABEL) :])]
    return []


def _bullet(text: str, anchors: Iterable[int]) -> str:
    cited = ", ".join(f"L{line}" for line in anchors)
    return f"- {text} ({cited})" if cited else f"- {UNKNOWN_LINE}"


def answer_text(behavior: Behavior, prompt: str) -> str:
    """The text of an answer of `behavior` to a request carrying `prompt`."""
    if behavior is Behavior.EMPTY or behavior is Behavior.REFUSAL:
        return ""
    if behavior is Behavior.BROKEN_STRUCTURE:
        return "Summary of the session:\n* it went well"
    if behavior is Behavior.UNSUPPORTED_CLAIMS:
        body = grounded_answer(prompt).replace("## Decisions\n- None", "## Decisions\n- Rewrite it in Rust")
        return body.replace("## Errors and blockers\n- None", "## Errors and blockers\n- Disk full (L999999)")
    text = grounded_answer(prompt)
    return text[: len(text) // 2] if behavior is Behavior.TRUNCATED else text


def tokens_of(text: str) -> int:
    """The server's token count of a text."""
    return -(-len(text) // CHARS_PER_TOKEN)
