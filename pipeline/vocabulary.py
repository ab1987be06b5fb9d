"""Closed vocabularies shared by every stage: statuses, sources, sets and finding codes.

Report field values come from these enums, so a consumer can rely on the spelling.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

from pipeline.reasons import ReasonCode

__all__ = [
    "ChainEnd",
    "CheckpointPolicy",
    "CompressRepair",
    "ExitCode",
    "FindingCode",
    "LeafPolicy",
    "LeafSource",
    "LineKind",
    "LogFormat",
    "PartitionSet",
    "PointerState",
    "ProbeExit",
    "PromptCheck",
    "RecordType",
    "ResumeExit",
    "ResumeGate",
    "Role",
    "SessionKind",
    "SessionStatus",
    "Severity",
    "SourceFormat",
    "StateAttachment",
    "StrictStatus",
    "SummarizerName",
]


class RecordType(StrEnum):
    """The `type` of a Claude Code record that some stage acts on (files hold others too)."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    ATTACHMENT = "attachment"
    PROGRESS = "progress"
    SUMMARY = "summary"
    LAST_PROMPT = "last-prompt"
    FILE_HISTORY_SNAPSHOT = "file-history-snapshot"
    QUEUE_OPERATION = "queue-operation"
    CUSTOM_TITLE = "custom-title"
    AI_TITLE = "ai-title"
    MODE = "mode"
    PERMISSION_MODE = "permission-mode"
    AGENT_NAME = "agent-name"


class Role(StrEnum):
    """Who speaks in an API message."""

    USER = "user"
    ASSISTANT = "assistant"


class ExitCode(IntEnum):
    """Exit codes of `validate`, `compress` and `tokens` (and the in-place commands)."""

    OK = 0  # every session fine: valid, with warnings, skipped or of an unsupported format
    FAILED = 1  # at least one session has errors, was refused, unreadable or crashed
    USAGE = 2  # a usage error or an unreadable root
    COMMITTED_REPORT_FAILED = 3  # a file was replaced and verified but its report could not be written
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); SIGTERM gives 143 the same way


class ResumeExit(IntEnum):
    """Exit codes of `verify-resume`."""

    MATCH = 0
    MISMATCH = 1
    USAGE = 2  # a usage error, no judge installed for the original's format, or no judge for it at all
    NOT_RESUMABLE = 3  # the judge finds no conversation in the original (not a mismatch)
    CLAUDE_CODE_FAILED = 4  # Claude Code failed or timed out
    CODEX_FAILED = 5  # Codex failed or timed out (a Codex rollout's judge)
    PI_FAILED = 6  # pi failed or timed out (a pi session's judge)
    CODEWHALE_FAILED = 7  # CodeWhale failed or timed out (a CodeWhale session's judge)
    GEMINI_CLI_FAILED = 8  # Gemini CLI failed or timed out
    QWEN_CODE_FAILED = 9  # Qwen Code failed or timed out


class ProbeExit(IntEnum):
    """Exit codes of `probe`."""

    OK = 0
    BELOW_FLOOR = 1  # the candidate's fidelity is below `--min-fidelity`
    USAGE = 2  # a usage error, or two files that are not a source and its compaction


class LogFormat(StrEnum):
    """How log lines are written on stderr."""

    CONSOLE = "console"
    JSON = "json"


class ResumeGate(StrEnum):
    """When `compress` resumes candidates in Claude Code before writing them."""

    AUTO = "auto"  # whenever Claude Code can be found
    ON = "on"  # required: a usage error without Claude Code
    OFF = "off"


class CompressRepair(StrEnum):
    """Whether `compress` first repairs a damaged active chain (`compaction repair`'s edits)."""

    AUTO = "auto"  # in place (the nightly job), not with --out
    ON = "on"
    OFF = "off"


class SummarizedHistory(StrEnum):
    """Whether a compaction leaves the summarized history in the file, for agents whose own
    compaction keeps it there (pi appends its compaction after it)."""

    AUTO = "auto"  # dropped in place (a verified backup keeps it), kept with --out
    KEEP = "keep"
    DROP = "drop"


class Strategy(StrEnum):
    """How `compress` makes room: summarize before the cut, clear old tool outputs, or both."""

    SUMMARY = "summary"  # the summary and the verbatim tail, long outputs bounded
    MASK = "mask"  # no summary: every record kept, tool outputs before the protected round cleared
    HYBRID = "hybrid"  # the oldest span summarized, the middle masked, the protected round verbatim


