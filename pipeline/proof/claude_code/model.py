"""The model Claude Code runs a resumed session with, pinned so a resume means the same every day.

Claude Code (build 2.1.332) restores the model of the resumed chain's last assistant row unless
that model is not a Claude model, is retired on the day of the run, or is one of the families it
remaps to its latest Opus; then it runs its default. The model decides which thinking blocks are
sent, so an unpinned resume changes meaning as the calendar moves. `resumed_model` reproduces
the choice for a given day; passing it as `ANTHROPIC_MODEL` fixes it. Other builds may choose
differently, but a verification resumes both files with the same model, which is what matters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pipeline.formats.claude_code.content import Part, RecordContent, iter_line_contents, parse_object
from pipeline.proof.claude_code.sent_context import TEXT_PREFIX_CHARS, ContextBlock
from pipeline.read.load import iter_file_lines
from pipeline.vocabulary import RecordType, Role

__all__ = ["DEFAULT_MODEL", "LONG_CONTEXT_SUFFIX", "resumed_model", "today", "with_recorded_window"]

DEFAULT_MODEL: Final = "claude-opus-5-5"  # what 2.1.332 runs when it declines to restore a model
_SYNTHETIC_MODEL: Final = "<synthetic>"
# Families 2.1.332 remaps to its latest Opus (a legacy remap, even when set explicitly).
_REMAPPED: Final = frozenset({"claude-opus-4-1", "claude-opus-4-0"})
# First-party retirement days of build 2.1.332 (its `MA` table) by canonical family; None: no day.
_RETIRED_ON: Final[dict[str, str | None]] = {
    "claude-opus-4-1": None,
    "claude-opus-4-5": "2027-01-22",
    "claude-opus-4-0": "2026-06-15",
    "claude-sonnet-4-5": "2026-11-30",
    "claude-sonnet-4-0": "2026-06-15",
    "claude-3-opus": "2026-01-05",
    "claude-3-7-sonnet": "2026-02-19",
    "claude-3-5-sonnet": "2025-10-28",
    "claude-3-5-haiku": "2026-02-19",
}


LONG_CONTEXT_SUFFIX: Final = "[1m]"  # Claude Code's model suffix for the 1M-token context window
STANDARD_WINDOW_TOKENS: Final = 200_000
_CONTEXT_USAGE: Final = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def today() -> str:
    """The ISO date Claude Code judges retirement by (it runs with TZ=UTC here)."""
    return datetime.now(UTC).date().isoformat()


def _family(model: str) -> str | None:
    """The retirement-table family of a model id (`claude-sonnet-4-20250514` is `claude-sonnet-4-0`)."""
    name = re.sub(r"(claude-(?:[a-z]+-)?\d{1,2})\.(?=\d)", r"\1-", model.lower())
    for family in _RETIRED_ON:
        if family in name:
            return family
        # `claude-opus-4` and dated `claude-opus-4-2025...` ids are 4.0; `claude-opus-4-1` is not.
        bare = family.removesuffix("-0")
        if bare != family and re.search(re.escape(bare) + r"(?!-\d(?!\d))", name):
            return family
    return None


def _assistant_models(transcript: Path) -> Iterator[tuple[RecordContent, str]]:
    """(row, model) of every assistant row Claude Code could restore a model from, in file order.

    Streamed from the file: the rows of a giant session are never held together.
    """
    for row in iter_line_contents(iter_file_lines(transcript)):
        if (
            row.type == RecordType.ASSISTANT
            and not row.is_meta
            and row.has_message
            and row.model is not None
            and row.model != _SYNTHETIC_MODEL
        ):
            yield row, row.model


def _key(kind: str, tool_id: str | None, text: str) -> tuple[str, str | None] | None:
    """What a stored part and a context block are matched by: a tool_use id, a text's golden prefix."""
    if kind == "tool_use":
        return kind, tool_id
    if kind in ("text", "thinking"):
        return kind, text[:TEXT_PREFIX_CHARS]
    return None


def _restored_from(transcript: Path, context: Sequence[ContextBlock]) -> str | None:
    """The model of the resumed chain's last assistant row.

    With a context, that row is the last one holding the context's last stored assistant block
    (the same tool_use id, or the same text's golden prefix); without one (or no match), the
    file's last assistant row, which is the same row in every corpus file except a synthetic
    fixture whose last assistant rows are on a side branch. One pass over the file notes, for
    every assistant block of the context, the model of the last row holding it.
    """
    wanted: dict[tuple[str, str | None], list[int]] = {}
    assistant = [block for block in reversed(context) if block.role == Role.ASSISTANT]
    for number, block in enumerate(assistant):
        key = _key(block.kind, block.id, block.text)
        if key is not None:
            wanted.setdefault(key, []).append(number)
    holder: list[str | None] = [None] * len(assistant)
    last = None
    for row, model in _assistant_models(transcript):
        last = model
        parts = (Part("text", row.string_content),) if row.string_content is not None else row.parts
        for part in parts:
            key = _key(part.type_name, part.tool_id, part.text)
            for number in wanted.get(key, ()) if key is not None else ():
                holder[number] = model
    return next((model for model in holder if model is not None), last)


def resumed_model(transcript: Path, context: Sequence[ContextBlock] = (), on: str | None = None) -> str:
    """The model Claude Code 2.1.332 runs when it resumes `transcript` on day `on` (ISO; default today).

    `context`, a context Claude Code sent for this file, locates the chain's last assistant row.
    """
    restored = _restored_from(transcript, context)
    if restored is None or "claude" not in restored.lower():
        return DEFAULT_MODEL
    family = _family(restored)
    retired_on = _RETIRED_ON.get(family) if family else None
    if family in _REMAPPED or (retired_on is not None and retired_on <= (on or today())):
        return DEFAULT_MODEL
    return restored


def _largest_recorded_context(transcript: Path) -> int:
    """The most context tokens any assistant call of the file was billed for (its `usage`)."""
    largest = 0
    for line in iter_file_lines(transcript):
        if b'"usage"' not in line:
            continue
        record = parse_object(line)
        message = record.get("message") if record is not None else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(usage, dict):
            counts = (usage.get(key) for key in _CONTEXT_USAGE)
            largest = max(largest, sum(n for n in counts if isinstance(n, int)))
    return largest


def with_recorded_window(model: str, transcript: Path) -> str:
    """`model` with the 1M window when the session was billed for more than the standard window.

    The model id a transcript records never says `[1m]`, but a call over 200k tokens proves the
    session ran with it; resumed on a 200k model, Claude Code would compact it first.
    """
    if model.endswith(LONG_CONTEXT_SUFFIX) or _largest_recorded_context(transcript) <= STANDARD_WINDOW_TOKENS:
        return model
    return model + LONG_CONTEXT_SUFFIX
