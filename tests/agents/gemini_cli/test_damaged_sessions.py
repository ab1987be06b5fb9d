"""Damaged Gemini CLI sessions: whatever happens to the lines or to the shape of a record's fields,
every member the generic jobs call answers (findings, never a traceback), every line is in exactly
one set, a compaction of what can be cut still re-reads as summary and suffix, and vacuum and
repair either prove their rewrite or leave the bytes alone."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from pipeline.agents.gemini_cli import GEMINI_CLI
from pipeline.agents.gemini_cli.gemini_session import GeminiSession
from pipeline.formats.gemini_cli.repair import RepairOutcome, repair
from pipeline.formats.gemini_cli.vacuum import VacuumOutcome, vacuum
from pipeline.formats.line_guard import LineLimits
from tests.support.gemini_files import LEGACY_CORPUS, fixture, with_pairing_defects

LIMITS = LineLimits(64 << 20, 256)
SUMMARY = "<state_snapshot>\nthe work so far\n</state_snapshot>"
ODD_VALUES: tuple[Any, ...] = (
    *(None, 7, "x", [], {}, [1, None], [{"x": None}], {"id": 1}, {"messages": [7, {"id": 1}]}),
    [{"functionCall": 7}, {"functionResponse": "x"}, {"text": 5}, {"inlineData": 1}, {"thought": 1}],
    [{"functionCall": {"name": 5, "args": 1}}, {"functionResponse": {"name": [], "response": 2}}],
    [{"subject": 1, "description": None}, {"text": ""}],
)
FIELDS = ("id", "type", "content", "toolCalls", "thoughts", "tokens", "$set", "$rewindTo", "sessionId")
CALL_FIELDS = ("id", "name", "args", "result", "status")


def _reshaped(records: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Each variant with one field of one record given an odd value (top level or a tool call's)."""
    for field in FIELDS:
        holders = [index for index, record in enumerate(records) if field in record]
        for value in ODD_VALUES:
            for index in holders[:: max(1, len(holders) // 3)]:
                yield (
                    f"{field}={value!r}@{index}",
                    [*records[:index], {**records[index], field: value}, *records[index + 1 :]],
                )
    calls = [index for index, record in enumerate(records) if isinstance(record.get("toolCalls"), list)]
    for field in CALL_FIELDS:
        for value in ODD_VALUES:
            for index in calls:
                call = {**records[index]["toolCalls"][0], field: value}
                changed = {**records[index], "toolCalls": [call, *records[index]["toolCalls"][1:]]}
                yield f"call.{field}={value!r}@{index}", [*records[:index], changed, *records[index + 1 :]]


def _line_damages(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines))
    damage = rng.randrange(5)
    if damage == 0:
        lines[at] = lines[at][: len(lines[at]) // 2]
    elif damage == 1 and at + 1 < len(lines):
        lines[at : at + 2] = [lines[at] + lines[at + 1]]
    elif damage == 2:
        lines.insert(at, rng.choice([b"\xff\xfe{", b"[1,2]", b"", b'"text"', b"{}", b"null"]))
    elif damage == 3:
        lines[at] = lines[at].replace(b"a", b"\xc3", 1)
    else:
        other = rng.randrange(len(lines))
        lines[at], lines[other] = lines[other], lines[at]
    return lines


def _holds_up(data: bytes, *, exact: bool = True) -> bool:
    """Every member the generic jobs call, on one damaged file: no exception, a partition. True
    when a compaction of it was composed and re-read; `exact`: the re-read is summary and suffix
    (not so for a call without id, whose made-up id depends on its place: the job's check refuses)."""
    session: GeminiSession = GEMINI_CLI.read(data, None, LIMITS)
    session.findings, session.kind, session.resumable, session.versions  # noqa: B018
    sets = session.sweep_sets()
    lines = frozenset(range(1, session.line_count + 1))
    assert frozenset().union(*sets.values()) == lines and sum(map(len, sets.values())) == len(lines)
    session.context_section(session.file_tokens())
    session.class_tallies(GEMINI_CLI.estimator, {"chars": len})
    session.billed()
    plan = session.plan_tail(room=40)
    if plan is not None and session.resumable:
        session.evidence(plan)
        candidate = session.compose(plan, SUMMARY)
        GEMINI_CLI.judge.excluded(session, session.compress_sets(plan), candidate, 8)
        reread = GEMINI_CLI.read(candidate, None, LIMITS)
        assert reread.sent()[0] == session.summary_sent(SUMMARY)
        assert not exact or list(reread.sent()[1:]) == list(session.sent()[plan.first_item :])
        cut = session.compress_sets(plan)
        assert sum(map(len, cut.values())) == len(lines)
    compacted = plan is not None and session.resumable
    vacuumed = vacuum(data, LIMITS)
    assert vacuumed.outcome is VacuumOutcome.VACUUMED or vacuumed.data == data
    repaired = repair(data, LIMITS)
    assert repaired.outcome is RepairOutcome.REPAIRED or repaired.data == data
    return compacted


def test_an_odd_value_in_any_field_is_read_never_raised() -> None:
    records = [orjson.loads(line) for line in fixture("tools.jsonl").read_bytes().splitlines()]
    variants, compacted = 0, 0
    for label, changed in _reshaped(records):
        data = b"".join(orjson.dumps(record) + b"\n" for record in changed)
        try:
            compacted += _holds_up(data)
        except AssertionError:
            raise
        except Exception as error:  # the label says which variant broke the reader
            raise AssertionError(f"{label}: {error!r}") from error
        variants += 1
    assert variants > 300 and compacted > variants // 2


@pytest.mark.parametrize("name", ["tools.jsonl", "compressed.jsonl", "rewound.jsonl", "unpaired"])
def test_damaged_lines_are_read_never_raised(name: str) -> None:
    source = (
        with_pairing_defects(fixture("tools.jsonl")) if name == "unpaired" else fixture(name).read_bytes()
    )
    compacted = 0
    for seed in range(12):
        rng = random.Random(seed)
        lines = source.splitlines()
        for _ in range(1 + seed % 3):
            lines = _line_damages(lines, rng)
        compacted += _holds_up(b"\n".join(lines) + b"\n")
    assert compacted > 0


def test_a_legacy_document_or_checkpoint_of_odd_shapes_is_read_never_raised() -> None:
    if not LEGACY_CORPUS.is_file():
        pytest.skip(f"the shared corpus is not here: {LEGACY_CORPUS}")
    document = orjson.loads(LEGACY_CORPUS.read_bytes())
    checkpoint = orjson.loads(fixture("checkpoint-fixture-tag.json").read_bytes())
    variants: list[dict[str, Any]] = []
    for value in ODD_VALUES:
        variants += [{**document, "messages": value}, {**checkpoint, "history": value}]
        variants.append({**checkpoint, "history": [value, *checkpoint["history"]]})
        for index in range(0, len(document["messages"]), 4):
            for field in FIELDS[:6]:
                messages = list(document["messages"])
                messages[index] = {**messages[index], field: value}
                variants.append({**document, "messages": messages})
    assert sum(_holds_up(orjson.dumps(variant), exact=False) for variant in variants) > len(variants) // 2
