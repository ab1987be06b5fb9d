"""The Messages API's own rules for tool pairing: a request's `messages` -> what the API rejects.

The capture server answers a request that breaks one of these with HTTP 400, the API's error
envelope and the API's own sentence, so a compacted session that would still be rejected by the
real API cannot pass the resume proof. The rules are a pure function of the request's
`messages` (JSON as sent), so anything that builds a context (a repair, a test) can ask whether
the API would take it. What the API checks, as its answers show (each sentence quoted where it
was seen, in the API's words, from real 400 responses):

- Consecutive messages of one role form one turn (the API combines them), so pairing is judged
  between turns; a violation names the first message of the turn.
- Every `tool_use` of an assistant turn is answered by a `tool_result` among the blocks that open
  the next turn, and nothing but further `tool_use` blocks may follow a `tool_use` in its turn:
  "messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: IDS.
  Each `tool_use` block must have a corresponding `tool_result` block in the next message."
  (anthropics/claude-code#2697, #5989 for several ids; N is the turn that should open with the
  results: the recorded exchange in anomalyco/opencode
  packages/llm/test/fixtures/recordings/anthropic-messages/
  rejects-malformed-assistant-tool-order-without-patch.json sends `[tool_use, text]` at
  messages.0 and is answered for messages.1). A result placed after a text block is not among
  the opening blocks, so its call counts as unanswered.
- Every `tool_result` answers a `tool_use` of the turn just before it:
  "messages.N.content.M: unexpected `tool_use_id` found in `tool_result` blocks: ID. Each
  `tool_result` block must have a corresponding `tool_use` block in the previous message."
  (anthropics/claude-code#13460, #19728; M is the block's position in its message).
- Tool ids are unique in the request: "messages.N.content.M: `tool_use` ids must be unique"
  (anthropics/claude-code#20901, #21317; the later occurrence), and one turn answers a call once:
  "messages.N.content.M: each tool_use must have a single result. Found multiple `tool_result`
  blocks with id: ID" (the bug report mirrored from anthropics/claude-code as
  .github/issues/duplicate-tool-result-bug.md, and forkwright/aletheia#57).

The error envelope is `{"type": "error", "error": {"type": "invalid_request_error", "message":
...}, "request_id": ...}` (Kilo-Org/kilocode#5163, anthropics/claude-code#13460). The API
answers the first violation; `api_violations` lists them all in request order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pipeline.reasons import ApiRule

__all__ = ["ApiViolation", "api_violations", "error_envelope"]

INVALID_REQUEST: Final = "invalid_request_error"
_TOOL_USE: Final = "tool_use"
_TOOL_RESULT: Final = "tool_result"


@dataclass(frozen=True, slots=True)
class ApiViolation:
    """One rule a request breaks: where (message, block) and which tool ids; no content."""

    rule: ApiRule
    message: int  # index in the request's `messages`
    block: int | None  # index in that message's content, when the API names one
    ids: tuple[str, ...]

    @property
    def path(self) -> str:
        """Where the API says it is: `messages.3` or `messages.3.content.1`."""
        return f"messages.{self.message}" + ("" if self.block is None else f".content.{self.block}")

    @property
    def text(self) -> str:
        """The API's own sentence for this violation."""
        ids = ", ".join(self.ids)
        if self.rule is ApiRule.TOOL_USE_WITHOUT_RESULT:
            return (
                f"{self.path}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block "
                "in the next message."
            )
        if self.rule is ApiRule.TOOL_RESULT_WITHOUT_USE:
            return (
                f"{self.path}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each "
                "`tool_result` block must have a corresponding `tool_use` block in the previous message."
            )
        if self.rule is ApiRule.TOOL_USE_ID_DUPLICATE:
            return f"{self.path}: `tool_use` ids must be unique"
        return (
            f"{self.path}: each tool_use must have a single result. Found multiple `tool_result` "
            f"blocks with id: {ids}"
        )


def error_envelope(violation: ApiViolation, request_id: str) -> dict[str, Any]:
    """The body of the API's 400 answer for a violation."""
    return {
        "type": "error",
        "error": {"type": INVALID_REQUEST, "message": violation.text},
        "request_id": request_id,
    }


