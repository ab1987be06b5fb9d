"""Reading: every physical line keeps its exact bytes, and a bad line becomes a precise finding."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.core.index import build_index
from pipeline.core.validate.checks import read_findings
from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.decode import RecordFlag
from pipeline.formats.line_guard import LineLimits
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import FindingCode, LineKind, Severity, SourceFormat
from tests.support.differential import differential_sessions

GOOD = orjson.dumps(
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s",
        "message": {"role": "user", "content": "hello"},
    }
)
GOOD2 = orjson.dumps(
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "s",
        "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]},
    }
)


def index_of(data: bytes):
    return build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)


@pytest.mark.parametrize(
    ("bad", "kind", "code"),
    [
        (b"this is not json", LineKind.NOT_JSON, FindingCode.LINE_NOT_JSON),
        (b"[1, 2, 3]", LineKind.NOT_OBJECT, FindingCode.LINE_NOT_OBJECT),
        (b'"a string"', LineKind.NOT_OBJECT, FindingCode.LINE_NOT_OBJECT),
        (
            b'{"type":"user","deep":' + b"[" * 600 + b"]" * 600 + b"}",
            LineKind.NESTING_TOO_DEEP,
            FindingCode.LINE_NESTING_TOO_DEEP,
        ),
        (b"[" * 100_000, LineKind.NESTING_TOO_DEEP, FindingCode.LINE_NESTING_TOO_DEEP),
        (
            b'{"type":"user","uuid":"u9","message":{"role":"user","content":"cut',
            LineKind.TRUNCATED,
            FindingCode.LINE_TRUNCATED,
        ),
        (b'{"type":"user"} trailing', LineKind.NOT_JSON, FindingCode.LINE_NOT_JSON),
        (b'{"type":"user","n":NaN}', LineKind.NOT_JSON, FindingCode.LINE_NOT_JSON),
        (b"   \t ", LineKind.BLANK, FindingCode.BLANK_LINE),
    ],
)
def test_a_bad_line_is_a_finding_and_the_rest_is_still_read(
    bad: bytes, kind: LineKind, code: FindingCode
) -> None:
    data = GOOD + b"\n" + bad + b"\n" + GOOD2 + b"\n"
    index = index_of(data)
    assert index.kinds == (LineKind.RECORD, kind, LineKind.RECORD)
    assert index.record(3) is not None and index.record(3).uuid == "a1"  # type: ignore[union-attr]
    findings = [f for f in read_findings(index) if f.code is code]
    assert [f.line for f in findings] == [2]
    assert findings[0].severity is (Severity.INFO if kind is LineKind.BLANK else Severity.ERROR)


def test_a_line_over_the_size_limit_is_reported_and_not_parsed() -> None:
    huge = b'{"type":"user","uuid":"big","message":{"role":"user","content":"' + b"x" * 5000 + b'"}}'
    index = build_index(
        GOOD + b"\n" + huge + b"\n" + GOOD2 + b"\n", SourceFormat.CLAUDE_CODE, LineLimits(4096, 500)
    )
    assert index.kinds == (LineKind.RECORD, LineKind.TOO_LONG, LineKind.RECORD)
    assert [(f.code, f.line) for f in read_findings(index) if f.severity is Severity.ERROR] == [
        (FindingCode.LINE_TOO_LONG, 2)
    ]


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = "[" * 2000 + "{" * 2000
    line = b'{"type":"user","uuid":"s1","message":{"role":"user","content":"' + text.encode() + b'"}}'
    index = index_of(GOOD + b"\n" + line + b"\n")
    assert index.kinds == (LineKind.RECORD, LineKind.RECORD)


@pytest.mark.parametrize("bad", [b"\xff", b"\xc0\xaf", b"\xe2\x82", b"\xed\xa0\x80", b"\x80\x80\x80"])
def test_invalid_utf8_keeps_the_record_read_as_claude_code_reads_it(bad: bytes) -> None:
    """Claude Code replaces each bad sequence with U+FFFD and keeps the record; so do we."""
    line = b'{"type":"user","uuid":"u' + bad + b'","parentUuid":"a0","message":{"role":"user","content":"hi'
    line += bad + b'"}}'
    index = index_of(GOOD + b"\n" + line + b"\n")
    record = index.record(2)
    assert index.kinds == (LineKind.RECORD, LineKind.RECORD) and record is not None
    assert record.uuid == "u" + bad.decode("utf-8", "replace") and record.replaced_utf8
    assert record.tokens > 0
    findings = [f for f in read_findings(index) if f.code is FindingCode.LINE_INVALID_UTF8]
    assert [(f.line, f.severity) for f in findings] == [(2, Severity.WARNING)]


def test_truncated_final_line_without_newline() -> None:
    data = GOOD + b"\n" + GOOD2[:-20]
    index = index_of(data)
    assert index.kinds[-1] is LineKind.TRUNCATED
    codes = {f.code for f in read_findings(index)}
    assert {FindingCode.LINE_TRUNCATED, FindingCode.MISSING_FINAL_NEWLINE} <= codes


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("final_newline", [False, True])
def test_bom_crlf_and_final_newline_keep_exact_bytes(crlf: bool, bom: bool, final_newline: bool) -> None:
    newline = b"\r\n" if crlf else b"\n"
    body = GOOD + newline + GOOD2 + (newline if final_newline else b"")
    data = (b"\xef\xbb\xbf" if bom else b"") + body
    index = index_of(data)
    assert len(index) == 2
    assert index.kinds == (LineKind.RECORD, LineKind.RECORD)
    assert index.raw_line(data, 1) == GOOD and index.raw_line(data, 2) == GOOD2
    # Offsets and lengths cover the file exactly: nothing lost, nothing doubled.
    spans = [data[index.offsets[i] : index.offsets[i] + index.lengths[i]] for i in range(2)]
    assert b"\n".join(spans) + (b"\n" if index.final_newline else b"") == data
    assert index.has_bom is bom and (
        index.crlf_lines == (2 if final_newline else 1) if crlf else index.crlf_lines == 0
    )
    codes = {f.code for f in read_findings(index)}
    assert (FindingCode.BYTE_ORDER_MARK in codes) is bom
    assert (FindingCode.CRLF_LINE_ENDINGS in codes) is crlf
    assert (FindingCode.MISSING_FINAL_NEWLINE in codes) is (not final_newline)


def test_empty_file_has_no_lines() -> None:
    assert len(index_of(b"")) == 0
    assert read_findings(index_of(b"")) == []


def test_a_very_long_line_is_indexed_without_keeping_its_text() -> None:
    text = "x" * (8 * 1024 * 1024)
    line = orjson.dumps({"type": "user", "uuid": "big", "message": {"role": "user", "content": text}})
    index = index_of(line + b"\n" + GOOD + b"\n")
    record = index.record(1)
    assert record is not None and record.uuid == "big"
    assert record.tokens > 2_000_000
    values = [getattr(record, name) for name in record.__struct_fields__]
    assert not any(isinstance(value, str) and len(value) > 100 for value in values)


def test_record_facts_come_from_the_fields_stages_need() -> None:
    line = orjson.dumps(
        {
            "type": "assistant",
            "uuid": "a",
            "parentUuid": "p",
            "sessionId": "s",
            "isSidechain": True,
            "message": {
                "id": "msg",
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "..."},
                    {"type": "text", "text": "t"},
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
                    {"type": "tool_use", "id": 7, "name": "Bad", "input": {}},
                ],
            },
        }
    )
    record = index_of(line).record(1)
    assert record is not None
    assert (record.message_id, record.role, record.blocks) == ("msg", "assistant", "KTUU")
    assert record.tool_uses == ("toolu_1", "")  # a malformed id is kept as empty, to be reported
    assert record.sidechain and record.parent == "p" and record.session == "s"


def test_malformed_parent_and_uuid_types_take_the_tolerant_path() -> None:
    line = orjson.dumps(
        {"type": "user", "uuid": 42, "parentUuid": ["x"], "message": {"role": "user", "content": "q"}}
    )
    record = index_of(line).record(1)
    assert record is not None
    assert record.uuid is None and record.uuid_malformed
    assert record.parent is None and record.parent_malformed


@pytest.mark.skipif(not scan.COMPILED, reason="the compiled core is not built here")
def test_flagged_lines_are_the_references_for_every_flag(corpus_files: Path, tmp_path: Path) -> None:
    found: set[RecordFlag] = set()
    for _, index, _ in differential_sessions(corpus_files, tmp_path):
        for flag in RecordFlag:
            lines = index.flagged(flag.value)
            assert lines == index.flagged_reference(flag.value)
            found |= {flag} if lines else set()
        assert index.flagged(0) == ()
        both = RecordFlag.COMPACT_BOUNDARY.value | RecordFlag.COMPACT_SUMMARY.value
        assert index.flagged(both) == index.flagged_reference(both)
    assert len(found) >= 7  # nearly every flag occurs somewhere in the sessions
