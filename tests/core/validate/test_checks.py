"""The validator: every finding code, with the line it names and the severity it carries."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.topology.select import TopologyOptions, resolve_topology
from pipeline.core.validate.checks import validate
from pipeline.findings import REASONS, Finding
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import FindingCode, LeafPolicy, Severity, SourceFormat
from tests.support.records import SESSION_B as B
from tests.support.records import pointer, rec

C = FindingCode


def use(
    uuid: str, parent: str | None, *tools: Any, mid: str | None = None, text: str | None = None
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls"}} for tool in tools
    ]
    return rec("assistant", uuid, parent, content=content, mid=mid or f"msg-{uuid}")


def results(uuid: str, parent: str, *tools: Any, text_first: bool = False, **extra: Any) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "tool_result", "tool_use_id": t, "content": "ok"} for t in tools]
    if text_first:
        blocks.insert(0, {"type": "text", "text": "note"})
    return rec("user", uuid, parent, text=blocks, **extra)


def boundary(uuid: str | None, *, logical: str | None = None, **extra: Any) -> dict[str, Any]:
    record = rec("system", uuid, None, subtype="compact_boundary", content="Conversation compacted", **extra)
    if logical:
        record["logicalParentUuid"] = logical
    return record


def summary(uuid: str, parent: str | None, text: Any = "summary of earlier work") -> dict[str, Any]:
    return rec("user", uuid, parent, text=text, isCompactSummary=True)


def findings_of(records: list[dict[str, Any]], policy: LeafPolicy = LeafPolicy.AUTO) -> list[Finding]:
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, TopologyOptions(policy, None, 0))
    return list(topology.findings) + list(validate(index, graph, topology.chain, data).findings)


U1 = rec("user", "u1")
CASES: list[tuple[str, list[dict[str, Any]], FindingCode, Severity, int | None]] = [
    (
        "dup-off-chain",
        [
            U1,
            rec("assistant", "a1", "u1"),
            rec("user", "x", "u1"),
            rec("user", "x", "u1"),
            rec("assistant", "a2", "a1"),
        ],
        C.DUPLICATE_UUID,
        Severity.WARNING,
        4,
    ),
    (
        "malformed-uuid",
        [U1, rec("assistant", 5, "u1"), rec("assistant", "a1", "u1")],
        C.MALFORMED_UUID,
        Severity.WARNING,
        2,
    ),
    (
        "malformed-parent-off-chain",
        [U1, rec("assistant", "a0", ["u1"]), rec("assistant", "a1", "u1")],
        C.MALFORMED_PARENT,
        Severity.WARNING,
        2,
    ),
    (
        "dangling-off-chain",
        [U1, rec("user", "x", "gone"), rec("assistant", "a1", "u1")],
        C.DANGLING_PARENT,
        Severity.WARNING,
        2,
    ),
    (
        "cross-session",
        [U1, rec("user", "x", "u1", session=B), rec("assistant", "a1", "u1")],
        C.CROSS_SESSION_PARENT,
        Severity.WARNING,
        None,
    ),
    (
        "pointer-malformed",
        [U1, rec("assistant", "a1", "u1"), pointer(3), pointer("a1")],
        C.LAST_PROMPT_MALFORMED,
        Severity.WARNING,
        3,
    ),
    (
        "pointer-missing-leaf",
        [U1, rec("assistant", "a1", "u1"), pointer("gone"), pointer("a1")],
        C.LAST_PROMPT_MISSING_LEAF,
        Severity.WARNING,
        3,
    ),
    (
        "pointer-cross-session",
        [U1, rec("assistant", "a1", "u1"), pointer("a1", session=B), pointer("a1")],
        C.LAST_PROMPT_CROSS_SESSION,
        Severity.WARNING,
        3,
    ),
    (
        "tool-id-malformed",
        [U1, use("a1", "u1", 7), results("r1", "a1", 7), rec("assistant", "a2", "r1")],
        C.TOOL_ID_MALFORMED,
        Severity.ERROR,
        2,
    ),
    (
        "tool-use-duplicate",
        [
            U1,
            use("a1", "u1", "t1"),
            results("r1", "a1", "t1"),
            use("a2", "r1", "t1"),
            results("r2", "a2", "t1"),
        ],
        C.TOOL_USE_ID_DUPLICATE,
        Severity.ERROR,
        4,
    ),
    (
        "tool-result-duplicate",
        [U1, use("a1", "u1", "t1", "t2"), results("r1", "a1", "t1", "t1")],
        C.TOOL_RESULT_ID_DUPLICATE,
        Severity.ERROR,
        3,
    ),
    ("unanswered-at-end", [U1, use("a1", "u1", "t1")], C.TOOL_USE_UNANSWERED, Severity.WARNING, 2),
    (
        "not-followed-by-user",
        [
            U1,
            use("a1", "u1", "t1", mid="m1"),
            rec("system", "s1", "a1", subtype="x"),
            use("a2", "s1", "t2", mid="m2"),
            results("r2", "a2", "t2"),
        ],
        C.TOOL_USE_NOT_FOLLOWED_BY_USER,
        Severity.ERROR,
        2,
    ),
    (
        "result-mismatch",
        [U1, use("a1", "u1", "t1"), results("r1", "a1", "t9")],
        C.TOOL_RESULT_MISMATCH,
        Severity.ERROR,
        3,
    ),
    (
        "result-without-use",
        [results("r1", None, "t1"), rec("assistant", "a1", "r1")],
        C.TOOL_RESULT_WITHOUT_USE,
        Severity.ERROR,
        1,
    ),
    (
        "result-not-first",
        [U1, use("a1", "u1", "t1"), results("r1", "a1", "t1", text_first=True)],
        C.TOOL_RESULT_NOT_FIRST,
        Severity.ERROR,
        3,
    ),
    (
        "result-partial",
        [U1, use("a1", "u1", "t1", "t2"), results("r1", "a1", "t1"), rec("assistant", "a2", "r1")],
        C.TOOL_RESULT_PARTIAL,
        Severity.WARNING,
        None,
    ),
    (
        "result-order",
        [U1, use("a1", "u1", "t1", "t2"), results("r1", "a1", "t2", "t1"), rec("assistant", "a2", "r1")],
        C.TOOL_RESULT_ORDER,
        Severity.INFO,
        None,
    ),
    (
        "boundary-without-uuid",
        [boundary(None), U1, rec("assistant", "a1", "u1")],
        C.COMPACT_BOUNDARY_WITHOUT_UUID,
        Severity.WARNING,
        1,
    ),
    (
        "boundary-two-summaries",
        [
            boundary("b1", compactMetadata={}),
            summary("s1", "b1"),
            summary("s2", "b1"),
            rec("assistant", "a1", "s2"),
        ],
        C.COMPACT_BOUNDARY_SUMMARY_COUNT,
        Severity.ERROR,
        1,
    ),
    (
        "summary-orphan",
        [
            boundary("b1", compactMetadata={}),
            summary("s1", "b1"),
            rec("assistant", "a1", "s1"),
            summary("s9", "a1"),
            rec("assistant", "a2", "s9"),
        ],
        C.COMPACT_SUMMARY_ORPHAN,
        Severity.ERROR,
        4,
    ),
    (
        "summary-legacy",
        [U1, rec("assistant", "a1", "u1"), summary("s1", "a1"), rec("assistant", "a2", "s1")],
        C.COMPACT_SUMMARY_LEGACY,
        Severity.INFO,
        3,
    ),
    (
        "summary-empty",
        [boundary("b1", compactMetadata={}), summary("s1", "b1", text="  "), rec("assistant", "a1", "s1")],
        C.COMPACT_SUMMARY_EMPTY,
        Severity.ERROR,
        2,
    ),
    (
        "metadata-missing",
        [boundary("b1"), summary("s1", "b1"), rec("assistant", "a1", "s1")],
        C.COMPACT_METADATA_MISSING,
        Severity.WARNING,
        1,
    ),
    (
        "preserved-invalid",
        [
            boundary(
                "b1",
                compactMetadata={
                    "preservedSegment": {"headUuid": "a1", "anchorUuid": "nowhere", "tailUuid": "a1"}
                },
            ),
            summary("s1", "b1"),
            rec("assistant", "a1", "s1"),
        ],
        C.COMPACT_PRESERVED_INVALID,
        Severity.ERROR,
        1,
    ),
    (
        "preserved-historical",
        [
            boundary(
                "b1",
                compactMetadata={
                    "preservedSegment": {"headUuid": "old", "anchorUuid": "s1", "tailUuid": "a1"}
                },
            ),
            summary("s1", "b1"),
            rec("assistant", "a1", "s1"),
        ],
        C.COMPACT_PRESERVED_HISTORICAL,
        Severity.WARNING,
        1,
    ),
    (
        "compact-off-chain",
        [boundary("b1", compactMetadata={}), summary("s1", "b1"), U1, rec("assistant", "a1", "u1")],
        C.COMPACT_NOT_ON_ACTIVE_CHAIN,
        Severity.INFO,
        None,
    ),
    (
        "external-parent",
        [rec("user", "u1", "in-parent-file"), rec("assistant", "a1", "u1")],
        C.EXTERNAL_PARENT,
        Severity.INFO,
        1,
    ),
    ("leaf-inferred", [U1, rec("assistant", "a1", "u1")], C.LEAF_INFERRED, Severity.INFO, 2),
    ("chain-loop", [rec("user", "u1", "a1"), rec("assistant", "a1", "u1")], C.CHAIN_LOOP, Severity.ERROR, 2),
    (
        "non-monotonic",
        [rec("assistant", "a1", "u1"), rec("user", "u1", None), rec("system", "s1", "a1", subtype="x")],
        C.CHAIN_NON_MONOTONIC,
        Severity.ERROR,
        None,
    ),
    (
        "lineage-transition",
        [
            U1,
            rec("assistant", "a1", "u1"),
            rec("user", "u2", "a1", session=B),
            rec("assistant", "a2", "u2", session=B),
        ],
        C.SESSION_LINEAGE_TRANSITION,
        Severity.WARNING,
        None,
    ),
    (
        "lineage-unsafe",
        [U1, rec("assistant", "a1", "u1", session=B), rec("user", "u2", "a1"), rec("assistant", "a2", "u2")],
        C.SESSION_LINEAGE_UNSAFE,
        Severity.ERROR,
        None,
    ),
    (
        "text-mismatch",
        [
            rec("user", "u1", text="the real question"),
            rec("assistant", "a1", "u1"),
            pointer(lastPrompt="something else entirely"),
        ],
        C.LAST_PROMPT_TEXT_MISMATCH,
        Severity.WARNING,
        3,
    ),
]


@pytest.mark.parametrize(
    ("records", "code", "severity", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_finding_code(
    records: list[dict[str, Any]], code: FindingCode, severity: Severity, line: int | None
) -> None:
    found = [f for f in findings_of(records) if f.code is code]
    assert found, f"{code} not reported"
    assert found[0].severity is severity
    if line is not None:
        assert found[0].line == line


def test_strict_refusal_and_no_branch_isolation_are_reported() -> None:
    linear = [U1, rec("assistant", "a1", "u1")]
    assert any(
        f.code is C.STRICT_REFUSAL and f.ids == ("absent",) for f in findings_of(linear, LeafPolicy.STRICT)
    )
    assert any(f.code is C.NO_BRANCH_ISOLATION for f in findings_of(linear, LeafPolicy.PHYSICAL))


def test_a_clean_parallel_exchange_has_no_error_or_warning() -> None:
    records = [
        U1,
        use("a1", "u1", "t1", mid="m"),
        use("a2", "a1", "t2", mid="m"),
        results("r1", "a1", "t1"),
        results("r2", "a2", "t2"),
        rec("assistant", "a3", "r2", text="done"),
    ]
    records[4]["sourceToolAssistantUUID"] = "a2"
    assert [f for f in findings_of(records) if f.severity is not Severity.INFO] == []


def test_every_code_has_a_fixed_reason() -> None:
    assert set(REASONS) == set(FindingCode)
