"""The one or two lines under a run's status table that say what it achieved, from its totals.

`12 of 79 sessions compacted: resume contexts 2.1M -> 0.41M seed tokens (0.19, target 0.30);
files 43.0 MB -> 2.3 MB`. Counts and sizes only, never transcript text. `--quiet` ends its failure
count on stderr with the first (`console.say_failures`).
"""

from __future__ import annotations

from msgspec import UnsetType

from pipeline.report.run_totals import GroupTotals, HeldTokens, ResumeTokens, RunTotals

__all__ = ["counts", "size", "totals_lines"]


_UNITS = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def _three(value: float) -> str:
    """Three significant digits, never an exponent (2.85, 28.5, 285, 1000)."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _short(value: float) -> str:
    """Two significant digits, never an exponent (0.41, 4.1, 41, 410)."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


def counts(before: float, after: float) -> str:
    """Two token counts in the unit of the first, as a person compares them: 2.1M -> 0.41M."""
    limit, suffix = next(((lim, suf) for lim, suf in _UNITS if before >= lim), _UNITS[-1])
    if not suffix:
        return f"{before:.0f} -> {after:.0f}"
    return f"{_three(before / limit)}{suffix} -> {_short(after / limit)}{suffix}"


def size(value: float) -> str:
    """Bytes in decimal units, as `du --si` and file managers show them."""
    for limit, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if value >= limit:
            return f"{value / limit:.1f} {suffix}"
    return f"{value:.0f} B"


def count(value: float) -> str:
    """One token count as a person reads it: 2.85M, 410k, 950."""
    limit, suffix = next(((lim, suf) for lim, suf in _UNITS if value >= lim), _UNITS[-1])
    return f"{_three(value / limit)}{suffix}" if suffix else f"{value:.0f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _contexts(resume: dict[str, ResumeTokens], *, shares: bool) -> list[str]:
    return [
        f"{counts(t.before, t.after)} {name} tokens"
        + (f" ({_share(t.ratio)}, target {_share(t.target_ratio)})" if shares else "")
        for name, t in resume.items()
    ]


def _written(group: GroupTotals) -> int:
    return 0 if isinstance(group.written, UnsetType) else group.written


def _files(group: GroupTotals) -> str:
    files = group.files
    if isinstance(files, UnsetType) or not _written(group):
        return ""
    return f"{size(files.before)} -> {size(files.after)}"


def _written_line(group: GroupTotals, verb: str) -> str:
    details: list[str] = []
    resume = group.resume_tokens
    if not isinstance(resume, UnsetType) and resume:
        details.append("resume contexts " + ", ".join(_contexts(resume, shares=True)))
    if _files(group):
        details.append(f"files {_files(group)}")
    backups = group.backups
    if not isinstance(backups, UnsetType) and backups.backups:
        how = ", ".join(backups.by_compression)
        stored = f"backups {size(backups.original_bytes)} stored in {size(backups.stored_bytes)} ({how})"
        details.append(stored)
    head = f"{_written(group)} of {group.sessions} sessions {verb}"
    return head + (": " + "; ".join(details) if details else "")


def _held(group: GroupTotals) -> dict[str, HeldTokens]:
    return group.tokens if not isinstance(group.tokens, UnsetType) else {}


def _sweep_line(group: GroupTotals) -> str:
    held = _held(group)
    line = f"{group.sessions} sessions" + (
        "" if isinstance(group.bytes, UnsetType) else f", {size(group.bytes)}"
    )
    if held:
        chains = ", ".join(f"{count(t.active_chain)} {name}" for name, t in held.items())
        need = sum(t.need_compaction for t in held.values())
        line += f": active chains hold {chains} tokens; {need} would need compaction at the current target"
    return line


def _agent(name: str, group: GroupTotals) -> str:
    """One agent format's part of the second line."""
    if not isinstance(group.tokens, UnsetType):
        need = sum(t.need_compaction for t in _held(group).values())
        return f"{name} {group.sessions} ({need} would need compaction)"
    resume = group.resume_tokens
    parts = _contexts(resume, shares=False) if not isinstance(resume, UnsetType) else []
    parts += [_files(group)] if _files(group) else []
    return f"{name} {_written(group)} of {group.sessions}" + (f" ({', '.join(parts)})" if parts else "")


def totals_lines(totals: RunTotals, verb: str) -> tuple[str, ...]:
    """The run's line, then (when it met several agent formats) one line with each format's;
    none when no session was taken (an unchanged fleet's night)."""
    group = totals.all
    if not group.sessions:
        return ()
    lines = [_sweep_line(group) if not isinstance(group.tokens, UnsetType) else _written_line(group, verb)]
    if len(totals.by_format) > 1:
        lines.append("by agent: " + "; ".join(_agent(name, g) for name, g in totals.by_format.items()))
    return tuple(lines)
