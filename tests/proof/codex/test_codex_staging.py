"""Staging a rollout for Codex: where the copy goes, the provider rewrite, the offline config."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from pipeline.installed import CodexThreadNotFound
from pipeline.proof.codex.codex_staging import PROVIDER, rollout_thread_id, stage_thread
from tests.support.codex_rollouts import THREAD_ID, conversation, session_meta, write_rollout


def test_the_copy_lands_where_codex_looks_and_only_the_first_meta_names_our_provider(tmp_path: Path) -> None:
    source = write_rollout(tmp_path / "src", conversation(2))
    with source.open("a") as extra:  # a forked thread carries its parent's meta too: left as it is
        extra.write(json.dumps({"type": "session_meta", "payload": session_meta("parent")}) + "\n")
    staged = stage_thread(source, tmp_path / "scratch", base_url="http://127.0.0.1:9/v1", model="m")
    assert staged.thread_id == THREAD_ID
    assert staged.rollout == staged.codex_home / "sessions" / "2026" / "03" / "01" / source.name
    assert staged.work_dir.is_dir() and staged.codex_home == staged.home / ".codex"
    before, after = source.read_bytes().splitlines(), staged.rollout.read_bytes().splitlines()
    assert len(before) == len(after) and before[1:] == after[1:]
    first = json.loads(after[0])
    assert first["payload"]["model_provider"] == PROVIDER
    assert {**first["payload"], "model_provider": "openai"} == json.loads(before[0])["payload"]
    assert json.loads(after[-1])["payload"]["model_provider"] == "openai"
    assert source.read_bytes().splitlines()[0] == before[0]  # the original is untouched


def test_the_config_points_at_the_loopback_over_the_responses_api_and_stays_offline(tmp_path: Path) -> None:
    source = write_rollout(tmp_path, conversation(1))
    staged = stage_thread(source, tmp_path / "scratch", base_url="http://127.0.0.1:9/v1", model="gpt-x")
    config = tomllib.loads((staged.codex_home / "config.toml").read_text())
    assert (config["model"], config["model_provider"]) == ("gpt-x", PROVIDER)
    provider = config["model_providers"][PROVIDER]
    assert provider["base_url"] == "http://127.0.0.1:9/v1"
    assert provider["wire_api"] == "responses" and provider["supports_websockets"] is False
    assert config["check_for_update_on_startup"] is False and config["analytics"]["enabled"] is False
    assert config["features"] == {"plugins": False, "apps": False}
    assert config["model_auto_compact_token_limit"] >= 10**12  # the judge sees the history uncompacted


def test_the_thread_id_comes_from_the_name_else_from_the_meta(tmp_path: Path) -> None:
    named = tmp_path / "owner__repo__rollout-2025-08-19T08-25-08-38B123FF-933B-4DFE-BD12-D42671FCB25F.jsonl"
    named.write_text("")
    assert rollout_thread_id(named) == "38b123ff-933b-4dfe-bd12-d42671fcb25f"
    unnamed = tmp_path / "session.jsonl"
    unnamed.write_text(json.dumps({"type": "session_meta", "payload": session_meta()}) + "\n")
    assert rollout_thread_id(unnamed) == THREAD_ID
    staged = stage_thread(unnamed, tmp_path / "scratch", base_url="http://x/v1", model="m")
    assert staged.rollout.name == f"rollout-2025-01-01T00-00-00-{THREAD_ID}.jsonl"
    nothing = tmp_path / "notes.jsonl"
    nothing.write_text('{"type": "event_msg", "payload": {}}\n')
    with pytest.raises(CodexThreadNotFound, match="no thread id") as refused:
        stage_thread(nothing, tmp_path / "other", base_url="http://x/v1", model="m")
    assert refused.value.code == "CodexThreadNotFound"  # what a report's resume_check.error says