class SummarizerName(StrEnum):
    """Who writes the summary."""

    DETERMINISTIC = "deterministic"
    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    CLAUDE_CODE = "claude-code"


class SummaryFallback(StrEnum):
    """What a failed model summary leads to."""

    REFUSE = "refuse"  # the session is refused; its source untouched
    DETERMINISTIC = "deterministic"  # the embedded summarizer writes it instead, said in the report


class SessionStatus(StrEnum):
    """Outcome of one session in a sweep or a compression run."""

    VALID = "valid"
    WARNINGS = "warnings"
    INVALID = "invalid"
    REFUSED = "refused"
    UNSUPPORTED_FORMAT = "unsupported-format"
    NOT_A_TRANSCRIPT = "not-a-transcript"
    UNREADABLE = "unreadable"
    INTERNAL_ERROR = "internal-error"
    COMPRESSED = "compressed"
    SKIPPED_SMALL = "skipped-small"
    SKIPPED_FITS = "skipped-fits"  # the active chain already fits the target
    SKIPPED_NO_CUT = "skipped-no-cut"  # nothing before the protected round may be summarized
    SKIPPED_LOW_GAIN = "skipped-low-gain"  # a candidate would save less than compress.min_gain
    SKIPPED_RUN_BUDGET = "skipped-run-budget"  # the run's billed tokens reached --max-run-tokens
    PLANNED = "planned"  # --dry-run: what a model summary would cost, nothing written or called
    SKIPPED_SUBAGENT = "skipped-subagent"
    SKIPPED_NOT_RESUMED = "skipped-not-resumed"  # a file its client does not resume by design (a checkpoint)

    @property
    def is_failure(self) -> bool:
        """Whether this status makes the command exit non-zero."""
        return self in _FAILURES


_FAILURES = frozenset(
    {SessionStatus.INVALID, SessionStatus.REFUSED, SessionStatus.UNREADABLE, SessionStatus.INTERNAL_ERROR}
)


class StrictStatus(StrEnum):
    """The seed's strict topology verdict (seed 004, "Authoritative last-prompt")."""

    ABSENT = "absent"
    MALFORMED = "malformed"
    MALFORMED_PARENT = "malformed-parent"
    DUPLICATE_UUID = "duplicate-uuid"
    DANGLING = "dangling"
    LOOP = "loop"
    NON_MONOTONIC = "non-monotonic"
    SESSION_MISMATCH = "session-mismatch"
    EXTENSION_LIMIT = "extension-limit"
    EXTENSION_BRANCH = "extension-branch"
    EXTENSION_UNSAFE = "extension-unsafe"
    VALID = "valid"


class LeafPolicy(StrEnum):
    """How the resume leaf is chosen."""

    AUTO = "auto"
    STRICT = "strict"
    PHYSICAL = "physical"


class LeafSource(StrEnum):
    """What chose the leaf actually used."""

    LAST_PROMPT = "last-prompt"
    MANUAL_OVERRIDE = "manual-override"
    POST_LAST_PROMPT_CLOSURE = "explicit-post-last-prompt-closure"
    NEWEST_LEAF = "inferred-newest-leaf"
    BELOW_LAST_PROMPT = "last-prompt-descendant"  # the session went on below the pointer
    PHYSICAL_TAIL = "physical-tail"
    NONE = "none"


class PointerState(StrEnum):
    """What a `last-prompt` record's `leafUuid` member holds."""

    ABSENT = "absent"  # no leafUuid key: an older client, or a text-only pointer
    LEAF = "leaf"  # a non-empty string naming the resume leaf
    NULL = "null"  # null: with `explicit: true`, Claude Code's "nothing to resume"
    EMPTY = "empty"  # "", false, 0: falsy, which Claude Code ignores
    INVALID = "invalid"  # any other value


class PromptCheck(StrEnum):
    """How the pointer's `lastPrompt` text compares with the chain's last human prompt."""

    MATCHED = "matched"
    MISMATCHED = "mismatched"
    ABSENT = "absent"  # the pointer carries no text
    NOT_APPLICABLE = "not-applicable"  # the chain holds no human prompt


class ChainEnd(StrEnum):
    """Why the walk from the leaf towards the root stopped."""

    ROOT = "root"
    COMPACT_BOUNDARY = "compact-boundary"
    EXTERNAL_PARENT = "external-parent"
    LOOP = "loop"
    MALFORMED_PARENT = "malformed-parent"


