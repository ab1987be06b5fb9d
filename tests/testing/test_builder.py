"""TranscriptBuilder writes Claude Code records in the real shapes, deterministically."""

from __future__ import annotations

import io
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline import testing
from pipeline.testing import Feature, ToolSpec, TranscriptBuilder
from tests.conftest import CORPUS_FILES

CORPUS = CORPUS_FILES
ENVELOPE = ["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch"]


def records(b: TranscriptBuilder) -> list[dict[str, Any]]:
    """Parse every line of an in-memory builder."""
    out = [json.loads(line) for line in b.lines()]
    assert all(isinstance(r, dict) for r in out)
    return out


def by_uuid(recs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["uuid"]: r for r in recs if "uuid" in r}


def tool_blocks(recs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        block
        for r in recs
        if isinstance((r.get("message") or {}).get("content"), list)
        for block in r["message"]["content"]
        if block.get("type") == kind
    ]


def small_session(**kw: Any) -> TranscriptBuilder:
    """A short session touching most record kinds."""
    b = TranscriptBuilder(seed=7, slug="radiant-floating-music", **kw)
    b.progress("SessionStart", hook_name="SessionStart:startup", command="bd prime")
    b.file_history_snapshot()
    b.user("mix phx.server doesnt seem to start — 启动失败 🚀")
    msg = b.assistant(b.text("\n\n"), b.thinking("The server fails to boot."), b.text("Let me check."))
    b.parallel_tool_calls(
        [("Bash", {"command": "mix phx.server"}, "boom"), ("Glob", {"pattern": "mix.exs"}, "mix.exs")],
        message_id=msg.message_id,
        hooks=True,
    )
    b.tool_call("Read", {"file_path": "/a.ex"}, "     1→defmodule A do", tool_use_result={"type": "text"})
    b.assistant(b.text("Fixed."))
    b.system("turn_duration", durationMs=1234)
    b.last_prompt()
    return b


# ---------------------------------------------------------------------------- serialization
def test_every_line_is_a_compact_json_object_with_raw_non_ascii() -> None:
    b = small_session()
    for line in b.lines():
        assert line == orjson.dumps(json.loads(line))
        assert b"\n" not in line
    joined = b"\n".join(b.lines())
    assert "启动失败 🚀".encode() in joined
    assert b"\\u" not in joined


def test_same_seed_gives_same_bytes_and_other_seed_differs() -> None:
    assert small_session().to_bytes() == small_session().to_bytes()
    other = TranscriptBuilder(seed=8)
    other.user("x")
    first = TranscriptBuilder(seed=7)
    first.user("x")
    assert other.to_bytes() != first.to_bytes()


def test_uuids_are_unique_v4_and_timestamps_never_go_back() -> None:
    recs = records(small_session())
    uuids = [r["uuid"] for r in recs if "uuid" in r]
    assert len(uuids) == len(set(uuids))
    assert all(u[14] == "4" and u[19] in "89ab" for u in uuids)
    stamps = [r["timestamp"] for r in recs if "timestamp" in r]
    assert stamps == sorted(stamps)
    assert all(len(s) == 24 and s.endswith("Z") for s in stamps)


def test_every_parent_resolves_inside_the_file() -> None:
    recs = records(small_session())
    known = by_uuid(recs)
    assert all(r["parentUuid"] in known for r in recs if r.get("parentUuid") is not None)


# ---------------------------------------------------------------------------- key order
def test_key_order_follows_claude_code_2_1_39() -> None:
    recs = records(small_session())
    prompt = next(r for r in recs if r["type"] == "user" and isinstance(r["message"]["content"], str))
    assert list(prompt) == [
        *ENVELOPE,
        "type",
        "message",
        "uuid",
        "timestamp",
        "thinkingMetadata",
        "todos",
        "permissionMode",
    ]
    frag = next(r for r in recs if r["type"] == "assistant")
    assert list(frag) == [*ENVELOPE, "message", "requestId", "type", "uuid", "timestamp"]
    assert list(frag["message"]) == [
        "model",
        "id",
        "type",
        "role",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
    ]
    assert {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} <= set(
        frag["message"]["usage"]
    )
    result = next(r for r in recs if r["type"] == "user" and "toolUseResult" in r)
    assert list(result)[-6:] == [
        "type",
        "message",
        "uuid",
        "timestamp",
        "toolUseResult",
        "sourceToolAssistantUUID",
    ]
    pre = next(r for r in recs if r["type"] == "progress" and r["data"]["hookEvent"] == "PreToolUse")
    assert list(pre)[-6:] == ["type", "data", "toolUseID", "parentToolUseID", "uuid", "timestamp"]


