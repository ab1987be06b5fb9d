"""Finding the judges and reading their versions: one `--version` reader for Claude Code and Codex."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pipeline.installed import (
    CODEX_ENV,
    CodexNotInstalled,
    find_codex,
    reported_version,
    require_claude_code,
    require_codex,
    source_checkout,
)


def _script(path: Path, text: str, status: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{text}'\nexit {status}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(
    ("says", "version"),
    [
        ("2.1.332 (Claude Code)", "2.1.332"),
        ("codex-cli 0.171.0", "0.171.0"),
        ("codex-cli 0.2.0-alpha.2", "0.2.0-alpha.2"),
    ],
)
def test_the_version_is_the_first_word_shaped_like_one(tmp_path: Path, says: str, version: str) -> None:
    assert reported_version(_script(tmp_path / "tool", says)) == version


def test_no_version_when_the_tool_fails_or_says_none(tmp_path: Path) -> None:
    assert reported_version(_script(tmp_path / "a", "codex-cli 0.171.0", status=1)) is None
    assert reported_version(_script(tmp_path / "b", "no version here")) is None
    assert reported_version(tmp_path / "missing") is None


PACKAGE_EXE = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")


def test_codex_is_found_in_an_npm_prefix_or_where_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = tmp_path / "prefix"
    exe = _script(prefix / PACKAGE_EXE, "codex-cli 0.171.0")
    assert require_codex(prefix) == exe and require_codex(exe) == exe
    monkeypatch.setenv(CODEX_ENV, str(prefix))
    assert find_codex(tmp_path / "no-repo") == exe
    with pytest.raises(CodexNotInstalled, match=r"Codex not found .*scripts/install-codex"):
        require_codex(tmp_path / "empty")


def test_a_judge_given_by_a_relative_path_is_found_as_an_absolute_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resume runs Claude Code from a throwaway project folder: `--claude ./x` relative to the
    user's folder failed every session (internal-error) before it was made absolute."""
    exe = _script(tmp_path / "bin" / "claude", "2.1.332 (Claude Code)")
    monkeypatch.chdir(tmp_path)
    found = require_claude_code(Path("bin/claude"))
    assert found.is_absolute() and found == exe


def test_the_checkout_is_known_only_when_the_package_runs_from_one() -> None:
    """Here (an editable install) the package's checkout holds the pinned judges under `.cache/`;
    an installed wheel has none (tests/test_packaging.py runs one and finds None)."""
    checkout = Path(__file__).resolve().parents[1]
    assert source_checkout() == checkout
    assert (checkout / "pipeline" / "installed.py").is_file()
