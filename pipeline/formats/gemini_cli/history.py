"""The history Gemini CLI rebuilds from loaded messages and sends on resume, turn by turn.

Ports, in order, what Gemini CLI 0.61 does between loading a session and calling the model:
`convertSessionToClientHistory` (info, error and warning messages dropped; a user message it
ignores dropped; a Gemini message becomes a model turn of its thoughts, content and tool calls,
followed by a user turn of the tool results), the environment turn it puts first (made up per
run: represented here by its id only), `ensureStableToolIds` (ids for calls and responses that
lack one), the curated history (a run of model turns holding an invalid part is dropped),
`stripThoughts` (thought parts dropped; the first call of a model turn that had some gets a
synthetic signature; an empty turn dropped) and the wire form (`stripToolCallIdPrefixes`).
Consecutive turns of one role are then coalesced into one `Content`: `coalesce` does that for
comparing with what was sent, while the turns stay the items a compaction keeps or summarizes.
A history that ends with tool responses (a run killed before the model answered them) gets the
reply Gemini CLI puts after them before the next prompt (`closeUnansweredToolResponseTurn`),
attributed to the line of the responses' message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pipeline.formats.gemini_cli.conversation import LoadedMessage
from pipeline.formats.gemini_cli.parts import as_parts, content_text, is_ignored_user_text

__all__ = [
    "ENVIRONMENT_ID",
    "INTERRUPTED_PLACEHOLDER",
    "SentTurn",
    "coalesce",
    "rebuild_history",
    "result_parts",
    "stable_id",
    "thought_parts",
]

SYNTHETIC_SIGNATURE: Final = "skip_thought_signature_validator"
INTERRUPTED_PLACEHOLDER: Final = "[The previous response was interrupted before it completed.]"
_NON_TEXT_KEYS_IGNORED: Final = frozenset({"text", "thought", "callIndex"})
_SENT_TYPES: Final = frozenset({"user", "gemini"})


def stable_id(sources: Sequence[str]) -> str:
    """Gemini CLI's `deriveStableId`: SHA-256 of the sorted ids joined by `|`, 32 hex digits."""
    return hashlib.sha256("|".join(sorted(sources)).encode()).hexdigest()[:32]


ENVIRONMENT_ID: Final = stable_id(["environment-context"])


@dataclass(frozen=True, slots=True)
class SentTurn:
    """One history turn as Gemini CLI sends it: the message it came from, its role and parts
    (`content` is the `Content` in wire form), and whether it carries the message's tool results."""

    message_id: str
    line: int
    content: Mapping[str, Any]
    results: bool = False

    @property
    def role(self) -> str:
        """`user` or `model`."""
        return str(self.content["role"])


@dataclass(slots=True)
class _Turn:
    id: str
    message: LoadedMessage | None
    role: str
    parts: list[Any]
    results: bool = False


def thought_parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The thought parts Gemini CLI makes of a reply's recorded `thoughts` (before it strips them)."""
    thoughts = message.get("thoughts")
    parts = []
    for thought in thoughts if isinstance(thoughts, list) else ():
        if not isinstance(thought, Mapping):
            continue
        subject, description = thought.get("subject"), thought.get("description")
        text = f"**{subject}** {description}" if subject else description
        parts.append({"text": text, "thought": True})
    return parts


def _call_part(call: Mapping[str, Any]) -> dict[str, Any]:
    return {"functionCall": {k: call[k] for k in ("id", "name", "args") if k in call}}


def result_parts(calls: Sequence[Any]) -> list[Any]:
    """The response parts Gemini CLI sends for recorded tool calls: each result it holds."""
    parts: list[Any] = []
    for call in calls:
        result = call.get("result") if isinstance(call, Mapping) else None
        if not result and result != []:
            continue
        if isinstance(result, str):
            response = {k: call[k] for k in ("id", "name") if k in call}
            parts.append({"functionResponse": {**response, "response": {"output": result}}})
        elif isinstance(result, list):
            parts.extend(as_parts(result))
        else:
            parts.append(result)
    return parts


