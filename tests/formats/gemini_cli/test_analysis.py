"""A Gemini CLI session's findings, sent items and sweep sets, over the real client's files."""

from __future__ import annotations

import orjson
import pytest

from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.estimate import estimate_parts
from pipeline.formats.gemini_cli.part_classes import class_tallies, file_tokens
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import FindingCode, PartitionSet
from tests.support.gemini_files import LEGACY_CORPUS, fixture, lines_of, with_lines

LIMITS = LineLimits(64 << 20, 256)


@pytest.mark.parametrize(
    "name", ["tools.jsonl", "compressed.jsonl", "subagent.jsonl", "rewound.jsonl", "long.jsonl"]
)
def test_every_file_the_real_client_wrote_validates_clean(name: str) -> None:
    analysis = analyze_chat(fixture(name).read_bytes(), LIMITS)
    assert analysis.resumable and not analysis.legacy
    assert analysis.findings == ()
    sets = analysis.sweep_sets()
    assert frozenset().union(*sets.values()) == frozenset(range(1, len(analysis.chat) + 1))
    assert sum(map(len, sets.values())) == len(analysis.chat)  # each line in exactly one set


def test_gemini_clis_own_compression_is_one_summary_item() -> None:
    analysis = analyze_chat(fixture("compressed.jsonl").read_bytes(), LIMITS)
    assert len(analysis.sent()) == len(analysis.turns) - 1
    head, _ = analysis.items[0]
    assert "<state_snapshot>" in head[0].content["parts"][0]["text"]


def test_damaged_lines_and_unknown_records_are_findings_with_their_line() -> None:
    data = with_lines(fixture("tools.jsonl"), b'{"id": "x", "type": "us\n', {"note": 1})
    analysis = analyze_chat(data, LIMITS)
    count = len(lines_of(fixture("tools.jsonl")))
    found = {(f.code, f.line) for f in analysis.findings}
    assert (FindingCode.LINE_TRUNCATED, count + 1) in found and (
        FindingCode.UNKNOWN_RECORD,
        count + 2,
    ) in found
    assert analysis.sent() == analyze_chat(fixture("tools.jsonl").read_bytes(), LIMITS).sent()


def test_an_unanswered_call_and_an_unfinished_status_are_findings() -> None:
    call = {"id": "c1", "name": "read_file", "args": {}, "status": "executing"}
    message = {"id": "m9", "timestamp": "t", "type": "gemini", "content": "", "toolCalls": [call]}
    analysis = analyze_chat(with_lines(fixture("tools.jsonl"), message), LIMITS)
    codes = {(f.code, f.ids) for f in analysis.findings}
    assert codes == {(FindingCode.TOOL_USE_UNANSWERED, ("c1",)), (FindingCode.TURN_UNFINISHED, ("c1",))}


def test_a_file_naming_no_session_is_not_resumable() -> None:
    analysis = analyze_chat(orjson.dumps({"$set": {"lastUpdated": "x"}}) + b"\n", LIMITS)
    assert not analysis.resumable and analysis.findings[-1].code is FindingCode.SESSION_META_MISSING


def test_a_legacy_document_is_read_whole() -> None:
    if not LEGACY_CORPUS.is_file():
        pytest.skip("the shared corpus is not here")
    analysis = analyze_chat(LEGACY_CORPUS.read_bytes(), LIMITS)
    assert analysis.legacy and len(analysis.sent()) == 22 and analysis.findings == ()
    assert analysis.sweep_sets()[PartitionSet.RAW_KEEP] == frozenset(range(1, len(analysis.chat) + 1))


@pytest.mark.parametrize(
    ("parts", "tokens"),
    [
        ([{"text": "abcd" * 10}], 10),
        ([{"text": "é" * 2}], 3),
        ([{"functionResponse": {"name": "abcd", "response": {"output": "x"}}}], 4),  # 1 + 14 / 4
        ([{"inlineData": {"mimeType": "image/png", "data": ""}}], 3000),
    ],
)
def test_gemini_clis_own_estimate(parts: list[object], tokens: int) -> None:
    assert estimate_parts(parts) == tokens


def test_a_checkpoint_the_real_client_saved_is_read_as_its_api_history() -> None:
    analysis = analyze_chat(fixture("checkpoint-fixture-tag.json").read_bytes(), LIMITS)
    assert analysis.checkpoint and not analysis.resumable and analysis.findings == ()
    assert [turn.role for turn in analysis.turns] == ["user", "model"]
    assert analysis.turns[0].content["parts"][-1] == {"text": "remember the number 42"}
    assert analysis.sweep_sets()[PartitionSet.RAW_KEEP] == frozenset(range(1, len(analysis.chat) + 1))


def test_a_file_of_headers_and_snapshots_only_loads_its_last_snapshot() -> None:
    """Cloud Shell's a2a-server writes no message records: headers and `$set` snapshots only."""
    records = lines_of(fixture("compressed.jsonl"))
    header = records[0]
    snapshots = [r for r in records if isinstance(r.get("$set", {}).get("messages"), list)]
    data = b"".join(orjson.dumps(r) + b"\n" for s in snapshots for r in (header, s))
    served, written = (
        analyze_chat(data, LIMITS),
        analyze_chat(fixture("compressed.jsonl").read_bytes(), LIMITS),
    )
    assert served.findings == () and served.resumable
    assert (
        served.sent()
        == analyze_chat(orjson.dumps(header) + b"\n" + orjson.dumps(snapshots[-1]) + b"\n", LIMITS).sent()
    )
    assert (
        served.sent() == written.sent()[: len(served.sent())]
    )  # the last snapshot: all but the last exchange


@pytest.mark.parametrize(
    "name",
    [
        "tools.jsonl",
        "compressed.jsonl",
        "subagent.jsonl",
        "rewound.jsonl",
        "long.jsonl",
        "checkpoint-fixture-tag.json",
    ],
)
def test_each_class_the_file_holds_covers_what_gemini_cli_sends_of_it(name: str) -> None:
    """The file's tally of a class (every version, every snapshot) is never below what is sent of
    it: a compression's summary is `summary` in the file too, a tool result its own class, and the
    environment message Gemini CLI records and leaves out of a resume `context`."""
    analysis = analyze_chat(fixture(name).read_bytes(), LIMITS)
    tallies = class_tallies(analysis, "estimate", {})
    for key, sent in tallies.sent.items():
        assert key in tallies.file and tallies.file[key].tokens["estimate"] >= sent.tokens["estimate"], key
    classes = {kind for kind, tool in tallies.file if tool is None}
    # a message is estimated whole, its parts one by one: rounding down, parts count no more
    assert file_tokens(analysis) >= sum(tallies.file[kind, None].tokens["estimate"] for kind in classes)
    if not analysis.checkpoint:
        assert ("context", None) in tallies.file and ("context", None) not in tallies.sent
