"""grow_session makes a giant of a real session: valid, one active chain, no id used twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.jobs.validate import validate_session
from pipeline.report.documents import ValidateReport
from pipeline.testing.grow import SHAPES, Shape, grow_session, main
from pipeline.testing.settings import validate_options
from pipeline.vocabulary import FindingCode, SessionStatus

TARGET = 3 * 1024 * 1024  # two repetitions or more of every shape's source


def _validated(path: Path) -> ValidateReport:
    report = validate_session(path, path.name, validate_options()).report
    assert isinstance(report, ValidateReport)
    return report


@pytest.mark.parametrize("shape", list(Shape))
def test_a_grown_session_is_valid_and_its_chain_runs_through_every_repetition(
    shape: Shape, corpus_files: Path, tmp_path: Path
) -> None:
    source = corpus_files / SHAPES[shape]
    grown = grow_session(source, tmp_path, target_bytes=TARGET)
    assert grown.repetitions >= 2
    assert grown.path.stat().st_size == grown.bytes >= TARGET
    assert grown.path.name == f"{grown.session_id}.jsonl"  # named as Claude Code names it
    assert grown.session_id.encode() in source.read_bytes()[:2000]
    original, report = _validated(source), _validated(grown.path)
    assert report.status is SessionStatus.VALID
    # No finding the source does not have (but which line is the leaf, now the last repetition's).
    codes = {entry.code for entry in report.findings.findings}
    assert codes <= {entry.code for entry in original.findings.findings} | {FindingCode.LEAF_INFERRED}
    # Every repetition is on the one active chain: its records grow with the repetitions.
    body = (report.chain.records - original.chain.records) / (grown.repetitions - 1)
    assert body > 0
    assert report.chain.records == original.chain.records + body * (grown.repetitions - 1)


def test_ids_are_fresh_in_every_repetition_and_the_session_id_is_kept(
    corpus_files: Path, tmp_path: Path
) -> None:
    grown = grow_session(corpus_files / SHAPES[Shape.TOOL_OUTPUTS], tmp_path, target_bytes=TARGET)
    rows = [orjson.loads(line) for line in grown.path.read_bytes().splitlines()]
    uuids = Counter(row["uuid"] for row in rows if row.get("uuid"))
    uses = Counter(
        block["id"]
        for row in rows
        if row.get("type") == "assistant"
        for block in row["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
    )
    assert uuids.most_common(1)[0][1] == 1
    assert uses and uses.most_common(1)[0][1] == 1
    assert {row["sessionId"] for row in rows if "sessionId" in row} == {grown.session_id}


def test_the_first_repetition_is_the_source_byte_for_byte_and_growing_is_deterministic(
    corpus_files: Path, tmp_path: Path
) -> None:
    source = corpus_files / SHAPES[Shape.IMAGES]
    first = grow_session(source, tmp_path / "a", target_bytes=TARGET)
    again = grow_session(source, tmp_path / "b", target_bytes=TARGET)
    data = first.path.read_bytes()
    assert data.startswith(b"\n".join(source.read_bytes().splitlines()[:20]))
    assert again.path.read_bytes() == data


def test_a_file_that_is_not_one_claude_code_session_is_refused(corpus_files: Path, tmp_path: Path) -> None:
    rollout = next(corpus_files.glob("*rollout-*.jsonl"))
    with pytest.raises(ValueError, match="not one Claude Code session"):
        grow_session(rollout, tmp_path, target_bytes=TARGET)
    assert main([str(rollout), "--out", str(tmp_path / "cli"), "--bytes", "1M"]) == 2
    assert not (tmp_path / "cli").exists()


def test_the_command_line_writes_the_grown_session(corpus_files: Path, tmp_path: Path) -> None:
    source = corpus_files / SHAPES[Shape.SMALL_RECORDS]
    assert main([str(source), "--out", str(tmp_path), "--bytes", "3M"]) == 0
    (written,) = tmp_path.glob("*.jsonl")
    assert written.stat().st_size >= TARGET
