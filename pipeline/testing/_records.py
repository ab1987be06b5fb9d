"""Version-dependent shapes of Claude Code JSONL records (private to :mod:`pipeline.testing`).

Everything here was read off the real transcripts in ``shared/corpus``: which keys a record carries,
in which order, and how that changed between Claude Code versions. The builder composes records
from these pieces; nothing here touches files or keeps mutable module state.
"""

from __future__ import annotations

import base64
import random
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "Envelope",
    "Feature",
    "Layout",
    "Profile",
    "Stamper",
    "api_error_fields",
    "assistant_message",
    "iso_ms",
    "profile_for",
    "system_body",
    "truncate_prompt",
    "usage_block",
]

Json = dict[str, Any]

# Version thresholds, each with the corpus evidence that places it.
TRAILING_SINCE = (2, 1, 100)  # 2.1.42 writes the envelope first, 2.1.114 last; exact switch unknown
CALLER_SINCE = (2, 1, 30)  # tool_use.caller: absent in 2.1.17, present in 2.1.38/2.1.39/2.1.114
SOURCE_TOOL_UUID_SINCE = (2, 1, 0)  # sourceToolAssistantUUID: absent in 2.0.76, present in 2.1.7
PROMPT_TODOS_SINCE = (2, 1, 0)  # thinkingMetadata + todos on human prompts: seen from 2.1.7
PERMISSION_MODE_SINCE = (2, 1, 17)  # permissionMode on human prompts: seen from 2.1.17
GIT_BRANCH_SINCE = (1, 0, 60)  # gitBranch: absent in 1.0.53, present in 1.0.71
MODEL_FIRST_SINCE = (2, 0, 0)  # 1.0.x writes message {id,type,role,model,...}; 2.x {model,id,...}
SLUG_SINCE = (2, 0, 70)  # session slug ("radiant-floating-music"): seen in 2.0.76 .. 2.1.42
USAGE_CACHE_DETAIL_SINCE = (1, 0, 90)  # usage.cache_creation {ephemeral_5m, 1h}: absent 1.0.71, in 1.0.98
USAGE_GEO_SINCE = (2, 1, 30)  # usage.inference_geo: absent in 2.1.17, present in 2.1.38

LAST_PROMPT_MAX_CHARS = 200  # lastPrompt is cut to 200 characters plus an ellipsis (2.1.114)
SIGNATURE_BYTES = (96, 700)  # thinking signatures are base64 blobs of roughly this many bytes


class Layout(StrEnum):
    """Where the session envelope (userType, cwd, sessionId, version, gitBranch) sits in a record."""

    LEADING = "leading"  # right after parentUuid/isSidechain: 1.0.x through 2.1.4x
    TRAILING = "trailing"  # after the body, with ``entrypoint``: observed in 2.1.114


class Feature(StrEnum):
    """Structural features a generated transcript file can contain (reported in fleet manifests)."""

    SPLIT_ASSISTANT = "split_assistant"
    PARALLEL_TOOLS = "parallel_tools"
    THINKING = "thinking"
    TOOL_ERROR = "tool_error"
    LARGE_TOOL_RESULT = "large_tool_result"
    REWIND = "rewind"
    COMPACTION = "compaction"
    SIDECHAIN = "sidechain"
    SUBAGENT_FILE = "subagent_file"
    HAS_SUBAGENTS = "has_subagents"
    EXTERNAL_PARENT = "external_parent"
    NON_ENGLISH = "non_english"
    FILE_HISTORY = "file_history"
    PROGRESS = "progress"
    ATTACHMENT = "attachment"
    SYSTEM = "system"
    API_ERROR = "api_error"
    META_USER = "meta_user"
    IMAGE = "image"
    QUEUE_OPERATION = "queue_operation"
    TITLE = "title"
    MODE = "mode"
    LAST_PROMPT_LEAF = "last_prompt_leaf"
    LAST_PROMPT_TEXT = "last_prompt_text"
    SUMMARY_RECORD = "summary_record"
    RAW_LINE = "raw_line"


