"""Settings and job options for tests, from `config/default.toml` (the only place defaults live).

`default_settings(min_tokens=0, jobs=1)` loads the defaults file, ignores the environment, and
applies overrides named by knob (each knob name belongs to one section). The option builders
below give each job's options from those settings.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pipeline.core.plan import CutOptions
from pipeline.core.session_repair import SessionRepairOptions
from pipeline.estimate.estimators import parse_estimators
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress import CompressOptions
from pipeline.jobs.tokens.options import TokensOptions
from pipeline.jobs.validate import ValidateOptions
from pipeline.settings import SECTIONS, Settings, load_settings
from pipeline.summarize import SummaryOptions
from pipeline.vocabulary import CompressRepair, SourceFormat, SummarizedHistory

__all__ = [
    "LIMITS",
    "compress_options",
    "cut_options",
    "default_settings",
    "summary_options",
    "tokens_options",
    "validate_options",
]


def _section_of(knob: str) -> str:
    owners = [
        name
        for name, kind in SECTIONS.items()
        if is_dataclass(kind) and knob in {f.name for f in fields(kind)}
    ]
    if len(owners) != 1:
        raise KeyError(f"{knob!r} names {len(owners)} knobs of config/default.toml")
    return owners[0]


@cache
def _plain_defaults() -> Settings:
    """The defaults file as it is, read once: settings are frozen, and the fuzz harness alone asks for
    them twice per case (parsing the TOML again took 12 s of its 47)."""
    return load_settings(environ={}, flags={})


def default_settings(**knobs: Any) -> Settings:
    """The defaults file with `knobs` overridden (the environment is not read)."""
    if not knobs:
        return _plain_defaults()
    flags: dict[str, dict[str, Any]] = {}
    for knob, value in knobs.items():
        flags.setdefault(_section_of(knob), {})[knob] = value.value if hasattr(value, "value") else value
    return load_settings(environ={}, flags=flags)


LIMITS = LineLimits.of(default_settings().sweep)
"""The line limits `config/default.toml` sets."""


def validate_options(*, resume_leaf: str | None = None, **knobs: Any) -> ValidateOptions:
    return ValidateOptions(default_settings(**knobs).sweep, resume_leaf)


def compress_options(
    out: Path,
    *,
    root_label: str = "root",
    anchors: tuple[str, ...] = (),
    gate: str | None = None,
    codex_gate: str | None = None,
    resume_leaf: str | None = None,
    **knobs: Any,
) -> CompressOptions:
    """Options of a compression writing under `out` (the resume gate runs the Claude Code `gate`
    names, and for rollouts the Codex CLI `codex_gate` names)."""
    settings = default_settings(**knobs)
    repair = settings.compress.repair is CompressRepair.ON
    drop_history = settings.compress.history is SummarizedHistory.DROP  # auto: the command line's
    return CompressOptions(
        sweep=settings.sweep,
        compress=settings.compress,
        summary=settings.summary,
        verify=settings.verify,
        resume_leaf=resume_leaf,
        out_dir=str(out),
        root_label=root_label,
        anchors=anchors,
        drop_history=drop_history,
        judges={
            source_format: path
            for source_format, path in ((SourceFormat.CLAUDE_CODE, gate), (SourceFormat.CODEX, codex_gate))
            if path
        },
        # `repair="on"` repairs a damaged chain first; auto is the command line's (on in place only)
        damage_repair=SessionRepairOptions.of(settings) if repair else None,
    )


def summary_options(**knobs: Any) -> SummaryOptions:
    """The embedded summarizer's options; `char_budget`/`preserve_prior_verbatim` map to their knobs."""
    renamed = {
        "char_budget": "summary_char_budget",
        "preserve_prior_verbatim": "preserve_prior_summaries_verbatim",
    }
    return compress_options(Path("."), **{renamed.get(k, k): v for k, v in knobs.items()}).summary_options()


def cut_options(**knobs: Any) -> CutOptions:
    return compress_options(Path("."), **knobs).cut()


def tokens_options(**knobs: Any) -> TokensOptions:
    """The token benchmark's options (`estimators="seed,o200k"` names them as the knob does)."""
    settings = default_settings(**knobs)
    names = tuple(parse_estimators(settings.tokens.estimators.split(",")))
    return TokensOptions(settings.sweep, names, settings.tokens.max_names_per_class)
