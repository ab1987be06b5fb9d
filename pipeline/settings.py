"""Settings: `config/default.toml`, then a user file, then `COMPACTION_*` variables, then flags.

The defaults file is the single list of knobs and the only place their defaults are written: the
section types below declare each knob's type and range, never a default. Layers are merged as
plain TOML values, each override checked against the default's type; the result is converted
once into one frozen `Settings` with a typed section per command and range-checked, at the CLI
edge, then passed down explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, get_type_hints

import msgspec

from pipeline.errors import ConfigError
from pipeline.settings_live import (
    InPlaceSettings,
    ReadPagesSettings,
    StateSettings,
    is_duration,
    parse_duration,
)
from pipeline.vocabulary import (
    CheckpointPolicy,
    LeafPolicy,
    LogFormat,
    ResumeGate,
    Strategy,
    SummarizerName,
    SummaryFallback,
)

__all__ = [
    "DEFAULTS_PATH",
    "FREE_TABLES",
    "MIN_SUMMARY_CHARS",
    "MIN_TOOL_OUTPUT_LIMIT",
    "READER_DEPTH_CEILING",
    "AnthropicSettings",
    "ClaudeCodeSettings",
    "ClusterSettings",
    "CompressSettings",
    "InPlaceSettings",
    "LimitsSettings",
    "ModelSummarySettings",
    "OpenAISettings",
    "ReadPagesSettings",
    "Settings",
    "StateSettings",
    "SummarySettings",
    "SweepSettings",
    "TokensSettings",
    "VerifySettings",
    "load_settings",
    "parse_duration",
]

DEFAULTS_PATH: Final = Path(__file__).resolve().parent.parent / "config" / "default.toml"
MIN_SUMMARY_CHARS: Final = 4000  # seed 004: smaller budgets cannot carry a meaningful compact summary
MIN_TOOL_OUTPUT_LIMIT: Final = 1024  # room for a head, a tail and the marker line between them
READER_DEPTH_CEILING: Final = 800
"""The deepest `sweep.max_json_depth` allowed: Python's JSON readers recurse per level and stop near 1000."""
_ENV_PREFIX: Final = "COMPACTION_"
# Variables of ours that share the prefix but are not settings: the config file, and where Claude
# Code is (pipeline.proof.client.CLAUDE_CODE_ENV).
_NOT_SETTINGS: Final = frozenset({f"{_ENV_PREFIX}CONFIG", f"{_ENV_PREFIX}CLAUDE_CODE"})


def _at_least(minimum: float) -> Callable[[float], bool]:
    return lambda value: value >= minimum


def _in_unit_interval(*, open_low: bool, open_high: bool) -> Callable[[float], bool]:
    return lambda value: (value > 0 if open_low else value >= 0) and (value < 1 if open_high else value <= 1)


_RANGES: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "jobs": (_at_least(0), "0 (one per core) or more"),
    "max_post_last_prompt_extension": (_at_least(0), "0 or more"),
    "max_file_history_snapshots": (_at_least(0), "0 or more"),
    "findings_per_code": (_at_least(1), "1 or more"),
    "max_line_bytes": (_at_least(1), "1 or more"),
    "max_json_depth": (
        lambda value: 1 <= value <= READER_DEPTH_CEILING,
        f"between 1 and {READER_DEPTH_CEILING} (the JSON readers' own limit)",
    ),
    "min_tokens": (_at_least(0), "0 or more"),
    "target_ratio": (_in_unit_interval(open_low=True, open_high=False), "in (0, 1]"),
    "target_estimated_tokens": (_at_least(0), "0 (no gate) or more"),
    "min_recent_records": (_at_least(0), "0 or more"),
    "context_window": (_at_least(1000), "at least 1000"),
    "max_window_share": (_in_unit_interval(open_low=True, open_high=False), "in (0, 1]"),
    "tool_output_limit": (
        lambda value: value == 0 or value >= MIN_TOOL_OUTPUT_LIMIT,
        f"0 (keep every byte) or at least {MIN_TOOL_OUTPUT_LIMIT}",
    ),
    "max_replans": (_at_least(0), "0 or more"),
    "task_retries": (_at_least(0), "0 or more"),
    "safety_margin": (_in_unit_interval(open_low=False, open_high=True), "in [0, 1)"),
    "context_window_tokens": (_at_least(1000), "at least 1000"),
    "max_output_tokens": (_at_least(1), "1 or more"),
    "min_gain": (_in_unit_interval(open_low=False, open_high=True), "in [0, 1)"),
    "min_fidelity": (_in_unit_interval(open_low=False, open_high=False), "in [0, 1]"),
    "lost_probes_per_class": (_at_least(0), "0 or more"),
    "summary_char_budget": (_at_least(MIN_SUMMARY_CHARS), f"at least {MIN_SUMMARY_CHARS}"),
    "max_names_per_class": (_at_least(1), "1 or more"),
    "resume_timeout_seconds": (_at_least(1), "at least 1"),
    "min_excluded_text_chars": (_at_least(1), "1 or more"),
    "idle_for": (is_duration, "a duration such as 12h, 30m, 2d or 90 (units s, m, h, d, w)"),
    "gzip_level": (lambda value: 1 <= value <= 9, "between 1 and 9"),
    "zstd_level": (lambda value: 1 <= value <= 22, "between 1 and 22"),
    "busy_timeout_seconds": (lambda value: value > 0, "more than 0"),
}
# Sections whose bounds are at least 1 unless listed above.
_POSITIVE_SECTIONS: Final = frozenset({"summary", "model_summary", "limits", "cluster"})
FREE_TABLES: Final = frozenset({"prices"})  # tables whose keys are the user's (model names)