def _version_tuple(version: str) -> tuple[int, int, int]:
    """Parse ``"2.1.39"`` into ``(2, 1, 39)``; unparsable parts count as 0."""
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:3]]
    parts += [0] * (3 - len(parts))
    return (parts[0], parts[1], parts[2])


def _default_model(v: tuple[int, int, int]) -> str:
    """The model a given Claude Code version most often wrote in the corpus."""
    if v >= TRAILING_SINCE:
        return "claude-opus-4-7"
    if v >= (2, 1, 30):
        return "claude-opus-4-6"
    if v >= (2, 0, 0):
        return "claude-sonnet-4-5-20250929"
    return "claude-sonnet-4-20250514"


@dataclass(frozen=True, slots=True)
class Profile:
    """What one Claude Code version writes, derived once from its version string."""

    version: str
    layout: Layout
    caller: bool
    source_tool_uuid: bool
    prompt_todos: bool
    prompt_permission_mode: bool
    git_branch: bool
    model_first: bool
    rich_usage: bool
    usage_cache_detail: bool
    usage_geo: bool
    slug: bool
    model: str


def profile_for(version: str) -> Profile:
    """Return the record profile of a Claude Code ``version`` (e.g. ``"2.1.39"``)."""
    v = _version_tuple(version)
    trailing = v >= TRAILING_SINCE
    return Profile(
        version=version,
        layout=Layout.TRAILING if trailing else Layout.LEADING,
        caller=v >= CALLER_SINCE,
        source_tool_uuid=v >= SOURCE_TOOL_UUID_SINCE,
        prompt_todos=v >= PROMPT_TODOS_SINCE and not trailing,
        prompt_permission_mode=v >= PERMISSION_MODE_SINCE,
        git_branch=v >= GIT_BRANCH_SINCE,
        model_first=v >= MODEL_FIRST_SINCE,
        rich_usage=trailing,
        usage_cache_detail=v >= USAGE_CACHE_DETAIL_SINCE,
        usage_geo=v >= USAGE_GEO_SINCE,
        slug=SLUG_SINCE <= v < TRAILING_SINCE,
        model=_default_model(v),
    )


def iso_ms(ms: int) -> str:
    """Format epoch milliseconds the way Claude Code does: ``2026-02-10T21:11:56.906Z``."""
    seconds, frac = divmod(ms, 1000)
    t = time.gmtime(seconds)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{frac:03d}Z"
    )


def truncate_prompt(text: str) -> str:
    """Cut a prompt the way ``last-prompt.lastPrompt`` stores it (200 chars + ``…``)."""
    if len(text) <= LAST_PROMPT_MAX_CHARS:
        return text
    return text[:LAST_PROMPT_MAX_CHARS] + "…"


_UUID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))  # version and variant bits of a UUID int
_UUID_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant
_ID_TRANSLATE = bytes.maketrans(b"+/", b"xQ")


