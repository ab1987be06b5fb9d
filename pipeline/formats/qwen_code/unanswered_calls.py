"""`repair` of a Qwen Code session: the answers Qwen Code synthesizes on every load, written in.

Qwen Code answers a call the file holds no response for with a failed one before every request
(`call_repair.py`); the file keeps the unanswered call, so every resume repeats the repair and
every validation reports it. The rewrite writes that answer where Qwen Code puts it, into the
content adjacent to the call after its responses: appended to the parts of the adjacent record
when that record holds responses only (its line re-serialized, only where that gives back its
own bytes), else as a new `tool_result` record linked on the branch right after the call, the
next record re-linked to it by the one `parentUuid` edited in its line. Every other line stays
byte for byte. A turn this cannot place exactly (an adjacent content of responses and text, an
upstream placeholder turn) is left alone: the job's check refuses any rewrite whose re-read
differs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.formats.qwen_code.active_chain import ChainRecord
from pipeline.formats.qwen_code.api_history import is_placeholder
from pipeline.formats.qwen_code.call_repair import UNRECORDED_RESULT, repair_calls
from pipeline.formats.qwen_code.session_analysis import QwenAnalysis
from pipeline.formats.qwen_code.session_records import Part, PartKind, QwenRecord, RecordType
from pipeline.formats.rewrites import Rewrite, RewriteEdit, RewriteKind
from pipeline.vocabulary import FindingCode

__all__ = ["SYNTHESIZED_RESPONSE", "answer_unanswered_calls"]

SYNTHESIZED_RESPONSE = "synthesized-response"
_NAMESPACE = uuid.UUID("6f1d2c7e-5b0a-4c8e-9a51-3e2f0d9b7c41")  # the repair's records' uuids, stable


@dataclass(frozen=True, slots=True)
class _Answer:
    """The responses to `calls` (of the record at `call_line`): appended to the parts of the branch's
    record `at` (`into`), or a new record after it."""

    at: int  # index into the chain
    into: bool
    call_line: int
    calls: tuple[Part, ...]


def _responses_only(record: QwenRecord) -> bool:
    message = record.message
    return (
        record.type is RecordType.TOOL_RESULT
        and message is not None
        and bool(message.parts)
        and all(p.kind is PartKind.FUNCTION_RESPONSE for p in message.parts)
    )


def _place(chain: Sequence[ChainRecord], model: int) -> tuple[int, bool] | None:
    """Where the answer goes (see the module): into the adjacent record when it holds responses only,
    else (a prompt, another model turn, none) a record right after the call; None when one record
    cannot hold it where Qwen Code puts it."""
    adjacent = next((i for i in range(model + 1, len(chain)) if chain[i].record.message is not None), None)
    if adjacent is None:
        return model, False
    record = chain[adjacent].record
    if _responses_only(record):
        return adjacent, True
    message = record.message
    if message is not None and message.role == "model" and is_placeholder(message):
        return None  # Qwen Code answers past the upstream's placeholder turns
    if message is not None and any(p.kind is PartKind.FUNCTION_RESPONSE for p in message.parts):
        return None
    return model, False


def _answers(analysis: QwenAnalysis) -> tuple[_Answer, ...]:
    synthesized = set(repair_calls(analysis.rebuilt.entries).synthesized)
    if not synthesized:
        return ()
    base = analysis.rebuilt.base_line or 0
    chain = analysis.chain.records
    answers: list[_Answer] = []
    for index, entry in enumerate(chain):
        record = entry.record
        if record.message is None or record.message.role != "model" or record.line < base:
            continue
        calls = tuple(
            p for p in record.message.parts if p.kind is PartKind.FUNCTION_CALL and p.call_id in synthesized
        )
        place = _place(chain, index) if calls else None
        if calls and place is None:
            return ()
        if place is not None:
            answers.append(_Answer(place[0], place[1], record.line, calls))
    return tuple(answers)


def _response(call: Part) -> dict[str, object]:
    body = {"id": call.call_id, "name": call.name or "unknown", "response": {"error": UNRECORDED_RESULT}}
    return {"functionResponse": body}


def _record(parent: QwenRecord, calls: tuple[Part, ...]) -> tuple[str, bytes]:
    key = f"{parent.session_id}:{parent.uuid}:" + ",".join(c.call_id or "" for c in calls)
    made = str(uuid.uuid5(_NAMESPACE, key))
    fields: dict[str, object] = {
        "uuid": made,
        "parentUuid": parent.uuid,
        "sessionId": parent.session_id,
        "timestamp": parent.timestamp,
        "type": RecordType.TOOL_RESULT.value,
        "cwd": parent.cwd,
        "version": parent.version,
        "message": {"role": "user", "parts": [_response(call) for call in calls]},
    }
    line = json.dumps(
        {k: v for k, v in fields.items() if v is not None}, separators=(",", ":"), ensure_ascii=False
    )
    return made, line.encode()


def _relinked(chunk: bytes, old: str, new: str) -> bytes | None:
    """`chunk` with its one `parentUuid` of `old` now `new` (None: not exactly one such member)."""
    member = b'"parentUuid":' + json.dumps(old).encode()
    if chunk.count(member) != 1:
        return None
    return chunk.replace(member, b'"parentUuid":' + json.dumps(new).encode())


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _appended(chunk: bytes, calls: tuple[Part, ...]) -> bytes | None:
    """`chunk` (a record's line) with the answers appended to its message's parts; None unless its
    line re-serializes to its own bytes (so nothing else of it changes)."""
    body = chunk.rstrip(b"\r\n")
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if _dumps(value) != body or not isinstance(value.get("message", {}).get("parts"), list):
        return None
    value["message"]["parts"].extend(_response(call) for call in calls)
    return _dumps(value) + chunk[len(body) :]


def _edited(
    analysis: QwenAnalysis, answers: tuple[_Answer, ...]
) -> tuple[list[bytes], dict[int, bytes]] | None:
    """Each physical line (edited in place where an answer goes into it or a record is re-linked),
    and the records to insert after a line; None when one cannot be placed."""
    chain = analysis.chain.records
    offsets = [*analysis.session.offsets, len(analysis.data)]
    chunks = [analysis.data[offsets[i] : offsets[i + 1]] for i in range(len(analysis.session.offsets))]
    inserted: dict[int, bytes] = {}  # after this 1-based line
    for answer in answers:
        target = chain[answer.at]
        if answer.into:
            edited = _appended(chunks[max(target.lines) - 1], answer.calls)
            if edited is None:
                return None
            chunks[max(target.lines) - 1] = edited
            continue
        made, line = _record(target.record, answer.calls)
        if max(target.lines) in inserted:
            return None
        inserted[max(target.lines)] = line + b"\n"
        for fragment in chain[answer.at + 1].lines if answer.at + 1 < len(chain) else ():
            relinked = _relinked(chunks[fragment - 1], target.record.uuid, made)
            if relinked is None:
                return None
            chunks[fragment - 1] = relinked
    return chunks, inserted


def answer_unanswered_calls(analysis: QwenAnalysis) -> Rewrite | None:
    """The file with every call Qwen Code would answer itself answered in it; None when no call is
    unanswered or one cannot be placed."""
    answers = _answers(analysis)
    edited = _edited(analysis, answers) if answers and analysis.resumable else None
    if edited is None:
        return None
    chunks, inserted = edited
    out: list[bytes] = []
    for number, chunk in enumerate(chunks, 1):
        out.append(chunk)
        if number in inserted:
            out.append((b"" if chunk.endswith(b"\n") else b"\n") + inserted[number])
    edits = tuple(
        RewriteEdit(a.call_line, FindingCode.TOOL_USE_UNANSWERED, SYNTHESIZED_RESPONSE, len(a.calls))
        for a in answers
    )
    return Rewrite(RewriteKind.REPAIR, b"".join(out), edits)
