"""`repair` of a Qwen Code session: the repair Qwen Code makes to its calls' answers, written in.

Before every request Qwen Code mends the answers to each model turn's calls (`call_repair.py`):
a call the file never answers gets a failed response, an answer written late (after the next
prompt, or after another part that is no answer) moves up into the content adjacent to the call,
and a call's second answer goes. The file keeps the defect, so every resume repeats the repair
and every validation reports it. The rewrite writes Qwen Code's own repair of each such turn,
the whole turn as Qwen Code repairs it (so the answers keep the order it sends them in): moved
and synthesized answers go into the adjacent record's parts, where Qwen Code puts them (before
its first part that is no answer), or, when that record holds no answer, into a new
`tool_result` record linked on the branch right after the call (the next record re-linked to it
by the one `parentUuid` edited in its line); moved and dropped answers leave their record's parts
(the record stays, its other fields with it). A record whose parts change is written again, only
where its line re-serializes to its own bytes; every other line stays byte for byte. A turn this
cannot write exactly (answers inside a compression's history, past a placeholder turn, a line
that does not re-serialize) leaves the file alone: the job's check refuses any rewrite whose
re-read differs.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from pipeline.formats.qwen_code.api_history import Entry
from pipeline.formats.qwen_code.call_repair import TurnRepair
from pipeline.formats.qwen_code.part_origins import part_origins
from pipeline.formats.qwen_code.session_analysis import QwenAnalysis
from pipeline.formats.qwen_code.session_records import Part, PartKind, QwenRecord, RecordType
from pipeline.formats.rewrites import Rewrite, RewriteEdit, RewriteKind
from pipeline.vocabulary import FindingCode

__all__ = ["DROPPED_DUPLICATE", "MOVED_RESPONSE", "SYNTHESIZED_RESPONSE", "repair_answers"]

SYNTHESIZED_RESPONSE: Final = "synthesized-response"
MOVED_RESPONSE: Final = "moved-response"
DROPPED_DUPLICATE: Final = "dropped-duplicate-response"
_NAMESPACE: Final = uuid.UUID("6f1d2c7e-5b0a-4c8e-9a51-3e2f0d9b7c41")  # the repair's records' uuids, stable


class _Unwritable(Exception):
    """A turn's repair cannot be written exactly into the file."""


@dataclass
class _LineEdit:
    """What changes in one line's `message.parts`: parts dropped (by index), parts inserted."""

    drop: set[int] = field(default_factory=set)
    insert_at: int = 0  # an index into the parts left after the drops
    insert: list[Any] = field(default_factory=list)


@dataclass
class _Plan:
    """Every edit of the file: parts per line, new records after a line, parents re-linked."""

    lines: dict[int, _LineEdit] = field(default_factory=dict)
    records: dict[int, bytes] = field(default_factory=dict)  # after this 1-based line
    relinks: dict[int, tuple[str, str]] = field(default_factory=dict)  # line: (old parent, new)
    edits: list[RewriteEdit] = field(default_factory=list)


def _loads(chunk: bytes) -> dict[str, Any]:
    """A record's line as JSON, provided it re-serializes to its own bytes and holds its parts."""
    body = chunk.rstrip(b"\r\n")
    try:
        value = json.loads(body)
    except ValueError:
        raise _Unwritable from None
    if not isinstance(value, dict) or _dumps(value) != body:
        raise _Unwritable
    message = value.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        raise _Unwritable
    return value


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _response(call: Part) -> dict[str, object]:
    body = {"id": call.call_id, "name": call.name, "response": {"error": call.text}}
    return {"functionResponse": body}


def _origins(analysis: QwenAnalysis, entry: Entry) -> tuple[tuple[int, int], ...]:
    found = part_origins(analysis.session, entry)
    if found is None:
        raise _Unwritable
    return found


def _new_record(analysis: QwenAnalysis, model: Entry, inject: list[Any], plan: _Plan) -> None:
    """The answers as a record right after the call's, the next record of the branch re-linked."""
    chain = analysis.chain.records
    at = next((i for i, c in enumerate(chain) if c.lines == model.lines), None)
    if at is None:
        raise _Unwritable
    parent: QwenRecord = chain[at].record
    ids = ",".join(str(p["functionResponse"].get("id") or "") for p in inject)
    made = str(uuid.uuid5(_NAMESPACE, f"{parent.session_id}:{parent.uuid}:{ids}"))
    fields: dict[str, object] = {
        "uuid": made,
        "parentUuid": parent.uuid,
        "sessionId": parent.session_id,
        "timestamp": parent.timestamp,
        "type": RecordType.TOOL_RESULT.value,
        "cwd": parent.cwd,
        "version": parent.version,
        "message": {"role": "user", "parts": inject},
    }
    after = max(model.lines)
    if after in plan.records:
        raise _Unwritable
    plan.records[after] = _dumps({k: v for k, v in fields.items() if v is not None}) + b"\n"
    for fragment in chain[at + 1].lines if at + 1 < len(chain) else ():
        if fragment in plan.relinks:
            raise _Unwritable
        plan.relinks[fragment] = (parent.uuid, made)


