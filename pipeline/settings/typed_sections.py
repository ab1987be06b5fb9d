"""The typed sections: one frozen dataclass per `[section]` of `config/default.toml`, and `Settings`.

Each declares its knobs' types, never a default (the defaults file is the only place they are
written). The sessions' commands read `[sweep]`, `[compress]`, `[summary]`, `[tokens]`,
`[verify]`, the model path's `[model_summary]`, `[limits]` and providers, `[cluster]`; the
commands that change session files read `[in_place]`, `[state]` and `[read_pages]`, with the
durations `idle_for` is written in. `loading` fills them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, get_type_hints

from pipeline.live_vocabulary import (
    BackupCompressionChoice,
    PublishStrategy,
    RepairScope,
    RetentionKind,
    StateSync,
)
from pipeline.vocabulary import (
    CheckpointPolicy,
    CompressRepair,
    LeafPolicy,
    LogFormat,
    ResumeGate,
    Strategy,
    SummarizedHistory,
    SummarizerName,
    SummaryFallback,
)

__all__ = [
    "SECTIONS",
    "AnthropicSettings",
    "ClaudeCodeSettings",
    "ClusterSettings",
    "CompressSettings",
    "InPlaceSettings",
    "LimitsSettings",
    "ModelSummarySettings",
    "OpenAISettings",
    "ReadPagesSettings",
    "RepairSettings",
    "Retention",
    "Settings",
    "StateSettings",
    "SummarySettings",
    "SweepSettings",
    "TokensSettings",
    "VerifySettings",
    "is_duration",
    "is_retention",
    "parse_duration",
    "parse_retention",
]

DURATION_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """Seconds in `12h`, `30m`, `2d`, `1w`, `90s` or a bare number of seconds; ValueError otherwise."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in DURATION_UNITS else "s"
    number = value[:-1] if value[-1:] in DURATION_UNITS else value
    try:
        seconds = float(number) * DURATION_UNITS[unit]
    except ValueError as exc:
        raise ValueError(f"not a duration: {text!r} (examples: 12h, 30m, 2d)") from exc
    if not seconds >= 0:  # also refuses nan
        raise ValueError(f"a duration cannot be negative: {text!r}")
    return seconds


def is_duration(value: str) -> bool:
    try:
        parse_duration(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Retention:
    """A parsed `backup_keep`: keep all, keep what is younger than `age_seconds`, or the `count` newest."""

    kind: RetentionKind
    age_seconds: float = 0.0  # AGE only
    count: int = 0  # LAST only


_LAST_PREFIX: Final = "last:"


def parse_retention(text: str) -> Retention:
    """`all`, an age with its unit (`30d`, `12h`, `2w`) or `last:N` (N >= 0); ValueError otherwise."""
    value = text.strip().lower()
    if value == RetentionKind.ALL.value:
        return Retention(RetentionKind.ALL)
    if value.startswith(_LAST_PREFIX):
        count = value.removeprefix(_LAST_PREFIX)
        if not count.isdigit():
            raise ValueError(f"not a retention: {text!r} (last:N wants a whole number, e.g. last:3)")
        return Retention(RetentionKind.LAST, count=int(count))
    if value[-1:] not in DURATION_UNITS or value[-1:] == "s":
        raise ValueError(f"not a retention: {text!r} (examples: all, 30d, 12h, 2w, last:3)")
    return Retention(RetentionKind.AGE, age_seconds=parse_duration(value))


def is_retention(value: str) -> bool:
    """Whether `parse_retention` takes the text (the settings loader's check)."""
    try:
        parse_retention(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class InPlaceSettings:
    """`[in_place]`: `compress --in-place`, `restore`, `repair-read-pages --in-place`."""

    idle_for: str  # a duration (`parse_duration`), checked when the settings are loaded
    confirm_sessions_closed: bool
    detect_open_files: bool
    backup_dir: str
    backup_beside: bool
    backup_compression: BackupCompressionChoice
    backup_keep: str  # a retention (`pipeline.publish.live.retention`), checked when the settings are loaded
    prune_only_copies: bool
    gzip_level: int
    zstd_level: int
    publish_strategy: PublishStrategy
    keep_times: bool
    work_dir: str

    @property
    def idle_for_seconds(self) -> float:
        """The idle period in seconds."""
        return parse_duration(self.idle_for)

    @property
    def retention(self) -> Retention:
        """The parsed `backup_keep`."""
        return parse_retention(self.backup_keep)


@dataclass(frozen=True, slots=True)
class StateSettings:
    """`[state]`: the database of earlier in-place runs and the run lock."""

    dir: str
    busy_timeout_seconds: float
    synchronous: StateSync


@dataclass(frozen=True, slots=True)
class ReadPagesSettings:
    """`[read_pages]`: the `Read.pages` compatibility repair."""

    scope: RepairScope
    leaf_policy: LeafPolicy


@dataclass(frozen=True, slots=True)
class RepairSettings:
    """`[repair]`: `compaction repair`, the damage repair of sessions."""

    relink: bool
    read_pages: bool
    max_rounds: int


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
    repair: CompressRepair
    history: SummarizedHistory
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
    chunk_evidence_items: int


@dataclass(frozen=True, slots=True)
class TokensSettings:
    """`[tokens]`: the token benchmark."""

    estimators: str
    max_names_per_class: int


@dataclass(frozen=True, slots=True)
class VerifySettings:
    """`[verify]`: the resume proof with the real Claude Code (Codex for Codex rollouts)."""

    claude: str
    codex: str
    resume_timeout_seconds: float
    min_excluded_text_chars: int


@dataclass(frozen=True, slots=True)
class ModelSummarySettings:
    """`[model_summary]`: budgets, packs and retries shared by every model provider."""

    provider_reserve_tokens: int
    safety_margin: float
    planned_output_tokens: int
    cache_read_price_share: float
    cache_write_price_share: float
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
    judges: dict[str, str]  # a table: format name -> the client its resume proof runs
    prices: dict[str, tuple[float, float]]  # a table: models are the user's to add
    model_windows: dict[str, tuple[int, int]]  # per model: context window and output bound, tokens
    in_place: InPlaceSettings
    state: StateSettings
    read_pages: ReadPagesSettings
    repair: RepairSettings
    sources: tuple[str, ...]  # the defaults file, then each override layer, for the summary report


SECTIONS: Final[Mapping[str, type[Any]]] = {
    name: kind for name, kind in get_type_hints(Settings).items() if name != "sources"
}
