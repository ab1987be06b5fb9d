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
)
from pipeline.read.discover import RootError, discover
from pipeline.vocabulary import SourceFormat


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
