"""verify-resume with the real Claude Code (marker `claude_code`, except the usage errors).

Generated sessions (rewinds, parallel tool calls, split fragments, prior compactions) and their
compactions, deliberately broken compactions, a file Claude Code cannot resume, a time limit, the
user's configuration left alone offline, and every corpus file `compress` compacts, gated.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.formats.registry import PROCESSED, RECOGNIZED
from pipeline.testing import Feature
from pipeline.testing.invoke import candidate_of, compaction, offline, reports
from pipeline.testing.sessions import CANARY_BRANCH, build_session
from pipeline.testing.synth import generate_fleet
from pipeline.vocabulary import ResumeExit
from tests.conftest import RESUME_GATE_ENV
from tests.support.agent_files import write_agent_files

STRAY = "a stray reply on another branch"


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


def test_another_agents_session_is_refused_as_unsupported_naming_the_agent_never_judged_as_claude_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No judge resumes a format the tool does not process: a usage error saying what the file is,
    as a sweep reports it, before any client is looked for (a `--claude` naming nothing is never
    reached)."""
    from pipeline.cli.main import main

    files = write_agent_files(tmp_path / "agents")
    unprocessed = {s.format for s in RECOGNIZED} - {s.format for s in PROCESSED}
    assert set(files.values()) == unprocessed  # OpenCode, Copilot CLI, Cline, Aider
    for relative, agent in files.items():
        path = tmp_path / "agents" / relative
        done = main(["verify-resume", str(path), str(path), "--claude", str(tmp_path / "no-claude")])
        err = capsys.readouterr().err
        assert done == ResumeExit.USAGE, (relative, err)
        assert f"is unsupported-format: {agent.value} (" in err, err
        assert "Claude Code" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b'{"name": "app", "version": "1.0.0"}\n', "json-document"),
        (b'{"at": 1}\n{"at": 2}\n', "json-lines-of-no-known-agent"),
        (b"just some notes\n", "text"),
        (b"", "empty"),
    ],
    ids=["json-document", "json-lines", "text", "empty"],
)
def test_a_file_that_is_nobodys_transcript_is_refused_saying_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, what: str
) -> None:
    from pipeline.cli.main import main

    path = tmp_path / "notes.jsonl"
    path.write_bytes(data)
    session = tmp_path / "session.jsonl"
    build_session(session, turns=2)  # a Claude Code candidate: the original decides the judge
    done = main(["verify-resume", str(path), str(session), "--claude", str(tmp_path / "no-claude")])
    err = capsys.readouterr().err
    assert done == ResumeExit.USAGE == 2
    assert f"is not-a-transcript: {what} (" in err and "Claude Code" not in err, err


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
        assert report["status"] in ("compressed", "skipped-fits", "skipped-no-cut"), report.get("reasons")
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
def test_every_corpus_session_compress_compacts_passes_the_default_resume_gate(
    corpus_files: Path, claude_code: Path, tmp_path: Path
) -> None:
    """No flag: the gate runs because Claude Code can be found (here through the environment)."""
    out = tmp_path / "out"
    done = compaction(
        "compress", str(corpus_files), "--out", str(out), "--jobs", "2", "--quiet",
        env={"COMPACTION_CLAUDE_CODE": str(claude_code)}, unset=(RESUME_GATE_ENV,),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]  # two corpus files are refused on their own topology
    # Codex rollouts compress too; the Claude Code gate judges only Claude Code sessions.
    claude = [r for r in reports(out) if r["session"].get("format") == "claude-code"]
    compressed = [r for r in claude if r["status"] == "compressed"]
    refused = {r["session"]["label"]: r["reasons"] for r in claude if r["status"] == "refused"}
    assert len(compressed) >= 20, len(compressed)  # every main session over min_tokens but three (images)
    assert all(reasons[0].startswith("topology-") for reasons in refused.values()), refused
    for report in compressed:
        check = report["resume_check"]
        assert check["verdict"] == "match", (report["session"]["label"], check["differences"])
        assert check["sent"]["compacted"]["characters"] < check["sent"]["original"]["characters"]
    # Bounded tool outputs are among what Claude Code was shown: a match accepts them as declared.
    bounded = [o for r in compressed for o in (r.get("bounded") or {}).get("outputs", [])]
    assert any(o["part"] == "content" for o in bounded)
    fleet = json.loads((out / "summary.json").read_text())["resume_checks"]
    # the other agents' gates count too (Codex and pi are found in the cache); what each sent is apart
    gated = [r for r in reports(out) if r["status"] == "compressed" and "resume_check" in r]
    codex = [r for r in gated if r["session"].get("format") == "codex-rollout"]
    others = [r for r in gated if r["session"].get("format") != "claude-code"]
    assert len(gated) == len(compressed) + len(others) and codex
    assert fleet["by_verdict"] == {"match": len(gated)}
    for fmt in {r["session"]["format"] for r in others}:  # each client's own sums, never another's
        assert fleet["sent_by_format"][fmt]["original"]["characters"] == sum(
            r["resume_check"]["sent"]["original"]["characters"]
            for r in others
            if r["session"]["format"] == fmt
        )
    before, after = fleet["sent_by_claude_code"]["original"], fleet["sent_by_claude_code"]["compacted"]
    assert before["characters"] == sum(
        r["resume_check"]["sent"]["original"]["characters"] for r in compressed
    )
    assert after["estimated_tokens"] < before["estimated_tokens"]
    cost = fleet["cost_ms"]
    assert 0 < cost["median"] <= cost["p90"] and cost["total"] == pytest.approx(
        sum(r["resume_check"]["elapsed_ms"] for r in gated), abs=1
    )


def test_without_claude_code_the_default_gate_says_so_in_one_line_and_compresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """This checkout always holds the pinned build, so "nowhere to be found" is the one patched part."""
    from pipeline import installed
    from pipeline.cli.main import main

    monkeypatch.setattr(installed, "_search_places", lambda root: [tmp_path / "no-claude-here"])
    monkeypatch.delenv(RESUME_GATE_ENV)
    session = tmp_path / "sessions" / "session.jsonl"
    session.parent.mkdir()
    build_session(session, turns=40)
    args = ["compress", str(session.parent), "--min-tokens", "0", "--quiet", "--jobs", "1"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "resume proof" in line]
    assert len(notes) == 1 and "Claude Code not found" in notes[0], notes
    assert [r["status"] for r in reports(tmp_path / "out")] == ["compressed"]
    assert "resume_check" not in next(reports(tmp_path / "out"))
    assert main([*args, "--out", str(tmp_path / "out2"), "--no-verify-resume"]) == 0
    assert "resume proof" not in capsys.readouterr().err
    # Required: each Claude Code session is refused, saying why (the run itself goes on, so a tree
    # of another agent's sessions needs no Claude Code); a Claude Code named but not there stops it.
    assert main([*args, "--out", str(tmp_path / "out3"), "--verify-resume"]) == 1
    assert "Claude Code not found, so its sessions' candidates are refused" in capsys.readouterr().err
    (refused,) = reports(tmp_path / "out3")
    assert refused["status"] == "refused" and refused["reasons"] == ["resume-check-failed"]
    assert refused["resume_check"]["error"] == "ClaudeCodeNotInstalled"
    assert not list((tmp_path / "out3").rglob("*.jsonl"))
