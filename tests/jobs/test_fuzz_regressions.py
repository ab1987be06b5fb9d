"""Inputs the fuzzer found crashing a job, minimized to the lines that did it, kept as fixtures.

Each file is named after what it raised before the fix (`tests/fixtures/fuzz/`, gzip: the deep
ones are 100,000 brackets): invalid UTF-8 in the seed estimator, nesting in msgspec and in the
stdlib parser, and a member of the wrong type ahead of a syntax error later in the same line; or
after the internal error it led compress to (`internalerror`: a pointer on the first of two
parallel results, the other record of that pair damaged; the candidate's pointer named the last kept
record, from which the damaged result could not be recovered, where it now names the source's leaf).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
import pytest

from pipeline.formats import json_text
from pipeline.jobs.compress import compress_session
from pipeline.jobs.validate import validate_session
from pipeline.testing import as_json
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import compress_options, validate_options
from pipeline.vocabulary import SessionStatus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"
EXPECTED = {
    "unicodedecodeerror": "line-invalid-utf8",
    "recursionerror": "line-nesting-too-deep",
    "jsondecodeerror": "line-not-json",
    "internalerror": "line-invalid-utf8",
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


def _with_lone_surrogate(path: Path) -> int:
    """Put an escaped lone surrogate into the first user prompt; its 1-based line."""
    lines = path.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if b'"type":"user"' in line and b'"content":"' in line)
    lines[number] = lines[number].replace(b'"content":"', b'"content":"\\ud800 ', 1)
    path.write_bytes(b"".join(lines))
    return number + 1


@pytest.mark.claude_code
def test_a_lone_surrogate_is_kept_and_summarized_as_claude_code_reads_it(
    tmp_path: Path, claude_code: Path
) -> None:
    """Found by the sweep's differential test: the estimator and the record builders raised on one."""
    source = tmp_path / "root" / "p" / "s.jsonl"
    source.parent.mkdir(parents=True)
    build_session(source, turns=6, seed=3)
    line = _with_lone_surrogate(source)
    validated = validate_session(source, source.name, validate_options())
    assert validated.status is SessionStatus.INVALID  # the builder's one malformed canary line
    assert line not in [f.get("line") for f in as_json(validated)["findings"]]
    done = compaction(
        "compress", str(tmp_path / "root"), "--out", str(tmp_path / "out"), "--min-tokens", "0",
        "--verify-resume", "--claude", str(claude_code), "--quiet",
    )  # fmt: skip
    (report,) = reports(tmp_path / "out")
    assert done.returncode == 0 and report["status"] == "compressed", report.get("reasons")
    assert report["resume_check"]["verdict"] == "match"  # type: ignore[index]
    written = (tmp_path / "out" / "root" / "p" / "s.jsonl").read_bytes()
    written.decode("utf-8")  # valid UTF-8 throughout
    assert "\ufffd" in written.decode()  # the summary quotes the prompt as Claude Code sends it


def test_json_text_writes_a_lone_surrogate_back_as_its_escape() -> None:
    value = json.loads('{"a": "x\\ud800y \\ud83d\\ude00 \\u00e9", "n": 18446744073709551616}')
    written = json_text.dumps(value)
    assert json.loads(written) == value and b"\\ud800" in written
    written.decode("utf-8")
    assert json_text.dumps({"a": "\u00e9"}) == orjson.dumps({"a": "\u00e9"})  # orjson's bytes otherwise
    assert json_text.well_formed("x\ud800y\U0001f600") == "x\ufffdy\U0001f600"
