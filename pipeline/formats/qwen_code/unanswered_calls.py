"""`repair` of a Qwen Code session: the answers Qwen Code synthesizes on every load, written in.

Qwen Code answers a call the file holds no response for with a failed one before every request
(`call_repair.py`); the file keeps the unanswered call, so every resume repeats the repair and
every validation reports it. The rewrite writes that answer as Qwen Code would have recorded it:
one `tool_result` record holding the synthesized responses, linked on the branch after the model
record and the response records adjacent to it (so Qwen Code's merge of consecutive user contents
sends the same message), its child re-linked to it by the one `parentUuid` edited in its line.
Every other line stays byte for byte. A turn this cannot place exactly (a response-and-text
content after the call, a compression's history) is left alone: the job's check refuses a
rewrite whose re-read differs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.formats.qwen_code.active_chain import ChainRecord
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
    """The record to insert after the branch's record `after`, answering `calls` of line `call_line`."""

    after: int  # index into the chain
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


def _place(chain: Sequence[ChainRecord], model: int) -> int:
    """The branch's last record of the response records adjacent to the call (records without a
    message in between are passed over)."""
    place = model
    for index in range(model + 1, len(chain)):
        record = chain[index].record
        if record.message is None:
            continue
        if not _responses_only(record):
            break
        place = index
    return place


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
        if calls:
            answers.append(_Answer(_place(chain, index), record.line, calls))
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


def _chunks(analysis: QwenAnalysis) -> list[bytes]:
    """Each physical line with its terminator."""
    offsets = [*analysis.session.offsets, len(analysis.data)]
    return [analysis.data[offsets[i] : offsets[i + 1]] for i in range(len(analysis.session.offsets))]


def _relinked(chunk: bytes, old: str, new: str) -> bytes | None:
    """`chunk` with its one `parentUuid` of `old` now `new` (None: not exactly one such member)."""
    member = b'"parentUuid":' + json.dumps(old).encode()
    if chunk.count(member) != 1:
        return None
    return chunk.replace(member, b'"parentUuid":' + json.dumps(new).encode())


def answer_unanswered_calls(analysis: QwenAnalysis) -> Rewrite | None:
    """The file with every call Qwen Code would answer itself answered in it; None when no call is
    unanswered or one cannot be placed."""
    answers = _answers(analysis)
    if not answers or not analysis.resumable:
        return None
    chain = analysis.chain.records
    chunks = _chunks(analysis)
    inserted: dict[int, bytes] = {}  # after this 1-based line
    edits: list[RewriteEdit] = []
    for answer in answers:
        parent = chain[answer.after]
        made, line = _record(parent.record, answer.calls)
        after = max(parent.lines)
        if after in inserted:
            return None
        inserted[after] = line + b"\n"
        if answer.after + 1 < len(chain):
            for fragment in chain[answer.after + 1].lines:
                relinked = _relinked(chunks[fragment - 1], parent.record.uuid, made)
                if relinked is None:
                    return None
                chunks[fragment - 1] = relinked
        edits.append(
            RewriteEdit(
                answer.call_line, FindingCode.TOOL_USE_UNANSWERED, SYNTHESIZED_RESPONSE, len(answer.calls)
            )
        )
    out: list[bytes] = []
    for number, chunk in enumerate(chunks, 1):
        out.append(chunk)
        if number in inserted:
            out.append((b"" if chunk.endswith(b"\n") else b"\n") + inserted[number])
    return Rewrite(RewriteKind.REPAIR, b"".join(out), tuple(edits))