class Stamper:
    """Deterministic identifiers and a monotonic clock, all drawn from one seeded RNG.

    Hot path of every record, so it avoids ``uuid.UUID`` and ``randint`` (several times slower
    than the bit arithmetic used here) and reformats only seconds and milliseconds within one minute.
    """

    __slots__ = ("_minute", "_ms", "_prefix", "rng")

    def __init__(self, rng: random.Random, start_ms: int) -> None:
        self.rng = rng
        self._ms = start_ms
        self._minute = -1
        self._prefix = ""

    @property
    def now_ms(self) -> int:
        """Current clock value in epoch milliseconds."""
        return self._ms

    def tick(self, lo_ms: int, hi_ms: int) -> str:
        """Advance the clock by a random step in ``[lo_ms, hi_ms]`` and return the new timestamp."""
        self._ms += lo_ms + int(self.rng.random() * (hi_ms - lo_ms + 1))
        minute, rest = divmod(self._ms, 60_000)
        if minute != self._minute:
            self._minute = minute
            self._prefix = iso_ms(minute * 60_000)[:-7]
        second, frac = divmod(rest, 1000)
        return f"{self._prefix}{second:02d}.{frac:03d}Z"

    def advance(self, ms: int) -> None:
        """Move the clock forward by ``ms`` milliseconds (never backwards)."""
        self._ms += max(0, ms)

    def uuid4(self) -> str:
        """A version-4 UUID string derived from the RNG (same text as ``uuid.UUID(int=…, version=4)``)."""
        h = f"{(self.rng.getrandbits(128) & _UUID_CLEAR) | _UUID_SET:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def api_id(self, prefix: str, length: int = 22) -> str:
        """An Anthropic-style id such as ``msg_01…`` or ``toolu_01…`` (alphanumeric tail)."""
        raw = base64.b64encode(self.rng.randbytes(length)).translate(_ID_TRANSLATE)
        return prefix + raw[:length].decode("ascii")

    def hex_id(self, length: int) -> str:
        """A lowercase hex id of ``length`` characters (subagent ids, backup names)."""
        return f"{self.rng.getrandbits(4 * length):0{length}x}"

    def signature(self, size_hint: int) -> str:
        """A base64 thinking signature whose size grows with the thinking text."""
        lo, hi = SIGNATURE_BYTES
        n = min(hi, lo + size_hint // 8 + int(self.rng.random() * 400))
        return "E" + base64.b64encode(self.rng.randbytes(n)).decode("ascii")


@dataclass(frozen=True, slots=True)
class Envelope:
    """The session fields every chain record repeats, plus the layout that places them."""

    profile: Profile
    session_id: str
    cwd: str
    git_branch: str | None
    agent_id: str | None
    user_type: str = "external"
    entrypoint: str = "cli"

    def head(
        self,
        parent: str | None,
        sidechain: bool,
        *,
        slug: str | None = None,
        prompt_id: str | None = None,
        logical_parent: str | None = None,
    ) -> Json:
        """Start a chain record: parent, sidechain flag and (leading layout) the envelope."""
        rec: Json = {"parentUuid": parent}
        if logical_parent is not None:
            rec["logicalParentUuid"] = logical_parent
        rec["isSidechain"] = sidechain
        if self.profile.layout is Layout.TRAILING:
            if prompt_id is not None:
                rec["promptId"] = prompt_id
            if self.agent_id is not None:
                rec["agentId"] = self.agent_id
            return rec
        rec["userType"] = self.user_type
        rec["cwd"] = self.cwd
        rec["sessionId"] = self.session_id
        rec["version"] = self.profile.version
        if self.profile.git_branch and self.git_branch is not None:
            rec["gitBranch"] = self.git_branch
        if self.agent_id is not None:
            rec["agentId"] = self.agent_id
        if slug is not None:
            rec["slug"] = slug
        return rec

    def finish(self, rec: Json) -> Json:
        """Close a chain record: the trailing layout appends the envelope after the body."""
        if self.profile.layout is Layout.TRAILING:
            rec["userType"] = self.user_type
            rec["entrypoint"] = self.entrypoint
            rec["cwd"] = self.cwd
            rec["sessionId"] = self.session_id
            rec["version"] = self.profile.version
            if self.git_branch is not None:
                rec["gitBranch"] = self.git_branch
        return rec


# Key order of system records per subtype, as written by 2.1.3x-2.1.4x (the envelope excluded).
_SYSTEM_ORDER: dict[str, tuple[str, ...]] = {
    "local_command": ("content", "level", "timestamp", "uuid", "isMeta"),
    "turn_duration": ("durationMs", "messageCount", "timestamp", "uuid", "isMeta"),
    "stop_hook_summary": (
        "hookCount",
        "hookInfos",
        "hookErrors",
        "preventedContinuation",
        "stopReason",
        "hasOutput",
        "level",
        "timestamp",
        "uuid",
        "toolUseID",
    ),
    "api_error": ("level", "error", "retryInMs", "retryAttempt", "maxRetries", "timestamp", "uuid"),
    "compact_boundary": ("content", "isMeta", "timestamp", "uuid", "level", "compactMetadata"),
}
_SYSTEM_LEVEL: dict[str, str | None] = {
    "turn_duration": None,
    "stop_hook_summary": "suggestion",
    "api_error": "error",
    "away_summary": None,
}
_SYSTEM_NO_META = frozenset({"stop_hook_summary", "api_error"})


def system_body(subtype: str, content: str | None, timestamp: str, uid: str, extra: Json) -> Json:
    """Body keys of a ``system`` record in the order real files use for that ``subtype``."""
    values: Json = {}
    if content is not None:
        values["content"] = content
    level = extra.pop("level", _SYSTEM_LEVEL.get(subtype, "info"))
    if level is not None:
        values["level"] = level
    if subtype not in _SYSTEM_NO_META:
        values["isMeta"] = extra.pop("isMeta", False)
    values["timestamp"] = timestamp
    values["uuid"] = uid
    order = _SYSTEM_ORDER.get(subtype)
    body: Json = {"type": "system", "subtype": subtype}
    if order is None:
        # Unknown subtype: content, caller fields, then the common tail.
        order = ("content", *extra, "level", "timestamp", "uuid", "isMeta")
    values.update(extra)
    for key in order:
        if key in values:
            body[key] = values.pop(key)
    body.update(values)
    return body


def usage_block(profile: Profile, rng: random.Random, context_tokens: int, output_tokens: int) -> Json:
    """A plausible ``message.usage`` for the profile; every fragment of a message repeats it."""
    fresh = 1 + int(rng.random() * 8)
    created = 40 + int(rng.random() * 5960)
    read = max(0, context_tokens)
    if profile.rich_usage:
        return {
            "input_tokens": fresh,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "output_tokens": output_tokens,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": created, "ephemeral_5m_input_tokens": 0},
            "inference_geo": "",
            "iterations": [
                {
                    "input_tokens": fresh,
                    "output_tokens": output_tokens,
                    "cache_read_input_tokens": read,
                    "cache_creation_input_tokens": created,
                    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": created},
                    "type": "message",
                }
            ],
            "speed": "standard",
        }
    usage: Json = {
        "input_tokens": fresh,
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": read,
    }
    if profile.usage_cache_detail:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": created, "ephemeral_1h_input_tokens": 0}
    usage["output_tokens"] = output_tokens
    usage["service_tier"] = "standard"
    if profile.usage_geo:
        usage["inference_geo"] = "not_available"
    return usage


def assistant_message(
    profile: Profile, *, message_id: str, block: Json, usage: Json, model: str, has_tool: bool
) -> Json:
    """The ``message`` object of one assistant fragment carrying a single content ``block``.

    Streamed fragments of 2.1.4x and older say ``stop_reason: null``; 2.1.1xx repeats the final
    stop reason on every fragment.
    """
    msg: Json = {"model": model} if profile.model_first else {}
    msg["id"] = message_id
    msg["type"] = "message"
    msg["role"] = "assistant"
    if not profile.model_first:
        msg["model"] = model
    msg["content"] = [block]
    msg["stop_reason"] = ("tool_use" if has_tool else "end_turn") if profile.rich_usage else None
    msg["stop_sequence"] = None
    if profile.rich_usage:
        msg["stop_details"] = None
    msg["usage"] = usage
    return msg


def api_error_fields(stamp: Stamper) -> Json:
    """Default fields of a ``system``/``api_error`` record (an overloaded API, retried)."""
    rng = stamp.rng
    return {
        "error": {"status": 529, "headers": {}, "requestID": stamp.api_id("req_011C", 20), "type": None},
        "retryInMs": rng.choice((500, 1087, 2315, 4810)),
        "retryAttempt": rng.randint(1, 3),
        "maxRetries": 10,
    }