def test_trailing_layout_of_2_1_114_puts_the_envelope_last() -> None:
    b = TranscriptBuilder(seed=1, version="2.1.114")
    b.user("hello")
    b.tool_call("Bash", {"command": "ls"}, "a\nb", hooks=True)
    recs = records(b)
    tail = ["userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch"]
    assert all(list(r)[-6:] == tail for r in recs)
    assert list(recs[0])[:4] == ["parentUuid", "isSidechain", "promptId", "type"]
    result = next(r for r in recs if r["type"] == "user" and "toolUseResult" not in r and r is not recs[0])
    assert result["promptId"] == recs[0]["promptId"]
    frags = [r for r in recs if r["type"] == "assistant"]
    assert all(r["message"]["stop_reason"] == "tool_use" for r in frags)
    assert any(r["type"] == "attachment" and r["attachment"]["hookEvent"] == "PostToolUse" for r in recs)


def test_old_versions_drop_git_branch_and_put_model_after_role() -> None:
    b = TranscriptBuilder(seed=1, version="1.0.43")
    b.user("hi")
    b.assistant(b.text("hello"))
    user, frag = records(b)
    assert "gitBranch" not in user
    assert "thinkingMetadata" not in user
    assert list(frag["message"])[:4] == ["id", "type", "role", "model"]


@pytest.mark.parametrize(
    ("corpus_file", "version"),
    [
        ("marot__spotter__test_fixtures_transcripts_short.jsonl", "2.1.38"),
        (
            "iansherr__claude-code-log__test_test_data_real_projects_-experiments-worktrees_"
            "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
            "2.1.114",
        ),
    ],
)
def test_key_orders_match_the_real_corpus(corpus_file: str, version: str) -> None:
    path = CORPUS / corpus_file
    if not path.exists():
        pytest.skip("corpus not available")

    def kind(r: dict[str, Any]) -> str:
        content = (r.get("message") or {}).get("content")
        if r["type"] == "user" and isinstance(content, list) and content[0].get("type") == "tool_result":
            return "tool_result"
        if r["type"] == "user":
            return "prompt" if isinstance(content, str) else "user-blocks"
        return str(r["type"])

    real: dict[str, list[str]] = {}
    for line in path.read_bytes().splitlines():
        r = json.loads(line)
        real.setdefault(kind(r), [k for k in r if k != "slug"])
    b = TranscriptBuilder(seed=3, version=version)
    b.user("start")
    b.tool_call("Bash", {"command": "ls"}, "x", tool_use_result={"stdout": "x"})
    mine: dict[str, list[str]] = {}
    for r in records(b):
        mine.setdefault(kind(r), list(r))
    for key in ("prompt", "assistant", "tool_result"):
        assert mine[key] == real[key], key


# ---------------------------------------------------------------------------- assistant fragments
def test_fragments_share_the_message_id_and_chain_one_after_another() -> None:
    b = TranscriptBuilder(seed=2)
    prompt = b.user("go")
    msg = b.assistant(b.thinking("plan"), b.text("a"), b.text("b"))
    recs = by_uuid(records(b))
    assert len(msg.uuids) == 3
    assert {recs[u]["message"]["id"] for u in msg.uuids} == {msg.message_id}
    assert [recs[u]["parentUuid"] for u in msg.uuids] == [prompt, *msg.uuids[:-1]]
    assert {recs[u]["requestId"] for u in msg.uuids} == {recs[msg.uuid]["requestId"]}
    assert recs[msg.uuids[0]]["message"]["content"][0]["signature"].startswith("E")
    assert Feature.SPLIT_ASSISTANT in b.features
    assert Feature.THINKING in b.features


def test_assistant_without_blocks_is_rejected() -> None:
    with pytest.raises(ValueError, match="content block"):
        TranscriptBuilder().assistant()


# ---------------------------------------------------------------------------- tools
@pytest.mark.parametrize("hooks", [False, True])
def test_parallel_tool_calls_have_the_real_fork_shape(hooks: bool) -> None:
    b = TranscriptBuilder(seed=4)
    b.user("look around")
    calls = b.parallel_tool_calls(
        [
            ("Read", {"file_path": "/a"}, "A"),
            ("Grep", {"pattern": "x"}, "B"),
            ToolSpec("Bash", {"command": "ls"}, "C"),
        ],
        lead=[b.text("Checking three things.")],
        hooks=hooks,
        order=[2, 0, 1],
    )
    recs = records(b)
    index = by_uuid(recs)
    frags = [index[c.assistant_uuid] for c in calls]
    assert len({f["message"]["id"] for f in frags}) == 1
    for earlier, later in itertools.pairwise(calls):
        parent = index[later.assistant_uuid]["parentUuid"]
        if hooks:  # through the PreToolUse progress of the earlier call
            assert index[parent]["type"] == "progress"
            assert index[parent]["parentUuid"] == earlier.assistant_uuid
        else:
            assert parent == earlier.assistant_uuid
    for call in calls:
        result = index[call.result_uuid]
        assert result["parentUuid"] == call.assistant_uuid == result["sourceToolAssistantUUID"]
        assert result["message"]["content"][0]["tool_use_id"] == call.tool_use_id
    written = [
        r["message"]["content"][0]["tool_use_id"] for r in recs if r["type"] == "user" and r is not recs[0]
    ]
    assert written == [calls[2].tool_use_id, calls[0].tool_use_id, calls[1].tool_use_id]
    assert b.cursor == calls[1].result_uuid
    assert Feature.PARALLEL_TOOLS in b.features


