"""The end of a model summary: the model's grounded checkpoint between our marker and our appendix.

The appendix (file operations, validations, active work, references) is computed from the
evidence by this code, never written by a model, in the same layout as the deterministic summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pipeline.summarize.checkpoint.appendix import parse_appendix, render_appendix
from pipeline.summarize.checkpoint.document import CHECKPOINT_MARKER, checkpoint_start, validate_checkpoint
from pipeline.summarize.checkpoint.fitting import TRAIL_RECORDS
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.references import collect_references
from pipeline.summarize.evidence.work_state import collect_state
from pipeline.summarize.model.outcomes import FailureFacts, SummaryFailed, SummaryOutcome

__all__ = ["AppendixOptions", "with_appendix"]


@dataclass(frozen=True, slots=True)
class AppendixOptions:
    """Bounds of the deterministic appendix (config [summary])."""

    max_file_operations: int
    max_validation_records: int
    max_active_work_records: int
    max_command_chars: int


def with_appendix(checkpoint: str, evidence: Sequence[EvidenceItem], options: AppendixOptions) -> str:
    """Marker, the model's checkpoint, our appendix: the same layout as the deterministic summary."""
    priors = [item for item in evidence if item.kind is EvidenceKind.PRIOR_SUMMARY]
    prior_states = [parse_appendix(_own_part(prior.text), prior.line) for prior in priors]
    references = collect_references(evidence, [ref for prior in prior_states for ref in prior.references])
    appendix = render_appendix(
        replace(collect_state(evidence, prior_states), references=references),
        max_file_operations=options.max_file_operations,
        max_validation_records=options.max_validation_records,
        max_active_work_records=options.max_active_work_records,
        max_command_chars=options.max_command_chars,
        max_references=TRAIL_RECORDS,
    )
    text = f"{CHECKPOINT_MARKER}\n\n{checkpoint}\n\n{appendix}\n"
    defects = validate_checkpoint(text)
    if defects:  # the gate passed this checkpoint, so this is a bug here: refuse, never publish it
        facts = FailureFacts(defects=tuple((defect.code.value, 1) for defect in defects))
        raise SummaryFailed(SummaryOutcome.GROUNDING_FAILED, facts)
    return text


def _own_part(text: str) -> str:
    start = checkpoint_start(text)
    return "" if start is None else text[start:]
