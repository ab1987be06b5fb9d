"""`scripts/rebuild-unseen`: the held-out set is rebuilt from pinned commits, one file per session."""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script() -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader("rebuild_unseen", str(ROOT / "scripts" / "rebuild-unseen"))
    spec = importlib.util.spec_from_loader("rebuild_unseen", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rebuild_unseen"] = module  # dataclasses look their module up by name
    loader.exec_module(module)
    return module


def claude_lines(session: str, turns: int) -> bytes:
    line = f'{{"type":"assistant","sessionId":"{session}","version":"2.1.7","message":{{"usage":{{}}}}}}\n'
    return (line * turns).encode()


GEMINI = b'{\n  "sessionId": "g-1",\n  "projectHash": "abc",\n  "messages": []\n}\n'


def test_each_session_is_taken_once_from_its_largest_checkpoint(script: types.ModuleType) -> None:
    files = [
        ("aa/0000000001/0/full.jsonl", claude_lines("s-1", 3)),
        ("bb/0000000002/0/full.jsonl", claude_lines("s-1", 7)),  # the same session, later checkpoint
        ("bb/0000000002/1/full.jsonl", claude_lines("s-2", 4)),
        ("cc/0000000003/0/full.jsonl", GEMINI),
        ("cc/0000000003/0/metadata.json", b"{}"),
    ]
    picked = script.pick_entire(files)
    assert sorted((p.path, p.agent) for p in picked) == [
        ("bb/0000000002/0/full.jsonl", "claude-code"),
        ("bb/0000000002/1/full.jsonl", "claude-code"),
        ("cc/0000000003/0/full.jsonl", "gemini-cli"),
    ]
    gemini = next(p for p in picked if p.agent == "gemini-cli")
    assert script.target(Path("/out"), gemini) == Path("/out/files/entireio__cli/cc/0000000003/0/full.json")


def test_fixtures_already_in_the_corpus_or_without_bills_are_left_out(script: types.ModuleType) -> None:
    source = script.SOURCES[1]
    known, unseen, unbilled = claude_lines("k", 5), claude_lines("u", 5), b'{"type":"user"}\n'
    files = [("a/known.jsonl", known), ("a/unseen.jsonl", unseen), ("a/unbilled.jsonl", unbilled)]
    corpus = {hashlib.sha256(known).hexdigest()}
    assert [p.path for p in script.pick_fixtures(source, files, corpus)] == ["a/unseen.jsonl"]


def test_files_are_read_from_the_pinned_commit_of_a_real_git_directory(
    script: types.ModuleType, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "test" / "fixtures" / "transcripts").mkdir(parents=True)
    (work / "test" / "fixtures" / "transcripts" / "s.jsonl").write_bytes(claude_lines("s", 3))
    (work / "README.md").write_text("not a session\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "fixtures"]):
        subprocess.run(["git", *args], cwd=work, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
    ).stdout.strip()
    source = script.Source("o/n", commit, "main", "test/fixtures/transcripts/", "MIT")
    found = list(script.listed(work / ".git", source))
    assert found == [("test/fixtures/transcripts/s.jsonl", claude_lines("s", 3))]


def _commit(work: Path, files: dict[str, bytes]) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    if not (work / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    for args in (["add", "."], ["commit", "-q", "-m", "rollouts"]):
        subprocess.run(["git", *args], cwd=work, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
    ).stdout.strip()


def test_a_held_out_rollout_comes_from_its_first_commit_and_never_from_the_corpus(
    script: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, day = tmp_path / "work", ".codex/sessions/2026/01/01"
    first = _commit(work, {f"{day}/rollout-A.jsonl": b"a1\n", f"{day}/rollout-B.jsonl": b"b\n"})
    second = _commit(
        work, {f"{day}/rollout-A.jsonl": b"a2\n", f"{day}/rollout-C.jsonl": b"c\n", "x.jsonl": b"x\n"}
    )
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "o+n" / "repo")], check=True)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "o__n__.codex_sessions_2026_01_01_rollout-B.jsonl").write_bytes(b"b\n")
    sources = tuple(script.Source("o/n", commit, "HEAD", "", "MIT") for commit in (first, second))
    monkeypatch.setattr(script, "CODEX_SOURCES", (sources,))
    picked, absent = script.pick_codex(mirrors, corpus)
    assert [(script.codex_name(p), p.data, p.source.commit) for p in picked] == [
        ("o__n__.codex_sessions_2026_01_01_rollout-A.jsonl", b"a1\n", first),
        ("o__n__.codex_sessions_2026_01_01_rollout-C.jsonl", b"c\n", second),
    ]
    assert absent == []
