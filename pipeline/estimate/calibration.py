"""Constants of the calibrated estimator, written by scripts/fit-calibration: do not edit.

Fitted on 8539 pieces against the geometric mean of each piece's o200k and legacy
Claude token counts: every piece of the corpus's Claude Code transcripts, and one in
3 of a 24M synthetic fleet of seed 0.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = [
    "BILLED_SLOPE",
    "CALIBRATION_VERSION",
    "CLASS_SCALE",
    "FIT",
    "FRAMING_MESSAGE",
    "FRAMING_TOOL_BLOCK",
    "WEIGHTS",
]

CALIBRATION_VERSION: Final = "3.6bd12070eb"
"""Feature-set number and a digest of the constants; reported beside every calibrated figure."""

WEIGHTS: Final = (
    0.4355,  # piece
    0.13055,  # chars
    0.324598,  # word_ends
    0.36549,  # upper
    0.101071,  # punctuation
    0.425343,  # quotes
    0.320057,  # backslashes
    0.994029,  # word_then_punctuation
    0.607917,  # digits
    0.436179,  # latin
    0.773499,  # symbols
    0.621228,  # cjk
    3.975093,  # astral
)
"""Tokens per unit of each feature of `calibrated.FEATURES`, in that order."""

CLASS_SCALE: Final = MappingProxyType(
    {
        "attachment": 1.045,
        "human": 0.937,
        "system": 0.917,
        "tool-use": 1.033,
    }
)
"""Per content class factor for the bias the shared weights leave in that class."""

FRAMING_MESSAGE: Final = 5
"""Prompt tokens per API message the pieces miss: a role marker, counted by the legacy tokenizer."""

FRAMING_TOOL_BLOCK: Final = 99
"""Prompt tokens per tool_use and per tool_result block the pieces miss (fitted on billed turns)."""

BILLED_SLOPE: Final = 1.0377
"""Median over corpus sessions of billed prompt tokens per framed calibrated token (conversation growth)."""

FIT: Final = MappingProxyType(
    {
        "pieces": 8539.0,
        "fleet_seed": 0.0,
        "median_piece_error_seed_vs_o200k": 0.1111,
        "median_piece_error_calibrated_vs_o200k": 0.0857,
        "median_piece_error_seed_vs_claude-legacy": 0.1748,
        "median_piece_error_calibrated_vs_claude-legacy": 0.0769,
        "billed_slope_seed": 1.0597,
        "billed_residual_seed": 0.0125,
        "billed_slope_calibrated": 1.0377,
        "billed_residual_calibrated": 0.0113,
        "billed_slope_o200k": 1.0366,
        "billed_residual_o200k": 0.011,
        "billed_slope_claude-legacy": 1.0097,
        "billed_residual_claude-legacy": 0.0099,
        "billed_slope_seed-record": 0.4773,
        "billed_residual_seed-record": 0.0202,
        "billed_abs_slope_error_unframed_seed": 0.3514,
        "billed_slope_unframed_seed": 1.3514,
        "billed_abs_slope_error_framed_seed": 0.1169,
        "billed_abs_slope_error_framed_cv_seed": 0.0949,
        "billed_slope_framed_cv_seed": 1.0521,
        "billed_abs_slope_error_unframed_calibrated": 0.2967,
        "billed_slope_unframed_calibrated": 1.2967,
        "billed_abs_slope_error_framed_calibrated": 0.0786,
        "billed_abs_slope_error_framed_cv_calibrated": 0.0703,
        "billed_slope_framed_cv_calibrated": 1.0311,
        "billed_abs_slope_error_unframed_o200k": 0.3437,
        "billed_slope_unframed_o200k": 1.3437,
        "billed_abs_slope_error_framed_o200k": 0.0913,
        "billed_abs_slope_error_framed_cv_o200k": 0.0729,
        "billed_slope_framed_cv_o200k": 1.0262,
        "billed_abs_slope_error_unframed_claude-legacy": 0.2572,
        "billed_slope_unframed_claude-legacy": 1.2572,
        "billed_abs_slope_error_framed_claude-legacy": 0.0802,
        "billed_abs_slope_error_framed_cv_claude-legacy": 0.0759,
        "billed_slope_framed_cv_claude-legacy": 1.0114,
    }
)
"""How well the constants fit when they were written (median relative errors, billed slopes)."""
