"""Summaries of the summarized span: evidence, the deterministic checkpoint, the model path.

`evidence/` reads the span into typed items; `checkpoint/` is the embedded deterministic
summarizer (seed 001's nine cited sections and the appendix), pure; `model/` is a model-written
checkpoint, and calls HTTP providers or Claude Code. This module gathers the deterministic
names the jobs use: `extract_evidence` re-reads exactly the lines to summarize, `write_summary`
turns that evidence into the checkpoint. Importing it loads no provider.
"""

from __future__ import annotations

from pipeline.summarize.checkpoint.appendix import render_appendix, strip_appendix
from pipeline.summarize.checkpoint.deterministic import (
    MIN_CHAR_BUDGET,
    VERBATIM_BUDGET_FACTOR,
    FallbackReason,
    InvalidSummaryOptions,
    PriorMode,
    SummaryBudgetExceeded,
    SummaryOptions,
    SummaryResult,
    write_summary,
)
from pipeline.summarize.checkpoint.document import (
    APPENDIX_MARKER,
    CHECKPOINT_MARKER,
    AppendixHeading,
    CheckpointDefect,
    CheckpointInvalid,
    DefectCode,
    Heading,
    validate_checkpoint,
)
from pipeline.summarize.checkpoint.fitting import SummaryFit
from pipeline.summarize.evidence.items import (
    EvidenceItem,
    EvidenceKind,
    EvidenceLineOutOfRange,
)
from pipeline.summarize.evidence.shell import (
    CommandFacts,
    CommandOutcome,
    FileAction,
    ShellFileOp,
    analyze_command,
    is_validation_command,
    parse_shell,
    shell_file_operations,
)
from pipeline.summarize.evidence.work_state import (
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
    "is_validation_command",
    "parse_shell",
    "render_appendix",
    "shell_file_operations",
    "strip_appendix",
    "validate_checkpoint",
    "write_summary",
]
