"""The pi sessions tests read: the real corpus (in place), the pi-mono files beside the other
agents', and the fixtures the real pi wrote (tests/fixtures/pi/); and two ways a session loses
a tool result."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import orjson

from pipeline.formats.line_guard import LineLimits

CORPUS: Final = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "pi"
LIMITS: Final = LineLimits(max_line_bytes=300_000_000, max_json_depth=1000)


def pi_session_files() -> list[Path]:
    """Every real pi session: the corpus's, the two pi-mono files, and the pi-written fixtures."""
    corpus = sorted((CORPUS / "pi" / "files").glob("*.jsonl"))
    pi_mono = sorted((CORPUS / "files").glob("badlogic__pi-mono__*.jsonl"))
    return [*corpus, *pi_mono, *sorted(FIXTURES.glob("*.jsonl"))]


def lost_result(data: bytes, line: int) -> bytes:
    """`data` without the result on `line`, its child re-parented on the result's parent (a lost
    line, as a crash between two appends leaves it)."""
    lines = data.splitlines()
    lost = orjson.loads(lines[line - 1])
    child = lines[line].replace(
        b'"parentId":"' + lost["id"].encode() + b'"', b'"parentId":"' + lost["parentId"].encode() + b'"'
    )
    return b"\n".join([*lines[: line - 1], child, *lines[line + 1 :]]) + b"\n"


def ended_mid_tool(data: bytes, last: int) -> bytes:
    """`data` up to `last`, an assistant message whose call never got its result."""
    return b"\n".join(data.splitlines()[:last]) + b"\n"
