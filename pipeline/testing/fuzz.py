"""A seeded mutation fuzzer for transcripts: damage real and generated sessions the ways fleets do.

`mutate(data, rng, kind)` returns a damaged copy of a transcript's bytes; every `Mutation` is one
way files get damaged in real fleets (a crash mid-append, a disk error flipping bytes, pasted
binary tool output, a hand edit, a bug in another tool). Same bytes, same seed, same result, so a
failing case is named by (source, kind, seed) and can be replayed or minimized (`minimize`).

The `PAIRING` kinds damage what the Messages API checks rather than the bytes: a record the API
refuses in a request (a call whose result is missing, a repeated tool id, a result after a text
block, a result naming no call). `plant(data, kind, line)` puts one at a chosen tool result, so
a test can place it in the part a summary replaces or in the tail a compaction keeps
(`planting.py` plants what the seed's topology rules refuse).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final

import orjson

__all__ = ["PAIRING", "Mutation", "minimize", "mutate", "nested", "plant", "result_lines"]

INVALID_UTF8: Final = (
    b"\x80",  # a lone continuation byte
    b"\xc0\xaf",  # an overlong encoding
    b"\xe2\x82",  # a sequence cut short
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf5\x80\x80\x80",  # beyond U+10FFFF
    b"\xff",
)
STRUCTURAL: Final = re.compile(rb'[{}\[\]:,"]')
_STRING_START: Final = re.compile(rb'":"')
_KEY_START: Final = re.compile(rb'[{,]"')
WRONG_TYPES: Final[tuple[tuple[str, Any], ...]] = (
    ("parentUuid", 7),
    ("parentUuid", {}),
    ("uuid", 7),
    ("uuid", ["x"]),
    ("type", 5),
    ("sessionId", 3),
    ("timestamp", "garbage"),
    ("isSidechain", "yes"),
    ("isCompactSummary", "true"),
    ("isMeta", 1),
    ("leafUuid", 12),
    ("logicalParentUuid", False),
    ("sourceToolAssistantUUID", 1.5),
    ("message", "x"),
    ("message", None),
    ("message.content", {}),
    ("message.content", 17),
    ("message.role", 1),
    ("message.id", []),
    ("message.content.0", "x"),
    ("message.content.0.type", None),
    ("message.content.0.id", None),
    ("message.content.0.tool_use_id", 9),
    ("message.content.0.text", {"a": 1}),
    ("toolUseResult", [1, [2, [3]]]),
    ("attachment", "x"),
    ("compactMetadata", "x"),
)
"""(member path, wrong value): every member the index and the record readers look at."""
HUGE_NUMBERS: Final = (b"1e400", b"123456789012345678901234567890", b"-0.0000000000000000000001", b"1E+308")


class Mutation(StrEnum):
    """The kinds of damage; each names what a user's file went through."""

    BYTE_FLIPS = "byte-flips"  # disk or transfer errors
    INVALID_UTF8_VALUE = "invalid-utf8-value"  # pasted binary output inside a string
    INVALID_UTF8_KEY = "invalid-utf8-key"
    DEEP_NESTING = "deep-nesting"  # a hostile or buggy tool result
    TRUNCATE_END = "truncate-end"  # a crash mid-append: the file ends inside a record
    TRUNCATE_LINE = "truncate-line"  # a line cut at a structural position, the file goes on
    RANDOM_CUT = "random-cut"  # a byte range lost
    SHUFFLE = "shuffle"  # lines reordered by a merge tool
    DUPLICATE = "duplicate"  # lines written twice (a retried append)
    INTERLEAVE = "interleave"  # two writers on one file
    CRLF = "crlf"  # an editor on another platform
    BOM = "bom"  # a BOM at the start or before a middle line
    NUL = "nul"  # NUL bytes, raw or escaped
    WRONG_TYPE = "wrong-type"  # a member of the wrong JSON type
    HUGE_NUMBER = "huge-number"
    HUGE_LINE = "huge-line"  # a huge tool output on one line
    NOT_OBJECT = "not-object"  # an array, number or string where a record belongs
    LONE_SURROGATE = "lone-surrogate"  # half of an escaped emoji, cut by a tool that counts UTF-16
    DROPPED_RESULT = "dropped-result"  # a call's results never written; the session went on without them
    DUPLICATED_TOOL_ID = "duplicated-tool-id"  # a client bug giving a call an earlier call's id
    RESULT_NOT_FIRST = "result-not-first"  # a tool that writes text before the result in its message
    ORPHAN_RESULT = "orphan-result"  # a result naming a call that was never made (an id rewritten)


