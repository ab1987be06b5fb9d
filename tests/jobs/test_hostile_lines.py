"""A 50 MB line and a 100,000-deep line: read, reported, and within the worker memory target
(twice the largest file plus 100 MB) in both commands."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from pipeline.testing import TranscriptBuilder
from pipeline.testing.fuzz import nested
from pipeline.testing.invoke import compaction

MB = 1024 * 1024


def _session(path: Path, hostile: bytes | None = None, *, output: str | None = None) -> None:
    b = TranscriptBuilder(seed=8)
    for turn in range(4):
        b.user(f"step {turn}: run the build and show me everything it printed")
        b.tool_call("Bash", {"command": f"make all-{turn}"}, output if turn == 1 and output else "ok\n" * 50)
        b.assistant(b.text(f"step {turn} is done"))
    lines = b.to_bytes().split(b"\n")
    if hostile is not None:
        lines.insert(5, hostile)
    path.write_bytes(b"\n".join(lines))


def _run(root: Path, tmp_path: Path) -> tuple[dict[str, object], dict[str, object]]:
    common = ("--jobs", "1", "--quiet")
    swept = compaction("validate", str(root), "--report-dir", str(tmp_path / "v"), *common)
    compressed = compaction(
        "compress",
        str(root),
        "--out",
        str(tmp_path / "c"),
        "--min-tokens",
        "0",
        "--no-verify-resume",
        *common,
    )
    assert swept.returncode in (0, 1) and compressed.returncode in (0, 1), swept.stderr + compressed.stderr
    validated = json.loads(next((tmp_path / "v").rglob("*.report.json")).read_text())
    report = json.loads(next((tmp_path / "c").rglob("*.report.json")).read_text())
    return validated, report


def _within_target(report: dict[str, object], path: Path) -> None:
    peak = report["timing_ms"]["worker_peak_rss_mb"]  # type: ignore[index]
    target = 2 * path.stat().st_size / MB + 100
    assert peak <= target, f"worker peak {peak} MB over target {target:.0f} MB"


@pytest.mark.parametrize("where", ["member", "line"])
def test_a_line_nested_100000_deep_is_an_error_on_its_line(tmp_path: Path, where: str) -> None:
    deep = nested(100_000)
    hostile = orjson.dumps({"type": "progress", "sessionId": "s"})[:-1] + b',"data":' + deep + b"}"
    path = tmp_path / "root" / "deep.jsonl"
    path.parent.mkdir()
    _session(path, hostile if where == "member" else deep)
    validated, compressed = _run(path.parent, tmp_path)
    assert validated["status"] == "invalid"
    assert [(f["code"], f["line"]) for f in validated["findings"] if f["severity"] == "error"] == [  # type: ignore[attr-defined]
        ("line-nesting-too-deep", 6)
    ]
    assert compressed["status"] == "refused" and "source-active-chain-invalid" in compressed["reasons"]  # type: ignore[operator]
    _within_target(validated, path)
    _within_target(compressed, path)


def test_a_50_mb_tool_output_is_read_kept_on_the_chain_and_compacted(tmp_path: Path) -> None:
    path = tmp_path / "root" / "huge.jsonl"
    path.parent.mkdir()
    _session(path, output="compiler output line, most of it noise\n" * (50 * MB // 38))
    assert path.stat().st_size > 50 * MB
    validated, compressed = _run(path.parent, tmp_path)
    assert validated["status"] == "valid", validated["findings"]
    assert compressed["status"] == "compressed", compressed.get("reasons")
    _within_target(validated, path)
    _within_target(compressed, path)
