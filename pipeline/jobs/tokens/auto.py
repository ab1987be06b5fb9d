"""Model families of a session and the `auto` estimator: each run of one model, its own tokenizer.

`ModelTally` reads the models of assistant lines as the job's one pass meets them (no text, only
model ids) and says the session's family. `line_families` is `auto`'s look ahead: the family in
force at every line (that of the last assistant message before it; the first one's for the lines
before it), read from assistant lines only. `AutoCounter` counts a piece with the tokenizer of
its line's family (`families.FAMILY_ESTIMATOR`), scaled by the family's fitted factor.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from pipeline.core.index import LineIndex
from pipeline.estimate import calibration, family_calibration
from pipeline.estimate.calibrated import measure
from pipeline.estimate.estimators import EstimatorName
from pipeline.estimate.families import FAMILY_ESTIMATOR, ModelFamily, family_of
from pipeline.formats.content_pieces import NAME_OTHER, ContentClass, LinePieces, Piece
from pipeline.formats.registry import content_pieces, unrecorded_context
from pipeline.jobs.front import Analysis
from pipeline.jobs.tokens.sent import SentLine, SentTurn, collect_sent_turns, sent_billed
from pipeline.jobs.tokens.usage import usage_segments
from pipeline.report.tokens import ModelsSection
from pipeline.vocabulary import RecordType, SourceFormat

__all__ = [
    "AutoCounter",
    "AutoRun",
    "ModelTally",
    "auto_run",
    "auto_sent_turns",
    "auto_tokenizers",
    "hidden_tokens",
    "line_families",
    "report_model",
    "sent_line",
    "unsent_tokens",
]

_MODEL_SHAPE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@\-]{0,79}")
# Model ids only (`deepseek-ai/DeepSeek-V3`, `claude-opus-4-7`): anything else is folded.
MAX_MODELS: Final = 16  # distinct model names a report lists; the rest are summed under `other`


class _Message(msgspec.Struct, gc=False):
    model: Any = None


class _ModelOnly(msgspec.Struct, gc=False):
    message: _Message | None = None


_MODEL_ONLY: Final = msgspec.json.Decoder(_ModelOnly)


def report_model(model: str | None) -> str:
    """A model id as a report may hold it: ids pass, anything else is `other`."""
    if model is None:
        return ModelFamily.UNKNOWN.value
    return model if _MODEL_SHAPE.fullmatch(model) else NAME_OTHER


def auto_tokenizers() -> tuple[EstimatorName, ...]:
    """The real tokenizers `auto` may load (its extra must be installed for all of them)."""
    return tuple(dict.fromkeys(name for name in FAMILY_ESTIMATOR.values() if name.is_real))


class ModelTally:
    """Assistant messages per model and family, and the family of each billed turn on the chain."""

    def __init__(self) -> None:
        self.models: Counter[str] = Counter()
        self.families: Counter[str] = Counter()
        self._seen: set[str] = set()

    def add(self, message_id: str | None, model: str | None) -> None:
        """One assistant line (fragments of one message count once)."""
        if message_id is not None:
            if message_id in self._seen:
                return
            self._seen.add(message_id)
        family = family_of(model)
        if family is None:  # Claude Code's synthetic messages
            return
        self.models[report_model(model)] += 1
        self.families[family.value] += 1

    def section(
        self, turn_families: Sequence[ModelFamily], chain_families: Sequence[ModelFamily]
    ) -> ModelsSection:
        """The report's section; `turn_families` are the billed turns', in chain order."""
        billed = Counter(family.value for family in turn_families)
        ranked = billed or self.families
        family = min(ranked, key=lambda name: (-ranked[name], name)) if ranked else None
        models = dict(sorted(self.models.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_MODELS])
        rest = sum(self.models.values()) - sum(models.values())
        if rest:
            models[NAME_OTHER] = models.get(NAME_OTHER, 0) + rest
        switches = sum(1 for a, b in itertools.pairwise(chain_families) if a != b)
        return ModelsSection(
            family=family, families=dict(sorted(self.families.items())), models=models, switches=switches
        )


def line_families(index: LineIndex, data: bytes) -> tuple[list[int], list[ModelFamily]]:
    """Assistant lines (ascending) and the family each one names (synthetic ones left out)."""
    lines: list[int] = []
    families: list[ModelFamily] = []
    for number, record in enumerate(index.records, 1):
        if record is None or record.type != RecordType.ASSISTANT:
            continue
        try:
            message = _MODEL_ONLY.decode(index.raw_line(data, number)).message
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        model = message.model if message is not None else None
        family = family_of(model if type(model) is str else None)
        if family is not None:
            lines.append(number)
            families.append(family)
    return lines, families


class AutoCounter:
    """`auto` tokens of a piece: its line's family tokenizer, scaled by the family's factor."""

    def __init__(
        self,
        assistant_lines: list[int],
        families: list[ModelFamily],
        count_with: Callable[[str], Callable[[str], int]],
    ) -> None:
        self._lines = assistant_lines
        self._families = families
        self._count_with = count_with
        self._counters: dict[ModelFamily, tuple[Callable[[Piece], int], float]] = {}

    def family_at(self, line: int) -> ModelFamily:
        """The family in force at a line: the last assistant message's before it, else the first's."""
        if not self._families:
            return ModelFamily.UNKNOWN
        position = bisect.bisect_right(self._lines, line) - 1
        return self._families[max(0, position)]

    def _counter(self, family: ModelFamily) -> tuple[Callable[[Piece], int], float]:
        known = self._counters.get(family)
        if known is not None:
            return known
        name = FAMILY_ESTIMATOR[family]
        scale = family_calibration.FAMILY_SCALE.get(family.value, 1.0)
        if name.is_real:
            count = self._count_with(name.value)

            def real(piece: Piece) -> int:
                return count(piece.text()) if piece.raw else 0

            counter: Callable[[Piece], int] = real
        else:
            scales = calibration.CLASS_SCALE

            def calibrated(piece: Piece) -> int:
                return measure(piece.raw, scale=scales.get(piece.kind, 1.0))[1] if piece.raw else 0

            counter = calibrated
        self._counters[family] = (counter, scale)
        return counter, scale

    def count(self, piece: Piece, family: ModelFamily, known: int | None = None) -> int:
        """`known`: the piece's count by the family's estimator, when the run counted it already."""
        counter, scale = self._counter(family)
        tokens = counter(piece) if known is None else known
        return round(tokens * scale) if scale != 1.0 else tokens

    def scales(self, families: Mapping[ModelFamily, object]) -> dict[str, float]:
        return {family.value: family_calibration.FAMILY_SCALE.get(family.value, 1.0) for family in families}


_TOOL_BLOCKS: Final = frozenset({ContentClass.TOOL_USE, ContentClass.TOOL_RESULT})
CountWith = Callable[[str], Callable[[str], int]]


@dataclass(slots=True)
class AutoRun:
    """`auto`'s state over one session: the counter, each line's sent content, turn families,
    and what the client sent before an assistant line's request that no line records."""

    counter: AutoCounter
    lines: dict[int, SentLine]
    turn_families: dict[int, ModelFamily]
    prompt_parts: dict[int, tuple[int, int, int]]
    unrecorded: Mapping[int, int]

    def add_line(self, line: LinePieces, tokens: int) -> None:
        """A user/assistant line's sent content, given its `auto` tokens as the file spells it."""
        family = self.counter.family_at(line.line)
        tokens += hidden_tokens(self.counter, line.pieces, family)
        tokens -= unsent_tokens(self.counter, line.pieces, family)
        self.lines[line.line] = sent_line(line.pieces, tokens, line.images, self.unrecorded.get(line.line, 0))