PAIRING: Final = (
    Mutation.DROPPED_RESULT,
    Mutation.DUPLICATED_TOOL_ID,
    Mutation.RESULT_NOT_FIRST,
    Mutation.ORPHAN_RESULT,
)
"""Damage to tool pairing: records the Messages API refuses in a request."""
ORPHAN_ID: Final = "toolu_01OrphanResultWithoutAnyCallXX"


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pick_line(lines: list[bytes], rng: random.Random) -> int:
    candidates = [i for i, line in enumerate(lines) if line.strip()]
    return rng.choice(candidates) if candidates else 0


def _insert_in_string(line: bytes, rng: random.Random, payload: bytes, pattern: re.Pattern[bytes]) -> bytes:
    spots = [m.end() for m in pattern.finditer(line)]
    at = rng.choice(spots) if spots else len(line) // 2
    return line[:at] + payload + line[at:]


def nested(depth: int, leaf: Any = 0) -> bytes:
    """A JSON array nested `depth` deep, built without recursion."""
    return b"[" * depth + orjson.dumps(leaf) + b"]" * depth


def _set_member(record: dict[str, Any], path: str, value: Any) -> bool:
    keys = path.split(".")
    target: Any = record
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) and key.isdigit() else target.get(key)
        if not isinstance(target, dict | list) or (isinstance(target, list) and not target):
            return False
    last = keys[-1]
    if isinstance(target, list):
        if not last.isdigit() or int(last) >= len(target):
            return False
        target[int(last)] = value
    else:
        target[last] = value
    return True


def _wrong_type(lines: list[bytes], rng: random.Random) -> None:
    for _ in range(20):
        at = _pick_line(lines, rng)
        try:
            record = orjson.loads(lines[at])
        except orjson.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        path, value = rng.choice(WRONG_TYPES)
        if _set_member(record, path, value):
            lines[at] = orjson.dumps(record)
            return


def _deep(lines: list[bytes], rng: random.Random, depth: int) -> None:
    at = _pick_line(lines, rng)
    line = lines[at]
    deep = nested(depth)
    where = rng.randrange(3)
    if where == 0 and line.endswith(b"}"):  # an extra top-level member
        lines[at] = line[:-1] + b',"deep":' + deep + b"}"
    elif where == 1 and b'"content":[' in line:  # inside message content
        lines[at] = line.replace(b'"content":[', b'"content":[' + deep + b",", 1)
    else:  # the whole line
        lines[at] = deep


