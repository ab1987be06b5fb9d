"""Probe recall per class for pi candidates, as for Claude Code's: each compress report's
`fidelity` scores the summarized span's probes (instructions, files, commands, errors,
identifiers, last state) in what pi resumes from the candidate, falls when the summary must be
short, and `compress.min_fidelity` refuses a candidate below it before any resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pipeline.testing.invoke import compaction
from tests.support.pi_files import CORPUS

LARGE = CORPUS / "files" / "badlogic__pi-mono__packages_coding-agent_test_fixtures_large-session.jsonl"
CLASSES = {"command", "error", "file-modified", "file-read", "human-instruction", "identifier", "last-state"}


def _compress(folder: Path, out: Path, *flags: str) -> dict[str, Any]:
    done = compaction("compress", str(folder), "--out", str(out), "--no-verify-resume", "--quiet", *flags)
    assert "Traceback" not in done.stderr
    (report,) = [json.loads(p.read_text()) for p in out.rglob("*.report.json")]
    return report


def test_the_fidelity_of_a_pi_candidate_is_scored_by_class_and_its_floor_refuses(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copyfile(LARGE, folder / LARGE.name)
    full = _compress(folder, tmp_path / "full")
    assert full["status"] == "compressed" and full["session"]["format"] == "pi-session"
    fidelity = full["fidelity"]
    assert set(fidelity["classes"]) == CLASSES and fidelity["span"] == "plan"
    assert fidelity["probes"] == 252 and fidelity["summarized_lines"] > 0
    assert fidelity["kept"] == fidelity["probes"] and fidelity["fidelity"] == 1.0  # the full checkpoint
    short = tmp_path / "short.toml"
    short.write_text("[compress]\nsummary_char_budget = 4000\nmin_fidelity = 0.5\n")
    refused = _compress(folder, tmp_path / "short", "--config", str(short))
    lost = refused["fidelity"]
    assert lost["fidelity"] < 0.5 and lost["kept"] < lost["probes"] and lost["lost"]
    assert {entry["class"] for entry in lost["lost"]} <= CLASSES
    assert (refused["status"], refused["reasons"]) == ("refused", ["fidelity-below-minimum"])
    assert "resume_check" not in refused and not any((tmp_path / "short").rglob(LARGE.name))
