"""Report sections of the resume proof: the verdict, what each side sent, what the API rejected.

The section is built from the shapes it reads (`JudgedResume`, `SentSide`, `Rejection`), which
the active-chain judge's verdict fits: the report names no agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol

from msgspec import UNSET, UnsetType

from pipeline.reasons import ApiRule
from pipeline.report.sections import Section
from pipeline.vocabulary import Verdict

if TYPE_CHECKING:  # only the builders' arguments: a sweep worker need not import the proof
    from pipeline.proof.context import ContextSize

__all__ = [
    "ApiRejection",
    "ApiRejections",
    "JudgedResume",
    "Rejection",
    "ResumeCheckSection",
    "SentSide",
    "SentSizes",
    "SizeSection",
    "judge_not_found",
    "resume_check_failed",
    "resume_check_section",
]

REJECTIONS_LISTED: Final = 20  # a rejected request's report names its first violations, not thousands


class SizeSection(Section, frozen=True, kw_only=True):
    """What one Claude Code request held."""

    messages: int
    characters: int
    estimated_tokens: int


class SentSizes(Section, frozen=True, kw_only=True):
    original: SizeSection | None
    compacted: SizeSection | None


class ApiRejection(Section, frozen=True, kw_only=True):
    """A Messages API rule a request broke, where the API says it is, and the tool ids it names."""

    rule: ApiRule
    at: str  # `messages.N` or `messages.N.content.M`, as the API's sentence says
    ids: list[str] | UnsetType = UNSET


class ApiRejections(Section, frozen=True, kw_only=True):
    """What the capture server answered with the API's 400, for each side (the first listed is the
    one the API names)."""

    original: list[ApiRejection]
    compacted: list[ApiRejection]


class ResumeCheckSection(Section, frozen=True, kw_only=True):
    """The resume proof: its verdict, content-free differences, what each side sent, its cost."""

    verdict: Verdict
    error: str | UnsetType = UNSET  # the failure's kind when Claude Code itself failed
    differences: list[str] | UnsetType = UNSET
    notes: list[str] | UnsetType = UNSET
    summary_blocks: int | UnsetType = UNSET
    kept_blocks: int | UnsetType = UNSET
    sent: SentSizes | UnsetType = UNSET
    characters_reduction: float | UnsetType | None = UNSET
    api_rejected: ApiRejections | UnsetType = UNSET  # requests the API would answer with a 400
    # The resumes Claude Code compacted before answering (a file over or near its window): their
    # context is its compaction request's. Unset when it compacted neither.
    compacted_on_resume: list[str] | UnsetType = UNSET
    elapsed_ms: float


class Rejection(Protocol):
    """A rule of the provider's API a request broke: which, where, and the tool ids it names."""

    @property
    def rule(self) -> ApiRule: ...
    @property
    def path(self) -> str: ...  # `messages.N` or `messages.N.content.M`
    @property
    def ids(self) -> tuple[str, ...]: ...


class SentSide(Protocol):
    """What one resume sent: its size, whether it was modelled rather than sent, and whether the
    client compacted it before answering."""

    @property
    def size(self) -> ContextSize: ...
    @property
    def modelled(self) -> bool: ...
    @property
    def compacted_on_resume(self) -> bool: ...


class JudgedResume(Protocol):
    """A judge's verdict on an original and its compaction, content-free."""

    @property
    def verdict(self) -> Verdict: ...
    @property
    def differences(self) -> tuple[str, ...]: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    @property
    def summary_blocks(self) -> int: ...
    @property
    def kept_blocks(self) -> int: ...
    @property
    def original(self) -> SentSide | None: ...
    @property
    def compacted(self) -> SentSide | None: ...
    @property
    def original_rejected(self) -> Sequence[Rejection]: ...
    @property
    def compacted_rejected(self) -> Sequence[Rejection]: ...


def _size(size: ContextSize) -> SizeSection:
    return SizeSection(
        messages=size.messages, characters=size.characters, estimated_tokens=size.estimated_tokens
    )


def _rejections(violations: Sequence[Rejection]) -> list[ApiRejection]:
    return [
        ApiRejection(rule=v.rule, at=v.path, ids=list(v.ids) if v.ids else UNSET)
        for v in violations[:REJECTIONS_LISTED]
    ]


def resume_check_section(verdict: JudgedResume, elapsed_ms: float) -> ResumeCheckSection:
    before, after = verdict.original, verdict.compacted
    if before is not None and before.modelled:
        before = None  # only the part compared was modelled: its size is not the original's
    reduction = None
    if before is not None and after is not None and before.size.characters:
        reduction = round(1 - after.size.characters / before.size.characters, 4)
    rejected: ApiRejections | UnsetType = UNSET
    if verdict.original_rejected or verdict.compacted_rejected:
        rejected = ApiRejections(
            original=_rejections(verdict.original_rejected),
            compacted=_rejections(verdict.compacted_rejected),
        )
    return ResumeCheckSection(
        verdict=verdict.verdict,
        differences=list(verdict.differences),
        notes=list(verdict.notes),
        summary_blocks=verdict.summary_blocks,
        kept_blocks=verdict.kept_blocks,
        sent=SentSizes(
            original=_size(before.size) if before is not None else None,
            compacted=_size(after.size) if after is not None else None,
        ),
        characters_reduction=reduction,
        api_rejected=rejected,
        compacted_on_resume=[
            side
            for side, context in (("original", before), ("compacted", after))
            if context is not None and context.compacted_on_resume
        ]
        or UNSET,
        elapsed_ms=elapsed_ms,
    )


def resume_check_failed(error: str, elapsed_ms: float) -> ResumeCheckSection:
    """The proof could not run to a verdict: the judge failed (its error's code, no text)."""
    return ResumeCheckSection(verdict=Verdict.ERROR, error=error, elapsed_ms=elapsed_ms)


def judge_not_found(error: str, note: str) -> ResumeCheckSection:
    """The proof could not run at all: the session's judge is not installed (`error` says which)."""
    return ResumeCheckSection(verdict=Verdict.ERROR, error=error, notes=[note], elapsed_ms=0.0)
