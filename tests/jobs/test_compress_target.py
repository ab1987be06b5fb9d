"""Compression reaches its target: tokens plan the tail, kept tool outputs are bounded as declared,
and the output holds one pointer, naming a record it holds."""

from __future__ import annotations

from pathlib import Path

import orjson

from pipeline.core.check.contract import restated_instructions
from pipeline.formats.claude_code.bounded_output import BoundRule, bound_line
from pipeline.jobs.compress import compress_session
from pipeline.jobs.validate import validate_session
from pipeline.testing import TranscriptBuilder, as_json
from pipeline.testing.settings import compress_options, validate_options
from tests.support.resolved import resolve


def _heavy_session(path: Path, *, pointers: bool = False) -> bytes:
    """Twenty turns of large tool output, the way test runs and file reads fill real sessions."""
    b = TranscriptBuilder(seed=31)
    for turn in range(20):
        b.user(f"turn {turn}: run the suite and read the log")
        b.tool_call("Bash", {"command": f"make test-{turn}"}, f"test output {turn}\n" * 2500)
        b.tool_call("Read", {"file_path": f"/src/m{turn}.py"}, f"def f{turn}(): pass\n" * 1500)
        b.assistant(b.text(f"turn {turn}: all green"))
        if pointers and turn % 5 == 4:
            b.last_prompt()  # Claude Code writes one after many turns; older ones name older leaves
    b.last_prompt()
    data = b.to_bytes()
    path.write_bytes(data)
    return data


def _bounded_as_declared(source: bytes, kept: bytes) -> bool:
    """Whether `kept` is `source` with the declared rule re-applied (media dropped or not)."""
    for drop_media in (False, True):
        bounded = bound_line(source, BoundRule(8192, drop_media=drop_media))
        if bounded is not None and bounded[0] == kept:
            return True
    return False


def _candidate(out: Path, name: str) -> bytes:
    return (out / "root" / name).read_bytes()


def test_a_heavy_session_meets_its_target_with_bounded_outputs_declared_and_reapplicable(
    tmp_path: Path,
) -> None:
    source = tmp_path / "heavy.jsonl"
    data = _heavy_session(source)
    outcome = compress_session(source, "heavy.jsonl", compress_options(tmp_path / "out", min_tokens=0))
    report = as_json(outcome)
    assert outcome.status.value == "compressed", report.get("reasons")
    tokens = report["tokens"]
    goal = min(round(0.3 * tokens["active_chain"]), 80_000)  # the ratio, or 40% of a 200k window
    assert tokens["target_met"] and tokens["output"] <= tokens["target"] == goal
    bounded = report["bounded"]
    assert bounded["limit"] == 8192 and bounded["records"] > 0
    assert all(
        o["kept_bytes"] <= 8192 < o["original_bytes"] for o in bounded["outputs"] if o["part"] == "content"
    )
    output = _candidate(tmp_path / "out", "heavy.jsonl")
    boundary = orjson.loads(next(line for line in output.split(b"\n") if b'"compact_boundary"' in line))
    stamps = boundary["compactMetadata"]["sessionCompaction"]["boundedToolOutputs"]
    assert {(s["toolUseId"], s["part"]) for s in stamps} == {
        (o["tool_use_id"], o["part"]) for o in bounded["outputs"]
    }
    # Each kept line is its source bytes, or those bytes bounded by the declared rule (re-applied here).
    source_lines = data.split(b"\n")
    declared = {o["line"] for o in bounded["outputs"]}
    kept = resolve(output)
    for line in kept.chain[3:]:  # after the pair and the first kept record (its parentUuid is new)
        raw = kept.index.raw_line(output, line)
        if raw in source_lines:
            continue
        matches = [n for n in declared if _bounded_as_declared(source_lines[n - 1], raw)]
        assert matches, f"kept line {line} is neither a source line nor a declared bounding"
    verdict = validate_session(tmp_path / "out" / "root" / "heavy.jsonl", "c", validate_options())
    assert verdict.status.value in ("valid", "warnings"), as_json(verdict)["findings"]


