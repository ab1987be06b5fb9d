"""The real Qwen Code 0.24.4 as the judge: it sends, on resume, exactly the history the reader
rebuilds (the golden), for the real sessions and for damaged and defective ones (the candidate
it resumes as summary + verbatim suffix is tested through the plug-in's judge).

These run the pinned client (scripts/install-qwen-code, installed here when missing; skipped,
saying why, only when it cannot be installed). Each resume takes about two seconds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Final

import pytest

from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.proof.chat_capture import ChatCaptureServer
from pipeline.proof.process_group import run_in_process_group
from pipeline.proof.qwen_code.qwen_install import QwenCode
from pipeline.proof.qwen_code.qwen_verdict import CLEARED_OUTPUT
from pipeline.proof.qwen_code.resume_run import (
    PROBE,
    QwenResumeResult,
    qwen_environment,
    resume_qwen_code,
    split_request,
)
from pipeline.proof.qwen_code.session_staging import stage_session
from tests.support.qwen_model import ScriptedModel, installed_qwen_code
from tests.support.qwen_records import chain, jsonl, long_outputs, model, result, system, user

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)
TIMEOUT: Final = 120.0
# The golden resumes run two at a time: a resume is one Node process, mostly on one core.
WORKERS: Final = 2


@pytest.fixture(scope="module")
def qwen() -> QwenCode:
    found = installed_qwen_code()
    if found is None:
        pytest.skip(
            "Qwen Code 0.24.4 could not be installed by scripts/install-qwen-code (no npm or registry)"
        )
    return found


@pytest.fixture(scope="module")
def resumed(
    qwen: QwenCode, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[QwenResumeResult]]]:
    """Every recorded session and every variant below resumed once, all started at once (each
    test takes only its own session's result)."""
    sessions = {name: FIXTURES / name for name in sorted(p.name for p in FIXTURES.glob("*.jsonl"))}
    for name, data in VARIANTS.items():
        sessions[name] = tmp_path_factory.mktemp(name) / "session.jsonl"
        sessions[name].write_bytes(data)
    with ThreadPoolExecutor(WORKERS) as pool:
        yield {
            name: pool.submit(resume_qwen_code, path, qwen=qwen, timeout=TIMEOUT)
            for name, path in sessions.items()
        }


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_qwen_code_sends_the_history_the_reader_rebuilds(
    resumed: dict[str, Future[QwenResumeResult]], name: str
) -> None:
    session = FIXTURES / name
    result = resumed[name].result()
    assert result.resumed, result.stderr[-1500:]
    rebuilt = analyze_session(session.read_bytes(), LIMITS)
    assert [m.message for m in rebuilt.messages] == list(result.context)
    assert result.leading[0]["role"] == "system" and PROBE in str(result.turn[-1])


def _variants() -> dict[str, bytes]:
    """Sessions Qwen Code must read as the reader does: damaged copies of a real one, and the
    pairing defects and records it mends or drops, made by hand."""
    real = (FIXTURES / "tools.jsonl").read_bytes().split(b"\n")[:-1]
    last_call = max(
        i for i, line in enumerate(real) if b'"functionCall"' in line and b'"type":"assistant"' in line
    )
    truncated = [*real[:7], real[7][:60], *real[8:]]
    slash = {"phase": "result", "rawCommand": "/stats", "outputHistoryItems": [{"type": "assistant"}]}
    mid_turn = {**user(11, "also this"), "subtype": "mid_turn_user_message"}
    loop = chain(user(1, "a"), model(2, "b"))
    loop[0] = {**loop[0], "parentUuid": "u2"}
    defects = chain(
        user(1, "go"),
        model(2, "", ("c1", "ls")),
        user(3, "stop"),  # c1 is never answered
        model(4, "", ("c2", "pwd"), ("c3", "id")),
        result(5, "c2", "x"),
        user(6, "n"),
        result(7, "c3", "y"),  # answered after a prompt
        model(8, "", ("c4", "date")),
        result(9, "c4", "z"),
        result(10, "c4", "z again"),  # answered twice
        mid_turn,
        user(12, "/stats"),
        system(13, "slash_command", slash),
        user(14, "next é ✓"),
        model(15, "(request timeout)"),
    )
    return {
        "truncated-line": b"\n".join(truncated) + b"\n",
        "interrupted-call": b"\n".join(real[: last_call + 1]) + b"\n",
        "pairing-defects-and-dropped-turns": jsonl(defects),
        "parent-cycle": jsonl(loop),
    }


VARIANTS: Final = _variants()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_qwen_code_reads_damage_and_defects_as_the_reader_does(
    resumed: dict[str, Future[QwenResumeResult]], name: str
) -> None:
    result = resumed[name].result()
    assert result.resumed, result.stderr[-1500:]
    assert [m.message for m in analyze_session(VARIANTS[name], LIMITS).messages] == list(result.context)


def _cleared(message: object) -> bool:
    return isinstance(message, dict) and message.get("content") == [{"type": "text", "text": CLEARED_OUTPUT}]


def test_past_500k_characters_of_outputs_qwen_code_clears_the_oldest_but_five_down_to_half(
    qwen: QwenCode, tmp_path: Path
) -> None:
    session = tmp_path / "session.jsonl"
    session.write_bytes(long_outputs(8, 80_000))  # 640,000 characters: c0 to c2 go, 400,000 stay
    result = resume_qwen_code(session, qwen=qwen, timeout=TIMEOUT)
    assert result.resumed, result.stderr[-1500:]
    rebuilt = [m.message for m in analyze_session(session.read_bytes(), LIMITS).messages]
    changed = [(mine, sent) for mine, sent in zip(rebuilt, result.context, strict=True) if mine != sent]
    assert [mine["tool_call_id"] for mine, _ in changed] == ["c0", "c1", "c2"]
    assert all(_cleared(sent) for _, sent in changed)  # what the judge compares by call id


def test_a_request_splits_into_what_qwen_code_adds_the_history_and_the_new_turn() -> None:
    reminder = {"type": "text", "text": "<system-reminder>\\nenv\\n</system-reminder>"}
    messages = [
        {"role": "system", "content": "You are Qwen Code"},
        {"role": "user", "content": [reminder, {"type": "text", "text": "first"}]},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": [reminder, {"type": "text", "text": PROBE}]},
    ]
    leading, context, turn = split_request(messages, PROBE)
    assert [m["role"] for m in leading] == ["system", "user"] and leading[1]["content"] == [reminder]
    assert context == ({"role": "user", "content": [{"type": "text", "text": "first"}]}, messages[2])
    assert turn == (messages[3],)


def test_qwen_code_compresses_a_candidate_again_with_its_own_compress(qwen: QwenCode, tmp_path: Path) -> None:
    original = analyze_session((FIXTURES / "long.jsonl").read_bytes(), LIMITS)
    plan = original.plan_tail(room=sum(item.tokens for item in original.items) // 4)
    assert plan is not None
    candidate = tmp_path / "candidate.jsonl"
    candidate.write_bytes(original.compose(plan.cut_line, "SUMMARY-ONE"))
    staged = stage_session(candidate, tmp_path / "staged")
    with ChatCaptureServer(ScriptedModel()) as api:
        command = qwen.command("--resume", staged.session_id, "-p", "/compress", "--auth-type", "openai")
        env = qwen_environment(staged.home, f"{api.base_url}/v1")
        code, _, stderr = run_in_process_group(command, cwd=staged.work_dir, env=env, timeout=TIMEOUT)
    assert code == 0, stderr[-1500:]
    compacted = staged.transcript.read_bytes()
    assert compacted.count(b'"subtype":"chat_compression"') == 2  # ours, then its own
    again = analyze_session(compacted, LIMITS)
    assert again.findings == ()
    result = resume_qwen_code(staged.transcript, qwen=qwen, timeout=TIMEOUT)
    assert [m.message for m in again.messages] == list(result.context)


def test_qwen_code_resumes_no_chat_of_the_older_tmp_layout_as_the_reader_says(
    qwen: QwenCode, tmp_path: Path
) -> None:
    """Qwen Code 0.1.4 saved a chat as one JSON document in `~/.qwen/tmp/<project hash>/chats/`;
    0.24.4, asked to resume its session id from there, finds none and calls no model."""
    document = FIXTURES / "v0.1.4.json"
    saved = json.loads(document.read_bytes())
    home, work = tmp_path / "home", tmp_path / "project"
    work.mkdir()
    for project_hash in (saved["projectHash"], hashlib.sha256(str(work).encode()).hexdigest()):
        chats = home / ".qwen" / "tmp" / project_hash / "chats"
        chats.mkdir(parents=True)
        (chats / "session-2026-12-07T13-23-80bde2a8.json").write_bytes(document.read_bytes())
    with ChatCaptureServer() as api:
        command = qwen.command("--resume", saved["sessionId"], "-p", PROBE, "--auth-type", "openai")
        env = qwen_environment(home, f"{api.base_url}/v1")
        code, _, stderr = run_in_process_group(command, cwd=work, env=env, timeout=TIMEOUT)
        calls = len(api.conversations)
    assert code != 0 and "No saved session found" in stderr and calls == 0
    analysis = analyze_session(document.read_bytes(), LIMITS)
    assert not analysis.resumable and [f.ids for f in analysis.findings] == [("tmp-chats-session-json",)]
