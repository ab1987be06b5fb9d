"""The deterministic appendix (seed 001): file operations, validation runs and active work.

The appendix is rebuilt from scratch on every pass from the records `work_state` collects: the
records of a prior appendix are read back here as the oldest records (cited to the prior summary's
line), current evidence supersedes them, and the old appendix text itself is stripped, so
appendices never stack.
"""

from __future__ import annotations

from pipeline.summarize.checkpoint import (
    APPENDIX_MARKER,
    HEADING,
    AppendixHeading,
    Bullet,
    cut,
    parse_bullets,
    recite_cut_marker,
    render_section,
    split_appendix,
)
from pipeline.summarize.references import Reference
from pipeline.summarize.shell import CommandOutcome, FileAction
from pipeline.summarize.work_state import (
    ActiveWorkKind,
    ActiveWorkRecord,
    CommandRecord,
    DeterministicState,
    FileOperation,
)

__all__ = ["parse_appendix", "render_appendix", "strip_appendix"]


def render_appendix(
    state: DeterministicState,
    *,
    max_file_operations: int,
    max_validation_records: int,
    max_active_work_records: int,
    max_command_chars: int,
    max_references: int,
) -> str:
    """The appendix text: marker and four sections, each keeping its newest records."""
    files = [
        Bullet(f"{op.action} {op.path} via {', '.join(op.tools)}", op.lines) for op in state.file_operations
    ]
    checks = [
        Bullet(f"{run.outcome}: {cut(run.command, max_command_chars, run.lines[0])}", run.lines)
        for run in state.validations
    ]
    work = [Bullet(f"{rec.kind} {rec.id} {rec.state}: {rec.label}", rec.lines) for rec in state.active_work]
    references = [Bullet(reference.text(), (reference.line,)) for reference in state.references]
    sections = (
        (AppendixHeading.FILE_OPERATIONS, files, max_file_operations),
        (AppendixHeading.VALIDATION, checks, max_validation_records),
        (AppendixHeading.ACTIVE_WORK, work, max_active_work_records),
        (AppendixHeading.IDENTIFIERS, references, max_references),
    )
    parts = [APPENDIX_MARKER]
    for heading, bullets, limit in sections:
        kept = bullets[-limit:] if len(bullets) > limit else bullets
        parts.append(render_section(heading, kept, len(bullets) - len(kept), "records"))
    return "\n\n".join(parts)


def strip_appendix(text: str) -> str:
    """`text` without its deterministic appendix (and the blank lines before it)."""
    return split_appendix(text)[0].rstrip("\n")


def parse_appendix(text: str, line: int) -> DeterministicState:
    """The records of an appendix this module wrote, all cited to `line` (the prior summary)."""
    appendix = split_appendix(text)[1]
    if appendix is None:
        return DeterministicState()
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for raw in appendix.split("\n"):
        if raw.startswith(HEADING):
            current = sections.setdefault(raw[len(HEADING) :], [])
        else:
            current.append(raw)

    def bullets(heading: AppendixHeading) -> tuple[str, ...]:
        return tuple(bullet.text for bullet in parse_bullets(sections.get(heading, [])))

    files = [_parse_file(text, line) for text in bullets(AppendixHeading.FILE_OPERATIONS)]
    runs = [_parse_run(text, line) for text in bullets(AppendixHeading.VALIDATION)]
    work = [_parse_work(text, line) for text in bullets(AppendixHeading.ACTIVE_WORK)]
    references = [_parse_reference(text, line) for text in bullets(AppendixHeading.IDENTIFIERS)]
    return DeterministicState(
        tuple(op for op in files if op is not None),
        tuple(run for run in runs if run is not None),
        tuple(rec for rec in work if rec is not None),
        references=tuple(ref for ref in references if ref is not None),
    )


def _parse_file(text: str, line: int) -> FileOperation | None:
    action, _, rest = text.partition(" ")
    path, via, tools = rest.rpartition(" via ")
    if action not in FileAction.__members__.values() or not via or not path:
        return None
    return FileOperation(path, FileAction(action), tuple(tools.split(", ")), (line,))


def _parse_run(text: str, line: int) -> CommandRecord | None:
    outcome, sep, command = text.partition(": ")
    if not sep or outcome not in CommandOutcome.__members__.values():
        return None
    return CommandRecord(recite_cut_marker(command), CommandOutcome(outcome), (line,), validation=True)


def _parse_work(text: str, line: int) -> ActiveWorkRecord | None:
    head, sep, label = text.partition(": ")
    parts = head.split(" ")
    if not sep or len(parts) != 3 or parts[0] not in ActiveWorkKind.__members__.values():
        return None
    return ActiveWorkRecord(ActiveWorkKind(parts[0]), parts[1], parts[2], label, (line,))


def _parse_reference(text: str, line: int) -> Reference | None:
    kind, sep, value = text.partition(" ")
    return Reference(kind, value, line) if sep and value and " " not in value else None
