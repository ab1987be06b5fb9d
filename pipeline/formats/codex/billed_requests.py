"""Each model request a rollout billed, beside the context Codex sent with it: a per-turn series.

What was billed: Codex writes the usage of every model response, as `event_msg` `token_count`
(`info.last_token_usage`; `info` is null before the first response, the same figures are written
again when only the rate limits changed, so a repeat of the previous event is no new request, and
a compaction resets them to zero, which is no request either) and, from 0.171, as
`token_usage_record` (one per response; a rollout holding those is read from them alone). Its
`input_tokens` is OpenAI's: the whole prompt, cached part included (Codex's own
`non_cached_input` subtracts the cached part from it).

What was sent: the history Codex held when it made the request, which is the context its resume
rebuilds from the rollout cut just before the response's own output items (`rebuild_context` over
that prefix: compactions replace the history, rollbacks drop turns, unanswered calls are answered).
Versions differ in where the usage lands: up to 0.4x it is written before the response's items,
later after them; a rollout's own order says which (the items next to its usage events). Codex's
instructions and tool definitions are sent with every request and are not items: a constant per
session (per model, since the instructions follow the model), which a fit's intercept absorbs.
Reasoning items are sent back encrypted: their text here is their summary, and what the model
reads of them is counted apart (`BilledRequest.carried_reasoning`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import orjson

from pipeline.formats.codex.analysis import RolloutAnalysis
from pipeline.formats.codex.item_classes import visible_text
from pipeline.formats.codex.item_types import CALL_TYPES, ItemType
from pipeline.formats.codex.reconstruct import ContextItem, Rebuilt, contexts_at
from pipeline.formats.codex.rollout_decode import Rollout, RolloutEntry, RolloutKind
from pipeline.formats.codex.rollout_items import payload_of, sent_pairs
from pipeline.formats.context_items import BilledTurn

__all__ = ["ITEM_FRAMING", "BilledRequest", "billed_requests", "billed_turns"]

_MODEL_OUTPUTS: Final = frozenset(
    {*CALL_TYPES, ItemType.REASONING, ItemType.WEB_SEARCH_CALL, ItemType.IMAGE_GENERATION_CALL}
)
ITEM_FRAMING: Final = 10
"""Tokens per sent item the visible text misses (its type and role markers): the grid point of
`scripts/fit-calibration --codex` on the shared corpus's rollouts (cross-validated there: 0.014)."""
_HIDDEN: Final = ("encrypted_content",)  # the model's own state: sent, but not text a tokenizer reads


@dataclass(frozen=True, slots=True)
class BilledRequest:
    """One billed model request and the items Codex sent with it, counted by one tokenizer."""

    line: int  # the usage record
    cut: int  # the first line not sent (the response's first item, or the usage record)
    billed: int  # input tokens, cached ones included
    cached: int
    items: int  # items of the history sent
    tokens: int  # the items' visible text (messages, call arguments and outputs, reasoning summaries)
    json_tokens: int  # the items' JSON as sent, encrypted reasoning left out (when asked for)
    reasoning: int  # reasoning tokens the response produced (billed as output)
    carried_reasoning: int  # reasoning tokens of earlier responses of this user turn, sent back
    model: str | None  # the model of the turn context in force
    epoch_start: bool  # the first request, or one after a compaction or a change of model


def _is_output(entry: RolloutEntry) -> bool:
    if not entry.is_item:
        return False
    return entry.item in _MODEL_OUTPUTS or (entry.item == ItemType.MESSAGE and entry.role == "assistant")


def _usage_lines(rollout: Rollout) -> Iterator[tuple[int, tuple[int, int, int, int]]]:
    """Each request's usage record: token_usage_record lines if any, else token_count events that
    are not a repeat of the one before."""
    records = [n for n in rollout.lines_where(RolloutKind.TOKEN_USAGE_RECORD) if rollout.entries[n - 1]]
    if records:
        for number in records:
            usage = rollout.entries[number - 1].usage  # type: ignore[union-attr]
            if usage is not None and usage[0] > 0:
                yield number, usage
        return
    previous: tuple[object, object] | None = None
    for number, entry in enumerate(rollout.entries, 1):
        if entry is None or entry.item != "token_count" or entry.usage is None:
            continue
        if (entry.usage, entry.total_usage) != previous and entry.usage[0] > 0:
            yield number, entry.usage
        previous = (entry.usage, entry.total_usage)


def _neighbours(rollout: Rollout, line: int) -> tuple[RolloutEntry | None, RolloutEntry | None]:
    """The response items just before and just after a line (compactions stop the search)."""
    found: list[RolloutEntry | None] = []
    for numbers in (range(line - 1, 0, -1), range(line + 1, len(rollout) + 1)):
        entry = next(
            (
                e
                for e in (rollout.entries[n - 1] for n in numbers)
                if e is not None and (e.is_item or e.kind is RolloutKind.COMPACTED)
            ),
            None,
        )
        found.append(entry if entry is not None and entry.is_item else None)
    return found[0], found[1]


def _usage_follows_items(rollout: Rollout, lines: list[int]) -> bool:
    """Whether this writer records a response's usage after its items (else before them)."""
    after = before = 0
    for line in lines:
        previous, following = _neighbours(rollout, line)
        after += previous is not None and _is_output(previous)
        before += following is not None and _is_output(following)
    return after >= before


