"""Where the Gemini CLI judge is found: the variable, the pinned build of a checkout, `PATH`."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.proof.gemini_cli.gemini_run import GeminiCliNotInstalled, find_gemini_cli, require_gemini_cli

SCRIPT = Path("lib") / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"


def test_gemini_on_path_is_found_as_the_script_npm_links_it_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMPACTION_GEMINI_CLI", raising=False)
    checkout = tmp_path / "checkout"  # a clone without the pinned build
    checkout.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_gemini_cli(checkout) is None
    with pytest.raises(GeminiCliNotInstalled, match="scripts/install-gemini-cli"):
        require_gemini_cli(root=checkout)
    script = tmp_path / "prefix" / SCRIPT  # an npm global prefix, as `npm install -g` lays it out
    script.parent.mkdir(parents=True)
    script.write_text("#!/usr/bin/env node\n")
    script.chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "gemini").symlink_to(script)
    assert find_gemini_cli(checkout) == script
    monkeypatch.setenv("COMPACTION_GEMINI_CLI", str(tmp_path / "prefix" / "lib"))  # the variable wins
    assert (
        find_gemini_cli(checkout)
        == tmp_path / "prefix" / "lib" / "node_modules/@google/gemini-cli/bundle/gemini.js"
    )
