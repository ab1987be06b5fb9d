"""Composition: only the first kept record's parent changes; the layout is the seed's."""

from __future__ import annotations

import orjson
import pytest

from pipeline.core.compose import ComposeError, ComposeInput, PairIds, compose
from pipeline.core.index import build_index
from pipeline.formats.claude_code.build import LeafStamp, ToolMetadata, replace_parent
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
