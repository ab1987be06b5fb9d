"""Judge a Gemini CLI compaction by what Gemini CLI sends: the summary, then a suffix of the original.

Given the contents Gemini CLI rebuilt and sent for the original session and for its candidate
(`resume.resume_gemini`), the candidate holds when (1) its context opens with the summary as a
user `Content` (one of the summary texts, when they are known) and Gemini CLI's acknowledgement,
(2) what follows is a non-empty suffix of the original's contents, `Content` for `Content`
(JSON equality; a tool output Gemini CLI masked compares by its call's id and name), (3) every
function call is answered by a response of its id in the `Content` after it, and (4) no text of
an excluded record appears in it. Differences name positions, roles and counts only, never text.

A rewrite that changes what is sent (a repair answering open calls) declares the items it changes
(`SentEdit`): Gemini CLI must send for the original the history the reader rebuilds from it, and
for the candidate that history with exactly the declared items put in, every call answered.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from pipeline.formats.gemini_cli.chat_analysis import ACKNOWLEDGEMENT, analyze_chat
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import SentEdit
from pipeline.proof.context import json_size
from pipeline.proof.gemini_cli.resume import GeminiResumeFailed, GeminiResumeResult, resume_gemini
from pipeline.proof.item_verdict import ItemVerdict, first_difference, rewrite_verdict
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

__all__ = [
    "edited_history",
    "judge_gemini",
    "judge_gemini_edits",
    "prove_gemini_edits",
    "prove_gemini_resume",
]

_HEAD: Final = 2  # the summary's user Content and the acknowledgement's model Content


def _texts(content: Any) -> list[str]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [p["text"] for p in parts or () if isinstance(p, Mapping) and isinstance(p.get("text"), str)]


def _ids(content: Any, key: str) -> list[str]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [
        str(p[key].get("id"))
        for p in parts or ()
        if isinstance(p, Mapping) and isinstance(p.get(key), Mapping)
    ]


def _head_differences(sent: Sequence[Any], summaries: Sequence[str] | None) -> Iterator[str]:
    if len(sent) < _HEAD + 1:
        yield f"the candidate sent {len(sent)} contents: fewer than a summary, its acknowledgement and a tail"
        return
    if sent[0].get("role") != "user" or len(_texts(sent[0])) != 1:
        yield "content 0 is not one user text (the summary)"
    elif summaries is not None and _texts(sent[0])[0] not in summaries:
        yield "content 0 is not the summary the candidate was written with"
    if sent[1].get("role") != "model" or _texts(sent[1]) != [ACKNOWLEDGEMENT]:
        yield "content 1 is not Gemini CLI's acknowledgement of the summary"


def _pairing_differences(sent: Sequence[Any]) -> Iterator[str]:
    for index, content in enumerate(sent):
        calls = _ids(content, "functionCall")
        answered = set(_ids(sent[index + 1], "functionResponse")) if index + 1 < len(sent) else set()
        missing = [call for call in calls if call not in answered]
        if missing:
            yield f"content {index}: {len(missing)} call(s) unanswered: {', '.join(missing)}"


# Gemini CLI masks older tool outputs of a long history before each request (its tool output
# masking: past the newest 50k tokens of them, a preview and the path of a file it writes, under a
# random name). What it masks depends on the whole history, so the candidate's and the original's
# masking differ: a masked response is compared by its call's id and name.
_MASKED: Final = "<tool_output_masked>"


def _masked(part: Any) -> bool:
    response = part.get("functionResponse") if isinstance(part, Mapping) else None
    body = response.get("response") if isinstance(response, Mapping) else None
    output = body.get("output") if isinstance(body, Mapping) else None
    return isinstance(output, str) and output.startswith(_MASKED)


def _same_part(before: Any, after: Any) -> bool:
    if before == after:
        return True
    if not (_masked(before) or _masked(after)):
        return False
    key = ("id", "name")
    first, second = before.get("functionResponse"), after.get("functionResponse")  # both parts: masked
    return (
        isinstance(first, Mapping)
        and isinstance(second, Mapping)
        and [first.get(k) for k in key] == [second.get(k) for k in key]
    )


def _same_content(before: Any, after: Any) -> bool:
    if before == after:
        return True
    if not (isinstance(before, Mapping) and isinstance(after, Mapping)):
        return False
    if before.get("role") != after.get("role"):
        return False
    first, second = before.get("parts") or [], after.get("parts") or []
    return len(first) == len(second) and all(_same_part(a, b) for a, b in zip(first, second, strict=True))


def _is_suffix(original: Sequence[Any], tail: Sequence[Any]) -> bool:
    start = len(original) - len(tail)
    kept = original[start:] if start >= 0 else ()
    return bool(tail) and len(kept) == len(tail) and all(map(_same_content, kept, tail))


def _masked_count(contents: Sequence[Any]) -> int:
    return sum(1 for c in contents if isinstance(c, Mapping) for p in c.get("parts") or () if _masked(p))


def judge_gemini(
    original: Sequence[Any],
    candidate: Sequence[Any],
    *,
    excluded: Sequence[ExcludedText] = (),
    summaries: Sequence[str] | None = None,
) -> ItemVerdict:
    """The verdict on two captured contexts (each without its environment part and its probe);
    `summaries` empty: a rewrite, which must send the original's contents one for one."""
    if summaries is not None and not summaries:
        return rewrite_verdict(
            original, candidate, "content", same=_same_content, notes=_masking_notes(original, candidate)
        )
    differences = list(_head_differences(candidate, summaries))
    tail = list(candidate[_HEAD:])
    if not _is_suffix(original, tail):
        differences.append(
            f"the {len(tail)} contents after the summary are not a suffix of the original's {len(original)}"
        )
    differences.extend(_pairing_differences(candidate))
    sent_text = orjson.dumps(list(candidate)).decode()
    leaked = sorted({e.line for e in excluded if orjson.dumps(e.text).decode()[1:-1] in sent_text})
    if leaked:
        differences.append(f"text of excluded lines {leaked} is sent")
    return ItemVerdict(
        verdict=Verdict.MISMATCH if differences else Verdict.MATCH,
        differences=tuple(differences),
        summary_items=_HEAD,
        kept_items=len(tail),
        original=json_size(list(original)),
        compacted=json_size(list(candidate)),
        notes=_masking_notes(original, candidate),
    )


