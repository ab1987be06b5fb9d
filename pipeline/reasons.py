"""Closed vocabularies of why: strict verdict reasons, topology refusals, plan notes, skip and
refusal reasons, candidate failures.

Reports carry these spellings; a consumer can rely on them. Every vocabulary a `Reason` may carry
derives from `ReasonCode`: lower-case words joined by hyphens, never a class name or free text
(the type checker keeps anything else out; a test checks every spelling). A refusal reason may
carry a detail from another stage's vocabulary (`topology-duplicate-uuid`,
`checkpoint-missing-heading`), rendered as the two joined by a hyphen, and the figures that
decided it (`needed_chars`, `allowed_chars`), integers under names from `Figure`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = [
    "INTERNAL_CANDIDATE_FAILURES",
    "ApiRule",
    "CandidateFailure",
    "Figure",
    "Figures",
    "InPlaceReason",
    "LineageReason",
    "PlanNote",
    "Reason",
    "ReasonCode",
    "Refusal",
    "SkipReason",
    "StrictReason",
    "SummaryFailure",
    "TopologyRefusal",
]


class ReasonCode(StrEnum):
    """Base of every vocabulary a report's `reasons` may hold (its members are lower-case codes)."""


class Figure(StrEnum):
    """Names of the integer figures a reason carries, as the report writes them."""

    NEEDED_CHARS = "needed_chars"
    ALLOWED_CHARS = "allowed_chars"
    NEEDED_TOKENS = "needed_tokens"
    ALLOWED_TOKENS = "allowed_tokens"
    INPUT_TOKENS = "input_tokens"
    LIMIT_TOKENS = "limit_tokens"
    BEFORE_TOKENS = "before_tokens"
    AFTER_TOKENS = "after_tokens"
    DEPTH = "depth"
    GROUP_LINE = "group_line"
    HTTP_STATUS = "http_status"
    ATTEMPTS = "attempts"
    DEFECTS = "defects"
    LINE = "line"
    LINES = "lines"
    VALUE = "value"
    MINIMUM = "minimum"
    EXPECTED_RECORDS = "expected_records"
    CANDIDATE_RECORDS = "candidate_records"
    FIRST_DIFFERENCE = "first_difference"  # 0-based position in a chain where two chains part


class StrictReason(ReasonCode):
    """Why the seed's strict topology accepts or refuses a file (seed 004's reason codes)."""

    LAST_PROMPT_ABSENT = "last-prompt-absent"
    DUPLICATE_UUID = "duplicate-uuid"
    LEAF_UUID_MALFORMED = "leaf-uuid-malformed"
    CHAIN_MISSING_UUID = "chain-missing-uuid"
    CHAIN_LOOP = "chain-loop"
    CHAIN_MALFORMED_PARENT = "chain-malformed-parent"
    CHAIN_EMPTY = "chain-empty"
    CHAIN_NON_MONOTONIC = "chain-non-monotonic"
    LINEAGE_UNSAFE = "lineage-unsafe"
    EXTENSION_LIMIT_EXCEEDED = "extension-limit-exceeded"
    EXTENSION_AUTHORITY_SESSION_MISSING = "extension-authority-session-missing"
    EXTENSION_RECORD_MISSING_UUID = "extension-record-missing-uuid"
    EXTENSION_RECORD_NOT_LINEAR_DESCENDANT = "extension-record-not-linear-descendant"
    EXTENSION_RECORD_SESSION_MISMATCH = "extension-record-session-mismatch"
    EXTENSION_RECORD_NOT_SAFE_CLOSURE = "extension-record-not-safe-closure"
    EXTENSION_PENDING_TOOL_IDS = "extension-pending-tool-ids"
    OK = "ok"


class LineageReason(StrEnum):
    """Why a chain's sessionId runs are not a safe one-way lineage (seed 004)."""

    AUTHORITY_MISMATCH = "authority-session-does-not-match-chain"
    MISSING_SESSION_ID = "mixed-session-lineage-has-missing-session-id"
    RETURNS_TO_EARLIER = "session-lineage-returns-to-an-earlier-session"
    REQUIRES_AUTHORITY = "mixed-session-lineage-requires-authority-session"
    AUTHORITY_NOT_FINAL = "authority-session-does-not-match-final-lineage-session"


class TopologyRefusal(ReasonCode):
    """Why the `auto` policy selects no chain (strict refusals use `StrictReason`)."""

    DUPLICATE_UUID = "duplicate-uuid"
    CHAIN_NON_MONOTONIC = "chain-non-monotonic"
    LINEAGE_UNSAFE = "lineage-unsafe"
    NO_CANDIDATE_LEAF = "no-candidate-leaf"
    CHAIN_LOOP = "chain-loop"
    CHAIN_MALFORMED_PARENT = "chain-malformed-parent"
    EMPTY = "empty"  # no refusal, but nothing on the chain either


