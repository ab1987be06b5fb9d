"""A real Claude Code session grown to a giant: its turns repeated with fresh ids on one chain.

``grow_session(source, root, target_bytes=...)`` writes ``root/<session-id>.jsonl`` (the source's
session id, so the file is still that session's) of at least ``target_bytes``: the source's lines
up to its last main-chain root (its first prompt, or its last compaction's boundary) once, then
the lines after it again and again. Each repetition is the source's own bytes with every id
rewritten (uuids other than the session's, ``toolu_``/``msg_``/``req_`` ids), so no id is used
twice, and the lines that hung off the root hang off the previous repetition's last record
instead: one long active chain, as a months-long session has. Timestamps are kept: a real
session's clock is not what validate or compress judges. Repetitions are whole, so every tool
call keeps its result.

A real session brings its own shape, which a generated one does not: ``SHAPES`` names corpus
sessions whose bytes are mostly long tool outputs, many small records, or base64 images.

Command line: ``python -m pipeline.testing.grow SOURCE --out DIR --bytes 400M``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

import orjson

from pipeline.testing.synth import WRITE_BUFFER, parse_size

__all__ = ["SHAPES", "GrownSession", "Shape", "grow_session", "main"]


class Shape(StrEnum):
    """What most of a real session's bytes are."""

    TOOL_OUTPUTS = "tool-outputs"  # long tool results: 17 KB a line, 86% of the bytes
    SMALL_RECORDS = "small-records"  # progress, snapshots, short turns: 1.1 KB a line
    IMAGES = "images"  # a pasted screenshot, base64 in a user line: 87% of the bytes


