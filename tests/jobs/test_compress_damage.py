"""compress and damage: records the API refuses are repaired when a summary replaces them, and
refused, with line and code, when they would stay in the kept tail.

Damage is planted with the fuzzer's pairing kinds (`pipeline.testing.fuzz.PAIRING`) into builder
sessions; the same with the real Claude Code and corpus copies is in
`tests/proof/claude_code/test_claude_code_damage.py`.
"""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from pipeline.jobs.compress import CompressOptions, compress_session
from pipeline.jobs.validate import validate_session
from pipeline.testing import as_json
from pipeline.testing.fuzz import PAIRING, Mutation, plant, result_lines
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS, compress_options, validate_options
from tests.support.resolved import resolve

# What the validator calls each planted defect.
CODES = {
    Mutation.DROPPED_RESULT: {"tool-use-not-followed-by-user"},
    Mutation.DUPLICATED_TOOL_ID: {"tool-use-id-duplicate", "tool-result-id-duplicate"},
    Mutation.RESULT_NOT_FIRST: {"tool-result-not-first"},
    Mutation.ORPHAN_RESULT: {"tool-result-mismatch"},
}


def options(out: Path, **extra: Any) -> CompressOptions:
    return compress_options(out, **{"min_tokens": 0, **extra})


def damaged(tmp_path: Path, kind: Mutation, pick: int, *, turns: int = 8) -> tuple[Path, bytes]:
    """A builder session with `kind` planted at its `pick`-th tool result (negative: from the end)."""
    clean = tmp_path / "clean.jsonl"
    build_session(clean, turns=turns)
    data = clean.read_bytes()
    source = tmp_path / "src" / "session.jsonl"
    source.parent.mkdir(exist_ok=True)
    source.write_bytes(plant(data, kind, result_lines(data)[pick]))
    return source, data


@pytest.mark.parametrize("kind", PAIRING)
def test_damage_the_summary_replaces_is_repaired_and_each_defect_is_listed(
    tmp_path: Path, kind: Mutation
) -> None:
    source, _ = damaged(tmp_path, kind, 1)
    before = as_json(validate_session(source, "session", validate_options()))
    errors = {(f["line"], f["code"]) for f in before["findings"] if f["severity"] == "error"}
    pairing = {(line, code) for line, code in errors if code in CODES[kind]}
    assert {code for _, code in pairing} == CODES[kind]

    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out"))
    report = as_json(outcome)
    assert outcome.status.value == "compressed", report.get("reasons")
    assert {(r["line"], r["code"]) for r in report["repairs"]} == pairing
    assert all(set(r) == {"line", "code"} for r in report["repairs"])
    candidate = tmp_path / "out" / "root" / "session.jsonl"
    after = as_json(validate_session(candidate, "candidate", validate_options()))
    assert after["status"] in ("valid", "warnings"), after["findings"]
    # Every damaged line went into the summary: none of their uuids is in the candidate.
    index, data = resolve(source.read_bytes()).index, candidate.read_bytes()
    for line, _ in pairing:
        uid = index.entry(line).uuid
        assert uid is not None and uid.encode() not in data


@pytest.mark.parametrize("kind", PAIRING)
def test_damage_in_the_kept_tail_is_refused_with_its_line_and_code(tmp_path: Path, kind: Mutation) -> None:
    source, _ = damaged(tmp_path, kind, -1)  # the last tool result: the protected round keeps it
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out"))
    report = as_json(outcome)
    assert outcome.status.value == "refused"
    assert report["reasons"][0] == "source-active-chain-invalid"
    assert set(report["reasons"][1:]) <= CODES[kind] and report["reasons"][1:]
    listed = [f for f in report["findings"] if f["code"] in CODES[kind]]
    assert listed and all(f["line"] > 0 and f["severity"] == "error" for f in listed)
    assert "repairs" not in report and not (tmp_path / "out" / "root").exists()