class SessionKind(StrEnum):
    """Main conversation file or a subagent transcript."""

    MAIN = "main"
    SUBAGENT = "subagent"


class SourceFormat(StrEnum):
    """Transcript formats the reader recognizes: the agent that wrote a session file.

    Claude Code and Codex are processed; the other agents' files are named, reported
    `unsupported-format`, and never read as another agent's.
    """

    CLAUDE_CODE = "claude-code"
    CODEX = "codex-rollout"
    PI = "pi-session"  # pi and OpenClaw (which writes pi's JSONL)
    GEMINI_CLI = "gemini-cli"
    QWEN_CODE = "qwen-code"
    OPENCODE = "opencode"
    COPILOT_CLI = "copilot-cli"
    CLINE = "cline"  # Cline and the forks that keep its task files
    AIDER = "aider"
    CODEWHALE = "codewhale-session"  # CodeWhale (formerly DeepSeek-TUI)
    EMPTY = "empty"
    UNKNOWN = "unknown"


class LineKind(StrEnum):
    """What the reader made of one physical line."""

    RECORD = "record"
    BLANK = "blank"
    NOT_JSON = "not-json"
    NOT_OBJECT = "not-object"
    TRUNCATED = "truncated"
    NESTING_TOO_DEEP = "nesting-too-deep"
    TOO_LONG = "too-long"


class PartitionSet(StrEnum):
    """The six disjoint sets every source line lands in (seed 004, "Six-Way Source Partition")."""

    SUMMARY = "summary"
    RAW_KEEP = "raw_keep"
    SIDE_KEEP = "side_keep"
    CONTROL_PROJECTION = "control_projection"
    EXCLUDED_BRANCH = "excluded_branch"
    EXCLUDED_UNATTRIBUTED = "excluded_unattributed"


class CheckpointPolicy(StrEnum):
    """Which file-history snapshots travel with the kept suffix."""

    ACTIVE_CORRELATED = "active-correlated"
    NONE = "none"


