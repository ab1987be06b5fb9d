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
