"""Inputs the fuzzer found crashing a job, minimized to the lines that did it, kept as fixtures.

Each file is named after what it raised before the fix (`tests/fixtures/fuzz/`, gzip: the deep
ones are 100,000 brackets): invalid UTF-8 in the seed estimator, nesting in msgspec and in the
stdlib parser, and a member of the wrong type ahead of a syntax error later in the same line.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pipeline.jobs.compress import compress_session
from pipeline.jobs.validate import validate_session
from pipeline.testing import as_json
from pipeline.testing.settings import compress_options, validate_options
from pipeline.vocabulary import SessionStatus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"
EXPECTED = {
    "unicodedecodeerror": "line-invalid-utf8",
    "recursionerror": "line-nesting-too-deep",
    "jsondecodeerror": "line-not-json",
}


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.jsonl.gz")), ids=lambda p: p.name.split(".")[0])
def test_a_found_crash_is_now_a_finding_on_its_line(fixture: Path, tmp_path: Path) -> None:
    source = tmp_path / fixture.name.removesuffix(".gz")
    source.write_bytes(gzip.decompress(fixture.read_bytes()))
    validated = validate_session(source, source.name, validate_options())
    compressed = compress_session(source, source.name, compress_options(tmp_path / "out", min_tokens=0))
    assert SessionStatus.INTERNAL_ERROR not in (validated.status, compressed.status)
    code = EXPECTED[fixture.name.split("-", 1)[0]]
    lines = [f["line"] for f in as_json(validated)["findings"] if f["code"] == code]
    assert lines and all(line >= 1 for line in lines)


def test_every_kind_of_crash_found_has_a_fixture() -> None:
    assert {path.name.split("-", 1)[0] for path in FIXTURES.glob("*.jsonl.gz")} == set(EXPECTED)