def _masking_notes(original: Sequence[Any], candidate: Sequence[Any]) -> tuple[str, ...]:
    masked = (_masked_count(original), _masked_count(candidate))
    if not any(masked):
        return ()
    return (
        f"Gemini CLI masked {masked[0]} of the original's and {masked[1]} of the candidate's tool "
        "outputs (compared by call id and name)",
    )


# What Gemini CLI prints when `--resume latest` finds no session it lists (it then goes on as a
# new session: the request it sends holds no history).
_NO_SESSION: Final = "No previous sessions found"


def _unresumed(result: GeminiResumeResult, side: str) -> str | None:
    if result.returncode != 0:
        return f"Gemini CLI exited {result.returncode} resuming the {side}"
    if _NO_SESSION in result.stderr:
        return f"Gemini CLI found no session to resume in the {side}"
    return None if result.resumed else f"Gemini CLI sent no request resuming the {side}"


def _resume_both(
    original: Path, candidate: Path, *, script: Path, timeout: float
) -> tuple[Sequence[Any], Sequence[Any]] | ItemVerdict:
    """What Gemini CLI sent resuming each file, or the verdict when one side was not resumed: its
    failing on the original is the client's failure (`GeminiResumeFailed`)."""
    before = resume_gemini(original, script=script, timeout=timeout)
    if before.returncode != 0:
        raise GeminiResumeFailed(original.name, before.returncode)
    if (why := _unresumed(before, "original")) is not None:
        return ItemVerdict(Verdict.NOT_RESUMABLE, (why,), 0, 0, None, None)
    after = resume_gemini(candidate, script=script, timeout=timeout)
    if (why := _unresumed(after, "candidate")) is not None:
        return ItemVerdict(Verdict.MISMATCH, (why,), 0, 0, json_size(list(before.context)), None)
    return before.context, after.context


