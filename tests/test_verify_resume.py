"""verify-resume: the verdict rules, the capture server, and the real Claude Code judging compactions.

The first part needs no Claude Code: it pins the comparison rules on hand-made contexts, the
reading of a captured request, the excluded texts of a transcript, and the capture server over
real HTTP. The second part (marker `claude_code`) resumes generated sessions, their compactions,
deliberately broken compactions and every corpus file `compress` compacts in the pinned build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.analysis import Analysis, analyze
from pipeline.report import SessionOutcome, summary_report
from pipeline.synth import generate_fleet
from pipeline.testing import Feature
from pipeline.topology import TopologyOptions
from pipeline.verify.capture import CaptureServer, Fault
from pipeline.verify.context import ContextBlock, ContextSize, SentContext, read_request
from pipeline.verify.proof import sweep_exclusions
from pipeline.verify.verdict import ExcludedText, Verdict, judge
from pipeline.vocabulary import SessionStatus
from tests.test_compress import CANARY_BRANCH, CANARY_MALFORMED, build_session

PROBE = "PROBE-PROMPT"
SUMMARY = "This session is being continued from a previous conversation.\n\n## Goal\n- ship it (L2)\n"
SIZE = ContextSize(0, 0, 0)
STRAY = "a stray reply on another branch"


def sent(*blocks: ContextBlock, strings: tuple[str, ...] | None = None) -> SentContext:
    return SentContext(blocks, strings if strings is not None else tuple(b.text for b in blocks), SIZE)


def text(role: str, body: str) -> ContextBlock:
    return ContextBlock(role, "text", body, None)


def call(tool_id: str) -> ContextBlock:
    return ContextBlock("assistant", "tool_use", '{"command": "ls"}', tool_id)


def result(tool_id: str) -> ContextBlock:
    return ContextBlock("user", "tool_result", '"a.txt"', tool_id)


ORIGINAL = sent(
    text("user", "first request"),
    call("toolu_1"),
    result("toolu_1"),
    text("assistant", "listed"),
    text("user", "second request"),
    call("toolu_2"),
    result("toolu_2"),
    text("assistant", "done"),
)


# the verdict ------------------------------------------------------------------------------
def test_summary_then_a_suffix_of_the_original_is_a_match() -> None:
    compacted = sent(text("user", SUMMARY + "\n"), *ORIGINAL.blocks[4:])
    verdict = judge(ORIGINAL, compacted, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert (verdict.summary_blocks, verdict.kept_blocks) == (1, 4)


def test_a_missing_summary_is_named() -> None:
    verdict = judge(ORIGINAL, sent(*ORIGINAL.blocks[4:]), summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert any("does not open with the summary" in d for d in verdict.differences)


def test_a_tail_that_is_not_the_end_of_the_original_names_the_first_difference() -> None:
    wrong_leaf = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:6], text("user", "another branch"))
    verdict = judge(ORIGINAL, wrong_leaf, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert verdict.differences == (
        "compacted block 3 is user/text (14 chars) where the original's block 7 is assistant/text "
        "(4 chars); the last 0 blocks agree",
        "the original's block 6 user/tool_result toolu_2 (7 chars) is not sent",
        "tool_use toolu_2 is never answered",
    )


def test_a_changed_text_is_reported_without_the_text() -> None:
    changed = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:7], text("assistant", "DONE"))
    verdict = judge(ORIGINAL, changed, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert "same kind but the text differs" in verdict.differences[0]
    assert "DONE" not in " ".join(verdict.differences)


def test_nothing_after_the_summary_is_a_mismatch() -> None:
    verdict = judge(ORIGINAL, sent(text("user", SUMMARY)), summaries=[SUMMARY])
    assert verdict.differences == ("nothing of the original context follows the summary",)


def test_a_result_whose_call_was_summarized_away_is_orphaned() -> None:
    cut_inside_pair = sent(text("user", SUMMARY), *ORIGINAL.blocks[2:])
    verdict = judge(ORIGINAL, cut_inside_pair, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert verdict.differences == ("block 1 answers tool_use toolu_1, which is never sent before it",)


def test_a_pair_left_out_of_the_tail_is_named_by_its_tool_id() -> None:
    dropped_pair = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:5], ORIGINAL.blocks[7])
    verdict = judge(ORIGINAL, dropped_pair, summaries=[SUMMARY])
    assert verdict.differences[1:] == (
        "the original's block 5 assistant/tool_use toolu_2 (17 chars) is not sent",
        "the original's block 6 user/tool_result toolu_2 (7 chars) is not sent",
    )


def test_an_unanswered_call_fails_unless_the_original_leaves_it_open_too() -> None:
    dropped = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:6], ORIGINAL.blocks[7])
    verdict = judge(ORIGINAL, dropped, summaries=[SUMMARY])
    assert "tool_use toolu_2 is never answered" in verdict.differences
    open_call = sent(*ORIGINAL.blocks[:5], call("toolu_3"))
    inherited = judge(open_call, sent(text("user", SUMMARY), *open_call.blocks[4:]), summaries=[SUMMARY])
    assert inherited.verdict is Verdict.MATCH, inherited.differences


def test_excluded_text_is_a_leak_unless_the_original_sends_it_too() -> None:
    secret = ExcludedText("abandoned idea on the rewound branch", 7, "excluded_branch")
    retyped = ExcludedText("second request", 9, "excluded_branch")
    leaky = sent(text("user", SUMMARY + secret.text + " and second request"), *ORIGINAL.blocks[4:])
    verdict = judge(
        ORIGINAL, leaky, summaries=[SUMMARY + secret.text + " and second request"], excluded=[secret, retyped]
    )
    assert verdict.differences == ("text of excluded line 7 (excluded_branch) is sent",)


def test_a_verdict_report_carries_sizes_and_no_text() -> None:
    original = SentContext(ORIGINAL.blocks, (), ContextSize(8, 1000, 300))
    compacted = SentContext((text("user", SUMMARY), *ORIGINAL.blocks[4:]), (), ContextSize(5, 600, 170))
    report = judge(original, compacted, summaries=[SUMMARY]).to_report()
    assert report["verdict"] == "match"
    assert report["sent"]["compacted"] == {"messages": 5, "characters": 600, "estimated_tokens": 170}
    assert report["characters_reduction"] == 0.4
    assert "ship it" not in json.dumps(report)


def test_the_fleet_summary_totals_resume_checks() -> None:
    def outcome(label: str, verdict: str, before: int, after: int) -> SessionOutcome:
        sizes = {"messages": 2, "characters": before, "estimated_tokens": before // 4}
        smaller = {"messages": 1, "characters": after, "estimated_tokens": after // 4}
        check = {"verdict": verdict, "sent": {"original": sizes, "compacted": smaller}}
        return SessionOutcome(
            label, SessionStatus.COMPRESSED, {"status": "compressed", "resume_check": check}
        )

    outcomes = {"a": outcome("a", "match", 1000, 400), "b": outcome("b", "match", 600, 300)}
    summary = summary_report(
        outcomes, command="compress", options={}, report_paths={}, elapsed_ms=1, roots=[]
    )
    assert summary["resume_checks"] == {
        "by_verdict": {"match": 2},
        "sent_by_claude_code": {
            "original": {"characters": 1600, "estimated_tokens": 400, "messages": 4},
            "compacted": {"characters": 700, "estimated_tokens": 175, "messages": 2},
        },
    }
    plain = summary_report(
        {"a": SessionOutcome("a", SessionStatus.VALID, {})},
        command="validate",
        options={},
        report_paths={},
        elapsed_ms=1,
        roots=[],
    )
    assert "resume_checks" not in plain


# reading a request ------------------------------------------------------------------------
def test_a_request_is_read_without_reminders_probe_or_system_messages() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "system", "content": []},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "x"},
                    {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "make test"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"},
                    {"type": "text", "text": "<system-reminder>\nnoise</system-reminder>"},
                    {"type": "text", "text": PROBE},
                ],
            },
        ]
    }
    context = read_request(body, PROBE)
    assert context.blocks == (
        ContextBlock("user", "text", "hello", None),
        ContextBlock("assistant", "thinking", "hmm", None),
        ContextBlock("assistant", "tool_use", '{"command": "make test"}', "toolu_9"),
        ContextBlock("user", "tool_result", '"ok"', "toolu_9"),
    )
    assert "make test" in context.strings and "noise" not in " ".join(context.strings)
    assert context.size.messages == 4
    assert context.size.characters == sum(len(orjson.dumps(m).decode()) for m in body["messages"])
    assert context.size.estimated_tokens > context.size.characters // 4


# excluded texts ---------------------------------------------------------------------------
def test_excluded_texts_cover_rewound_and_malformed_lines_but_not_retyped_prompts(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=4)
    analysis = analyze(source, source.name, TopologyOptions(), command="test")
    assert isinstance(analysis, Analysis)
    found = sweep_exclusions(analysis, min_chars=8)
    texts = {item.text: item for item in found}
    assert f"abandoned idea {CANARY_BRANCH}" in texts
    assert texts[f"abandoned idea {CANARY_BRANCH}"].partition_set == "excluded_branch"
    assert texts[CANARY_MALFORMED].partition_set == "excluded_unattributed"
    # The rewound prompt was typed again on the active branch: it cannot be attributed.
    assert not any("Set up the parser module" in t or "不要修改" in t for t in texts)


# the capture server -----------------------------------------------------------------------
def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_capture_server_records_requests_streams_a_reply_and_injects_faults() -> None:
    with CaptureServer(
        reply_text="fine", faults=[Fault.rate_limited(retry_after=2), Fault.overloaded()]
    ) as api:
        url = api.base_url + "/v1/messages?beta=true"
        body = {"model": "claude-x", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        limited, overloaded, streamed = post(url, body), post(url, body), post(url, body)
        plain = post(url, {**body, "stream": False})
        counted = post(api.base_url + "/v1/messages/count_tokens", body)
    assert limited[0] == 429 and limited[1]["retry-after"] == "2"
    assert json.loads(limited[2])["error"]["type"] == "rate_limit_error"
    assert overloaded[0] == 529
    assert streamed[0] == 200 and streamed[1]["content-type"] == "text/event-stream"
    events = [
        line.split(": ", 1)[1] for line in streamed[2].decode().splitlines() if line.startswith("event: ")
    ]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert '"text": "fine"' in streamed[2].decode()
    assert json.loads(plain[2])["content"] == [{"type": "text", "text": "fine"}]
    assert json.loads(counted[2]) == {"input_tokens": 10}
    assert [r.body["messages"][0]["content"] for r in api.message_requests] == ["hi"] * 4
    assert api.requests[0].header("Content-Type") == "application/json"


# with the real Claude Code ----------------------------------------------------------------
def offline() -> list[str]:
    """A prefix running a command in its own network namespace with only loopback up, if allowed here."""
    wrapper = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline"]
    available = shutil.which("unshare") and shutil.which("ip")
    if available and subprocess.run([*wrapper, "true"], capture_output=True, check=False).returncode == 0:
        return wrapper
    return []


def compaction(
    *args: str, env: dict[str, str] | None = None, prefix: list[str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("compaction")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "pipeline"]
    return subprocess.run(
        [*(prefix or []), *command, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def reports(out: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(out.rglob("*.report.json")):
        yield json.loads(path.read_text())


def candidate_of(out: Path, source: Path) -> Path:
    found = [p for p in out.rglob(source.name) if p.is_file()]
    assert len(found) == 1, found
    return found[0]


def test_usage_errors_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    build_session(session, turns=2)
    missing = compaction("verify-resume", str(session), str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "not a file" in missing.stderr
    not_claude = compaction("verify-resume", str(session), str(session), "--claude", str(tmp_path))
    assert not_claude.returncode == 2 and "Claude Code not found" in not_claude.stderr
    gate = compaction(
        "compress", str(session), "--out", str(tmp_path / "out"), "--verify-resume", "--claude", str(session)
    )
    assert gate.returncode == 2 and "--verify-resume: Claude Code not found" in gate.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.claude_code
def test_a_resume_that_overruns_its_time_limit_is_killed_and_exits_4(
    claude_code: Path, tmp_path: Path
) -> None:
    session = tmp_path / "session.jsonl"
    build_session(session, turns=2)
    done = verify(session, session, claude_code, "--timeout", "0.2")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "did not finish within 0.2 s" in done.stderr


# Generated sessions: a small fleet, and the smallest main sessions showing each feature wanted.
WANTED = (
    {Feature.COMPACTION, Feature.REWIND},
    {Feature.REWIND, Feature.NON_ENGLISH},
    {Feature.SIDECHAIN},
)
FEATURES_PROVED = {Feature.REWIND, Feature.PARALLEL_TOOLS, Feature.SPLIT_ASSISTANT, Feature.COMPACTION}
NO_MIN_GAIN = "[compress]\nmin_gain = 0.0\n"


@dataclass(frozen=True, slots=True)
class Generated:
    sources: dict[str, frozenset[Feature]]  # file name -> features
    root: Path
    out: Path
    run: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, claude_code: Path) -> Generated:
    """A few generated sessions compressed with --verify-resume (small tails, any gain)."""
    base = tmp_path_factory.mktemp("generated")
    manifest = generate_fleet(base / "fleet", target_bytes=6 << 20, seed=5)
    mains = sorted(
        (f for f in manifest.files if f.agent_id is None and f.bytes > 60_000), key=lambda f: f.bytes
    )
    root = base / "sessions"
    root.mkdir()
    chosen: dict[str, frozenset[Feature]] = {}
    for wanted in WANTED:
        pick = next(f for f in mains if wanted <= f.features and Path(f.path).name not in chosen)
        (root / Path(pick.path).name).write_bytes((base / "fleet" / pick.path).read_bytes())
        chosen[Path(pick.path).name] = pick.features
    config = base / "config.toml"
    config.write_text(NO_MIN_GAIN)
    out = base / "out"
    run = compaction(
        "compress", str(root), "--out", str(out), "--verify-resume", "--claude", str(claude_code),
        "--min-tokens", "0", "--min-recent-records", "8", "--target-ratio", "0.1",
        "--config", str(config), "--jobs", "2", "--quiet",
    )  # fmt: skip
    return Generated(chosen, root, out, run)


@pytest.mark.claude_code
def test_generated_compactions_resume_as_summary_then_original_suffix(generated: Generated) -> None:
    assert generated.run.returncode == 0, generated.run.stderr[-2000:]
    proved: set[Feature] = set()
    for report in reports(generated.out):
        assert report["status"] in ("compressed", "skipped-fits"), report.get("reasons")
        if report["status"] == "compressed":
            check = report["resume_check"]
            assert check["verdict"] == "match", check["differences"]
            assert check["summary_blocks"] == 1 and check["kept_blocks"] > 0
            assert check["sent"]["compacted"]["characters"] < check["sent"]["original"]["characters"]
            proved |= generated.sources[Path(report["session"]["label"]).name]
    assert proved >= FEATURES_PROVED, sorted(FEATURES_PROVED - proved)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def without(records: list[dict[str, Any]], doomed: dict[str, Any]) -> list[dict[str, Any]]:
    """The records minus one, its children re-attached to its parent."""
    kept = [r for r in records if r is not doomed]
    for record in kept:
        if record.get("parentUuid") == doomed["uuid"]:
            record["parentUuid"] = doomed["parentUuid"]
    return kept


def tool_ids(record: dict[str, Any], kind: str) -> list[str]:
    content = record.get("message", {}).get("content")
    key = "id" if kind == "tool_use" else "tool_use_id"
    return (
        [b[key] for b in content if isinstance(b, dict) and b.get("type") == kind]
        if isinstance(content, list)
        else []
    )


@dataclass(frozen=True, slots=True)
class Broken:
    original: Path
    candidate: Path
    directory: Path


@pytest.fixture(scope="module")
def compacted_builder_session(tmp_path_factory: pytest.TempPathFactory, claude_code: Path) -> Broken:
    """A builder session (rewind, malformed line) and its verified compaction."""
    base = tmp_path_factory.mktemp("broken")
    source = base / "session.jsonl"
    build_session(source, turns=6)
    out = base / "out"
    run = compaction(
        "compress",
        str(source),
        "--out",
        str(out),
        "--min-tokens",
        "0",
        "--min-recent-records",
        "8",
        "--jobs",
        "1",
        "--quiet",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return Broken(source, candidate_of(out, source), base)


def verify(
    original: Path,
    candidate: Path,
    claude_code: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return compaction(
        "verify-resume",
        str(original),
        str(candidate),
        "--claude",
        str(claude_code),
        *extra,
        env=env,
        prefix=prefix,
    )


def break_missing_summary(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return without(records, next(r for r in records if r.get("isCompactSummary")))


def break_orphaned_call(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    answers = [r for r in records if r.get("type") == "user" and tool_ids(r, "tool_result")]
    return without(records, answers[-1])


def break_wrong_leaf(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A reply forking off the middle of the kept tail, named leaf by the pointer: Claude Code resumes it."""
    answers = [r for r in records if r.get("type") == "user" and tool_ids(r, "tool_result")]
    fork = answers[len(answers) // 2]
    template = next(r for r in records if r.get("type") == "assistant" and r["parentUuid"] == fork["uuid"])
    stray = {**template, "uuid": str(uuid.uuid4()), "timestamp": "2099-01-01T00:00:00.000Z"}
    stray["message"] = {
        **template["message"],
        "id": "msg_stray",
        "content": [{"type": "text", "text": STRAY}],
    }
    pointer = [{**r, "leafUuid": stray["uuid"]} for r in records if r.get("type") == "last-prompt"]
    return [r for r in records if r.get("type") != "last-prompt"] + [stray] + pointer


def break_leak(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    summary = next(r for r in records if r.get("isCompactSummary"))
    content = summary["message"]["content"]
    leaked = f"\n- abandoned idea {CANARY_BRANCH}\n"
    if isinstance(content, str):
        summary["message"]["content"] = content + leaked
    else:
        content[0]["text"] += leaked
    return records


@pytest.mark.claude_code
def test_the_unbroken_compaction_matches_offline_and_leaves_the_users_configuration_alone(
    compacted_builder_session: Broken, claude_code: Path, tmp_path: Path
) -> None:
    home, config = tmp_path / "home", tmp_path / "config"
    (home / ".claude").mkdir(parents=True)
    config.mkdir()
    (home / ".claude" / "settings.json").write_text('{"model": "user-choice"}')
    (config / "settings.json").write_text('{"model": "user-choice"}')
    before = sorted(
        (p.relative_to(tmp_path), p.read_bytes(), p.stat().st_mtime_ns)
        for p in tmp_path.rglob("*")
        if p.is_file()
    )
    done = verify(
        compacted_builder_session.original,
        compacted_builder_session.candidate,
        claude_code,
        "--json",
        env={
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config),
            "ANTHROPIC_API_KEY": "sk-ant-must-not-be-used",
        },
        prefix=offline(),  # no network but loopback: a real API call could not even be attempted
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["verdict"] == "match" and report["summary_blocks"] == 1
    assert report["sent"]["compacted"]["estimated_tokens"] < report["sent"]["original"]["estimated_tokens"]
    after = sorted(
        (p.relative_to(tmp_path), p.read_bytes(), p.stat().st_mtime_ns)
        for p in tmp_path.rglob("*")
        if p.is_file()
    )
    assert after == before
    assert CANARY_BRANCH not in done.stdout + done.stderr


@pytest.mark.claude_code
def test_compacting_a_compaction_still_resumes_as_the_end_of_the_first_original(
    compacted_builder_session: Broken, claude_code: Path, tmp_path: Path
) -> None:
    """Our own prior compaction is folded: the second candidate passes the gate against the first and
    still reads, to Claude Code, as a summary plus the end of the session that was never compacted."""
    config = tmp_path / "config.toml"
    config.write_text(NO_MIN_GAIN)
    out = tmp_path / "second"
    first = compacted_builder_session.candidate
    gate = compaction(
        "compress", str(first), "--out", str(out), "--verify-resume", "--claude", str(claude_code),
        "--min-tokens", "0", "--min-recent-records", "2", "--target-ratio", "0.1", "--config", str(config),
        "--jobs", "1", "--quiet",
    )  # fmt: skip
    assert gate.returncode == 0, gate.stderr[-2000:]
    [report] = reports(out)
    assert report["status"] == "compressed" and report["resume_check"]["verdict"] == "match", report
    assert report["summary"]["prior_summaries_folded"] == 1
    second = candidate_of(out, first)
    against_first_original = verify(compacted_builder_session.original, second, claude_code)
    assert against_first_original.returncode == 0, against_first_original.stdout


@pytest.mark.claude_code
@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        (break_missing_summary, "does not open with the summary"),
        (break_orphaned_call, "assistant/tool_use toolu_"),
        (break_wrong_leaf, f"assistant/text ({len(STRAY)} chars) where the original's block"),
        (break_leak, "(excluded_branch) is sent"),
    ],
    ids=["missing-summary", "orphaned-tool-use", "wrong-leaf", "excluded-text"],
)
def test_a_broken_compaction_fails_and_names_the_difference(
    breakage: Any, expected: str, compacted_builder_session: Broken, claude_code: Path, tmp_path: Path
) -> None:
    broken = write_rows(tmp_path / "session.jsonl", breakage(rows(compacted_builder_session.candidate)))
    done = verify(compacted_builder_session.original, broken, claude_code)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "verify-resume: mismatch" in done.stdout
    assert expected in done.stdout, done.stdout
    if breakage is break_orphaned_call:
        assert "is not sent" in done.stdout, done.stdout
    assert CANARY_BRANCH not in done.stdout + done.stderr


