"""The command line as users run it: exit codes, report layout, logs, settings and discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from pipeline.formats.registry import default_roots
from pipeline.read.discover import RootError, discover
from pipeline.testing import TranscriptBuilder

CANARY = "CANARY-CLI-REWOUND-93b1"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def write_session(path: Path, *, seed: int, rewound: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    builder = TranscriptBuilder(seed=seed)
    first = builder.user("first request")
    if rewound:
        builder.assistant(builder.text(CANARY))
        builder.rewind(first)
    builder.tool_call("Read", {"file_path": "/repo/a.py"}, "print('a')")
    builder.assistant(builder.text("read it"))
    builder.write(path)


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    write_session(root / "-home-dev-app" / "11111111-aaaa-4aaa-8aaa-111111111111.jsonl", seed=1, rewound=True)
    write_session(root / "-home-dev-app" / "22222222-bbbb-4bbb-8bbb-222222222222.jsonl", seed=2)
    subagents = root / "-home-dev-app" / "22222222-bbbb-4bbb-8bbb-222222222222" / "subagents"
    builder = TranscriptBuilder(seed=3, sidechain=True, agent_id="a1b2c3d")
    builder.user("subagent task")
    builder.assistant(builder.text("subagent done"))
    subagents.mkdir(parents=True)
    builder.write(subagents / "agent-a1b2c3d.jsonl")
    return root


def test_validate_writes_one_report_per_session_mirroring_the_layout(fleet: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    completed = run("validate", str(fleet), "--report-dir", str(reports), "--jobs", "2")
    assert completed.returncode == 0, completed.stderr
    found = sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*.report.json"))
    assert found == [
        "projects/-home-dev-app/11111111-aaaa-4aaa-8aaa-111111111111.jsonl.report.json",
        "projects/-home-dev-app/22222222-bbbb-4bbb-8bbb-222222222222.jsonl.report.json",
        "projects/-home-dev-app/22222222-bbbb-4bbb-8bbb-222222222222/subagents/agent-a1b2c3d.jsonl.report.json",
    ]
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["sessions"] == 3 and summary["failed"] == 0 and summary["schema"].endswith("/v1")
    sub = json.loads((reports / found[2]).read_text())
    assert sub["session"]["kind"] == "subagent"
    main = json.loads((reports / found[0]).read_text())
    for key in (
        "schema",
        "session",
        "status",
        "strict_status",
        "leaf",
        "partition",
        "findings",
        "tokens",
        "timing_ms",
    ):
        assert key in main
    assert main["chain"]["excluded"]["rewound"]["count"] >= 1
    assert "3 sessions" in completed.stdout  # the end-of-run table
    for path in reports.rglob("*.json"):
        assert CANARY not in path.read_text()


def test_exit_code_is_1_when_a_session_is_invalid(fleet: Path, tmp_path: Path) -> None:
    broken = fleet / "-home-dev-app" / "33333333-cccc-4ccc-8ccc-333333333333.jsonl"
    broken.write_bytes(
        orjson.dumps(
            {
                "type": "user",
                "uuid": "u",
                "parentUuid": None,
                "sessionId": "s",
                "message": {"role": "user", "content": "x"},
            }
        )
        + b"\nnot json\n"
    )
    completed = run("validate", str(fleet), "--report-dir", str(tmp_path / "r"), "--quiet")
    assert completed.returncode == 1
    assert completed.stdout == ""  # quiet: no table


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "--jobs", "-1"],
        ["validate", "--leaf-policy", "sideways"],
        ["validate", "--max-post-last-prompt-extension", "-2"],
        ["validate", "--resume-leaf", "abc"],  # the fixture holds several sessions
        ["compress", "--summary-char-budget", "100", "--out", "OUT"],
        ["compress", "--target-ratio", "0", "--out", "OUT"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(args: list[str], fleet: Path, tmp_path: Path) -> None:
    args = [str(tmp_path / "o") if a == "OUT" else a for a in args]
    completed = run(*args[:1], str(fleet), *args[1:]) if args[0] in ("validate", "compress") else run(*args)
    assert completed.returncode == 2
    assert "error" in completed.stderr


def test_a_missing_root_exits_2(tmp_path: Path) -> None:
    completed = run("validate", str(tmp_path / "nowhere"))
    assert completed.returncode == 2 and "no such file or directory" in completed.stderr


def test_default_root_comes_from_claude_config_dir(fleet: Path, tmp_path: Path) -> None:
    config = fleet.parent
    home = tmp_path / "home"  # no ~/.codex/sessions there: the Claude Code root alone
    assert default_roots({"CLAUDE_CONFIG_DIR": str(config)}, home) == [config / "projects"]
    env = {"CLAUDE_CONFIG_DIR": str(config), "HOME": str(home), "CODEX_HOME": ""}
    completed = run("validate", "--report-dir", str(tmp_path / "r"), "--quiet", env=env)
    assert completed.returncode == 0 and (tmp_path / "r" / "summary.json").exists()


def test_json_logs_are_machine_readable_and_carry_no_text(fleet: Path, tmp_path: Path) -> None:
    (fleet / "-home-dev-app" / "bad.jsonl").write_bytes(b"\xff\xfe not a transcript\n")
    completed = run(
        "validate", str(fleet), "--report-dir", str(tmp_path / "r"), "--log-format", "json", "--quiet"
    )
    for line in completed.stderr.splitlines():
        json.loads(line)
    assert CANARY not in completed.stderr


def test_help_explains_every_command() -> None:
    for command in ("validate", "compress"):
        completed = run(command, "--help")
        assert (
            completed.returncode == 0 and "--report-dir" in completed.stdout and "--jobs" in completed.stdout
        )


def test_discovery_finds_sessions_and_subagents_in_a_stable_order(fleet: Path) -> None:
    labels = [s.label for s in discover([fleet])]
    assert labels == sorted(labels) and len(labels) == 3
    with pytest.raises(RootError):
        discover([fleet / "missing"])


MALFORMED_CANARY = "CANARY-CLI-MALFORMED-5e07"


@pytest.mark.parametrize("command", ["validate", "tokens"])
def test_a_malformed_lines_text_reaches_no_report_or_log(command: str, fleet: Path, tmp_path: Path) -> None:
    session = fleet / "-home-dev-app" / "11111111-aaaa-4aaa-8aaa-111111111111.jsonl"
    with session.open("ab") as handle:  # a truncated record: what a crash mid-write leaves
        handle.write(b'{"type":"user","message":{"content":"' + MALFORMED_CANARY.encode() + b'"\n')
    reports = tmp_path / "reports"
    completed = run(command, str(fleet), "--report-dir", str(reports), "--log-format", "json")
    report = json.loads(next(reports.rglob("11111111-*.report.json")).read_text())
    assert report["status"] == "invalid"
    assert any(f["code"] in ("line-truncated", "line-not-json") and f["line"] for f in report["findings"])
    assert completed.returncode == 1
    outputs = [completed.stdout, completed.stderr, *(p.read_text() for p in reports.rglob("*.json"))]
    for text in outputs:
        assert MALFORMED_CANARY not in text and CANARY not in text
