"""One long uninterrupted task: its older completed exchanges are summarized, its instruction
restated verbatim, and the real Claude Code resumes the candidate as summary + exact suffix.

Sessions come from the transcript builder: one human prompt longer than the summary quotes a
prompt (a pasted test log), then a long run of tool exchanges (parallel batches, signed thinking,
hook context between calls), with or without a compaction in the middle of the task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.core.check.contract import restate, restated_instructions
from pipeline.proof.claude_code.client import resume
from pipeline.testing import ToolSpec, TranscriptBuilder
from pipeline.testing.invoke import candidate_of, compaction, reports

PROMPT = "The suite fails after the parser change; fix it without touching the public API:\n\n" + "".join(
    f"    FAILED tests/test_parser.py::test_case_{n} - AssertionError: expected  {n}, got {n + 1}\n"
    for n in range(120)
)  # 9k characters: over the 4000 the embedded summary quotes of a prompt
HOOK = "<system-reminder>\nPostToolUse:Edit hook additional context: [lint] ok\n</system-reminder>"


def _exchanges(b: TranscriptBuilder, steps: int, label: str) -> None:
    """Steps of one task: plain calls, parallel batches, calls led by signed thinking, hook context."""
    for step in range(steps):
        output = f"{label} {step}: build output line\n" * 400
        if step % 5 == 1:
            b.parallel_tool_calls(
                [ToolSpec("Read", {"file_path": f"/src/{label}_{step}_{k}.py"}, output) for k in range(3)]
            )
        elif step % 5 == 3:
            lead = b.assistant(
                b.thinking(f"step {step}: what failed last time " * 30, signature=f"sig-{label}-{step}"),
                tool_follows=True,
            )
            b.tool_call("Bash", {"command": f"pytest -k {label}_{step}"}, output, message_id=lead.message_id)
        else:
            b.tool_call("Edit", {"file_path": f"/src/{label}_{step}.py", "old_string": "a"}, output)
        if step % 7 == 2:
            b.meta_user(HOOK)


def _long_task(path: Path, *, steps: int, compacted: bool) -> None:
    b = TranscriptBuilder(seed=61)
    b.user(PROMPT)
    _exchanges(b, steps, "before")
    if compacted:  # our own compaction mid-task: its summary restated the prompt
        b.compact(f"Summary.\n\n{restate(PROMPT)}\n\n- earlier steps done (L3)", wrap=False)
        _exchanges(b, steps, "after")
    b.assistant(b.text("the suite passes again"))
    b.last_prompt()
    b.write(path)


@dataclass(frozen=True, slots=True)
class Compressed:
    source: Path
    candidate: Path
    report: dict[str, Any]


def _compress(folder: Path, claude_code: Path, *, compacted: bool) -> Compressed:
    root = folder / "sessions"
    root.mkdir()
    source = root / "task.jsonl"
    _long_task(source, steps=90, compacted=compacted)
    out = folder / "out"
    run = compaction(
        "compress", str(root), "--out", str(out), "--verify-resume", "--claude", str(claude_code),
        "--min-tokens", "0", "--jobs", "1", "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    (report,) = reports(out)
    return Compressed(source, candidate_of(out, source), report)


@pytest.fixture(scope="module", params=[False, True], ids=["one-task", "task-after-compaction"])
def compressed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, claude_code: Path
) -> Compressed:
    return _compress(tmp_path_factory.mktemp("long"), claude_code, compacted=request.param)


def _summary_text(candidate: Path) -> str:
    for line in candidate.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("isCompactSummary"):
            content = record["message"]["content"]
            return content if isinstance(content, str) else "\n".join(b["text"] for b in content)
    raise AssertionError("no compact summary in the candidate")


@pytest.mark.claude_code
def test_a_long_task_is_cut_inside_to_its_target_and_resumes_as_summary_then_suffix(
    compressed: Compressed,
) -> None:
    report = compressed.report
    assert report["status"] == "compressed", report.get("reasons")
    assert report["tokens"]["target_met"], report["tokens"]
    assert "cut-inside-long-turn" in report["plan"]["reasons"]
    assert "protected-turn-kept-whole" not in report["plan"]["reasons"]
    assert report["checks"] == {"failures": [], "violations": [], "findings": []}
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    assert check["summary_blocks"] == 1 and check["kept_blocks"] > 0
    # The instruction is restated once, exactly, however long: the summary alone quotes 4000 characters.
    assert restated_instructions(_summary_text(compressed.candidate)) == (PROMPT,)


@pytest.mark.claude_code
def test_the_resumed_model_reads_the_instruction_verbatim_then_the_kept_exchanges(
    compressed: Compressed, claude_code: Path
) -> None:
    sent = resume(compressed.candidate, executable=claude_code, timeout=180).context.blocks
    assert sent[0].role == "user" and sent[0].kind == "text"
    assert restate(PROMPT) in sent[0].text
    assert sent[1].role == "assistant" and {b.kind for b in sent[1:]} >= {"tool_use", "tool_result"}
    assert not any(PROMPT in block.text for block in sent[1:])  # the prompt itself was summarized


@pytest.mark.claude_code
def test_kept_thinking_and_parallel_batches_stay_byte_exact_and_whole(compressed: Compressed) -> None:
    source_raw = compressed.source.read_bytes().splitlines()
    source = {record["uuid"]: (record, raw) for raw in source_raw if "uuid" in (record := orjson.loads(raw))}
    kept = [(orjson.loads(raw), raw) for raw in compressed.candidate.read_bytes().splitlines()]
    summary = next(record for record, _ in kept if record.get("isCompactSummary"))
    messages = [record for record, _ in kept if record.get("type") == "assistant"]
    thinking = [(r, raw) for r, raw in kept if r.get("type") == "assistant" and _kinds(r) == ["thinking"]]
    assert thinking, "the kept tail holds signed thinking"
    for record, raw in thinking:  # byte for byte; the first kept line only hangs off the summary
        original = source[record["uuid"]][1]
        parent = source[record["uuid"]][0]["parentUuid"]
        assert raw == original or raw == original.replace(parent.encode(), summary["uuid"].encode())
    # Every call kept has its result kept, and every kept message keeps all its fragments.
    uses = {b["id"] for r in messages for b in r["message"]["content"] if b["type"] == "tool_use"}
    results = {
        b["tool_use_id"] for r, _ in kept if r.get("type") == "user" for b in _blocks(r, "tool_result")
    }
    assert uses == results
    kept_ids = {r["message"]["id"] for r in messages}
    fragments = {
        u for u, (r, _) in source.items() if r.get("type") == "assistant" and r["message"]["id"] in kept_ids
    }
    assert fragments == {r["uuid"] for r in messages}
    batches = [r["message"]["id"] for r in messages if _kinds(r) == ["tool_use"]]
    assert any(batches.count(i) == 3 for i in batches), "a parallel batch of three is kept whole"


def _kinds(record: dict[str, Any]) -> list[str]:
    return [b["type"] for b in record["message"]["content"]]


def _blocks(record: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = record["message"]["content"]
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == kind]
        if isinstance(content, list)
        else []
    )


def test_only_a_task_with_nothing_older_than_its_last_two_exchanges_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    b = TranscriptBuilder(seed=62)
    b.user(PROMPT)
    for step in range(2):
        b.tool_call("Bash", {"command": f"pytest {step}"}, "huge output line\n" * 6000)
    b.assistant(b.text("done"))
    b.write(root / "short.jsonl")
    run = compaction("compress", str(root), "--out", str(tmp_path / "out"), "--min-tokens", "0", "--quiet")
    assert run.returncode == 0, run.stderr[-2000:]
    (report,) = reports(tmp_path / "out")
    assert report["status"] == "skipped-no-cut"
    assert report["reasons"] == ["nothing-summarizable-before-protected-round"]