@dataclass(frozen=True, slots=True)
class SweepSettings:
    """`[sweep]`: reading every session and choosing its active chain (all commands)."""

    jobs: int
    leaf_policy: LeafPolicy
    max_post_last_prompt_extension: int
    checkpoint_policy: CheckpointPolicy
    max_file_history_snapshots: int
    report_dir: str
    log_format: LogFormat
    resume: bool
    findings_per_code: int
    max_line_bytes: int
    max_json_depth: int


@dataclass(frozen=True, slots=True)
class CompressSettings:
    """`[compress]`: planning, gating and checking a compaction."""

    min_tokens: int
    target_ratio: float
    context_window: int
    max_window_share: float
    target_estimated_tokens: int
    min_recent_records: int
    tool_output_limit: int
    min_gain: float
    max_replans: int
    summary_char_budget: int
    preserve_prior_summaries_verbatim: bool
    summarizer: SummarizerName
    on_summary_failure: SummaryFallback
    verify_resume: ResumeGate
    strategy: Strategy
    min_fidelity: float
    lost_probes_per_class: int


@dataclass(frozen=True, slots=True)
class SummarySettings:
    """`[summary]`: the bounds of the embedded summarizer's checkpoint."""

    max_bullets_per_section: int
    max_quote_chars: int
    max_prompt_chars: int
    max_file_operations: int
    max_validation_records: int
    max_active_work_records: int


@dataclass(frozen=True, slots=True)
class TokensSettings:
    """`[tokens]`: the token benchmark."""

    estimators: str
    max_names_per_class: int


@dataclass(frozen=True, slots=True)
class VerifySettings:
    """`[verify]`: the resume proof with the real Claude Code."""

    claude: str
    resume_timeout_seconds: float
    min_excluded_text_chars: int


@dataclass(frozen=True, slots=True)
class ModelSummarySettings:
    """`[model_summary]`: budgets, packs and retries shared by every model provider."""

    provider_reserve_tokens: int
    safety_margin: float
    planned_output_tokens: int
    pack_char_budget: int
    pack_token_budget: int
    max_optional_evidence_chars: int
    call_timeout_seconds: float
    max_attempts: int
    backoff_initial_seconds: float
    backoff_max_seconds: float


@dataclass(frozen=True, slots=True)
class LimitsSettings:
    """`[limits]`: the run's one rate limiter, shared by every session and call."""

    requests_per_minute: int
    tokens_per_minute: int
    max_in_flight: int
    window_seconds: float


@dataclass(frozen=True, slots=True)
class AnthropicSettings:
    """`[anthropic]`: the Messages API."""

    base_url: str
    api_key_env: str
    api_version: str
    model: str
    stream: bool
    context_window_tokens: int
    max_output_tokens: int


@dataclass(frozen=True, slots=True)
class OpenAISettings:
    """`[openai]`: OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, Ollama)."""

    base_url: str
    api_key_env: str
    model: str
    stream: bool
    context_window_tokens: int
    max_output_tokens: int