def _model_turns(loaded: LoadedMessage) -> Iterator[_Turn]:
    message = loaded.value
    content = as_parts(message["content"]) if message.get("content") else []
    listed = message.get("toolCalls")
    calls: list[Any] = listed if isinstance(listed, list) else []
    own = any(isinstance(p, Mapping) and (p.get("functionCall") or p.get("thought")) for p in content)
    parts = (
        content
        if own
        else [*thought_parts(message), *content, *(_call_part(c) for c in calls if isinstance(c, Mapping))]
    )
    if not parts:
        return
    yield _Turn(loaded.id, loaded, "model", parts)
    results = result_parts(calls)
    if results:
        yield _Turn(f"{loaded.id}_response", loaded, "user", results, results=True)


def _client_history(messages: Sequence[LoadedMessage]) -> Iterator[_Turn]:
    """`convertSessionToClientHistory`."""
    for loaded in messages:
        kind = loaded.value.get("type")
        if kind == "user":
            if not is_ignored_user_text(content_text(loaded.value.get("content"))):
                yield _Turn(loaded.id, loaded, "user", as_parts(loaded.value.get("content")))
        elif kind == "gemini":
            yield from _model_turns(loaded)


def _owned(turn: _Turn, position: int, key: str) -> dict[str, Any]:
    """The `key` object of a part, copied (part and object) before an id is written into it: the
    loaded records are never changed."""
    part = dict(turn.parts[position])
    part[key] = dict(part[key])
    turn.parts[position] = part
    return part[key]  # type: ignore[no-any-return]


def _unpaired(turn: _Turn, key: str, name: object) -> dict[str, Any] | None:
    for position, part in enumerate(turn.parts):
        inner = part.get(key) if isinstance(part, dict) else None
        if isinstance(inner, dict) and inner.get("name") == name and not inner.get("id"):
            return _owned(turn, position, key)
    return None


def _ensure_call_id(history: list[_Turn], index: int, position: int) -> None:
    turn = history[index]
    call = _owned(turn, position, "functionCall")
    name = call.get("name")
    made = f"synth_{name}_{stable_id([turn.id, str(index), str(position)])}"
    following = history[index + 1] if index + 1 < len(history) else None
    match = _unpaired(following, "functionResponse", name) if following and following.role == "user" else None
    if match is not None:
        match["id"] = made
    call["id"] = made


def _ensure_response_id(history: list[_Turn], index: int, position: int) -> None:
    turn = history[index]
    response = _owned(turn, position, "functionResponse")
    name = response.get("name")
    before = history[index - 1] if index > 0 else None
    match = _unpaired(before, "functionCall", name) if before and before.role == "model" else None
    if match is not None:
        made = f"synth_{name}_{stable_id([before.id, str(index - 1), str(position)])}" if before else ""
        match["id"] = response["id"] = made
    else:
        response["id"] = f"synth_orph_{name}_{stable_id([turn.id, str(index), str(position)])}"


def _ensure_ids(history: list[_Turn]) -> None:
    """`ensureStableToolIds`: pair calls and responses without ids by name, else make one up."""
    for index, turn in enumerate(history):
        for position in range(len(turn.parts)):
            part = turn.parts[position]
            if not isinstance(part, dict):
                continue
            call = part.get("functionCall")
            if isinstance(call, dict) and not call.get("id"):
                _ensure_call_id(history, index, position)
            response = turn.parts[position].get("functionResponse")
            if isinstance(response, dict) and not response.get("id"):
                _ensure_response_id(history, index, position)


def _valid_model_part(part: Any) -> bool:
    if not isinstance(part, Mapping) or not part:
        return False
    others = set(part) - _NON_TEXT_KEYS_IGNORED
    return bool(part.get("thought")) or part.get("text") != "" or bool(others)


