"""Constants of `auto`'s fit over the sent context, written by fit-calibration --families.

Do not edit. Fitted on the 45 Claude Code sessions of the shared corpus with billed turns.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = [
    "FALLBACK_FAMILY",
    "FAMILY_CALIBRATION_VERSION",
    "FAMILY_FIT",
    "FAMILY_FRAMING",
    "FAMILY_MINIMUMS",
    "FAMILY_SCALE",
    "FAMILY_SESSIONS",
]

FAMILY_CALIBRATION_VERSION: Final = "2.faf80df895"
"""Method number and a digest of the constants; reported beside every `auto` fit."""

FALLBACK_FAMILY: Final = "claude"
"""Families the shared corpus does not hold take this family's framing (Claude Code's, the client's)."""

FAMILY_FRAMING: Final = MappingProxyType(
    {
        "claude": (0, 95),
        "claude-4.7": (0, 134),
    }
)
"""Family -> (tokens per sent API message, per tool_use or tool_result block), in billed tokens."""

FAMILY_SCALE: Final = MappingProxyType(
    {
        "claude": 1.0,
        "claude-4.7": 1.4147,
    }
)
"""Family -> billed tokens per token of its `auto` tokenizer (families not listed: 1.0)."""

FAMILY_FIT: Final = MappingProxyType(
    {
        "claude_sessions": 42.0,
        "claude_abs_slope_error": 0.0464,
        "claude_abs_slope_error_cv": 0.053,
        "claude-4.7_sessions": 3.0,
        "claude-4.7_abs_slope_error": 0.0466,
        "all_sessions": 45.0,
        "all_abs_slope_error": 0.0466,
    }
)
"""The fit when written: sessions per family, median |slope - 1| in-sample and cross-validated."""

FAMILY_SESSIONS: Final = MappingProxyType(
    {
        "claude": 42,
        "claude-4.7": 3,
    }
)
"""Family -> its sessions in the fit (families not listed: none). See `family_status`."""

FAMILY_MINIMUMS: Final = MappingProxyType(
    {
        "framing": 10,
        "scale": 3,
    }
)
"""Sessions a family needs for its own framing, and for its own scale over the fallback's framing."""
