"""The registry: every recognized agent once, and the default roots a run without paths reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.registry import (
    PROCESSED,
    RECOGNIZED,
    default_roots,
    looked_for_roots,
    session_file_names,
    session_stores,
    stored_session,
)
from pipeline.read.discover import RootError, discover
from pipeline.vocabulary import SourceFormat
from tests.support.openclaw_stores import live_store, store_path
from tests.support.pi_files import FIXTURES


def test_every_agent_is_recognized_once_and_the_processed_ones_name_their_roots() -> None:
    formats = [signature.format for signature in RECOGNIZED]
    assert len(formats) == len(set(formats))
    assert set(formats) == set(SourceFormat) - {SourceFormat.EMPTY, SourceFormat.UNKNOWN}
    processed = [signature.format for signature in PROCESSED]
    assert processed == [
        SourceFormat.CLAUDE_CODE,
        SourceFormat.CODEX,
        SourceFormat.PI,
        SourceFormat.GEMINI_CLI,
        SourceFormat.QWEN_CODE,
        SourceFormat.CODEWHALE,
    ]
    assert all(signature.roots is not None for signature in PROCESSED)
    assert all(signature.roots is None for signature in RECOGNIZED if signature not in PROCESSED)


def test_the_default_roots_are_the_session_directories_found_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    claude, codex = home / ".claude" / "projects", home / ".codex" / "sessions"
    pi, openclaw = home / ".pi" / "agent" / "sessions", home / ".openclaw" / "agents"
    gemini, qwen = home / ".gemini" / "tmp", home / ".qwen" / "projects"
    codewhale = [home / ".codewhale" / "sessions", home / ".deepseek" / "sessions"]  # and DeepSeek-TUI's
    assert looked_for_roots({}, home) == [claude, codex, pi, openclaw, gemini, qwen, *codewhale]
    with pytest.raises(
        RootError,
        match=r"no session directory found \(looked in .*projects, .*sessions, .*agents, .*tmp, .*projects, .*sessions\)",
    ):
        default_roots({}, home)
    codex.mkdir(parents=True)
    assert default_roots({}, home) == [codex]  # a Codex-only machine
    claude.mkdir(parents=True)
    assert default_roots({}, home) == [claude, codex]
    openclaw.mkdir(parents=True)  # OpenClaw's agents, each one's sessions below it
    assert default_roots({}, home) == [claude, codex, openclaw]
    codewhale[1].mkdir(parents=True)
    assert default_roots({}, home) == [claude, codex, openclaw, codewhale[1]]  # a legacy DeepSeek-TUI store


def test_the_agents_own_environment_variables_move_their_roots(tmp_path: Path) -> None:
    config, codex_home = tmp_path / "claude-config", tmp_path / "codex-home"
    (config / "projects").mkdir(parents=True)
    (codex_home / "sessions").mkdir(parents=True)
    (tmp_path / "home" / ".claude" / "projects").mkdir(parents=True)  # not read: the variable wins
    pi_dir = tmp_path / "pi-agent"
    (pi_dir / "sessions").mkdir(parents=True)
    gemini_home = tmp_path / "gemini-home"  # GEMINI_CLI_HOME stands for the home `.gemini` is in
    (gemini_home / ".gemini" / "tmp").mkdir(parents=True)
    whale_home = tmp_path / "whale-home"
    (whale_home / "sessions").mkdir(parents=True)
    environ = {
        "CLAUDE_CONFIG_DIR": str(config),
        "CODEX_HOME": str(codex_home),
        "PI_CODING_AGENT_DIR": str(pi_dir),
        "GEMINI_CLI_HOME": str(gemini_home),
        "CODEWHALE_HOME": str(whale_home),
    }
    expected = [
        config / "projects",
        codex_home / "sessions",
        pi_dir / "sessions",
        gemini_home / ".gemini" / "tmp",
        whale_home / "sessions",
    ]
    assert default_roots(environ, tmp_path / "home") == expected


def test_discovery_takes_the_agents_named_files_whatever_their_suffix(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name in (".aider.chat.history.md", ".aider.input.history", "notes.md", ".hidden.jsonl", "s.jsonl"):
        (repo / name).write_text("x\n")
    (repo / ".git" / ".aider.chat.history.md").write_text("x\n")  # hidden directories stay unread
    assert [s.label for s in discover([repo])] == ["s.jsonl"]
    found = [s.label for s in discover([repo], session_file_names())]
    assert found == [".aider.chat.history.md", ".aider.input.history", "s.jsonl"]


def test_a_store_gives_one_session_file_per_stored_session_labelled_by_its_id(tmp_path: Path) -> None:
    store = store_path(tmp_path / "openclaw")
    sessions = {"b-2": (FIXTURES / "tools.jsonl").read_bytes(), "a-1": b'{"type":"session","version":3}\n'}
    unsafe = {"../up": b'{"type":"session","version":3}\n'}
    with live_store(store, sessions | unsafe, logged=1):
        assert store.name in session_stores() and "openclaw-agent.db" not in session_stores()
        found = discover([tmp_path / "openclaw"], session_file_names(), session_stores())
        assert [(s.label, s.member) for s in found] == [
            (
                "agents/main/agent/openclaw-agent.sqlite#..%2Fup.jsonl",
                "../up",
            ),  # one segment of a report path
            ("agents/main/agent/openclaw-agent.sqlite#a-1.jsonl", "a-1"),
            ("agents/main/agent/openclaw-agent.sqlite#b-2.jsonl", "b-2"),
        ]
        assert all(s.path == store for s in found)
        assert stored_session(store, "b-2") == sessions["b-2"]
        assert stored_session(store, "c-3") == "the store no longer holds this session"
        alone = discover([store], session_file_names())  # no stores asked for: the file as it is
        assert [(s.label, s.member) for s in alone] == [("openclaw-agent.sqlite", None)]
