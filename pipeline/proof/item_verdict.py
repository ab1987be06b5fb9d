"""The verdict of a judge whose client resends a context of items (Codex, pi, Gemini CLI, Qwen
Code): the candidate holds when its client sends the summary, then a verbatim suffix of what the
original's sends, every call answered, no excluded text. Each client's own module decides the
differences; this is the one shape they all return, and `judge_items` the comparison every client
whose context is a list of JSON items shares (its `ItemRules` say what differs)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pipeline.formats.json_values import plain_strings
from pipeline.proof.context import ContextSize, json_size
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

__all__ = [
    "ItemRules",
    "ItemVerdict",
    "chat_answer",
    "chat_calls",
    "first_difference",
    "judge_items",
    "rewrite_verdict",
]

_UNNAMED_SUMMARY: Final = (
    "no summary text is known: the messages before the kept suffix are taken as the summary"
)
_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL


@dataclass(frozen=True, slots=True)
class ItemVerdict:
    """The verdict, content-free differences, and the size of what each side sent."""

    verdict: Verdict
    differences: tuple[str, ...]
    summary_items: int
    kept_items: int
    original: ContextSize | None
    compacted: ContextSize | None
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """A match."""
        return self.verdict is Verdict.MATCH


def first_difference(
    original: Sequence[Any],
    rewritten: Sequence[Any],
    noun: str,
    same: Callable[[Any, Any], bool] | None = None,
) -> str | None:
    """Where a rewritten file's items differ from the original's, content-free (None: identical,
    item for item; `same` compares two items where plain equality is too strict)."""
    equal = same or (lambda a, b: a == b)
    for position, (before, after) in enumerate(zip(original, rewritten, strict=False)):
        if not equal(before, after):
            return f"{noun} {position} differs from the original's"
    if len(original) != len(rewritten):
        return f"the rewritten file sent {len(rewritten)} {noun}s, the original {len(original)}"
    return None


def rewrite_verdict(
    original: Sequence[Any],
    rewritten: Sequence[Any],
    noun: str,
    *,
    same: Callable[[Any, Any], bool] | None = None,
    notes: tuple[str, ...] = (),
) -> ItemVerdict:
    """A repair's or a vacuum's verdict (no summary): the client sends the same items from both."""
    found = first_difference(original, rewritten, noun, same)
    return ItemVerdict(
        verdict=Verdict.MISMATCH if found else Verdict.MATCH,
        differences=(found,) if found else (),
        summary_items=0,
        kept_items=0 if found else len(rewritten),
        original=json_size(list(original)),
        compacted=json_size(list(rewritten)),
        notes=notes,
    )


def chat_calls(message: Any) -> Iterator[str]:
    """The call ids a Chat Completions message sends (`tool_calls`)."""
    for call in message.get("tool_calls") or () if isinstance(message, Mapping) else ():
        if isinstance(call, Mapping) and isinstance(call.get("id"), str):
            yield call["id"]


def chat_answer(message: Any) -> str | None:
    """The call a Chat Completions `tool` message answers."""
    if isinstance(message, Mapping) and message.get("role") == "tool":
        answer = message.get("tool_call_id")
        return answer if isinstance(answer, str) else None
    return None


def _role(item: Any) -> str:
    return str(item.get("role", "?")) if isinstance(item, Mapping) else "?"


@dataclass(frozen=True, slots=True)
class ItemRules:
    """What one client's context looks like to its judge: how a summary item, a call and its answer
    are told, and the words its differences use (they name positions, roles and ids, never text)."""

    client: str  # "Codex": "Codex does not resume the compacted file"
    is_summary: Callable[[Any], bool]  # an item the client sends for a summary
    calls: Callable[[Any], Iterable[str]]  # the call ids an item sends
    answers: Callable[[Any], str | None]  # the call id an item answers
    noun: str = "message"  # "item", "message": what the differences count
    context: str = "context"  # "context", "history": what the client sends, in its own words
    summary_noun: str = "a summary message"
    label: Callable[[Any], str] = _role  # an item named without its text
    most_summary_items: int | None = None  # pi sends one message for its latest compaction
    same: Callable[[Any, Any], bool] | None = None  # where plain equality is too strict
    notes: Callable[[Sequence[Any], Sequence[Any], int], tuple[str, ...]] = lambda _c, _o, _k: ()


def _common_suffix(candidate: Sequence[Any], original: Sequence[Any], rules: ItemRules) -> int:
    """How many last items the two contexts share, in order."""
    same = rules.same or (lambda a, b: a == b)
    count = 0
    while count < min(len(candidate), len(original)) and same(candidate[-1 - count], original[-1 - count]):
        count += 1
    return count


def _head_differences(head: Sequence[Any], summaries: Sequence[str] | None, rules: ItemRules) -> list[str]:
    """Why the items before the kept suffix are not a summary."""
    if not head:
        return [
            f"the compacted {rules.context} does not open with a summary (it is all the original's suffix)"
        ]
    if rules.most_summary_items is not None and len(head) > rules.most_summary_items:
        many = f"{len(head)} {rules.noun}s precede the kept suffix"
        return [f"{many} where {rules.client} sends one summary message"]
    found = [
        f"compacted {rules.noun} {position} ({rules.label(item)}) is neither {rules.summary_noun} "
        "nor part of the original's suffix"
        for position, item in enumerate(head)
        if not rules.is_summary(item)
    ]
    wanted = [text.strip() for text in summaries or () if text.strip()]
    if wanted and not any(text in "".join(plain_strings(item)) for item in head for text in wanted):
        found.append(f"none of the {len(head)} {rules.noun}s before the kept suffix carries the summary")
    return found


def _open_calls(items: Sequence[Any], rules: ItemRules) -> set[str]:
    called = {call for item in items for call in rules.calls(item)}
    return called - {answer for item in items if (answer := rules.answers(item)) is not None}


def _pairing_differences(items: Sequence[Any], original: Sequence[Any], rules: ItemRules) -> list[str]:
    """Answers without an earlier call; calls never answered (unless the original leaves them open)."""
    found: list[str] = []
    called: set[str] = set()
    for position, item in enumerate(items):
        answer = rules.answers(item)
        if answer is not None and answer not in called:
            found.append(f"{rules.noun} {position} answers call {answer}, which is never sent before it")
        called.update(rules.calls(item))
    unanswered = _open_calls(items, rules) - _open_calls(original, rules)
    return found + [f"call {call_id} is never answered" for call_id in sorted(unanswered)]


def _leaks(compacted: Sequence[Any], original: Sequence[Any], excluded: Sequence[ExcludedText]) -> list[str]:
    """Excluded texts the compacted context sends and the original does not (by line, never by text)."""
    if not excluded:
        return []
    sent = _SEPARATOR.join(plain_strings(list(compacted)))
    sent_before = _SEPARATOR.join(plain_strings(list(original)))
    hits = [item for item in excluded if item.text in sent and item.text not in sent_before]
    return [
        f"text of excluded line {item.line} ({item.partition_set}) is sent"
        for item in sorted(hits, key=lambda item: item.line)
    ]


def _not_resumed(original: Sequence[Any] | None, compacted: Sequence[Any] | None, client: str) -> ItemVerdict:
    which = "the original" if original is None else "the compacted file"
    return ItemVerdict(
        verdict=Verdict.NOT_RESUMABLE if original is None else Verdict.MISMATCH,
        differences=() if original is None else (f"{client} does not resume the compacted file",),
        summary_items=0,
        kept_items=0,
        original=None if original is None else json_size(original),
        compacted=None if compacted is None else json_size(compacted),
        notes=(f"{client} does not resume {which}",),
    )


def judge_items(
    rules: ItemRules,
    original: Sequence[Any] | None,
    compacted: Sequence[Any] | None,
    *,
    summaries: Sequence[str] | None = None,
    excluded: Sequence[ExcludedText] = (),
) -> ItemVerdict:
    """Compare the contexts a client sent for the original and its compaction (None: it did not
    resume that file); `summaries` empty: a rewrite, every item verbatim."""
    if original is None or compacted is None:
        return _not_resumed(original, compacted, rules.client)
    if summaries is not None and not summaries:
        return rewrite_verdict(original, compacted, rules.noun)
    kept = _common_suffix(compacted, original, rules)
    head = compacted[: len(compacted) - kept]
    differences = _head_differences(head, summaries, rules)
    if not kept:
        differences.append(f"nothing of the original {rules.context} follows the summary")
    differences += _pairing_differences(compacted, original, rules)
    differences += _leaks(compacted, original, excluded)
    unnamed = not any(text.strip() for text in summaries or ())
    return ItemVerdict(
        verdict=Verdict.MISMATCH if differences else Verdict.MATCH,
        differences=tuple(differences),
        summary_items=len(head),
        kept_items=kept,
        original=json_size(original),
        compacted=json_size(compacted),
        notes=((_UNNAMED_SUMMARY,) if unnamed and head else ()) + rules.notes(compacted, original, kept),
    )