@pytest.mark.claude_code
def test_a_file_claude_code_cannot_resume_is_said_plainly_not_a_mismatch(
    corpus_files: Path, claude_code: Path
) -> None:
    subagent = next(corpus_files.glob("marot__spotter__*_subagents_agent-acompact-*.jsonl"))
    done = verify(subagent, subagent, claude_code)
    assert done.returncode == 3, done.stdout + done.stderr[-2000:]
    assert "not-resumable" in done.stdout and "finds no conversation to resume" in done.stdout


@pytest.mark.claude_code
def test_every_corpus_session_compress_compacts_passes_the_resume_gate(
    corpus_files: Path, claude_code: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = compaction(
        "compress",
        str(corpus_files),
        "--out",
        str(out),
        "--verify-resume",
        "--claude",
        str(claude_code),
        "--jobs",
        "2",
        "--quiet",
    )
    assert done.returncode == 1, done.stderr[-2000:]  # two corpus files are refused on their own topology
    compressed = [r for r in reports(out) if r["status"] == "compressed"]
    refused = {r["session"]["label"]: r["reasons"] for r in reports(out) if r["status"] == "refused"}
    assert len(compressed) == 20, len(compressed)
    assert all(reasons[0].startswith("topology-") for reasons in refused.values()), refused
    for report in compressed:
        check = report["resume_check"]
        assert check["verdict"] == "match", (report["session"]["label"], check["differences"])
        assert check["sent"]["compacted"]["characters"] < check["sent"]["original"]["characters"]
    fleet = json.loads((out / "summary.json").read_text())["resume_checks"]
    assert fleet["by_verdict"] == {"match": 20}
    before, after = fleet["sent_by_claude_code"]["original"], fleet["sent_by_claude_code"]["compacted"]
    assert before["characters"] == sum(
        r["resume_check"]["sent"]["original"]["characters"] for r in compressed
    )
    assert after["estimated_tokens"] < before["estimated_tokens"]