class Severity(StrEnum):
    """How much a finding matters: errors make a session invalid."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class FindingCode(ReasonCode):
    """Stable finding codes; the report never carries transcript text, only these and ids."""

    # Reading
    LINE_NOT_JSON = "line-not-json"
    LINE_NOT_OBJECT = "line-not-object"
    LINE_INVALID_UTF8 = "line-invalid-utf8"
    LINE_TRUNCATED = "line-truncated"
    LINE_NESTING_TOO_DEEP = "line-nesting-too-deep"
    LINE_TOO_LONG = "line-too-long"
    BLANK_LINE = "blank-line"
    BYTE_ORDER_MARK = "byte-order-mark"
    CRLF_LINE_ENDINGS = "crlf-line-endings"
    MISSING_FINAL_NEWLINE = "missing-final-newline"
    # Identity and links
    DUPLICATE_UUID = "duplicate-uuid"
    MALFORMED_UUID = "malformed-uuid"
    MALFORMED_PARENT = "malformed-parent"
    DANGLING_PARENT = "dangling-parent"
    EXTERNAL_PARENT = "external-parent"
    CROSS_SESSION_PARENT = "cross-session-parent"
    # Pointer and topology
    LAST_PROMPT_MALFORMED = "last-prompt-malformed"
    LAST_PROMPT_MISSING_LEAF = "last-prompt-missing-leaf"
    LAST_PROMPT_CROSS_SESSION = "last-prompt-cross-session"
    LAST_PROMPT_TEXT_MISMATCH = "last-prompt-text-mismatch"
    LEAF_BELOW_LAST_PROMPT = "leaf-below-last-prompt"
    STRICT_REFUSAL = "strict-refusal"
    LEAF_INFERRED = "leaf-inferred"
    NO_BRANCH_ISOLATION = "no-branch-isolation"
    CHAIN_LOOP = "chain-loop"
    CHAIN_NON_MONOTONIC = "chain-non-monotonic"
    ATTACHMENT_INVERSION = "attachment-inversion-accepted"
    SESSION_LINEAGE_UNSAFE = "session-lineage-unsafe"
    SESSION_LINEAGE_TRANSITION = "session-lineage-transition"
    NO_ACTIVE_CHAIN = "no-active-chain"
    # Tool pairing
    TOOL_ID_MALFORMED = "tool-id-malformed"
    TOOL_USE_ID_DUPLICATE = "tool-use-id-duplicate"
    TOOL_RESULT_ID_DUPLICATE = "tool-result-id-duplicate"
    TOOL_USE_UNANSWERED = "tool-use-unanswered"
    TOOL_USE_NOT_FOLLOWED_BY_USER = "tool-use-not-followed-by-user"
    TOOL_RESULT_MISMATCH = "tool-result-mismatch"
    TOOL_RESULT_WITHOUT_USE = "tool-result-without-use"
    TOOL_RESULT_NOT_FIRST = "tool-result-not-first"
    TOOL_RESULT_PARTIAL = "tool-result-partial"
    TOOL_RESULT_ORDER = "tool-result-order"
    # Compact pairs
    COMPACT_BOUNDARY_WITHOUT_UUID = "compact-boundary-without-uuid"
    COMPACT_BOUNDARY_SUMMARY_COUNT = "compact-boundary-summary-count"
    COMPACT_SUMMARY_ORPHAN = "compact-summary-orphan"
    COMPACT_SUMMARY_LEGACY = "compact-summary-legacy"
    COMPACT_SUMMARY_EMPTY = "compact-summary-empty"
    COMPACT_METADATA_MISSING = "compact-metadata-missing"
    COMPACT_PRESERVED_INVALID = "compact-preserved-invalid"
    COMPACT_PRESERVED_HISTORICAL = "compact-preserved-historical"
    COMPACT_NOT_ON_ACTIVE_CHAIN = "compact-not-on-active-chain"
    CURRENT_COMPACT_PAIR = "current-compact-pair"
    INTERNAL_FIELD = "internal-field"
    # Codex rollouts
    SESSION_META_MISSING = "session-meta-missing"
    LEGACY_ROLLOUT_LAYOUT = "legacy-rollout-layout"
    UNKNOWN_RECORD = "unknown-record"
    TURN_UNFINISHED = "turn-unfinished"
    COMPACTION_REBUILT = "compaction-rebuilt"
    COMPACTION_MALFORMED = "compaction-malformed"
    # pi sessions
    LINE_RECORDS_JOINED = "line-records-joined"
    SESSION_HEADER_MISSING = "session-header-missing"
    UNKNOWN_ENTRY = "unknown-entry"
    COMPACTION_KEPT_MISSING = "compaction-kept-missing"
    # Qwen Code sessions
    SESSION_DOCUMENT_NOT_RESUMED = "session-document-not-resumed"
    # Whole-session outcomes
    UNSUPPORTED_FORMAT = "unsupported-format"
    NOT_A_TRANSCRIPT = "not-a-transcript"
    NOT_A_REGULAR_FILE = "not-a-regular-file"
    OBJECT_KEY_UNSAFE = "object-key-unsafe"
    UNREADABLE = "unreadable"
    INTERNAL_ERROR = "internal-error"


class Verdict(StrEnum):
    """The outcome of a resume comparison."""

    MATCH = "match"
    MISMATCH = "mismatch"
    NOT_RESUMABLE = "not-resumable"  # Claude Code resumes neither file: nothing to compare
    ERROR = "error"  # Claude Code itself failed or timed out: no verdict


class StateAttachment(StrEnum):
    """Attachment kinds whose records Claude Code folds into the reminders it derives on resume."""

    DEFERRED_TOOLS_DELTA = "deferred_tools_delta"
    AGENT_LISTING_DELTA = "agent_listing_delta"
    MCP_INSTRUCTIONS_DELTA = "mcp_instructions_delta"
    MCP_DROPPED_TOOLS_DELTA = "mcp_dropped_tools_delta"
    SKILL_LISTING = "skill_listing"
    DYNAMIC_SKILL = "dynamic_skill"
    ENVIRONMENT = "environment"
    MODEL = "model"
    DATE = "date"
    DATE_CHANGE = "date_change"  # the date's record before 2.1.3xx
    SESSION_CONTEXT = "session_context"
    OUTPUT_STYLE = "output_style_instructions"
    LANGUAGE = "language"
    ATTRIBUTION = "remote_session_change"


class PlanOutcome(StrEnum):
    """Whether a cut was found."""

    CUT = "cut"
    FITS = "fits"  # the whole chain already fits the goal
    NO_CUT = "no-cut"  # nothing before the protected round may be summarized