def test_the_cut_moves_past_damage_the_target_alone_would_keep(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    build_session(clean, turns=8)
    data = clean.read_bytes()
    plain = as_json(compress_session(clean, "clean.jsonl", options(tmp_path / "plain")))
    kept = plain["plan"]["raw_records"]
    chain = resolve(data).topology.chain
    # A result among the records the plain cut keeps, but before the protected round.
    candidates = [line for line in result_lines(data) if line in chain[-kept:]]
    protected_from = chain[plain["plan"]["protected_start"]]
    site = next(line for line in candidates if line < protected_from)
    source = tmp_path / "session.jsonl"
    source.write_bytes(plant(data, Mutation.RESULT_NOT_FIRST, site))
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out")))
    assert report["status"] == "compressed", report.get("reasons")
    assert "moved-past-damaged-records" in report["plan"]["reasons"]
    assert report["plan"]["raw_records"] < kept
    assert report["repairs"] == [{"code": "tool-result-not-first", "line": site}]


def test_a_repair_is_written_even_when_it_saves_less_than_min_gain(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    build_session(clean, turns=8)
    plain = as_json(compress_session(clean, "clean.jsonl", options(tmp_path / "plain", min_gain=0.99)))
    assert plain["status"] == "skipped-low-gain"
    source, _ = damaged(tmp_path, Mutation.ORPHAN_RESULT, 1)
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out", min_gain=0.99)))
    assert report["status"] == "compressed" and report["plan"]["estimated_gain"] < 0.99
    assert [r["code"] for r in report["repairs"]] == ["tool-result-mismatch"]


def test_a_damaged_session_nothing_is_summarized_for_stays_refused(tmp_path: Path) -> None:
    source, _ = damaged(tmp_path, Mutation.ORPHAN_RESULT, 1, turns=3)
    small = as_json(compress_session(source, "session.jsonl", options(tmp_path / "a", min_tokens=10**9)))
    fits = as_json(compress_session(source, "session.jsonl", options(tmp_path / "b", target_ratio=1.0)))
    for report in (small, fits):
        assert report["status"] == "refused"
        assert report["reasons"] == ["source-active-chain-invalid", "tool-result-mismatch"]
        assert any(f["code"] == "tool-result-mismatch" and f["line"] for f in report["findings"])


def test_a_chain_error_no_summary_can_repair_is_refused_with_its_findings(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    build_session(clean, turns=6)
    lines = clean.read_bytes().split(b"\n")
    boundary = (
        b'{"parentUuid":null,"isSidechain":false,"type":"system","subtype":"compact_boundary",'
        b'"content":"Conversation compacted","uuid":"00000000-0000-4000-8000-00000000c0de"}'
    )
    first = lines[0]
    lines[0] = first.replace(b'"parentUuid":null', b'"parentUuid":"00000000-0000-4000-8000-00000000c0de"', 1)
    source = tmp_path / "session.jsonl"
    source.write_bytes(b"\n".join([boundary, *lines]))
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out")))
    assert report["status"] == "refused" and report["reasons"][0] == "source-active-chain-invalid"
    assert "compact-boundary-summary-count" in report["reasons"]
    assert any(f["code"] == "compact-boundary-summary-count" and f["line"] == 1 for f in report["findings"])


@pytest.mark.parametrize("kind", PAIRING)
def test_with_repair_damage_in_the_kept_tail_is_repaired_first_then_compressed(
    tmp_path: Path, kind: Mutation
) -> None:
    source, _ = damaged(tmp_path, kind, -1)  # the protected round holds it: no cut reaches it
    original = source.read_bytes()
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out", repair="on")))
    assert report["status"] == "compressed", report.get("reasons")
    repair = report["source_repair"]
    assert repair["status"] == "repaired" and repair["proof"]["verdict"] == "unproven"  # no gate here
    assert {e["code"] for e in repair["edits"]} & CODES[kind]  # (and a torn last line, where planted)
    assert all(e["line"] > 0 and e["action"] for e in repair["edits"])
    assert repair["repaired_sha256"] != sha256(original).hexdigest()
    # The report's file is the original, untouched; the candidate is sound and smaller.
    assert report["session"]["sha256"] == sha256(original).hexdigest() and source.read_bytes() == original
    candidate = tmp_path / "out" / "root" / "session.jsonl"
    after = as_json(validate_session(candidate, "candidate", validate_options()))
    assert after["status"] in ("valid", "warnings"), after["findings"]
    assert len(candidate.read_bytes()) < len(original)


def test_without_repair_a_refusal_for_damage_names_the_command_that_fixes_it(tmp_path: Path) -> None:
    source, _ = damaged(tmp_path, Mutation.DROPPED_RESULT, -1)
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out", repair="off")))
    assert report["status"] == "refused" and report["reasons"][0] == "source-active-chain-invalid"
    assert report["source_repair"]["status"] == "off"
    assert "compaction repair" in report["source_repair"]["remedy"]


def test_a_sound_session_is_compressed_alike_with_and_without_repair(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    build_session(clean, turns=8)
    plain = as_json(compress_session(clean, "clean.jsonl", options(tmp_path / "a")))
    repaired = as_json(compress_session(clean, "clean.jsonl", options(tmp_path / "b", repair="on")))
    assert plain["status"] == repaired["status"] == "compressed" and "source_repair" not in repaired
    # The same plan and partition (the compact pair's fresh uuids and time are all that differ).
    assert (plain["plan"], plain["partition"]) == (repaired["plan"], repaired["partition"])


def test_a_source_changed_after_its_repair_is_refused_and_nothing_written(tmp_path: Path) -> None:
    from pipeline.jobs.compress import job

    source, _ = damaged(tmp_path, Mutation.ORPHAN_RESULT, -1)
    opened = job.open_session(
        source, "session.jsonl", options(tmp_path / "out").topology(), command="compress",
        per_code=20, limits=LIMITS,
    )  # fmt: skip
    assert isinstance(opened, job.Analysis)
    source.write_bytes(source.read_bytes() + b"\n")  # a client appended after the read
    outcome = job.compress_analysis(
        opened, options(tmp_path / "out", repair="on"), job.write_candidate, started=0.0
    )
    report = as_json(outcome)
    assert report["status"] == "refused" and report["reasons"] == ["source-changed-during-compression"]
    assert report["source_repair"]["status"] == "repaired"
    assert not (tmp_path / "out" / "root").exists()
