"""Damaged rollouts: every kind of bad line is a finding on its 1-based line, never a traceback,
and validate and compress each give a report (compress writes nothing it could not prove)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.formats.codex.rollout_decode import RolloutKind, decode_rollout
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.job import compress_session
from pipeline.jobs.validate import validate_session
from pipeline.testing import as_json
from pipeline.testing.settings import compress_options, validate_options
from tests.support.rollout_builder import RolloutBuilder

LIMITS = LineLimits(max_line_bytes=200_000, max_json_depth=64)


def _rollout() -> RolloutBuilder:
    b = RolloutBuilder(seed=51)
    for turn in range(8):
        b.exchange(f"task {turn}", tools=2, output_bytes=2000)
    return b


def _line_damage(line: bytes) -> Callable[[bytes], tuple[bytes, int]]:
    def damage(data: bytes) -> tuple[bytes, int]:
        lines = data.split(b"\n")
        lines.insert(5, line)
        return b"\n".join(lines), 6

    return damage


DAMAGE: dict[str, tuple[Callable[[bytes], tuple[bytes, int]], str]] = {
    "truncated": (_line_damage(b'{"timestamp":"t","type":"response_item","payload":{"type":"mes'), "line-truncated"),
    "not-json": (_line_damage(b"<<<not json>>>"), "line-not-json"),
    "not-object": (_line_damage(b'["an", "array"]'), "line-not-object"),
    "blank": (_line_damage(b"   "), "blank-line"),
    "invalid-utf8": (_line_damage(b'{"timestamp":"t","type":"event_msg","payload":{"type":"x","m":"\xff\xfe"}}'), "line-invalid-utf8"),
    "too-deep": (_line_damage(b'{"a":' * 100 + b"1" + b"}" * 100), "line-nesting-too-deep"),
    "too-long": (_line_damage(b'{"type":"event_msg","payload":{"m":"' + b"x" * 300_000 + b'"}}'), "line-too-long"),
    "payload-not-object": (_line_damage(b'{"timestamp":"t","type":"response_item","payload":[1]}'), "unknown-record"),
    "bom": (lambda data: (b"\xef\xbb\xbf" + data, 1), "byte-order-mark"),
    "no-final-newline": (lambda data: (data.rstrip(b"\n"), data.rstrip(b"\n").count(b"\n") + 1), "missing-final-newline"),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damage_is_a_finding_on_its_line(kind: str) -> None:
    damage, code = DAMAGE[kind]
    data, line = damage(_rollout().to_bytes())
    analysis = analyze_rollout(data, LIMITS)
    assert (code, line) in {(f.code.value, f.line) for f in analysis.findings}
    assert analysis.rebuilt.resumable


def test_crlf_lines_are_counted_and_still_read() -> None:
    data = _rollout().to_bytes().replace(b"\n", b"\r\n")
    rollout = decode_rollout(data, LIMITS)
    assert rollout.crlf_lines == len(rollout) and all(e is not None for e in rollout.entries)
    assert next(rollout.lines_where(RolloutKind.SESSION_META)) == 1


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_validate_and_compress_report_every_damaged_copy(kind: str, tmp_path: Path) -> None:
    damage, _ = DAMAGE[kind]
    data, _line = damage(_rollout().to_bytes())
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)
    knobs = {"max_line_bytes": LIMITS.max_line_bytes, "max_json_depth": LIMITS.max_json_depth}
    validated = as_json(validate_session(path, path.name, validate_options(**knobs)))
    assert validated["command"] == "validate" and validated["status"] in ("valid", "warnings", "invalid")
    outcome = compress_session(path, path.name, compress_options(tmp_path / "out", min_tokens=0, **knobs))
    report = as_json(outcome)
    written = tmp_path / "out" / "root" / path.name
    assert report["status"] in ("compressed", "refused") and written.exists() is (
        report["status"] == "compressed"
    )
    if written.exists():  # the damage was in the summarized span: the candidate is clean
        assert not [
            f for f in analyze_rollout(written.read_bytes(), LIMITS).findings if f.severity.value == "error"
        ]