SHAPES: Final[dict[Shape, str]] = {  # file names under the shared corpus's files/
    Shape.TOOL_OUTPUTS: "codemie-ai__codemie-code__tests_integration_session_fixtures_session-624a4a58.jsonl",
    Shape.SMALL_RECORDS: (
        "marot__spotter__test_fixtures_transcripts_ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    ),
    Shape.IMAGES: (
        "iansherr__claude-code-log__test_test_data_real_projects_-Users-dain-workspace-"
        "claude-code-log-sample_0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"
    ),
}

_CHAIN_TYPES: Final = frozenset({"user", "assistant", "system", "attachment", "progress"})
_ID: Final = re.compile(
    rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    rb"|(?:toolu|msg|req)_(?:[a-z]{4}_)?[0-9A-Za-z]{8,}"  # Bedrock's and Vertex's: toolu_bdrk_...
)
_ALPHABET: Final = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class GrownSession:
    """The file written and what it holds."""

    path: Path
    session_id: str
    bytes: int
    lines: int
    repetitions: int


@dataclass(frozen=True, slots=True)
class _Source:
    """A source session cut where its repetitions start."""

    session_id: str
    head: tuple[bytes, ...]  # written once
    body: tuple[bytes, ...]  # repeated
    outside: frozenset[bytes]  # ids the body's lines hang off that the body does not define
    leaf: bytes  # the body's last main-chain record, which the next repetition hangs off


def _record(line: bytes) -> dict[str, object]:
    value = orjson.loads(line)
    return value if isinstance(value, dict) else {}


def _on_main_chain(record: dict[str, object]) -> bool:
    return (
        record.get("type") in _CHAIN_TYPES
        and isinstance(record.get("uuid"), str)
        and not record.get("isSidechain")
    )


def _cut(source: Path) -> _Source:
    """The source's head and body; `ValueError` when it has no main chain to repeat."""
    lines = tuple(line for line in source.read_bytes().split(b"\n") if line.strip())
    records = [_record(line) for line in lines]
    main = [i for i, record in enumerate(records) if _on_main_chain(record)]
    roots = [i for i in main if records[i].get("parentUuid") is None]
    session_ids = {str(r["sessionId"]) for r in records if isinstance(r.get("sessionId"), str)}
    if not roots or len(session_ids) != 1:
        raise ValueError(f"{source.name}: not one Claude Code session")
    start = roots[-1] + 1
    summary = next((i for i in main if i >= start), start)
    if summary < len(records) and records[summary].get("isCompactSummary"):  # its boundary's, not a turn's
        start = summary + 1
    if main[-1] < start:
        raise ValueError(f"{source.name}: no turns after its last root to repeat")
    body = lines[start:]
    defined = {str(r["uuid"]).encode() for r in records[start:] if isinstance(r.get("uuid"), str)}
    parents = {str(r["parentUuid"]).encode() for r in records[start:] if isinstance(r.get("parentUuid"), str)}
    return _Source(
        session_id=session_ids.pop(),
        head=lines[:start],
        body=body,
        outside=frozenset(parents - defined),
        leaf=str(records[main[-1]]["uuid"]).encode(),
    )


def _fresh(token: bytes, repetition: int) -> bytes:
    """An id of the same shape and length as `token`, the same for the same repetition."""
    digest = hashlib.blake2b(b"%d:%s" % (repetition, token), digest_size=32).digest()
    if token[8:9] == b"-":  # a uuid, version 4
        hexed = digest.hex().encode()
        return b"%s-%s-4%s-%s%s-%s" % (
            hexed[:8],
            hexed[8:12],
            hexed[13:16],
            b"89ab"[digest[20] % 4 : digest[20] % 4 + 1],
            hexed[17:20],
            hexed[20:32],
        )
    prefix, _, rest = token.rpartition(b"_")
    tail = bytes(_ALPHABET[byte % len(_ALPHABET)] for byte in (digest * 4)[: len(rest)])
    return prefix + b"_" + tail


def _renamer(source: _Source, repetition: int, previous_leaf: bytes) -> Callable[[re.Match[bytes]], bytes]:
    """Rewrites one repetition's ids: fresh ones, and the root it hung off to `previous_leaf`."""
    session = source.session_id.encode()
    names: dict[bytes, bytes] = {}

    def rename(match: re.Match[bytes]) -> bytes:
        token = match.group()
        if token == session:
            return token
        if token in source.outside:
            return previous_leaf
        if token not in names:
            names[token] = _fresh(token, repetition)
        return names[token]

    return rename


def grow_session(source: Path, root: Path, *, target_bytes: int) -> GrownSession:
    """Write `source` grown to at least `target_bytes` under `root` (see the module docstring)."""
    cut = _cut(source)
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{cut.session_id}.jsonl"
    written = lines = repetitions = 0
    leaf = cut.leaf
    with path.open("wb", buffering=WRITE_BUFFER) as sink:
        for line in cut.head:
            sink.write(line + b"\n")
            written, lines = written + len(line) + 1, lines + 1
        while written < target_bytes or repetitions == 0:
            rename = _renamer(cut, repetitions, leaf) if repetitions else None
            for original in cut.body:
                line = _ID.sub(rename, original) if rename else original
                sink.write(line + b"\n")
                written, lines = written + len(line) + 1, lines + 1
            leaf = _fresh(cut.leaf, repetitions) if repetitions else cut.leaf
            repetitions += 1
    return GrownSession(path, cut.session_id, written, lines, repetitions)


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.testing.grow SOURCE --out DIR --bytes 400M``: write one grown session."""
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.testing.grow", description=__doc__.splitlines()[0]
    )
    parser.add_argument("source", type=Path, help="a Claude Code session file (read, never changed)")
    parser.add_argument("--out", type=Path, required=True, help="directory the grown session is written in")
    parser.add_argument("--bytes", type=parse_size, default=parse_size("100M"), help="size, e.g. 400M, 1G")
    args = parser.parse_args(argv)
    try:
        grown = grow_session(args.source, args.out, target_bytes=args.bytes)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{grown.path}: {grown.bytes:,} bytes, {grown.lines:,} lines, {grown.repetitions} repetitions",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