def _cut(rollout: Rollout, line: int, after: bool, floor: int) -> int:
    """The first line of the response billed at `line`: its output run when it precedes the usage."""
    if not after:
        return line
    cut = line
    for number in range(line - 1, floor, -1):
        entry = rollout.entries[number - 1]
        if entry is None or not entry.is_item:
            if entry is not None and entry.kind is RolloutKind.COMPACTED:
                break
            continue
        if not _is_output(entry):
            break
        cut = number
    return cut


def _json_text(item: dict[str, Any]) -> str:
    return orjson.dumps({k: v for k, v in item.items() if k not in _HIDDEN}).decode()


def _key(item: ContextItem) -> tuple[object, ...]:
    """What names an item across rebuilds (a tuple hashes and compares far faster than the item)."""
    return (item.origin, item.line, item.slot, item.type)


class _ItemCounts:
    """Each sent item counted once (a request re-sends all earlier ones); its JSON only if asked."""

    def __init__(self, analysis: RolloutAnalysis, count: Callable[[str], int], json: bool) -> None:
        self._analysis, self._count, self._json = analysis, count, json
        self._known: dict[tuple[object, ...], tuple[int, int]] = {}

    def totals(self, sent: tuple[ContextItem, ...]) -> tuple[int, int, int]:
        """(items, visible tokens, JSON tokens) of a sent history."""
        keys = [_key(i) for i in sent]
        new = tuple({k: i for k, i in zip(keys, sent, strict=True) if k not in self._known}.values())
        if new:
            analysis, count = self._analysis, self._count
            fresh = Rebuilt(new, None, (), 0, resumable=True)
            for reference, item in sent_pairs(analysis.rollout, analysis.data, fresh):
                json = count(_json_text(item)) if self._json else 0
                self._known[_key(reference)] = (count(visible_text(item)), json)
        counted = [known for known in map(self._known.get, keys) if known is not None]
        return len(counted), sum(c[0] for c in counted), sum(c[1] for c in counted)


def _models(analysis: RolloutAnalysis) -> tuple[list[int], list[str | None]]:
    """The turn context lines (ascending) and the model each names."""
    lines = list(analysis.rollout.lines_where(RolloutKind.TURN_CONTEXT))
    models: list[str | None] = []
    for line in lines:
        payload = payload_of(analysis.rollout, analysis.data, line)
        model = payload.get("model") if isinstance(payload, dict) else None
        models.append(model if isinstance(model, str) else None)
    return lines, models


def _last_before(lines: list[int], cut: int) -> int:
    """The last of ascending `lines` before `cut` (0 when none is)."""
    position = bisect.bisect_left(lines, cut)
    return lines[position - 1] if position else 0


def billed_requests(
    analysis: RolloutAnalysis, count: Callable[[str], int], *, json: bool = False
) -> tuple[BilledRequest, ...]:
    """Every billed request of a rollout with the history sent before it, oldest first (`json`:
    the items' JSON counted too, else `json_tokens` is 0).

    A request's `carried_reasoning` is what the responses of its own user turn reasoned (since the
    turn's prompt or the last compaction): Codex sends their reasoning items back encrypted and the
    model reads them at their full length, while earlier turns' reasoning is dropped from its context
    (Codex's `tokens_in_context_window` says as much)."""
    rollout = analysis.rollout
    if rollout.legacy:
        return ()
    usages = list(_usage_lines(rollout))
    after = _usage_follows_items(rollout, [line for line, _ in usages])
    compactions = list(rollout.lines_where(RolloutKind.COMPACTED))
    prompts = sorted(
        {n for n, e in enumerate(rollout.entries, 1) if e is not None and e.user_turn} | {*compactions}
    )
    context_lines, models = _models(analysis)
    counts = _ItemCounts(analysis, count, json)
    floors = [0, *(line for line, _ in usages)]  # a response's items follow the usage before it
    cuts = [_cut(rollout, line, after, floor) for (line, _), floor in zip(usages, floors[:-1], strict=True)]
    sent = contexts_at(rollout, analysis.replacements, cuts)
    requests: list[BilledRequest] = []
    for (line, usage), cut, history in zip(usages, cuts, sent, strict=True):
        position = bisect.bisect_left(context_lines, cut)
        model = models[position - 1] if position else None
        last = requests[-1] if requests else None
        compacted = last is not None and _last_before(compactions, cut) >= last.cut
        opened = _last_before(prompts, cut)
        carried = sum(r.reasoning for r in requests if r.cut > opened)
        items, tokens, json_tokens = counts.totals(history)
        start = last is None or compacted or model != last.model
        requests.append(
            BilledRequest(
                line, cut, usage[0], usage[1], items, tokens, json_tokens, usage[3], carried, model, start
            )
        )
    return tuple(requests)


def billed_turns(analysis: RolloutAnalysis, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
    """The series a fit takes: each request's items' visible text, the reasoning of its turn the
    model reads back, and `ITEM_FRAMING` per item."""
    return tuple(
        BilledTurn(
            r.line,
            r.billed,
            r.tokens + r.carried_reasoning + ITEM_FRAMING * r.items,
            r.items,
            r.epoch_start,
            r.model,
        )
        for r in billed_requests(analysis, count)
    )