@dataclass(frozen=True, slots=True)
class ClaudeCodeSettings:
    """`[claude_code]`: the user's own Claude Code as the summarizer."""

    executable: str
    home: str
    model: str
    base_url: str
    api_key_env: str
    context_window_tokens: int
    max_output_tokens: int


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """`[cluster]`: running the jobs as Dask tasks (`--cluster`)."""

    batch_bytes: int
    batch_sessions: int
    task_retries: int
    read_block_bytes: int
    connect_timeout_seconds: float


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob, by section, after all overrides, and where the values came from."""

    sweep: SweepSettings
    compress: CompressSettings
    summary: SummarySettings
    tokens: TokensSettings
    verify: VerifySettings
    model_summary: ModelSummarySettings
    limits: LimitsSettings
    anthropic: AnthropicSettings
    openai: OpenAISettings
    claude_code: ClaudeCodeSettings
    cluster: ClusterSettings
    prices: dict[str, tuple[float, float]]  # a table: models are the user's to add
    in_place: InPlaceSettings
    state: StateSettings
    read_pages: ReadPagesSettings
    sources: tuple[str, ...]  # the defaults file, then each override layer, for the summary report


SECTIONS: Final[Mapping[str, type[Any]]] = {
    name: kind for name, kind in get_type_hints(Settings).items() if name != "sources"
}
"""The typed section of every `[section]` of the defaults file."""


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # noqa: PLC0415 - only the loader reads TOML; workers receive typed settings

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"configuration file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration file {path} is not valid TOML: {exc}") from exc


def _coerce(section: str, key: str, default: Any, value: Any, origin: str) -> Any:
    """Check an override against the default's type; environment strings are parsed."""
    if isinstance(value, str) and not isinstance(default, str):
        text = value.strip().lower()
        try:
            if isinstance(default, bool):
                if text not in ("1", "0", "true", "false", "yes", "no"):
                    raise ValueError(text)
                value = text in ("1", "true", "yes")
            elif isinstance(default, int):
                value = int(text)
            elif isinstance(default, float):
                value = float(text)
        except ValueError as exc:
            raise ConfigError(
                f"{origin}: {section}.{key} expects {type(default).__name__}, got {value!r}"
            ) from exc
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not type(default):
        raise ConfigError(
            f"{origin}: {section}.{key} expects {type(default).__name__}, got {type(value).__name__}"
        )
    return value


def _merge(base: dict[str, dict[str, Any]], override: Mapping[str, Any], origin: str) -> None:
    for section, values in override.items():
        if section not in base or not isinstance(values, Mapping):
            raise ConfigError(f"{origin}: unknown section [{section}]")
        for key, value in values.items():
            if section in FREE_TABLES and key not in base[section]:
                base[section][key] = value  # a new row; its type is checked with the whole table
                continue
            if key not in base[section]:
                raise ConfigError(f"{origin}: unknown setting {section}.{key}")
            base[section][key] = _coerce(section, key, base[section][key], value, origin)


def _environment(base: dict[str, dict[str, Any]], environ: Mapping[str, str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for name, value in environ.items():
        if not name.startswith(_ENV_PREFIX) or name in _NOT_SETTINGS:
            continue
        rest = name[len(_ENV_PREFIX) :].lower()
        section = next((s for s in base if rest.startswith(f"{s}_")), None)
        if section is None:
            raise ConfigError(f"environment: {name} does not name a known section")
        found.setdefault(section, {})[rest[len(section) + 1 :]] = value
    return found


def _check_range(section: str, key: str, value: Any) -> None:
    positive = (lambda v: v > 0, "more than 0") if isinstance(value, float) else (_at_least(1), "1 or more")
    check, wanted = _RANGES.get(key, positive if section in _POSITIVE_SECTIONS else (None, ""))
    if check is not None and not isinstance(value, bool) and not check(value):
        raise ConfigError(f"{section}.{key} must be {wanted} (got {value!r})")


def _typed(base: dict[str, dict[str, Any]], sources: list[str]) -> Settings:
    """Convert the merged values into the typed sections, checking every choice and range."""
    if set(base) != set(SECTIONS):
        missing, extra = set(SECTIONS) - set(base), set(base) - set(SECTIONS)
        raise ConfigError(
            f"{DEFAULTS_PATH}: sections differ from the code's (missing {missing}, unknown {extra})"
        )
    sections: dict[str, Any] = {}
    for name, kind in SECTIONS.items():
        for key, value in base[name].items():
            if name not in FREE_TABLES:
                _check_range(name, key, value)
        try:
            sections[name] = msgspec.convert(base[name], kind, strict=True)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"[{name}] {exc}") from exc
    return Settings(**sections, sources=tuple(sources))


def load_settings(
    config_file: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Build the frozen settings from defaults, an optional file, the environment and flags."""
    environ = os.environ if environ is None else environ
    base = _read_toml(DEFAULTS_PATH)
    sources = [str(DEFAULTS_PATH)]
    config_file = config_file or (
        Path(environ[f"{_ENV_PREFIX}CONFIG"]) if environ.get(f"{_ENV_PREFIX}CONFIG") else None
    )
    if config_file is not None:
        _merge(base, _read_toml(config_file), str(config_file))
        sources.append(str(config_file))
    env_values = _environment(base, environ)
    if env_values:
        _merge(base, env_values, "environment")
        sources.append("environment")
    if flags:
        given = {
            section: {k: v for k, v in values.items() if v is not None} for section, values in flags.items()
        }
        _merge(base, given, "flags")
        sources.append("flags")
    return _typed(base, sources)
