"""Other agents' session trees through the real command line: named, counted, never failed.

A directory holding at least one session file of every agent the tool recognizes but does not
process (built from the public formats) is `unsupported-format` by agent, exit 0, for validate,
compress and tokens; a file that is nobody's transcript stays `not-a-transcript`. A run without
paths reads every supported agent's session directory found under a throwaway HOME.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipeline.formats.registry import PROCESSED
from pipeline.testing import TranscriptBuilder
from pipeline.testing.invoke import compaction
from pipeline.vocabulary import SourceFormat
from tests.support.agent_files import write_agent_files
from tests.support.rollout_builder import RolloutBuilder

_NOBODYS = {
    "notes/package.json": b'{"name": "app", "version": "1.0.0"}\n',
    "notes/events.jsonl": b'{"at": 1}\n',
}


@pytest.fixture(scope="module")
def others(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, SourceFormat]]:
    root = tmp_path_factory.mktemp("agents") / "sessions"
    expected = write_agent_files(root)
    processed = {signature.format for signature in PROCESSED}
    for relative in [relative for relative, agent in expected.items() if agent in processed]:
        (root / relative).unlink()  # an agent that joined the processed formats is tested as one
        del expected[relative]
    for relative, data in _NOBODYS.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    return root, expected


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    """Each session's report (`<label>.report.json` under the report directory), by its label."""
    suffix = ".report.json"
    return {
        path.relative_to(folder).as_posix().removesuffix(suffix): json.loads(path.read_text())
        for path in folder.rglob(f"*{suffix}")
    }


@pytest.mark.parametrize(
    ("command", "flags"),
    [("validate", ()), ("compress", ("--out", "{out}")), ("tokens", ())],
)
def test_other_agents_sessions_are_unsupported_by_agent_and_exit_0(
    others: tuple[Path, dict[str, SourceFormat]], tmp_path: Path, command: str, flags: tuple[str, ...]
) -> None:
    root, expected = others
    reports = tmp_path / "reports"
    given = [flag.format(out=tmp_path / "out") for flag in flags]
    if command == "compress":
        reports = tmp_path / "out"  # compress writes its reports beside its candidates
    else:
        given += ["--report-dir", str(reports)]
    completed = compaction(command, str(root), *given, "--quiet")
    assert completed.returncode == 0, completed.stderr
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["unsupported_by_agent"] == dict(
        sorted(Counter(f.value for f in expected.values()).items())
    )
    by_label = _reports(reports)
    for relative, agent in expected.items():
        report = by_label[f"sessions/{relative}"]
        assert report["status"] == "unsupported-format"
        assert [(f["code"], f["ids"]) for f in report["findings"]] == [("unsupported-format", [agent.value])]
    for relative in _NOBODYS:
        assert by_label[f"sessions/{relative}"]["status"] == "not-a-transcript"
    assert not list((tmp_path / "out").rglob("*.jsonl"))  # nothing was written for any of them


def test_a_run_without_paths_reads_every_supported_agents_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = TranscriptBuilder(seed=5)
    session.user("hello")
    session.assistant(session.text("hi"))
    session.write(home / ".claude" / "projects" / "-home-me-app" / "s1.jsonl")
    rollout = home / ".codex" / "sessions" / "2026" / "04" / "20" / "rollout-2026-04-20T10-00-00-a.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(RolloutBuilder(seed=4).to_bytes())
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""}
    completed = compaction("validate", "--report-dir", str(tmp_path / "r"), "--quiet", env=env)
    assert completed.returncode == 0, completed.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["roots"] == [str(home / ".claude" / "projects"), str(home / ".codex" / "sessions")]
    assert summary["by_status"] == {"valid": 2}


def test_a_run_without_paths_on_a_machine_without_sessions_says_where_it_looked(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""}
    completed = compaction("validate", "--report-dir", str(tmp_path / "r"), env=env)
    assert completed.returncode == 2
    assert "no session directory found" in completed.stderr and ".codex/sessions" in completed.stderr
