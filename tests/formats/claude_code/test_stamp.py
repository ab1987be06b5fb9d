"""Reading back our compaction's stamp from its boundary, and nothing from anyone else's."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from pipeline.core.partition import line_digest
from pipeline.formats.claude_code.stamp import compaction_stamp
from pipeline.jobs.compress import compress_session
from pipeline.testing import TranscriptBuilder, as_json
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import compress_options


def test_our_boundary_names_the_source_its_leaf_and_its_summarized_lines(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    report = as_json(
        compress_session(
            source, "s.jsonl", compress_options(tmp_path / "out", min_tokens=0, min_recent_records=8)
        )
    )
    data = (tmp_path / "out" / "root" / "s.jsonl").read_bytes()
    boundary = next(line for line in data.splitlines() if b'"compact_boundary"' in line)
    stamp = compaction_stamp(boundary)
    assert stamp is not None
    assert stamp.source_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert (stamp.summary_lines, stamp.summary_digest) == (
        report["partition"]["summary"]["count"],
        report["partition"]["summary"]["digest"],
    )
    assert stamp.leaf_policy == "auto" and stamp.leaf_uuid == report["leaf"]["uuid"]
    head = orjson.loads(data.splitlines()[data.splitlines().index(boundary) + 2])
    assert stamp.head_uuid == head["uuid"]  # the first kept record, right after the summary
    assert len(stamp.summary_digest) == len(line_digest([1]))


def test_claude_code_s_own_boundary_and_damaged_lines_have_no_stamp() -> None:
    builder = TranscriptBuilder(seed=2)
    builder.user("hello")
    builder.compact("1. Primary request: hello")
    boundary = next(line for line in builder.lines() if b'"compact_boundary"' in line)
    assert compaction_stamp(boundary) is None
    assert (
        compaction_stamp(
            b'{"type":"system","subtype":"compact_boundary","compactMetadata":{"sessionCompaction":1}}'
        )
        is None
    )
    assert compaction_stamp(b"not json") is None
    assert compaction_stamp(b"[1, 2]") is None