def _truncate_line(lines: list[bytes], rng: random.Random) -> None:
    at = _pick_line(lines, rng)
    spots = [m.start() for m in STRUCTURAL.finditer(lines[at])] or [len(lines[at]) // 2]
    lines[at] = lines[at][: rng.choice(spots) + rng.randrange(2)]


def _flip_bytes(data: bytes, rng: random.Random, count: int) -> bytes:
    buffer = bytearray(data)
    for _ in range(count):
        if buffer:
            buffer[rng.randrange(len(buffer))] ^= 1 << rng.randrange(8)
    return bytes(buffer)


def _line_mutation(kind: Mutation, lines: list[bytes], rng: random.Random, huge_bytes: int) -> None:
    at = _pick_line(lines, rng)
    if kind is Mutation.INVALID_UTF8_VALUE:
        bad = b"".join(rng.choice(INVALID_UTF8) for _ in range(3))
        lines[at] = _insert_in_string(lines[at], rng, bad, _STRING_START)
    elif kind is Mutation.INVALID_UTF8_KEY:
        lines[at] = _insert_in_string(lines[at], rng, rng.choice(INVALID_UTF8), _KEY_START)
    elif kind is Mutation.NUL:
        nul = rng.choice((b"\x00", b"\\u0000", b"\x00\x00\x00"))
        lines[at] = _insert_in_string(lines[at], rng, nul, _STRING_START)
    elif kind is Mutation.LONE_SURROGATE:
        half = rng.choice((b"\\ud800", b"\\udfff", b"\\ud83d", b"\\ude00x"))
        lines[at] = _insert_in_string(lines[at], rng, half, _STRING_START)
    elif kind is Mutation.HUGE_NUMBER:
        number = rng.choice(HUGE_NUMBERS)
        lines[at] = re.sub(rb"(?<=:)-?\d+(\.\d+)?", lambda m: number, lines[at], count=1)
    elif kind is Mutation.HUGE_LINE:
        text = ("binary-ish output " * (huge_bytes // 18 + 1))[:huge_bytes]
        lines.insert(at, orjson.dumps({"type": "user", "message": {"role": "user", "content": text}}))
    elif kind is Mutation.NOT_OBJECT:
        lines.insert(at, rng.choice((b"[1,2,3]", b"42", b'"a string"', b"null", b"[{}]", b"true")))
    elif kind is Mutation.BOM:
        lines[at] = b"\xef\xbb\xbf" + lines[at]


def _order_mutation(kind: Mutation, lines: list[bytes], rng: random.Random, other: bytes) -> list[bytes]:
    if kind is Mutation.SHUFFLE:
        start = rng.randrange(max(1, len(lines)))
        window = lines[start : start + rng.randint(2, 12)]
        rng.shuffle(window)
        return lines[:start] + window + lines[start + len(window) :]
    if kind is Mutation.DUPLICATE:
        for _ in range(rng.randint(1, 5)):
            at = _pick_line(lines, rng)
            lines.insert(at, lines[at])
        return lines
    foreign = [line for line in _lines(other) if line.strip()]  # INTERLEAVE
    for line in foreign[: rng.randint(1, 20)]:
        lines.insert(rng.randrange(len(lines) + 1), line)
    return lines


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _blocks(record: dict[str, Any] | None, kind: str) -> list[dict[str, Any]]:
    message = record.get("message") if record is not None else None
    content = message.get("content") if isinstance(message, dict) else None
    items = content if isinstance(content, list) else []
    return [b for b in items if isinstance(b, dict) and b.get("type") == kind]


def result_lines(data: bytes) -> list[int]:
    """1-based lines of records holding a tool_result (where `plant` puts pairing damage)."""
    return [n for n, line in enumerate(_lines(data), 1) if _blocks(_record(line), "tool_result")]


def _ids(record: dict[str, Any] | None, kind: str) -> set[str]:
    """The tool ids a record's `kind` blocks carry (`tool_use` ids, or the ids results answer)."""
    key = "id" if kind == "tool_use" else "tool_use_id"
    return {value for b in _blocks(record, kind) if isinstance(value := b.get(key), str)}


def _message_id(record: dict[str, Any] | None) -> str | None:
    message = record.get("message") if record is not None else None
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None


def _batch(lines: list[bytes], at: int) -> set[int]:
    """Positions of every record answering a call of the message whose call `at` answers."""
    answered = _ids(_record(lines[at]), "tool_result")
    records = [_record(line) for line in lines]
    messages = {_message_id(r) for r in records if _ids(r, "tool_use") & answered} - {None}
    calls = answered.union(*(_ids(r, "tool_use") for r in records if _message_id(r) in messages))
    return {n for n, r in enumerate(records) if (results := _ids(r, "tool_result")) and results <= calls} | {
        at
    }


def _drop(lines: list[bytes], at: int) -> list[bytes]:
    """Every result of the call answered at `at` (the whole parallel batch) removed, their children
    hung off the nearest kept ancestor, so the chain stays whole."""
    gone = _batch(lines, at)
    parent_of = {
        (r := _record(lines[n]) or {}).get("uuid"): r.get("parentUuid") for n in gone if _record(lines[n])
    }
    kept = [line for n, line in enumerate(lines) if n not in gone]
    for position, line in enumerate(kept):
        child = _record(line)
        parent = child.get("parentUuid") if child is not None else None
        if child is None or parent not in parent_of:
            continue
        while parent in parent_of:
            parent = parent_of[parent]
        child["parentUuid"] = parent
        kept[position] = orjson.dumps(child)
    return kept


def _reuse_id(lines: list[bytes], at: int) -> list[bytes]:
    """The call answered at `at`, and its results, given the id of the nearest call before it."""
    answered = _ids(_record(lines[at]), "tool_result")
    calls = [
        (n, tool_id)
        for n, line in enumerate(lines)
        for b in _blocks(_record(line), "tool_use")
        if isinstance(tool_id := b.get("id"), str)
    ]
    own = min((n for n, tool_id in calls if tool_id in answered), default=at)
    before = [tool_id for n, tool_id in calls if n < own and tool_id not in answered]
    others = before or [tool_id for _, tool_id in calls if tool_id not in answered]
    if not others:
        return lines
    earlier = others[-1] if before else others[0]
    for position, line in enumerate(lines):
        record = _record(line)
        touched = [b for b in _blocks(record, "tool_use") if b.get("id") in answered]
        touched += [b for b in _blocks(record, "tool_result") if b.get("tool_use_id") in answered]
        for block in touched:
            block["id" if block["type"] == "tool_use" else "tool_use_id"] = earlier
        if touched and record is not None:
            lines[position] = orjson.dumps(record)
    return lines


def plant(data: bytes, kind: Mutation, line: int) -> bytes:
    """`data` with pairing damage `kind` (one of `PAIRING`) at the tool result on 1-based `line`."""
    lines = _lines(data)
    at = line - 1
    record = _record(lines[at])
    if kind is Mutation.DROPPED_RESULT:
        return b"\n".join(_drop(lines, at))
    if kind is Mutation.DUPLICATED_TOOL_ID:
        return b"\n".join(_reuse_id(lines, at))
    content = record["message"]["content"] if record is not None and _blocks(record, "tool_result") else None
    if content is None:
        return data
    if kind is Mutation.RESULT_NOT_FIRST:
        content.insert(0, {"type": "text", "text": "Output follows."})
    else:  # ORPHAN_RESULT
        _blocks(record, "tool_result")[0]["tool_use_id"] = ORPHAN_ID
    lines[at] = orjson.dumps(record)
    return b"\n".join(lines)


def mutate(
    data: bytes,
    rng: random.Random,
    kind: Mutation,
    *,
    other: bytes = b"",
    depth: int = 100_000,
    huge_bytes: int = 2_000_000,
) -> bytes:
    """A damaged copy of `data` (`other` is the session interleaved into it)."""
    if kind is Mutation.BYTE_FLIPS:
        return _flip_bytes(data, rng, 20)
    if kind is Mutation.TRUNCATE_END:
        spots = [m.start() for m in STRUCTURAL.finditer(data, max(0, len(data) - 4000))] or [len(data)]
        return data[: rng.choice(spots)]
    if kind is Mutation.RANDOM_CUT:
        start = rng.randrange(max(1, len(data)))
        return data[:start] + data[start + rng.randint(1, 400) :]
    if kind is Mutation.CRLF:
        if rng.random() < 0.5:
            return data.replace(b"\n", b"\r\n")
        return b"\n".join(line + b"\r" if rng.random() < 0.5 else line for line in _lines(data))
    lines = _lines(data)
    if kind in PAIRING:
        sites = result_lines(data)
        lines = _lines(plant(data, kind, rng.choice(sites))) if sites else lines
    elif kind in (Mutation.SHUFFLE, Mutation.DUPLICATE, Mutation.INTERLEAVE):
        lines = _order_mutation(kind, lines, rng, other or data)
    elif kind is Mutation.WRONG_TYPE:
        _wrong_type(lines, rng)
    elif kind is Mutation.DEEP_NESTING:
        _deep(lines, rng, depth)
    elif kind is Mutation.TRUNCATE_LINE:
        _truncate_line(lines, rng)
    else:
        _line_mutation(kind, lines, rng, huge_bytes)
    return b"\n".join(lines)


def minimize(data: bytes, fails: Callable[[bytes], bool]) -> bytes:
    """The smallest set of whole lines of `data` that still `fails` (delta debugging by halves)."""
    lines = _lines(data)
    chunk = max(1, len(lines) // 2)
    while chunk >= 1:
        start, shrunk = 0, False
        while start < len(lines):
            trial = lines[:start] + lines[start + chunk :]
            if trial and fails(b"\n".join(trial)):
                lines, shrunk = trial, True
            else:
                start += chunk
        if not shrunk:
            chunk //= 2
    return b"\n".join(lines)