def _into_adjacent(analysis: QwenAnalysis, turn: TurnRepair, inject: list[Any], plan: _Plan) -> bool:
    """The answers inserted into the adjacent content before its first part that is no answer;
    False when that content holds no answer (a new record goes before it instead)."""
    entries = analysis.rebuilt.entries
    if turn.adjacent >= len(entries) or entries[turn.adjacent].content.role != "user":
        return False
    adjacent = entries[turn.adjacent]
    kept = [
        (origin, part)
        for index, (origin, part) in enumerate(
            zip(_origins(analysis, adjacent), adjacent.content.parts, strict=True)
        )
        if index not in {at.part for at in turn.removals if at.entry == turn.adjacent}
    ]
    if not any(part.kind is PartKind.FUNCTION_RESPONSE for _, part in kept):
        return False
    first_other = next((origin for origin, part in kept if part.kind is not PartKind.FUNCTION_RESPONSE), None)
    line, local = first_other if first_other is not None else (kept[-1][0][0], None)
    edit = plan.lines.setdefault(line, _LineEdit())
    if edit.insert:
        raise _Unwritable
    if local is None:  # after every part the line keeps
        local = _part_count(analysis, line) - len(edit.drop)
    else:
        local -= sum(1 for dropped in edit.drop if dropped < local)
    edit.insert_at, edit.insert = local, inject
    return True


def _part_count(analysis: QwenAnalysis, line: int) -> int:
    record = analysis.session.decoded[line - 1]
    return len(record.message.parts) if isinstance(record, QwenRecord) and record.message else 0


def _plan_turn(analysis: QwenAnalysis, turn: TurnRepair, plan: _Plan) -> None:
    entries = analysis.rebuilt.entries
    if turn.adjacent != turn.model + 1:
        raise _Unwritable  # Qwen Code answers past the upstream's placeholder turns
    model = entries[turn.model]
    if model.from_compression:
        raise _Unwritable
    inject: list[Any] = [_response(part) for part in turn.synthesized]
    late = set(turn.late)
    for at in turn.removals:
        line, local = _origins(analysis, entries[at.entry])[at.part]
        plan.lines.setdefault(line, _LineEdit()).drop.add(local)
        if at in turn.duplicates:
            plan.edits.append(RewriteEdit(line, FindingCode.TOOL_RESULT_ID_DUPLICATE, DROPPED_DUPLICATE))
            continue
        inject.append(_loads(_chunk(analysis, line))["message"]["parts"][local])
        code = FindingCode.TOOL_RESULT_NOT_FIRST if at in late else None
        plan.edits.append(RewriteEdit(line, code, MOVED_RESPONSE))
    if turn.synthesized:
        count = len(turn.synthesized)
        plan.edits.append(
            RewriteEdit(model.lines[-1], FindingCode.TOOL_USE_UNANSWERED, SYNTHESIZED_RESPONSE, count)
        )
    if inject and not _into_adjacent(analysis, turn, inject, plan):
        _new_record(analysis, model, inject, plan)


def _chunk(analysis: QwenAnalysis, line: int) -> bytes:
    offsets = analysis.session.offsets
    end = offsets[line] if line < len(offsets) else len(analysis.data)
    return analysis.data[offsets[line - 1] : end]


def _edited_line(chunk: bytes, edit: _LineEdit) -> bytes:
    value = _loads(chunk)
    parts = [p for i, p in enumerate(value["message"]["parts"]) if i not in edit.drop]
    value["message"]["parts"] = parts[: edit.insert_at] + edit.insert + parts[edit.insert_at :]
    body = chunk.rstrip(b"\r\n")
    return _dumps(value) + chunk[len(body) :]


def _relinked(chunk: bytes, old: str, new: str) -> bytes:
    """`chunk` with its one `parentUuid` of `old` now `new`."""
    member = b'"parentUuid":' + json.dumps(old).encode()
    if chunk.count(member) != 1:
        raise _Unwritable
    return chunk.replace(member, b'"parentUuid":' + json.dumps(new).encode())


def _written(analysis: QwenAnalysis, plan: _Plan) -> bytes:
    out: list[bytes] = []
    for line in range(1, len(analysis.session) + 1):
        chunk = _chunk(analysis, line)
        if line in plan.lines:
            chunk = _edited_line(chunk, plan.lines[line])
        if line in plan.relinks:
            chunk = _relinked(chunk, *plan.relinks[line])
        out.append(chunk)
        if line in plan.records:
            out.append((b"" if chunk.endswith(b"\n") else b"\n") + plan.records[line])
    return b"".join(out)


def _needs_writing(turn: TurnRepair) -> bool:
    """A defect of the file: a call never answered, a late answer or a second one (answers Qwen
    Code only gathers from records of their own, as it writes parallel calls' answers, are none)."""
    return bool(turn.synthesized or turn.duplicates or turn.late)


def repair_answers(analysis: QwenAnalysis) -> Rewrite | None:
    """The file with Qwen Code's repair of every defective turn written in; None when no turn is
    defective or one cannot be written exactly."""
    defective = [turn for turn in analysis.repairs if _needs_writing(turn)]
    if not defective or not analysis.resumable:
        return None
    plan = _Plan()
    try:
        for turn in defective:
            _plan_turn(analysis, turn, plan)
        data = _written(analysis, plan)
    except _Unwritable:
        return None
    return Rewrite(RewriteKind.REPAIR, data, tuple(sorted(plan.edits, key=lambda e: e.line)))
