"""What a token benchmark needs, as typed values a worker process receives (both the Claude Code
session's count and a Codex rollout's read them)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.estimate.estimators import EstimatorName
from pipeline.settings import SweepSettings

__all__ = ["TokensOptions"]


@dataclass(frozen=True, slots=True)
class TokensOptions:
    """What a token benchmark needs, as values a worker process receives."""

    sweep: SweepSettings
    estimators: tuple[EstimatorName, ...]
    max_names_per_class: int