def test_every_tool_use_has_exactly_one_result() -> None:
    recs = records(small_session())
    uses = Counter(bl["id"] for bl in tool_blocks(recs, "tool_use"))
    results = Counter(bl["tool_use_id"] for bl in tool_blocks(recs, "tool_result"))
    assert uses == results
    assert set(uses.values()) == {1}
    assert all(
        bl["id"].startswith("toolu_01") and bl["caller"] == {"type": "direct"}
        for bl in tool_blocks(recs, "tool_use")
    )


def test_tool_errors_use_the_error_block_shape() -> None:
    b = TranscriptBuilder(seed=5)
    b.user("read it")
    call = b.tool_call(
        "Read", {"file_path": "/nope"}, "<tool_use_error>File does not exist.</tool_use_error>", is_error=True
    )
    result = by_uuid(records(b))[call.result_uuid]
    assert list(result["message"]["content"][0]) == ["type", "content", "is_error", "tool_use_id"]
    assert result["toolUseResult"] == "Error: File does not exist."
    assert Feature.TOOL_ERROR in b.features


# ---------------------------------------------------------------------------- structure
def test_compact_writes_a_new_root_with_logical_parent_and_summary_child() -> None:
    b = TranscriptBuilder(seed=6)
    b.user("long work")
    before = b.assistant(b.text("done")).uuid
    res = b.compact("1. The user asked for X.", pre_tokens=170_251)
    index = by_uuid(records(b))
    boundary, summary = index[res.boundary_uuid], index[res.summary_uuid]
    assert boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == before
    assert (boundary["type"], boundary["subtype"]) == ("system", "compact_boundary")
    assert boundary["compactMetadata"] == {"trigger": "auto", "preTokens": 170_251}
    assert list(boundary)[:2] == ["parentUuid", "logicalParentUuid"]
    assert summary["parentUuid"] == res.boundary_uuid
    assert summary["isCompactSummary"] is True
    assert summary["isVisibleInTranscriptOnly"] is True
    assert summary["message"]["content"].startswith("This session is being continued")
    assert b.cursor == res.summary_uuid


def test_snapshot_names_the_next_prompt_and_carries_no_uuid() -> None:
    b = TranscriptBuilder(seed=1)
    mid = b.file_history_snapshot()
    prompt = b.user("hi")
    snap = records(b)[0]
    assert mid == prompt == snap["messageId"] == snap["snapshot"]["messageId"]
    assert "uuid" not in snap
    assert "parentUuid" not in snap
    b.file_history_snapshot(update_of=prompt, tracked={"a.py": {"backupFileName": None, "version": 1}})
    update = records(b)[-1]
    assert update["isSnapshotUpdate"] is True
    assert update["snapshot"]["messageId"] == prompt


def test_last_prompt_in_both_styles_and_summary_records() -> None:
    b = TranscriptBuilder(seed=1)
    b.user("x" * 250)
    leaf = b.assistant(b.text("ok")).uuid
    b.last_prompt()
    b.last_prompt(with_leaf=False)
    b.last_prompt("custom", leaf=None)
    b.summary_record("Fix the parser", leaf)
    with_leaf, text_only, custom, summary = records(b)[-4:]
    assert list(with_leaf) == ["type", "lastPrompt", "leafUuid", "sessionId"]
    assert with_leaf["leafUuid"] == leaf
    assert with_leaf["lastPrompt"] == "x" * 200 + "…"
    assert list(text_only) == ["type", "lastPrompt", "sessionId"]
    assert custom["leafUuid"] is None
    assert custom["lastPrompt"] == "custom"
    assert summary == {"type": "summary", "summary": "Fix the parser", "leafUuid": leaf}
    assert {Feature.LAST_PROMPT_LEAF, Feature.LAST_PROMPT_TEXT, Feature.SUMMARY_RECORD} <= b.features


