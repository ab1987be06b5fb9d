"""`validate` as a job: a path and options in, a typed outcome with its report out."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.jobs.validate import validate_session
from pipeline.report.documents import Unreadable, Unsupported, Validated
from pipeline.testing import as_json
from pipeline.testing.scenarios import SCENARIOS, build_scenario
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS, validate_options
from pipeline.vocabulary import SourceFormat
from tests.support.agent_files import copilot_events
from tests.support.records import jsonl, rec


def test_unreadable_and_unsupported_files_get_their_own_outcomes(tmp_path: Path) -> None:
    missing = validate_session(tmp_path / "missing.jsonl", "missing.jsonl", validate_options())
    assert isinstance(missing, Unreadable) and missing.failed
    assert as_json(missing)["findings"][0]["code"] == "unreadable"
    copilot = tmp_path / "events.jsonl"
    copilot.write_bytes(copilot_events())
    outcome = validate_session(copilot, "events.jsonl", validate_options())
    assert isinstance(outcome, Unsupported) and not outcome.failed
    assert as_json(outcome)["findings"][0]["ids"] == ["copilot-cli"]


def test_a_session_is_validated_with_its_report_sections(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    build_session(path, turns=3)
    outcome = validate_session(path, path.name, validate_options())
    assert isinstance(outcome, Validated)
    report = as_json(outcome)
    assert report["command"] == "validate" and report["session"]["sha256"]
    assert set(report["partition"]) == {
        "summary", "raw_keep", "side_keep", "control_projection", "excluded_branch", "excluded_unattributed",
    }  # fmt: skip
    assert sum(part["count"] for part in report["partition"].values()) == report["session"]["lines"]
    assert report["findings_truncated"] == {} and report["counts"]["error"] >= 1  # the malformed line


def test_findings_of_one_code_are_capped_per_report(tmp_path: Path) -> None:
    path = tmp_path / "noisy.jsonl"
    path.write_bytes(jsonl([rec("user", "u1")]) + b"not json\n" * 7)
    report = as_json(validate_session(path, path.name, validate_options(findings_per_code=3)))
    assert len([f for f in report["findings"] if f["code"] == "line-not-json"]) == 3
    assert report["findings_truncated"] == {"line-not-json": 4} and report["counts"]["error"] == 7


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_scenario_validates_with_the_leaf_claude_code_resumes_and_the_strict_verdict_beside_it(
    name: str, tmp_path: Path
) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(build_scenario(name))
    report = as_json(validate_session(path, path.name, validate_options()))
    assert report["status"] in ("valid", "warnings"), report["findings"]
    leaf, strict = report["leaf"], report["strict"]
    lines = path.read_bytes().count(b"\n")
    if leaf["source"] == "last-prompt-descendant":
        # the session went on below its pointer: the leaf is the last record, the seed's pointer beside it
        assert leaf["line"] == lines and strict["status"] == "valid" and strict["leaf_uuid"] != leaf["uuid"]
        assert any(f["code"] == "leaf-below-last-prompt" for f in report["findings"])
    unanswered = [f for f in report["findings"] if f["code"] == "tool-use-unanswered"]
    if name.startswith("final-") or name == "after-compaction":
        # calls left open at the end are a warning naming every open call, never an error
        assert len(unanswered) == 1 and unanswered[0]["severity"] == "warning"
        assert len(unanswered[0]["ids"]) == (2 if "parallel" in name else 1)
    else:
        assert not unanswered


def test_the_scenarios_cover_every_way_the_leaf_is_chosen() -> None:
    sources = set()
    for name in SCENARIOS:
        data = build_scenario(name)
        index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
        sources.add(resolve_topology(index, build_graph(index), AUTO).leaf_source.value)
    assert sources == {"last-prompt", "last-prompt-descendant", "inferred-newest-leaf"}