@dataclass(frozen=True, slots=True)
class _Block:
    message: int
    position: int
    kind: str
    tool_id: str


@dataclass(frozen=True, slots=True)
class _Turn:
    """Consecutive messages of one role, as the API combines them."""

    role: str
    first: int  # index of its first message
    blocks: tuple[_Block, ...]


def _content(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []  # a string content holds no tool block


def _block(message: int, position: int, item: Any) -> _Block:
    kind = str(item.get("type")) if isinstance(item, dict) else ""
    key = "id" if kind == _TOOL_USE else "tool_use_id"
    tool_id = item.get(key) if isinstance(item, dict) else None
    return _Block(message, position, kind, tool_id if isinstance(tool_id, str) else "")


def _turns(messages: Sequence[Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    for index, message in enumerate(messages):
        role = str(message.get("role")) if isinstance(message, dict) else ""
        blocks = tuple(_block(index, p, item) for p, item in enumerate(_content(message)))
        if turns and turns[-1].role == role:
            turns[-1] = _Turn(role, turns[-1].first, turns[-1].blocks + blocks)
        else:
            turns.append(_Turn(role, index, blocks))
    return turns


def _opening_results(turn: _Turn) -> list[_Block]:
    opening: list[_Block] = []
    for block in turn.blocks:
        if block.kind != _TOOL_RESULT:
            break
        opening.append(block)
    return opening


def _unanswered(turn: _Turn, following: _Turn | None) -> list[str]:
    """Calls of an assistant turn not answered among the blocks that open the next turn."""
    uses = [b for b in turn.blocks if b.kind == _TOOL_USE]
    if not uses:
        return []
    first_use = turn.blocks.index(uses[0])
    trailing = all(b.kind == _TOOL_USE for b in turn.blocks[first_use:])
    answered = {b.tool_id for b in _opening_results(following)} if following is not None else set()
    ids = [b.tool_id for b in uses]
    return ids if not trailing else [tool_id for tool_id in ids if tool_id not in answered]


def _turn_violations(turns: list[_Turn], at: int, seen_uses: set[str]) -> Iterator[ApiViolation]:
    turn = turns[at]
    previous = turns[at - 1] if at > 0 else None
    following = turns[at + 1] if at + 1 < len(turns) else None
    if turn.role == "assistant":
        for block in (b for b in turn.blocks if b.kind == _TOOL_USE):
            if block.tool_id in seen_uses:
                yield ApiViolation(ApiRule.TOOL_USE_ID_DUPLICATE, block.message, block.position, ())
            seen_uses.add(block.tool_id)
        missing = _unanswered(turn, following) if following is not None else []
        if missing and following is not None:
            yield ApiViolation(ApiRule.TOOL_USE_WITHOUT_RESULT, following.first, None, tuple(missing))
        return
    called = {b.tool_id for b in previous.blocks if b.kind == _TOOL_USE} if previous else set()
    results = [b for b in turn.blocks if b.kind == _TOOL_RESULT]
    unexpected = [b for b in results if b.tool_id not in called]
    if unexpected:
        first = unexpected[0]
        ids = tuple(dict.fromkeys(b.tool_id for b in unexpected))
        yield ApiViolation(ApiRule.TOOL_RESULT_WITHOUT_USE, first.message, first.position, ids)
    answered: set[str] = set()
    for block in results:
        if block.tool_id in answered and block.tool_id in called:
            yield ApiViolation(
                ApiRule.TOOL_RESULT_ID_DUPLICATE, block.message, block.position, (block.tool_id,)
            )
        answered.add(block.tool_id)


def api_violations(messages: Sequence[Any]) -> tuple[ApiViolation, ...]:
    """Every tool-pairing rule the request's `messages` break, in the order the API meets them.

    A final assistant turn (a prefill) is not judged: Claude Code always ends on a user turn.
    """
    turns = _turns(messages)
    seen: set[str] = set()
    found = [v for at in range(len(turns)) for v in _turn_violations(turns, at, seen)]
    return tuple(sorted(found, key=lambda v: (v.message, -1 if v.block is None else v.block)))
