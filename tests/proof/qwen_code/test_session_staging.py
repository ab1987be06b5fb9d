"""Staging a session for Qwen Code: its project folder name, the session id it is looked up by,
the runtime sidecar that lets any recorded cwd resume, and finding the client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.proof.qwen_code.qwen_install import NODE22_ENV, QWEN_CODE_ENV, find_qwen_code, qwen_code_at
from pipeline.proof.qwen_code.session_staging import QwenSessionNotFound, sanitized_cwd, stage_session
from tests.support.qwen_records import SESSION, chain, jsonl, turn


def test_the_project_folder_is_the_cwd_with_every_other_character_a_dash() -> None:
    assert sanitized_cwd("/tmp/qx/h1/proj") == "-tmp-qx-h1-proj"
    assert sanitized_cwd("/home/a.b/c_d é") == "-home-a-b-c-d--"


def test_a_staged_copy_is_byte_for_byte_with_a_sidecar_naming_the_staged_project(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(b"\n" + jsonl(chain(*turn(1, "go", "done"))))  # a blank first line is skipped
    staged = stage_session(source, tmp_path / "scratch")
    assert staged.session_id == SESSION and staged.transcript.read_bytes() == source.read_bytes()
    assert staged.transcript.parent.parent.name == sanitized_cwd(str(staged.work_dir))
    sidecar = json.loads((staged.transcript.parent / f"{SESSION}.runtime.json").read_text())
    assert sidecar["work_dir"] == str(staged.work_dir) and sidecar["session_id"] == SESSION
    settings = json.loads((staged.home / ".qwen" / "settings.json").read_text())
    assert settings["memory"]["enableManagedAutoMemory"] is False


def test_a_file_naming_no_session_is_refused_with_its_own_error(tmp_path: Path) -> None:
    source = tmp_path / "x.jsonl"
    source.write_bytes(b'{"type": "user"}\nnot json\n')
    with pytest.raises(QwenSessionNotFound, match=r"x\.jsonl"):
        stage_session(source, tmp_path / "scratch")


def test_the_client_is_found_where_the_environment_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "prefix" / "node_modules" / "@qwen-code" / "qwen-code" / "cli-entry.js"
    script.parent.mkdir(parents=True)
    script.write_text("// entry")
    node = tmp_path / "node"
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    monkeypatch.setenv(QWEN_CODE_ENV, str(tmp_path / "prefix"))
    monkeypatch.setenv(NODE22_ENV, str(node))
    found = find_qwen_code(root=tmp_path / "no-checkout")
    assert found is not None and found.script == script and found.node == node
    assert found.command("--version")[1:] == [str(script.absolute()), "--version"]
    assert qwen_code_at(tmp_path / "elsewhere", root=tmp_path / "no-checkout") is None