def auto_run(index: LineIndex, data: bytes, count_with: CountWith, source_format: SourceFormat) -> AutoRun:
    """A fresh run: the families in force read ahead from the assistant lines."""
    assistant_lines, families = line_families(index, data)
    counter = AutoCounter(assistant_lines, families, count_with)
    unrecorded = unrecorded_context(source_format)(data, index.record_lines(data))
    return AutoRun(counter, {}, dict(zip(assistant_lines, families, strict=True)), {}, unrecorded)


def hidden_tokens(counter: AutoCounter, pieces: Sequence[Piece], family: ModelFamily) -> int:
    """Tokens of thinking the provider keeps that the line spells only as a summary: each block's
    hidden bytes at the tokens per byte of its own text (what is sent, not what the file holds)."""
    extra = 0
    for piece in pieces:
        if piece.hidden and piece.kind is ContentClass.THINKING:
            shown = len(piece.text().encode())
            extra += round(counter.count(piece, family) * piece.hidden / shown) if shown else 0
    return extra


def unsent_tokens(counter: AutoCounter, pieces: Sequence[Piece], family: ModelFamily) -> int:
    """Tokens of what the file records of a piece and the client does not send (a tool input it
    strips), at the tokens per byte of the piece as recorded."""
    withheld = 0
    for piece in pieces:
        if piece.unsent and piece.raw:
            withheld += round(counter.count(piece, family) * piece.unsent / len(piece.raw))
    return withheld


def sent_line(pieces: Sequence[Piece], tokens: int, images: int, unrecorded: int = 0) -> SentLine:
    """What a user/assistant line adds to the sent context, given its `auto` tokens."""
    blocks = sum(1 for piece in pieces if piece.kind in _TOOL_BLOCKS)
    results_only = bool(pieces) and all(piece.kind is ContentClass.TOOL_RESULT for piece in pieces)
    return SentLine(tokens, blocks, results_only, empty=not pieces and not images, unrecorded=unrecorded)


def auto_sent_turns(analysis: Analysis, count_with: CountWith) -> tuple[SentTurn, ...]:
    """The billed turns over what was sent, in a pass of their own (the job's pass does the same)."""
    index, data = analysis.index, analysis.source.data
    run = auto_run(index, data, count_with, analysis.format)
    for line in content_pieces(analysis.format)(index.record_lines(data)):
        if line.api:
            family = run.counter.family_at(line.line)
            run.add_line(line, sum(run.counter.count(piece, family) for piece in line.pieces))
        if line.prompt_parts is not None:
            run.prompt_parts[line.line] = line.prompt_parts
    chain = analysis.topology.chain
    segments = usage_segments(index, analysis.graph, chain) if chain else ()
    billed, _ = sent_billed(run.prompt_parts, run.turn_families)
    return collect_sent_turns(index, segments, run.lines, billed, run.turn_families)