def _curated(history: Sequence[_Turn]) -> list[_Turn]:
    """`extractCuratedHistory`: a run of model turns with an invalid part is left out whole."""
    curated: list[_Turn] = []
    index = 0
    while index < len(history):
        if history[index].role == "user":
            curated.append(history[index])
            index += 1
            continue
        run = []
        while index < len(history) and history[index].role == "model":
            run.append(history[index])
            index += 1
        if all(all(_valid_model_part(p) for p in t.parts) for t in run):
            curated.extend(run)
    return curated


def _strip_thoughts(turn: _Turn) -> _Turn:
    if not any(isinstance(p, Mapping) and p.get("thought") for p in turn.parts):
        return turn
    kept = [p for p in turn.parts if not (isinstance(p, Mapping) and p.get("thought"))]
    if turn.role == "model":
        for position, part in enumerate(kept):
            if isinstance(part, Mapping) and part.get("functionCall"):
                if not part.get("thoughtSignature"):
                    kept[position] = {**part, "thoughtSignature": SYNTHETIC_SIGNATURE}
                break
    return _Turn(turn.id, turn.message, turn.role, kept, turn.results)


def _unprefixed(inner: Mapping[str, Any], fields: tuple[str, str]) -> Mapping[str, Any]:
    name = str(inner.get("name") or "").strip() or "generic_tool"
    ident = inner.get("id")
    if isinstance(ident, str) and ident.startswith(f"{name}__"):
        kept = {k: inner[k] for k in fields if k in inner}
        return {**kept, "id": ident[len(name) + 2 :]}
    return inner


def _wire_part(part: Any) -> Any:
    """`stripToolCallIdPrefixes` for one part."""
    if not isinstance(part, Mapping):
        return part
    wired = dict(part)
    if isinstance(wired.get("functionCall"), Mapping):
        wired["functionCall"] = _unprefixed(wired["functionCall"], ("name", "args"))
    if isinstance(wired.get("functionResponse"), Mapping):
        wired["functionResponse"] = _unprefixed(wired["functionResponse"], ("name", "response"))
    if wired.get("text") == "" and set(wired) - _NON_TEXT_KEYS_IGNORED:
        del wired["text"]
    return wired


def _ends_with_responses(history: Sequence[_Turn]) -> bool:
    """Whether the history (before curation, as Gemini CLI checks it) ends with tool responses."""
    last = history[-1]
    responses = (isinstance(p, Mapping) and p.get("functionResponse") for p in last.parts)
    return last.role == "user" and any(responses)


def rebuild_history(messages: Sequence[LoadedMessage]) -> tuple[SentTurn, ...]:
    """The turns Gemini CLI sends from `messages` on resume (after its environment turn), up to
    the next prompt."""
    history = [_Turn(ENVIRONMENT_ID, None, "user", [{"text": ""}])]
    history.extend(_client_history(messages))
    _ensure_ids(history)
    turns = [_strip_thoughts(t) for t in _curated(history)]
    sent = [
        SentTurn(
            t.message.id,
            t.message.line,
            {"role": t.role, "parts": [_wire_part(p) for p in t.parts]},
            t.results,
        )
        for t in turns[1:]
        if t.parts and t.message is not None
    ]
    if sent and _ends_with_responses(history):
        placeholder = {"role": "model", "parts": [{"text": INTERRUPTED_PLACEHOLDER}]}
        sent.append(SentTurn(sent[-1].message_id, sent[-1].line, placeholder))
    return tuple(sent)


def coalesce(turns: Sequence[SentTurn]) -> list[dict[str, Any]]:
    """The `contents` Gemini CLI sends for `turns`: consecutive turns of one role merged."""
    contents: list[dict[str, Any]] = []
    for turn in turns:
        if contents and contents[-1]["role"] == turn.role:
            contents[-1]["parts"] = [*contents[-1]["parts"], *turn.content["parts"]]
        else:
            contents.append({"role": turn.role, "parts": list(turn.content["parts"])})
    return contents
