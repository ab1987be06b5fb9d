"""The seed heuristic must match the reference compressor's figures exactly, and stay exact on
spellings the fast byte-level path has to detect."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.core.index import build_index
from pipeline.estimate.seed import estimate_record, estimate_text
from pipeline.formats.claude_code.decode import decode_record
from pipeline.formats.detect import detect_format
from pipeline.testing.settings import LIMITS


def reference_estimate_text(text: str) -> int:
    """The seed's own per-character loop, written out plainly as the oracle."""
    if not text:
        return 0
    weighted = 0.0
    ascii_chars = 0
    for ch in text:
        cp = ord(ch)
        if cp < 0x80:
            ascii_chars += 1
        elif (
            0x3400 <= cp <= 0x4DBF
            or 0x4E00 <= cp <= 0x9FFF
            or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x323AF
            or 0x3040 <= cp <= 0x30FF
            or 0x31F0 <= cp <= 0x31FF
            or 0xAC00 <= cp <= 0xD7AF
            or 0x1100 <= cp <= 0x11FF
        ):
            weighted += 1.3
        elif cp > 0xFFFF or unicodedata.category(ch).startswith(("S", "M")):
            weighted += 1.5
        else:
            weighted += 0.8
    return max(1, int(weighted + ascii_chars / 4 + 0.999))


def reference_estimate_record(record: dict[str, Any]) -> int:
    """The seed's record payload rule with Python's json serialization."""
    kind = record.get("type")
    if kind in ("user", "assistant") and isinstance(record.get("message"), dict):
        drop = {"uuid", "parentUuid", "sessionId", "timestamp", "cwd", "version"}
        payload: Any = {k: v for k, v in record.items() if k not in drop}
    elif kind == "attachment" and isinstance(record.get("attachment"), dict):
        payload = record["attachment"]
    elif kind == "system":
        payload = {
            k: record.get(k) for k in ("subtype", "content", "error", "compactMetadata") if k in record
        }
    else:
        return 0
    return (
        reference_estimate_text(
            json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        )
        + 12
    )


def golden_estimates(golden_dir: Path) -> dict[str, list[int | None]]:
    rows = (json.loads(line) for line in (golden_dir / "token_estimates.jsonl").read_text().splitlines())
    return {row["file"]: row["estimates"] for row in rows}


def test_index_matches_golden_estimates_on_every_corpus_line(corpus_files: Path, golden_dir: Path) -> None:
    golden = golden_estimates(golden_dir)
    assert len(golden) >= 60
    compared = 0
    for name, expected in golden.items():
        data = (corpus_files / name).read_bytes()
        index = build_index(data, detect_format(data), LIMITS)
        got = [record.tokens if record is not None else None for record in index.records]
        assert got == expected, name
        compared += len(got)
    assert compared > 14000


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        "abcd",
        "abcde",
        "héllo",
        "世界",
        "😀",
        "e\u0301",
        "→ 1",
        "Привет, мир",
        "مرحبا",
        "∑∫≈",
        "\u2028",
        "한국어 텍스트",
        "ｶﾀｶﾅ",
        "x" * 10_001,
    ],
)
def test_estimate_text_equals_the_reference_loop(text: str) -> None:
    assert estimate_text(text) == reference_estimate_text(text)


SPELLINGS = [
    # Claude Code's own compact JavaScript spelling, with non-ASCII text and an ANSI escape.
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "cwd": "/tmp/é",
        "message": {"role": "user", "content": "naïve 世界 \u001b[1mbold\u001b[0m"},
    },
    # A tiny float that JavaScript writes as 0.00005 and Python as 5e-05.
    {"type": "assistant", "uuid": "a1", "costUSD": 0.00005, "message": {"role": "assistant", "content": []}},
    {
        "type": "assistant",
        "uuid": "a2",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
        "meta": {"ratio": 1.5e-7},
    },
    # Integers beyond 64 bits, which only the stdlib parser keeps.
    {
        "type": "user",
        "uuid": "u2",
        "message": {"role": "user", "content": "n"},
        "big": 123456789012345678901234567890,
    },
    {
        "type": "system",
        "subtype": "local_command",
        "content": "<command-name>/model</command-name>",
        "uuid": "s1",
    },
    {"type": "system", "uuid": "s2"},
    {"type": "attachment", "uuid": "t1", "attachment": {"type": "hook", "stdout": "ok ✓"}},
    {"type": "progress", "uuid": "p1", "data": {"type": "hook_progress"}},
    {"type": "user", "uuid": "u3", "message": "not an object"},
]


@pytest.mark.parametrize("record", SPELLINGS, ids=lambda r: f"{r.get('type')}-{r.get('uuid')}")
@pytest.mark.parametrize("writer", ["javascript", "python-default", "python-ascii-compact"])
def test_every_writer_spelling_gets_the_reference_estimate(record: dict[str, Any], writer: str) -> None:
    if writer == "javascript":
        try:  # orjson spells floats the way JavaScript's JSON.stringify does
            line = orjson.dumps(record)
        except TypeError:
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    elif writer == "python-default":
        line = json.dumps(record).encode()
    else:
        line = json.dumps(record, separators=(",", ":")).encode()
    decoded = decode_record(line, limits=LIMITS, escapes_possible=line.isascii())
    assert decoded.tokens == reference_estimate_record(json.loads(line))  # type: ignore[union-attr]
    assert estimate_record(json.loads(line)) == reference_estimate_record(json.loads(line))
