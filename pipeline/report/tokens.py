"""Report sections of `tokens`: counts per content class and name, per estimator, and usage fits."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.report.sections import Section

__all__ = [
    "ClassEntry",
    "FitEntry",
    "Framing",
    "ModelsSection",
    "ScopePair",
    "SentSection",
    "TokensMeasure",
    "UsageSection",
]


class ScopePair(Section, frozen=True, kw_only=True):
    """One figure for the whole file and for the active chain."""

    session: int
    active_chain: int


class ClassEntry(Section, frozen=True, kw_only=True):
    """One content class (or one name within it): pieces, bytes and each estimator's tokens."""

    pieces: ScopePair
    bytes: ScopePair
    session: dict[str, int]  # estimator -> tokens in the whole file
    active_chain: dict[str, int]  # estimator -> tokens on the active chain
    names: dict[str, ClassEntry] | UnsetType = UNSET  # the largest names; the rest under `other`


class FitEntry(Section, frozen=True, kw_only=True):
    """One estimator's fit of prompt estimates against the prompts billed."""

    estimator: str
    turns: int
    constant: float
    slope: float
    slope_error: float
    rmse: float
    relative_rmse: float


class Framing(Section, frozen=True, kw_only=True):
    message: int
    tool_block: int


class SentSection(Section, frozen=True, kw_only=True):
    """How `auto` was fitted over the sent context: framing and scale per family, epochs and steps."""

    family_calibration_version: str
    turns: int
    epochs: int
    steps: int  # billed jumps or drops the chain does not explain (cleared results, loaded tools)
    framing: dict[str, Framing]  # family -> framing of its turns
    scale: dict[str, float]  # family -> billed tokens per token of its tokenizer
    usage_convention: dict[str, str]  # family -> how its usage spells the billed prompt


class UsageSection(Section, frozen=True, kw_only=True):
    """What the transcript's billed usage says of every estimator."""

    assistant_lines_with_usage: int
    turns: int
    segments: int
    billed_first: int | None
    billed_last: int | None
    framing: Framing
    fits: dict[str, FitEntry]
    sent: SentSection | UnsetType = UNSET  # with `auto` only: its fit is over what was sent


class ModelsSection(Section, frozen=True, kw_only=True):
    """The models a session's assistant messages name, and the families they belong to."""

    family: str | None  # of most billed turns on the chain, else of most assistant messages
    families: dict[str, int]  # family -> assistant messages (whole file)
    models: dict[str, int]  # model -> assistant messages (whole file); odd names under `other`
    switches: int  # family changes between consecutive assistant messages along the chain


class TokensMeasure(Section, frozen=True, kw_only=True):
    """The tokens a session holds, by estimator and class, and the usage fits."""

    estimators: list[str]
    calibration_version: str
    session: dict[str, int]
    active_chain: dict[str, int]
    seed_record: ScopePair = msgspec.field(name="seed-record")
    images: ScopePair
    classes: dict[str, ClassEntry]
    usage: UsageSection
    models: ModelsSection
