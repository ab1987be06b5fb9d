"""Composition: only the first kept record's parent changes; the layout is the seed's."""

from __future__ import annotations

import orjson
import pytest

from pipeline.core.compose import ComposeError, ComposeInput, PairIds, WrittenRecord, compose
from pipeline.core.index import build_index
from pipeline.formats.claude_code.build import LeafStamp, ToolMetadata, replace_parent
from pipeline.formats.claude_code.tasks import BackgroundShell, task_status
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import SourceFormat

IDS = PairIds(
    "bbbbbbbb-0000-4000-8000-000000000001", "ssssssss-0000-4000-8000-000000000002", "2026-01-01T00:00:00.000Z"
)
METADATA = ToolMetadata(
    tool="session-compaction", tool_version="0", engine="v1", preserve_mode="active-chain",
    leaf=LeafStamp("a2", "last-prompt", "auto"), strict_status="valid", source_sha256="0" * 64,
    counts={}, digests={}, pre_estimated_tokens=99, post_estimated_tokens=9, cut_reasons=[],
)  # fmt: skip


@pytest.mark.parametrize(
    "line",
    [
        b'{"parentUuid":null,"a":1}',
        b'{"parentUuid":"old","uuid":"u"}',
        b'{"a":{"parentUuid":"inner"},"parentUuid":"outer","s":"parentUuid"}',
        b'{"t":"ends with a backslash \\\\","parentUuid":"p"}',
        b'{"t":"quote \\" then \\"parentUuid\\":","parentUuid":"p","n":[1,{"parentUuid":2}]}',
        b'{"type":"user","uuid":"u"}',
    ],
)
def test_replace_parent_changes_only_the_top_level_member(line: bytes) -> None:
    out = replace_parent(line, "NEW")
    before, after = orjson.loads(line), orjson.loads(out)
    assert after["parentUuid"] == "NEW"
    assert {k: v for k, v in after.items() if k != "parentUuid"} == {
        k: v for k, v in before.items() if k != "parentUuid"
    }
    if "parentUuid" in before:  # every other byte is untouched
        old = orjson.dumps(before["parentUuid"])
        assert out.replace(b'"NEW"', old, 1) == line or line.count(old) > 1


def test_layout_prefix_side_pair_suffix_pointer() -> None:
    records = [
        {"type": "custom-title", "customTitle": "t", "sessionId": "s"},
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "message": {"role": "user", "content": "a"},
        },
        {"type": "file-history-snapshot", "messageId": "u2", "snapshot": {}},
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": "u1",
            "sessionId": "s",
            "message": {"role": "user", "content": "b"},
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "parentUuid": "u2",
            "sessionId": "s",
            "message": {"role": "assistant", "id": "m", "content": [{"type": "text", "text": "c"}]},
        },
        {"type": "last-prompt", "lastPrompt": "b", "sessionId": "s", "unknownField": {"kept": True}},
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    composed = compose(
        ComposeInput(
            data=data,
            index=index,
            raw_lines=(4, 5),
            side_lines=(3,),
            control_lines=(1,),
            summary_text="SUMMARY",
            pointer_line=6,
            session_id=None,
            logical_parent="u1",
            metadata=METADATA,
            pre_tokens=99,
            ids=IDS,
        )
    )
    out = [orjson.loads(line) for line in composed.data.splitlines()]
    assert [r["type"] for r in out] == [
        "custom-title",
        "file-history-snapshot",
        "system",
        "user",
        "user",
        "assistant",
        "last-prompt",
    ]
    boundary, summary = out[2], out[3]
    assert boundary["subtype"] == "compact_boundary" and boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == "u1" and boundary["compactMetadata"]["preTokens"] == 99
    assert boundary["uuid"] == IDS.boundary_uuid and summary["uuid"] == IDS.summary_uuid
    assert boundary["timestamp"] == summary["timestamp"] == IDS.timestamp
    assert list(boundary["compactMetadata"]) == [
        "trigger",
        "sessionCompaction",
        "preTokens",
        "preservedSegment",
    ]
    assert boundary["compactMetadata"]["sessionCompaction"]["sourceSha256"] == "0" * 64
    assert boundary["compactMetadata"]["preservedSegment"] == {
        "headUuid": "u2",
        "anchorUuid": summary["uuid"],
        "tailUuid": "a2",
    }
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    assert summary["message"] == {"role": "user", "content": "SUMMARY"}
    assert out[4]["parentUuid"] == summary["uuid"]
    assert composed.data.splitlines()[5] == data.splitlines()[4]  # byte-identical after the first record
    assert out[6]["leafUuid"] == "a2" and out[6]["unknownField"] == {"kept": True}
    assert composed.data.splitlines()[2].startswith(b'{"parentUuid":null,')  # Claude Code's key order
    assert composed.source_lines == (1, 3, None, None, 4, 5, None)


def test_an_empty_suffix_cannot_be_composed() -> None:
    data = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"a"}}\n'
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    with pytest.raises(ComposeError):
        compose(
            ComposeInput(
                data=data,
                index=index,
                raw_lines=(),
                side_lines=(),
                control_lines=(),
                summary_text="S",
                pointer_line=None,
                session_id=None,
                logical_parent=None,
                metadata=METADATA,
                pre_tokens=0,
                ids=IDS,
            )
        )


def test_carried_state_and_written_shells_follow_the_summary_chained_and_declared() -> None:
    """Projected records keep their bytes but for their parent; a carried shell's task_status is
    written after them; the first kept record hangs off the last; the boundary names the tools
    the summarized span loaded, and the preserved segment starts at the first carried record."""
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "a"}},
        {"type": "attachment", "uuid": "t1", "parentUuid": "u1", "attachment": {"type": "date", "date": "d"}},
        {"type": "user", "uuid": "u2", "parentUuid": "t1", "message": {"role": "user", "content": "b"}},
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    shell = BackgroundShell("b1", "toolu_1", "bash", "Serve", "npm run dev", 1)
    composed = compose(
        ComposeInput(
            data=data,
            index=index,
            raw_lines=(3,),
            side_lines=(),
            control_lines=(),
            summary_text="SUMMARY",
            pointer_line=None,
            session_id=None,
            logical_parent="u1",
            metadata=METADATA,
            pre_tokens=9,
            ids=IDS,
            state_lines=(2,),
            written=(WrittenRecord("w1", shell),),
            discovered_tools=("WebFetch",),
        )
    )
    out = [orjson.loads(line) for line in composed.data.splitlines()]
    boundary, summary, state, written, kept, pointer = out
    assert pointer == {"type": "last-prompt", "leafUuid": "u2"}  # a source without one gets one
    assert composed.data.splitlines()[2] == replace_parent(data.splitlines()[1], IDS.summary_uuid)
    assert written["parentUuid"] == "t1" and written["uuid"] == "w1" and written["type"] == "attachment"
    assert written["attachment"] == task_status(shell) and written["timestamp"] == IDS.timestamp
    assert kept["parentUuid"] == "w1" == composed.tail_parent
    assert composed.state_uuids == ("t1",) and composed.written_uuids == ("w1",)
    assert composed.source_lines == (None, None, 2, None, 3, None)
    assert boundary["compactMetadata"]["preCompactDiscoveredTools"] == ["WebFetch"]
    assert boundary["compactMetadata"]["preservedSegment"]["headUuid"] == "t1"
    assert summary["parentUuid"] == boundary["uuid"] and state["attachment"] == {"type": "date", "date": "d"}