def prove_gemini_resume(
    original: Path,
    candidate: Path,
    *,
    script: Path,
    timeout: float,
    excluded: Sequence[ExcludedText] = (),
    summaries: Sequence[str] | None = None,
) -> ItemVerdict:
    """Resume both files in the real Gemini CLI and judge what it sent: Gemini CLI failing on the
    original is the client's failure (`GeminiResumeFailed`), an original it does not resume is
    `not-resumable`, a candidate it fails on or does not resume is a mismatch."""
    resumed = _resume_both(original, candidate, script=script, timeout=timeout)
    if isinstance(resumed, ItemVerdict):
        return resumed
    before, after = resumed
    return judge_gemini(before, after, excluded=excluded, summaries=summaries)


def _coalesced(contents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The `contents` Gemini CLI sends for turns: consecutive turns of one role merged."""
    merged: list[dict[str, Any]] = []
    for content in contents:
        if merged and merged[-1]["role"] == content["role"]:
            merged[-1]["parts"] = [*merged[-1]["parts"], *content["parts"]]
        else:
            merged.append({"role": content["role"], "parts": list(content["parts"])})
    return merged


def _turns(item: Any) -> list[Mapping[str, Any]]:
    """The turns of one sent item's JSON (a compression head is a list of two)."""
    return list(item) if isinstance(item, list) else [item]


def edited_history(data: bytes, limits: LineLimits, edits: Sequence[SentEdit]) -> tuple[Any, Any]:
    """The `contents` the reader says Gemini CLI sends for a file, and for it with `edits` put in
    (positions in the edited order, as `expected_sent` applies them)."""
    items: list[Any] = [[turn.content for turn in group] for group, _ in analyze_chat(data, limits).items]
    original = _coalesced([turn for item in items for turn in item])
    for edit in sorted(edits, key=lambda e: e.position):
        turns = _turns(orjson.loads(edit.item))
        if edit.replaces and edit.position < len(items):
            items[edit.position] = turns
        else:
            items.insert(edit.position, turns)
    return original, _coalesced([turn for item in items for turn in item])


def judge_gemini_edits(
    original: Sequence[Any], candidate: Sequence[Any], expected: tuple[Any, Any], edits: int
) -> ItemVerdict:
    """The verdict on a rewrite that changes what is sent: the original's captured context is the
    reader's (`expected[0]`), the candidate's is that with the declared items (`expected[1]`), and
    every call in it is answered."""
    differences = []
    if first_difference(expected[0], original, "content", _same_content) is not None:
        differences.append("Gemini CLI sent for the original another history than the one read from it")
    if (found := first_difference(expected[1], candidate, "content", _same_content)) is not None:
        differences.append(f"with the {edits} declared item(s) put in: {found}")
    differences.extend(_pairing_differences(candidate))
    return ItemVerdict(
        verdict=Verdict.MISMATCH if differences else Verdict.MATCH,
        differences=tuple(differences),
        summary_items=0,
        kept_items=0 if differences else len(candidate),
        original=json_size(list(original)),
        compacted=json_size(list(candidate)),
        notes=(f"{edits} sent item(s) changed as the rewrite declares", *_masking_notes(original, candidate)),
    )


def prove_gemini_edits(
    original: Path,
    candidate: Path,
    *,
    script: Path,
    timeout: float,
    limits: LineLimits,
    edits: Sequence[SentEdit],
) -> ItemVerdict:
    """Resume both files in the real Gemini CLI and judge a rewrite that declares `edits` to what
    it sends; failures as `prove_gemini_resume`."""
    resumed = _resume_both(original, candidate, script=script, timeout=timeout)
    if isinstance(resumed, ItemVerdict):
        return resumed
    before, after = resumed
    expected = edited_history(original.read_bytes(), limits, edits)
    return judge_gemini_edits(before, after, expected, len(edits))