def test_rewind_forks_from_an_earlier_record() -> None:
    b = TranscriptBuilder(seed=1)
    first = b.user("write a parser")
    answer = b.assistant(b.text("here")).uuid
    b.user("no, in rust")
    b.rewind(answer)
    edited = b.user("no, in go")
    children = Counter(r["parentUuid"] for r in records(b))
    assert children[answer] == 2
    assert by_uuid(records(b))[edited]["parentUuid"] == answer
    assert first != edited
    assert Feature.REWIND in b.features
    with pytest.raises(KeyError):
        b.rewind("00000000-0000-4000-8000-000000000000")


def test_sidechain_context_marks_records_and_restores_the_main_cursor() -> None:
    b = TranscriptBuilder(seed=1)
    b.user("delegate")
    main = b.assistant(b.text("spawning")).uuid
    with b.sidechain():
        root = b.user("subtask", human=False)
        b.assistant(b.text("sub answer"))
    after = b.user("thanks")
    index = by_uuid(records(b))
    assert index[root]["parentUuid"] is None
    assert index[root]["isSidechain"] is True
    assert index[after]["parentUuid"] == main
    assert index[after]["isSidechain"] is False


def test_subagent_file_shape() -> None:
    b = TranscriptBuilder(
        "55604662-cf2a-4331-851a-ec234028f8ca",
        seed=9,
        agent_id="a2898e3",
        sidechain=True,
        root_parent="24f8a0dd-8c56-4549-9a04-06d6a7328ef8",
    )
    b.user("Explore the repo", human=False)
    b.tool_call("Glob", {"pattern": "**/*.ex"}, "a.ex")
    b.assistant(b.text("Report"))
    recs = records(b)
    assert all(r["isSidechain"] is True and r["agentId"] == "a2898e3" for r in recs)
    assert list(recs[0])[:9] == [*ENVELOPE, "agentId", "type"]
    assert recs[0]["parentUuid"] == "24f8a0dd-8c56-4549-9a04-06d6a7328ef8"
    assert {Feature.SUBAGENT_FILE, Feature.EXTERNAL_PARENT, Feature.SIDECHAIN} <= b.features


def test_system_records_use_per_subtype_key_order() -> None:
    b = TranscriptBuilder(seed=1)
    b.user("x")
    b.system("local_command", "<command-name>/model</command-name>")
    b.system("api_error")
    b.system(
        "stop_hook_summary",
        hookCount=1,
        hookInfos=[],
        hookErrors=[],
        preventedContinuation=False,
        stopReason="",
        hasOutput=True,
        toolUseID="t",
    )
    local, api, stop = records(b)[1:]
    assert list(local)[7:] == ["type", "subtype", "content", "level", "timestamp", "uuid", "isMeta"]
    assert list(api)[7:11] == ["type", "subtype", "level", "error"]
    assert api["level"] == "error"
    assert list(stop)[-4:] == ["level", "timestamp", "uuid", "toolUseID"]


# ---------------------------------------------------------------------------- output
def test_output_options_produce_the_exact_bytes() -> None:
    b = TranscriptBuilder(seed=1)
    b.user("a")
    b.raw(b"not json")
    b.raw(b"[1,2]")
    b.raw(b'{"type":"user","message":{"content":"\xff\xfe"}}')
    b.raw(b'{"type":"assistant","mess')
    lines = b.lines()
    assert lines[1:] == [
        b"not json",
        b"[1,2]",
        b'{"type":"user","message":{"content":"\xff\xfe"}}',
        b'{"type":"assistant","mess',
    ]
    assert b.to_bytes() == b"\n".join(lines) + b"\n"
    assert b.to_bytes(crlf=True) == b"\r\n".join(lines) + b"\r\n"
    assert b.to_bytes(bom=True) == b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n"
    assert b.to_bytes(final_newline=False) == b"\n".join(lines)
    assert b.to_bytes(crlf=True, bom=True, final_newline=False) == b"\xef\xbb\xbf" + b"\r\n".join(lines)
    assert b.byte_count == len(b.to_bytes())
    assert b.line_count == 5


def test_write_and_streaming_sink_give_the_same_bytes(tmp_path: Path) -> None:
    memory = small_session()
    sink = io.BytesIO()
    streamed = small_session(sink=sink)
    assert sink.getvalue() == memory.to_bytes() == memory.write(tmp_path / "s" / "x.jsonl").read_bytes()
    assert streamed.byte_count == len(sink.getvalue())
    with pytest.raises(RuntimeError):
        streamed.lines()


def test_public_surface_is_sorted_and_complete() -> None:
    assert testing.__all__ == sorted(testing.__all__)
    assert all(hasattr(testing, name) for name in testing.__all__)