def test_a_zero_limit_keeps_every_kept_record_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "heavy.jsonl"
    data = _heavy_session(source)
    options = compress_options(tmp_path / "out", min_tokens=0, tool_output_limit=0)
    outcome = compress_session(source, "heavy.jsonl", options)
    report = as_json(outcome)
    assert outcome.status.value == "compressed" and "bounded" not in report
    assert report.get("reasons", ["target-missed"])[0] == "target-missed" or report["tokens"]["target_met"]
    output = _candidate(tmp_path / "out", "heavy.jsonl")
    kept = resolve(output)
    source_lines = set(data.split(b"\n"))
    assert all(kept.index.raw_line(output, line) in source_lines for line in kept.chain[3:])


def test_the_output_holds_one_pointer_and_it_names_the_kept_leaf(tmp_path: Path) -> None:
    source = tmp_path / "pointers.jsonl"
    data = _heavy_session(source, pointers=True)
    assert data.count(b'"type":"last-prompt"') == 5
    outcome = compress_session(source, "pointers.jsonl", compress_options(tmp_path / "out", min_tokens=0))
    assert outcome.status.value == "compressed", as_json(outcome).get("reasons")
    output = _candidate(tmp_path / "out", "pointers.jsonl")
    pointers = [orjson.loads(line) for line in output.split(b"\n") if b'"type":"last-prompt"' in line]
    kept = resolve(output)
    assert len(pointers) == 1 and pointers[0]["leafUuid"] == kept.record(kept.chain[-1]).uuid
    codes = {
        f["code"]
        for f in as_json(
            validate_session(source.parent / "out" / "root" / "pointers.jsonl", "c", validate_options())
        )["findings"]
    }
    assert "last-prompt-missing-leaf" not in codes


def test_a_window_ceiling_bounds_a_session_however_large(tmp_path: Path) -> None:
    source = tmp_path / "heavy.jsonl"
    _heavy_session(source)
    options = compress_options(tmp_path / "out", min_tokens=0, max_window_share=0.02)
    report = as_json(compress_session(source, "heavy.jsonl", options))
    assert report["tokens"]["target"] == 4000 < round(0.3 * report["tokens"]["active_chain"])
    assert report["status"] == "compressed"
    assert report["tokens"]["target_met"] or report["reasons"][:1] == ["target-missed"]


def test_a_long_instruction_is_restated_whole_when_its_turn_is_cut_inside(tmp_path: Path) -> None:
    """One long task under an instruction longer than the summary quotes a prompt: the cut still
    falls between its completed exchanges, and the summary restates the instruction exactly."""
    b = TranscriptBuilder(seed=33)
    b.user("an earlier, finished request")
    b.tool_call("Read", {"file_path": "/a"}, "contents of a\n" * 300)
    b.assistant(b.text("read it"))
    instruction = (
        "Refactor the whole module as follows.\n" + "  Keep every public name and its docstring.\n" * 200
    )
    b.user(instruction)
    for step in range(30):
        b.tool_call("Bash", {"command": f"step {step}"}, "output of the step\n" * 400)
    b.assistant(b.text("all steps done"))
    source = tmp_path / "long.jsonl"
    b.write(source)
    report = as_json(compress_session(source, "long.jsonl", compress_options(tmp_path / "out", min_tokens=0)))
    assert report["status"] == "compressed" and report["tokens"]["target_met"], report.get("reasons")
    assert "cut-inside-long-turn" in report["plan"]["reasons"]
    assert "protected-turn-kept-whole" not in report["plan"]["reasons"]
    summary = next(
        orjson.loads(line)
        for line in _candidate(tmp_path / "out", "long.jsonl").split(b"\n")
        if b'"isCompactSummary":true' in line
    )
    assert restated_instructions(summary["message"]["content"]) == (instruction,)
