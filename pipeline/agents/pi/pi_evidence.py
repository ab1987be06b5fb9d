"""The summarized span of a pi session as the summarizers' evidence (the items Claude Code and
Codex sessions give them), so the embedded summarizer and the model path summarize pi unchanged:
the reader's typed pieces (`formats/pi/span_pieces.py`), tool results bounded as for the others."""

from __future__ import annotations

from typing import Final

import orjson

from pipeline.formats.bounded_text import bound_text
from pipeline.formats.pi.span_pieces import SpanKind, SpanPiece
from pipeline.summarize.evidence.items import TOOL_RESULT_EVIDENCE_BYTES, EvidenceItem, EvidenceKind

__all__ = ["pi_evidence"]

_KINDS: Final = {
    SpanKind.PROMPT: EvidenceKind.HUMAN_PROMPT,
    SpanKind.COMMAND: EvidenceKind.COMMAND,
    SpanKind.CONTEXT: EvidenceKind.OTHER,
    SpanKind.PRIOR_SUMMARY: EvidenceKind.PRIOR_SUMMARY,
    SpanKind.ASSISTANT_TEXT: EvidenceKind.ASSISTANT_TEXT,
    SpanKind.TOOL_CALL: EvidenceKind.TOOL_CALL,
    SpanKind.TOOL_RESULT: EvidenceKind.TOOL_RESULT,
}
_BOUNDED: Final = frozenset({SpanKind.COMMAND, SpanKind.CONTEXT, SpanKind.TOOL_RESULT})


def _item(piece: SpanPiece) -> EvidenceItem:
    text = bound_text(piece.text, TOOL_RESULT_EVIDENCE_BYTES) if piece.kind in _BOUNDED else piece.text
    return EvidenceItem(
        piece.line,
        _KINDS[piece.kind],
        text,
        piece.tool_name,
        piece.tool_id,
        orjson.loads(piece.tool_input),
        is_error=piece.is_error,
    )


def pi_evidence(pieces: tuple[SpanPiece, ...]) -> tuple[EvidenceItem, ...]:
    """Evidence of the summarized span's pieces, in order."""
    return tuple(_item(piece) for piece in pieces)
