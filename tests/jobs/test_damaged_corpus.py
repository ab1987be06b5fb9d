"""The damage a user found on 240 copies of corpus files, regenerated with a seed and kept as a
regression test: before this test existed 62 of them ended as `internal-error` in both commands
(invalid UTF-8 inside a string crashed the seed estimator; a 100,000-deep array crashed msgspec).

Every copy now gets a report, the damage is a finding on its line, invalid UTF-8 keeps its record
(read as U+FFFD, as Claude Code reads it) and a line too deep to read is an error that stops a
compaction. The corpus is read in place; the copies live in a temporary directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.testing.fuzz import Mutation
from pipeline.testing.fuzzing import FuzzRun, corpus_sources, fuzz_cases, run_fleet

SEED = 62
ISSUE_DAMAGE = (
    Mutation.BYTE_FLIPS,  # 20 random byte flips
    Mutation.INVALID_UTF8_VALUE,  # three invalid bytes inserted into a string
    Mutation.DEEP_NESTING,  # a 100,000-deep array
    Mutation.RANDOM_CUT,
    Mutation.TRUNCATE_END,
    Mutation.SHUFFLE,
    Mutation.DUPLICATE,
    Mutation.CRLF,
    Mutation.WRONG_TYPE,
    Mutation.HUGE_LINE,  # 5 MB here; the 50 MB line has its own test (memory)
)


@pytest.fixture(scope="module")
def damaged(corpus_files: Path, tmp_path_factory: pytest.TempPathFactory) -> FuzzRun:
    cases = fuzz_cases(
        corpus_sources(corpus_files),
        seed=SEED,
        count=240,
        kinds=ISSUE_DAMAGE,
        depth=100_000,
        huge_bytes=5_000_000,
    )
    return run_fleet(cases, tmp_path_factory.mktemp("damaged"))


def _codes(report: dict[str, Any]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for finding in report.get("findings", []):
        found.setdefault(finding["code"], []).append(finding.get("line") or 0)
    return found


def test_every_copy_gets_a_report_and_none_is_an_internal_error(damaged: FuzzRun) -> None:
    for reports in (damaged.validated, damaged.compressed):
        assert sorted(reports) == sorted(case.name for case in damaged.cases)
        assert [name for name, r in reports.items() if r["status"] == "internal-error"] == []


def test_invalid_utf8_keeps_the_record_with_a_warning_on_its_line(damaged: FuzzRun) -> None:
    cases = [c for c in damaged.cases if c.mutation is Mutation.INVALID_UTF8_VALUE]
    warned = [c for c in cases if "line-invalid-utf8" in _codes(damaged.validated[c.name])]
    assert len(warned) == len(cases) == 24
    for case in warned:
        report = damaged.validated[case.name]
        assert all(line > 0 for line in _codes(report)["line-invalid-utf8"])
        assert report["status"] != "invalid" or any(
            f["severity"] == "error" and f["code"] != "line-invalid-utf8" for f in report["findings"]
        )


def test_a_line_too_deep_is_an_error_on_its_line_and_stops_the_compaction(damaged: FuzzRun) -> None:
    for case in (c for c in damaged.cases if c.mutation is Mutation.DEEP_NESTING):
        validated, compressed = damaged.validated[case.name], damaged.compressed[case.name]
        assert validated["status"] in ("invalid", "not-a-transcript"), case.name
        if validated["status"] == "invalid":
            assert [line > 0 for line in _codes(validated)["line-nesting-too-deep"]] == [True]
            assert compressed["status"] in ("refused", "skipped-subagent"), case.name