class PlanNote(ReasonCode):
    """Content-free notes on what moved or stopped the cut."""

    WHOLE_CHAIN_FITS = "whole-chain-fits"
    NOTHING_BEFORE_PROTECTED_ROUND = "nothing-summarizable-before-protected-round"
    PRIOR_COMPACT_PAIR_FOLDED = "prior-compact-pair-folded"
    EARLIER_SESSIONS_SUMMARIZED = "earlier-sessions-summarized"
    PROTECTED_TURN_KEPT_WHOLE = "protected-turn-kept-whole"
    PROTECTED_INSTRUCTION_HOLDS_MEDIA = "protected-instruction-holds-media"  # no summary can restate it
    CUT_INSIDE_LONG_TURN = "cut-inside-long-turn"
    MOVED_TO_TURN_START = "moved-to-turn-start"
    MOVED_AFTER_PRIOR_COMPACT_PAIR = "moved-after-prior-compact-pair"
    MOVED_PAST_DAMAGE = "moved-past-damaged-records"  # so the summary replaces every defect
    TARGET_MISSED = "target-missed"  # the rules stopped the cut before the tail fit the goal
    PROTECTED_ROUND_EXCEEDS_TARGET = "protected-round-exceeds-target"
    NO_ROOM_FOR_SUMMARY = "no-room-for-summary-beside-protected-round"  # the round alone fits
    NO_SAFE_CUT_WITHIN_TARGET = "no-safe-cut-within-target"  # a message, call or turn spans the fit
    FEWER_RECENT_RECORDS_THAN_PREFERRED = "fewer-recent-records-than-preferred"
    SUMMARY_LARGER_THAN_PLANNED = "summary-larger-than-planned"  # re-planned; still over at the end
    MASKING_ALONE_SHORT_OF_TARGET = "masking-alone-short-of-target"  # mask: all cleared, still over


class SkipReason(ReasonCode):
    """Why a session needs no compaction (beside the plan's own notes when the chain fits)."""

    SUBAGENT = "subagent-transcript-is-not-resumed"
    NOT_RESUMED = "not-resumed-by-its-client"  # a checkpoint, a legacy document: its client resumes none
    BELOW_MIN_TOKENS = "below-min-tokens"
    GAIN_BELOW_MINIMUM = "gain-below-minimum"
    RUN_TOKEN_BUDGET = "run-token-budget-reached"
    STRATEGY_NOT_FOR_FORMAT = (
        "strategy-not-for-format"  # mask and hybrid are Claude Code's only: no other format offers them
    )


class Refusal(ReasonCode):
    """Why a session that needs a compaction gets none (nothing is written)."""

    TOPOLOGY = "topology"
    SOURCE_CHAIN_INVALID = "source-active-chain-invalid"
    SUMMARY = "summary"
    CHECKPOINT = "checkpoint"
    COMPOSE = "compose"
    RESUME_CHECK_FAILED = "resume-check-failed"
    RESUME_MISMATCH = "resume-mismatch"
    RESUME_API_REJECTED = "resume-api-rejected"  # the API would answer the candidate with a 400
    FIDELITY_BELOW_MINIMUM = "fidelity-below-minimum"  # the report's `fidelity` has the figures
    SOURCE_CHANGED = "source-changed-during-compression"
    OUTPUT_WOULD_OVERWRITE_SOURCE = "output-would-overwrite-source"


class SummaryFailure(ReasonCode):
    """Why the embedded summarizer wrote no summary (a model's outcomes are `SummaryOutcome`)."""

    EVIDENCE_LINE_OUT_OF_RANGE = "evidence-line-out-of-range"
    INVALID_OPTIONS = "invalid-options"
    BUDGET_EXCEEDED = "budget-exceeded"
    CHECKPOINT_INVALID = "checkpoint-invalid"


class InPlaceReason(ReasonCode):
    """Why an in-place run left a file alone, beside the job's reasons and the source's refusals."""

    RESUME_PROOF_MISSING = "resume-proof-missing"  # the candidate was not proven by Claude Code
    INTERNAL_ERROR = "internal-error"  # a step raised: nothing committed (the log has the traceback)
    REFUSED_SINCE = "refused-since"  # an unchanged refusal, with the date it was first recorded
    INTERRUPTED = "interrupted"  # Ctrl-C or SIGTERM stopped the run before this session was done


class CandidateFailure(ReasonCode):
    """Why a composed candidate may not be written (contract violations have their own codes)."""

    TOPOLOGY = "candidate-topology"
    CHAIN_DIFFERS_FROM_PLAN = "candidate-chain-differs-from-plan"
    VALIDATION_ERRORS = "candidate-validation-errors"
    COMPACT_PAIR_COUNT = "candidate-compact-pair-count"
    INTERNAL_FIELD = "candidate-internal-field"
    OVER_TOKEN_TARGET = "candidate-over-token-target"
    RAW_LINE_CHANGED = "candidate-raw-line-changed"  # neither source bytes nor bounded as declared
    STALE_POINTER = "candidate-stale-pointer"  # a last-prompt naming a record the file does not hold
    CONTRACT = "contract"


INTERNAL_CANDIDATE_FAILURES: Final = frozenset({CandidateFailure.CHAIN_DIFFERS_FROM_PLAN})
"""Candidate failures that are our own inconsistency, never a property of the session: a session
failing one ends `internal-error` (with the figures to reproduce it), not `refused`."""


Figures = tuple[tuple[Figure, int], ...]
"""Named integer figures of one reason, in a fixed order."""


class ApiRule(ReasonCode):
    """Which Messages API rule a request breaks (`proof.claude_code.api_rules`: the API's 400)."""

    TOOL_USE_WITHOUT_RESULT = "tool-use-without-result"
    TOOL_RESULT_WITHOUT_USE = "tool-result-without-use"
    TOOL_USE_ID_DUPLICATE = "tool-use-id-duplicate"
    TOOL_RESULT_ID_DUPLICATE = "tool-result-id-duplicate"


@dataclass(frozen=True, slots=True)
class Reason:
    """A reason code, the detail code of the stage that decided it, and the figures that did."""

    code: ReasonCode
    detail: ReasonCode | None = None
    figures: Figures = ()

    def __str__(self) -> str:
        return self.code.value if self.detail is None else f"{self.code.value}-{self.detail.value}"
