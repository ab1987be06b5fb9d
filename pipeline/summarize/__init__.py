"""Summaries of the summarized span: evidence extraction and the embedded deterministic summarizer.

`extract_evidence` re-reads exactly the lines to summarize; `write_summary` turns that evidence
into seed 001's nine-section checkpoint, every bullet cited to its source lines, followed by the
deterministic appendix of file operations, validation runs and active work. No network, no
clock, no files: values in, values out.
"""

from __future__ import annotations

from pipeline.summarize.appendix import render_appendix, strip_appendix
from pipeline.summarize.checkpoint import (
    APPENDIX_MARKER,
    CHECKPOINT_MARKER,
    AppendixHeading,
    CheckpointDefect,
    CheckpointInvalid,
    DefectCode,
    Heading,
    validate_checkpoint,
)
from pipeline.summarize.deterministic import (
    MIN_CHAR_BUDGET,
    VERBATIM_BUDGET_FACTOR,
    FallbackReason,
    InvalidSummaryOptions,
    PriorMode,
    SummaryBudgetExceeded,
    SummaryFit,
    SummaryOptions,
    SummaryResult,
    write_summary,
)
from pipeline.summarize.evidence import EvidenceItem, EvidenceKind, EvidenceLineOutOfRange, extract_evidence
from pipeline.summarize.shell import (
    CommandFacts,
    CommandOutcome,
    FileAction,
    ShellFileOp,
    analyze_command,
    is_validation_command,
    parse_shell,
    shell_file_operations,
)
from pipeline.summarize.work_state import (
    ActiveWorkKind,
    ActiveWorkRecord,
    CommandRecord,
    DeterministicState,
    FileOperation,
    TodoItem,
    collect_state,
)

__all__ = [
    "APPENDIX_MARKER",
    "CHECKPOINT_MARKER",
    "MIN_CHAR_BUDGET",
    "VERBATIM_BUDGET_FACTOR",
    "ActiveWorkKind",
    "ActiveWorkRecord",
    "AppendixHeading",
    "CheckpointDefect",
    "CheckpointInvalid",
    "CommandFacts",
    "CommandOutcome",
    "CommandRecord",
    "DefectCode",
    "DeterministicState",
    "EvidenceItem",
    "EvidenceKind",
    "EvidenceLineOutOfRange",
    "FallbackReason",
    "FileAction",
    "FileOperation",
    "Heading",
    "InvalidSummaryOptions",
    "PriorMode",
    "ShellFileOp",
    "SummaryBudgetExceeded",
    "SummaryFit",
    "SummaryOptions",
    "SummaryResult",
    "TodoItem",
    "analyze_command",
    "collect_state",
    "extract_evidence",
    "is_validation_command",
    "parse_shell",
    "render_appendix",
    "shell_file_operations",
    "strip_appendix",
    "validate_checkpoint",
    "write_summary",
]
