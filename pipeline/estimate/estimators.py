"""The estimators `compaction tokens` knows, by name.

`seed` and `calibrated` are pure Python over bytes and cost little enough to run beside a sweep;
the real tokenizers (`real.py`) are optional and loaded only when named. `auto` picks, for each
session and each run of one model within it, the tokenizer of that model's family.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Final

from pipeline.errors import CompactionError

__all__ = [
    "SEED_AND_CALIBRATED",
    "EstimatorName",
    "UnknownEstimator",
    "parse_estimators",
]


class EstimatorName(StrEnum):
    """Token estimators, as named on the command line and in reports."""

    SEED = "seed"
    CALIBRATED = "calibrated"
    O200K = "o200k"
    CL100K = "cl100k"
    CLAUDE_LEGACY = "claude-legacy"
    DEEPSEEK = "deepseek"
    QWEN = "qwen"
    AUTO = "auto"  # each session's own family tokenizer (`families.py`), per segment of one model

    @property
    def is_real(self) -> bool:
        """Whether this is a real tokenizer (an optional extra, loaded in each worker)."""
        return self not in (EstimatorName.SEED, EstimatorName.CALIBRATED, EstimatorName.AUTO)


SEED_AND_CALIBRATED: Final = (EstimatorName.SEED, EstimatorName.CALIBRATED)
"""The pair `calibrated.measure` counts in one pass, in this order."""


class UnknownEstimator(CompactionError):
    """An estimator name the command does not know."""

    def __init__(self, name: str) -> None:
        self.name = name
        known = ", ".join(member.value for member in EstimatorName)
        super().__init__(f"unknown estimator {name!r} (known: {known})")


def parse_estimators(names: Iterable[str]) -> tuple[EstimatorName, ...]:
    """Names from the command line, in the canonical order, without repeats."""
    chosen: set[EstimatorName] = set()
    for given in names:
        name = given.strip()
        if not name:
            continue
        try:
            chosen.add(EstimatorName(name))
        except ValueError:
            raise UnknownEstimator(name) from None
    return tuple(member for member in EstimatorName if member in chosen)
