"""Qwen Code sessions are identified positively, from their first records (and, for the older
one-document chats, their place under `.qwen`), never taken for Claude Code's; no other agent's
file in the corpus is taken for Qwen Code's."""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Final

import pytest

from pipeline.formats.detect import detect_format
from pipeline.formats.qwen_code.signature import (
    QWEN_CODE,
    is_qwen_record,
    is_subagent_transcript,
    session_roots,
)
from pipeline.formats.registry import PROCESSED, default_roots
from pipeline.vocabulary import SourceFormat

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
HEAD_LINES: Final = 64


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_real_sessions_are_qwen_codes_wherever_they_lie(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    assert detect_format(data, PurePath("/h/.qwen/projects/-w/chats") / name) is SourceFormat.QWEN_CODE
    assert detect_format(data, None) is SourceFormat.QWEN_CODE
    first = json.loads(data.split(b"\n", 1)[0])
    assert is_qwen_record(first)


def test_a_subagents_transcript_is_qwen_codes_where_qwen_code_writes_it() -> None:
    transcript = next(FIXTURES.glob("subagents/agent-*.jsonl"))
    where = PurePath("/h/.qwen/projects/-w/subagents/s1") / transcript.name
    assert detect_format(transcript.read_bytes(), where) is SourceFormat.QWEN_CODE
    assert is_subagent_transcript(where) and not is_subagent_transcript(
        PurePath("/h/.qwen/projects/-w/chats/s.jsonl")
    )


def test_an_older_chat_document_is_qwen_codes_under_its_home_and_gemini_clis_under_theirs() -> None:
    chat = FIXTURES / "v0.1.4.json"  # Qwen Code 0.1.4's tmp/<hash>/chats layout
    data = chat.read_bytes()
    assert detect_format(data, PurePath("/h/.qwen/tmp/ab12/chats") / chat.name) is SourceFormat.QWEN_CODE
    assert detect_format(data, PurePath("/h/.gemini/tmp/ab12/chats") / chat.name) is SourceFormat.GEMINI_CLI


def test_a_claude_code_shaped_record_is_not_qwen_codes() -> None:
    claude = {"uuid": "u", "parentUuid": None, "sessionId": "s", "type": "user", "message": {"content": "hi"}}
    assert not is_qwen_record(claude)
    assert is_qwen_record({**claude, "message": {"role": "user", "parts": [{"text": "hi"}]}})
    assert not is_qwen_record({**claude, "type": "tool_result", "sessionId": None})


def test_no_corpus_file_of_another_agent_is_taken_for_qwen_codes(
    corpus_files: Path, codex_files: Path
) -> None:
    claimed = []
    for path in [*corpus_files.glob("*.jsonl"), *codex_files.glob("*.jsonl")]:
        with path.open("rb") as lines:
            for _, line in zip(range(HEAD_LINES), lines, strict=False):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and is_qwen_record(record):
                    claimed.append(path.name)
                    break
    assert claimed == []


def test_its_sessions_live_under_qwen_home_and_a_run_without_paths_reads_them(tmp_path: Path) -> None:
    assert session_roots({}, tmp_path) == (tmp_path / ".qwen" / "projects",)
    assert session_roots({"QWEN_HOME": "/q"}, tmp_path) == (Path("/q/projects"),)
    assert QWEN_CODE in PROCESSED and QWEN_CODE.roots is session_roots
    (tmp_path / ".qwen" / "projects").mkdir(parents=True)
    assert default_roots({}, tmp_path) == [tmp_path / ".qwen" / "projects"]
