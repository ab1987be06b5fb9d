"""Settings: `config/default.toml`, then a user file, then `COMPACTION_*` variables, then flags.

`loading` reads and merges the layers and converts them once into the frozen `Settings`;
`typed_sections` declares each section's knobs (type, never a default: the defaults file is the
only place defaults are written).
"""

from __future__ import annotations

from pipeline.settings.loading import (
    DEFAULTS_PATH,
    FREE_TABLES,
    MIN_SUMMARY_CHARS,
    MIN_TOOL_OUTPUT_LIMIT,
    READER_DEPTH_CEILING,
    load_settings,
)
from pipeline.settings.typed_sections import (
    SECTIONS,
    AnthropicSettings,
    ClaudeCodeSettings,
    ClusterSettings,
    CompressSettings,
    InPlaceSettings,
    LimitsSettings,
    ModelSummarySettings,
    OpenAISettings,
    ReadPagesSettings,
    Settings,
    StateSettings,
    SummarySettings,
    SweepSettings,
    TokensSettings,
    VerifySettings,
    parse_duration,
)

__all__ = [
    "DEFAULTS_PATH",
    "FREE_TABLES",
    "MIN_SUMMARY_CHARS",
    "MIN_TOOL_OUTPUT_LIMIT",
    "READER_DEPTH_CEILING",
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
    "Settings",
    "StateSettings",
    "SummarySettings",
    "SweepSettings",
    "TokensSettings",
    "VerifySettings",
    "load_settings",
    "parse_duration",
]
