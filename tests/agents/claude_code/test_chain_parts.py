"""Claude Code's own parts of a compaction, as the active-chain compress job reaches them: through
`ChainFormat` (`agents/registry.CHAIN_PARTS`), never by the agent's name."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.agents.claude_code.chain_parts import CLAUDE_CODE_CHAIN
from pipeline.agents.registry import CHAIN_FORMATS, CHAIN_PARTS
from pipeline.formats.bound_rule import BoundRule
from pipeline.jobs.compress.masking import mask_plan
from pipeline.jobs.compress.planning import Planned, plan_and_summarize
from pipeline.jobs.compress.stages import candidate_partition
from pipeline.jobs.front import Analysis, open_session
from pipeline.testing import TranscriptBuilder
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS, compress_options


def test_every_chain_format_has_its_parts_under_its_own_name() -> None:
    assert set(CHAIN_PARTS) == CHAIN_FORMATS
    assert all(parts.format is source_format for source_format, parts in CHAIN_PARTS.items())


def _tool_result_line(tmp_path: Path, output: str) -> bytes:
    builder = TranscriptBuilder(seed=3)
    builder.user("run the tests")
    builder.tool_call("Bash", {"command": "pytest -q"}, output)
    builder.write(tmp_path / "s.jsonl")
    lines = (tmp_path / "s.jsonl").read_bytes().splitlines()
    return next(line for line in lines if b'"tool_result"' in line)


def test_a_bounded_record_reads_back_smaller_and_a_broken_line_not_at_all(tmp_path: Path) -> None:
    line = _tool_result_line(tmp_path, "collected 12 items\n" + "." * 20_000)
    bounded = CLAUDE_CODE_CHAIN.bound(line, BoundRule(2048, drop_media=False), (0, len(line)))
    assert bounded is not None
    data, declared = bounded
    assert declared and all(item.kept_bytes < item.original_bytes for item in declared)
    before, after = (
        CLAUDE_CODE_CHAIN.record_tokens(line, LIMITS),
        CLAUDE_CODE_CHAIN.record_tokens(data, LIMITS),
    )
    assert before is not None and after is not None and after < before
    assert CLAUDE_CODE_CHAIN.record_tokens(data[: len(data) // 2], LIMITS) is None


def test_a_record_within_the_limit_is_not_bounded(tmp_path: Path) -> None:
    line = _tool_result_line(tmp_path, "12 passed")
    assert CLAUDE_CODE_CHAIN.bound(line, BoundRule(2048, drop_media=False), (0, len(line))) is None


def test_a_reparented_record_differs_from_its_source_in_its_parent_only(tmp_path: Path) -> None:
    line = _tool_result_line(tmp_path, "12 passed")
    assert orjson.loads(CLAUDE_CODE_CHAIN.reparented(line, "new-parent")) == {
        **orjson.loads(line),
        "parentUuid": "new-parent",
    }


@pytest.fixture(scope="module")
def analysis(tmp_path_factory: pytest.TempPathFactory) -> Analysis:
    folder = tmp_path_factory.mktemp("chain")
    build_session(folder / "session.jsonl", turns=6)
    options = compress_options(folder / "out", min_tokens=0)
    opened = open_session(
        folder / "session.jsonl", "s", options.topology(), command="compress", per_code=9, limits=LIMITS
    )
    assert isinstance(opened, Analysis)
    return opened


def test_a_candidate_composed_through_the_seam_reads_back_our_stamp(
    analysis: Analysis, tmp_path: Path
) -> None:
    options = compress_options(tmp_path, min_tokens=0, min_recent_records=8)
    planned = plan_and_summarize(analysis, options)
    assert isinstance(planned, Planned) and planned.summary is not None
    plan = planned.plan
    partition, side = candidate_partition(analysis, options, plan)
    composed = analysis.chain_format.compose(analysis, planned.cut(partition, side), planned.text)
    boundary = next(
        line for line in composed.data.split(b"\n") if f'"uuid":"{composed.boundary_uuid}"'.encode() in line
    )
    stamp = analysis.chain_format.compaction_stamp(boundary)
    assert stamp is not None
    assert stamp.source_sha256 == analysis.source.sha256
    assert stamp.summary_lines == len(plan.summary_lines)
    assert stamp.head_uuid == analysis.index.entry(plan.raw_lines[0]).uuid
    assert analysis.chain_format.compaction_stamp(analysis.index.raw_line(analysis.source.data, 1)) is None
    assert analysis.chain_format.mask_stamp(composed.data) is None


def test_a_masked_candidate_declares_on_its_pointer_what_it_cleared(
    analysis: Analysis, tmp_path: Path
) -> None:
    options = compress_options(tmp_path, min_tokens=0, min_recent_records=8, strategy="mask")
    planned = mask_plan(analysis, options)
    partition, side = candidate_partition(analysis, options, planned.plan)
    composed = analysis.chain_format.compose_masked(analysis, planned.cut(partition, side))
    stamp = analysis.chain_format.mask_stamp(composed.data)
    assert stamp is not None and stamp.source_sha256 == analysis.source.sha256
    cleared = analysis.chain_format.cleared_tools(composed.data)
    declared = {
        item.tool_use_id for items in planned.bounding.declared.values() for item in items if item.cleared
    }
    assert cleared and cleared <= declared
    marker = analysis.chain_format.cleared_marker.encode()
    lines = composed.data.split(b"\n")
    assert all(any(tool.encode() in line and marker in line for line in lines) for tool in cleared)
    assert not analysis.chain_format.cleared_tools(analysis.source.data)
