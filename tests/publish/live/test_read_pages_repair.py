"""The Read.pages repair: exactly the seed's rules, exact byte deletions, published through the transaction."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from pipeline.core.read_pages import (
    CallVerdict,
    ReadPagesCall,
    _without_overlaps,
    apply_patches,
    plan_repair,
    repair_failures,
)
from pipeline.core.topology.select import AUTO, TopologyOptions
from pipeline.formats.claude_code.spans import deletion_span, scan_object
from pipeline.live_vocabulary import Disposition, RepairScope, StateSync
from pipeline.publish.live.backups import read_backup
from pipeline.publish.live.read_pages_repair import RepairOptions, repair_builder, write_repaired_candidate
from pipeline.publish.live.reporting import receipt_section
from pipeline.publish.live.source import SessionTarget, freeze_source
from pipeline.publish.live.state_db import RecordedResult, StateOptions, open_state
from pipeline.report.live_replacement import RepairReceiptSection
from pipeline.report.render import to_builtins
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import LeafPolicy
from tests.publish.conftest import drive_in_place
from tests.publish.live.test_session_pass import options as inplace_options

STRICT = TopologyOptions(LeafPolicy.STRICT, None, 0)
PAGES = ',"pages":"1-3"'


def session(
    *, version: str = "2.1.39", pending: bool = False, path: str = "/docs/spec.pdf"
) -> TranscriptBuilder:
    """A session that reads two documents by pages (and, `pending`, a third with no result yet)."""
    builder = TranscriptBuilder(seed=3, version=version)
    builder.user("Summarize the spec, pages 1-3, and the appendix.")
    builder.tool_call("Read", {"file_path": path, "pages": "1-3"}, "Page 1 ... Page 3")
    builder.tool_call("Read", {"file_path": "/docs/appendix.pdf"}, "no pages member: untouched")
    builder.tool_call("Grep", {"pattern": "pages", "pages": "not a Read call"}, "untouched")
    builder.assistant(builder.text("Done."))
    if pending:
        builder.user("Now page 9 of the report.")
        builder.assistant(builder.tool_use("Read", {"file_path": "/docs/report.pdf", "pages": "9"}))
    return builder


def plan(data: bytes, scope: RepairScope = RepairScope.ALL):  # type: ignore[no-untyped-def]
    return plan_repair(data, scope, AUTO, LIMITS)


def test_a_matched_call_loses_exactly_its_pages_member_and_nothing_else() -> None:
    data = session().to_bytes()
    found = plan(data)
    assert [c.verdict for c in found.calls] == [CallVerdict.REPAIRABLE]
    repaired = apply_patches(data, found.patches)
    assert repaired == data.replace(PAGES.encode(), b"", 1)
    assert b'"pages":"not a Read call"' in repaired  # other tools keep theirs
    assert not repair_failures(data, repaired, found, RepairScope.ALL, AUTO, LIMITS)
    assert not plan(repaired).patches  # idempotent: a second pass finds nothing


def test_a_pending_call_is_reported_and_never_changed() -> None:
    data = session(pending=True).to_bytes()
    found = plan(data)
    assert sorted(c.verdict.value for c in found.calls) == ["pending", "repairable"]
    assert len(found.patches) == 1
    assert b'"pages":"9"' in apply_patches(data, found.patches)


def test_bom_crlf_unicode_spelling_and_unknown_fields_survive_byte_for_byte() -> None:
    builder = session(path="/документы/規格.pdf")
    data = builder.to_bytes(crlf=True, bom=True)
    escaped = data.replace(b'"pages":"1-3"', b'"pa\\u0067es" : "1-3"', 1)  # another spelling of the key
    escaped = escaped.replace(b'"type":"user"', b'"type":"user","futureField":{"x":"\\u00e9"}', 1)
    found = plan(escaped)
    assert [c.verdict for c in found.calls] == [CallVerdict.REPAIRABLE]
    repaired = apply_patches(escaped, found.patches)
    assert repaired == escaped.replace(b',"pa\\u0067es" : "1-3"', b"", 1)
    assert repaired.startswith(b"\xef\xbb\xbf") and repaired.count(b"\r\n") == escaped.count(b"\r\n")
    assert "/документы/規格.pdf".encode() in repaired and b'"futureField":{"x":"\\u00e9"}' in repaired
    assert not repair_failures(escaped, repaired, found, RepairScope.ALL, AUTO, LIMITS)


@pytest.mark.parametrize(
    ("edit", "verdict"),
    [
        (lambda d: d.replace(b'"pages":"1-3"', b'"pages":"1-3","pages":"2"', 1), CallVerdict.DUPLICATE_KEY),
        (lambda d: d.replace(b'"name":"Read"', b'"name":"Read","name":"Read"', 1), CallVerdict.DUPLICATE_KEY),
        (lambda d: d.replace(b'"file_path":"/docs/spec.pdf",', b"", 1), CallVerdict.MISSING_FILE_PATH),
        (
            lambda d: d.replace(b'"sourceToolAssistantUUID":"', b'"sourceToolAssistantUUID":"x', 1),
            CallVerdict.SOURCE_MISMATCH,
        ),
    ],
    ids=["duplicate-pages", "duplicate-name", "no-file-path", "foreign-result"],
)
def test_ambiguity_and_unproven_pairing_block_the_repair(edit, verdict) -> None:  # type: ignore[no-untyped-def]
    data = edit(session().to_bytes())
    found = plan(data)
    assert [c.verdict for c in found.calls] == [verdict] and not found.patches


def test_a_result_from_another_session_or_a_second_result_blocks_the_repair() -> None:
    builder = session()
    lines = builder.lines()
    result = next(i for i, line in enumerate(lines) if b'"tool_result"' in line)
    record = orjson.loads(lines[result])
    other_session = dict(record, sessionId="00000000-0000-4000-8000-00000000beef")
    twice = b"\n".join(
        [*lines[: result + 1], orjson.dumps(dict(record, uuid="dup-of-result")), *lines[result + 1 :]]
    )
    moved = b"\n".join([*lines[:result], orjson.dumps(other_session), *lines[result + 1 :]])
    assert [c.verdict for c in plan(moved + b"\n").calls] == [CallVerdict.SESSION_MISMATCH]
    assert [c.verdict for c in plan(twice + b"\n").calls] == [CallVerdict.MULTIPLE_RESULTS]


def test_a_version_without_source_tool_assistant_uuid_is_not_repaired_automatically() -> None:
    found = plan(session(version="2.0.76").to_bytes())
    assert [c.verdict for c in found.calls] == [CallVerdict.SOURCE_MISMATCH] and not found.patches


def test_overlapping_spans_block_every_call_involved() -> None:
    calls = [
        ReadPagesCall(1, "a", CallVerdict.REPAIRABLE, 2),
        ReadPagesCall(1, "b", CallVerdict.REPAIRABLE, 3),
    ]
    checked = _without_overlaps(calls, {0: (10, 20), 1: (15, 30)})
    assert [c.verdict for c in checked] == [CallVerdict.OVERLAPPING_SPAN] * 2
    assert [c.verdict for c in _without_overlaps(calls, {0: (10, 20), 1: (20, 30)})] == [
        CallVerdict.REPAIRABLE
    ] * 2


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"pages":"1","a":2}', b'{"a":2}'),
        (b'{"a":1, "pages" : [1,{"}":"]"}] , "b":2}', b'{"a":1, "b":2}'),
        (b'{"a":1,"pages":"x"}', b'{"a":1}'),
        (b'{ "pages":"x" }', b"{  }"),
    ],
)
def test_deleting_a_member_removes_one_comma_and_keeps_every_other_byte(line: bytes, expected: bytes) -> None:
    span = scan_object(line)
    start, end = deletion_span(span, span.find("pages")[0])
    assert line[:start] + line[end:] == expected
    orjson.loads(expected)


def test_the_active_chain_scope_leaves_a_rewound_branch_alone() -> None:
    builder = TranscriptBuilder(seed=9)
    prompt = builder.user("Read page 2 of the spec.")
    builder.tool_call("Read", {"file_path": "/docs/spec.pdf", "pages": "2"}, "old page 2")
    builder.rewind(prompt)  # the user edited the prompt: the call above is on an abandoned branch
    builder.tool_call("Read", {"file_path": "/docs/spec.pdf", "pages": "3"}, "page 3")
    builder.assistant(builder.text("Done."))
    builder.last_prompt()
    data = builder.to_bytes()
    on_chain = plan_repair(data, RepairScope.ACTIVE_CHAIN, STRICT, LIMITS)
    everywhere = plan_repair(data, RepairScope.ALL, STRICT, LIMITS)
    assert len(on_chain.patches) == 1 and len(everywhere.patches) == 2


def test_the_repair_is_published_in_place_through_the_transaction(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    live = session(pending=True).write(root / "s.jsonl")
    original = live.read_bytes()
    repair = RepairOptions(RepairScope.ALL, AUTO, LIMITS)
    chosen = [SessionTarget(live, root, "projects", "s.jsonl")]
    settings = inplace_options(tmp_path / "work")
    settings = type(settings)(
        **{
            **{f: getattr(settings, f) for f in settings.__dataclass_fields__},
            "result": RecordedResult.REPAIRED,
        }
    )
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)) as state:
        first = drive_in_place(
            chosen, repair_builder(repair), settings, state, clock_ns=time.time_ns, probe=None
        )
        second = drive_in_place(
            chosen, repair_builder(repair), settings, state, clock_ns=time.time_ns, probe=None
        )
    [outcome] = first.outcomes
    assert outcome.disposition is Disposition.COMMITTED and outcome.receipt is not None
    receipt = to_builtins(receipt_section(outcome.receipt, kind=RepairReceiptSection))
    assert receipt["operationState"] == "committed"
    assert live.read_bytes() == original.replace(PAGES.encode(), b"", 1)
    assert outcome.receipt.backup is not None and read_backup(outcome.receipt.backup.path) == original
    assert [o.disposition for o in second.outcomes] == [Disposition.UNCHANGED_OUTPUT]
    assert not plan(live.read_bytes()).patches


def test_candidate_mode_writes_elsewhere_and_verifies_what_it_wrote(tmp_path: Path) -> None:
    live = session().write(tmp_path / "in" / "s.jsonl")
    frozen = freeze_source(SessionTarget(live, live.parent, "in", "s.jsonl"))
    written = write_repaired_candidate(
        frozen, tmp_path / "out" / "s.jsonl", RepairOptions(RepairScope.ALL, AUTO, LIMITS), label="in/s.jsonl"
    )
    report = to_builtins(written)
    assert report["operationState"] == "committed" and not report["failures"]
    assert report["candidateSha256"] == report["publishedSha256"]
    assert (tmp_path / "out" / "s.jsonl").read_bytes() == live.read_bytes().replace(PAGES.encode(), b"", 1)
    assert live.read_bytes() == frozen.data  # the source is untouched
