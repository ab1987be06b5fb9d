"""Other agents' session files, built from their public formats, laid out as each agent keeps them.

`AGENT_FILES` holds at least one session file of every agent this tool recognizes besides Claude
Code and Codex (Gemini CLI JSONL, legacy JSON and checkpoints, Qwen Code, pi, OpenClaw, OpenCode,
Copilot CLI, Cline, Aider); `write_agent_files(root)` writes those of the agents not processed, and
returns each file's path relative to `root` with the format it must be detected as. The shapes follow each agent's own writer (gemini-cli's
`chatRecordingService`, qwen-code's `ChatRecord`, pi's session entries, OpenCode's storage,
Copilot CLI's `events.jsonl`, Cline's task files, Aider's history files); the texts are ours.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from pipeline.formats.registry import PROCESSED
from pipeline.vocabulary import SourceFormat

__all__ = ["AGENT_FILES", "write_agent_files"]

_TS = "2026-04-20T10:00:0{}.000Z"
_SESSION = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f"


def _lines(records: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def _document(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)  # both agents write it indented


def gemini_chat() -> bytes:
    """A Gemini CLI chat since April 2026: metadata, messages re-appended by id, updates."""
    return _lines(
        [
            {
                "sessionId": _SESSION,
                "projectHash": "9a8b7c",
                "startTime": _TS.format(0),
                "lastUpdated": _TS.format(0),
                "kind": "main",
            },
            {"id": "m1", "timestamp": _TS.format(1), "type": "user", "content": [{"text": "list the files"}]},
            {
                "id": "m2",
                "timestamp": _TS.format(2),
                "type": "gemini",
                "content": "",
                "toolCalls": [
                    {
                        "id": "c1",
                        "name": "list_directory",
                        "args": {"path": "."},
                        "status": "success",
                        "timestamp": _TS.format(2),
                    }
                ],
                "model": "gemini-2.5-pro",
                "tokens": {"input": 900, "output": 20, "cached": 0, "total": 920},
            },
            {"id": "m3", "timestamp": _TS.format(3), "type": "info", "content": "Request cancelled."},
            {"$set": {"lastUpdated": _TS.format(4), "summary": "listing files"}},
            {"$rewindTo": "m3"},
        ]
    )


def gemini_subagent() -> bytes:
    """A Gemini CLI subagent's chat (`chats/<parent>/<id>.jsonl`), opening with an error record."""
    return _lines(
        [
            {"id": "s1", "timestamp": _TS.format(1), "type": "error", "content": "quota exceeded"},
            {"sessionId": "sub-1", "projectHash": "9a8b7c", "kind": "subagent", "directories": ["/w"]},
        ]
    )


def gemini_legacy() -> bytes:
    """A Gemini CLI chat before April 2026: one indented document."""
    return _document(
        {
            "sessionId": _SESSION,
            "projectHash": "9a8b7c",
            "startTime": _TS.format(0),
            "lastUpdated": _TS.format(3),
            "messages": [
                {"id": "m1", "timestamp": _TS.format(1), "type": "user", "content": "hello"},
                {"id": "m2", "timestamp": _TS.format(2), "type": "gemini", "content": "hi"},
            ],
        }
    )


def gemini_checkpoint(*, bare: bool) -> bytes:
    """`/chat save`: the API history (`{"history": [...]}`; a bare list in old versions)."""
    history = [
        {"role": "user", "parts": [{"text": "remember this"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a.py"}}}]},
    ]
    return _document(history if bare else {"history": history, "authType": "oauth-personal"})


def _qwen(uuid: str, parent: str | None, kind: str, **fields: object) -> dict[str, Any]:
    base = {"uuid": uuid, "parentUuid": parent, "sessionId": _SESSION, "timestamp": _TS.format(1)}
    return {**base, "type": kind, "cwd": "/home/me/app", "version": "0.0.14", "gitBranch": "main", **fields}


def qwen_chat() -> bytes:
    """A Qwen Code chat: uuid-linked records holding Gemini-style `message.parts`, a system first."""
    call = {"functionCall": {"id": "call_1", "name": "read_file", "args": {"absolute_path": "/w/a.py"}}}
    answer = {"functionResponse": {"id": "call_1", "name": "read_file", "response": {"output": "x = 1"}}}
    return _lines(
        [
            _qwen(
                "u0",
                None,
                "system",
                subtype="ui_telemetry",
                systemPayload={"uiEvent": {"event.name": "start"}},
            ),
            _qwen("u1", "u0", "user", message={"role": "user", "parts": [{"text": "read a.py"}]}),
            _qwen(
                "u2", "u1", "assistant", message={"role": "model", "parts": [call]}, model="qwen3-coder-plus"
            ),
            _qwen(
                "u3",
                "u2",
                "tool_result",
                message={"role": "user", "parts": [answer]},
                toolCallResult={"callId": "call_1", "status": "success"},
            ),
            _qwen(
                "u4",
                "u3",
                "system",
                subtype="chat_compression",
                systemPayload={"info": {}, "compressedHistory": []},
            ),
        ]
    )


def _pi_entry(entry_id: str, parent: str | None, kind: str, **fields: object) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": _TS.format(1), **fields}


def pi_session() -> bytes:
    """A pi session (version 3): the header, then entries linked by `id`/`parentId`."""
    return _lines(
        [
            {
                "type": "session",
                "version": 3,
                "id": _SESSION,
                "timestamp": _TS.format(0),
                "cwd": "/home/me/app",
            },
            _pi_entry("a1b2c3d4", None, "model_change", provider="anthropic", modelId="claude-opus-4-5"),
            _pi_entry(
                "b2c3d4e5",
                "a1b2c3d4",
                "message",
                message={"role": "user", "content": [{"type": "text", "text": "hi"}]},
            ),
            _pi_entry(
                "c3d4e5f6",
                "b2c3d4e5",
                "message",
                message={"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            ),
            _pi_entry(
                "d4e5f6a7",
                "c3d4e5f6",
                "compaction",
                summary="greeted",
                firstKeptEntryId="c3d4e5f6",
                tokensBefore=900,
            ),
        ]
    )


def pi_session_v1() -> bytes:
    """A pi session of the older layout: a header without `version`, entries without ids."""
    return _lines(
        [
            {
                "type": "session",
                "id": _SESSION,
                "timestamp": _TS.format(0),
                "cwd": "/w",
                "provider": "anthropic",
                "modelId": "m",
            },
            {"type": "thinking_level_change", "timestamp": _TS.format(1), "thinkingLevel": "high"},
            {
                "type": "message",
                "timestamp": _TS.format(2),
                "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            },
        ]
    )


def opencode_files() -> dict[str, bytes]:
    """OpenCode's storage: one session, one of its messages, one part, its todo list."""
    time = {"created": 1776679200000, "updated": 1776679260000}
    return {
        "session/4f3e2d1c/ses_5a4b3c2d1e0fAbCdEfGhIjKl.json": _document(
            {
                "id": "ses_5a4b3c2d1e0fAbCdEfGhIjKl",
                "version": "1.0.20",
                "projectID": "4f3e2d1c",
                "directory": "/w",
                "title": "fix",
                "time": time,
            }
        ),
        "message/ses_5a4b3c2d1e0fAbCdEfGhIjKl/msg_6b5c4d3e2f1aBcDeFgHiJkLm.json": _document(
            {
                "id": "msg_6b5c4d3e2f1aBcDeFgHiJkLm",
                "sessionID": "ses_5a4b3c2d1e0fAbCdEfGhIjKl",
                "role": "user",
                "time": {"created": 1776679200000},
            }
        ),
        "part/msg_6b5c4d3e2f1aBcDeFgHiJkLm/prt_7c6d5e4f3a2bCdEfGhIjKlMn.json": _document(
            {
                "id": "prt_7c6d5e4f3a2bCdEfGhIjKlMn",
                "sessionID": "ses_5a4b3c2d1e0fAbCdEfGhIjKl",
                "messageID": "msg_6b5c4d3e2f1aBcDeFgHiJkLm",
                "type": "text",
                "text": "fix the bug",
            }
        ),
        "todo/ses_5a4b3c2d1e0fAbCdEfGhIjKl.json": _document(
            [{"id": "1", "content": "fix", "status": "pending", "priority": "high"}]
        ),
    }


def copilot_events() -> bytes:
    """A Copilot CLI session's events: `{type, data, id, timestamp, parentId}` lines."""
    start = {
        "sessionId": _SESSION,
        "version": 1,
        "producer": "copilot-agent",
        "copilotVersion": "0.0.400",
        "startTime": _TS.format(0),
    }
    return _lines(
        [
            {
                "type": "session.start",
                "data": start,
                "id": "e1",
                "timestamp": _TS.format(0),
                "parentId": None,
            },
            {
                "type": "user.message",
                "data": {"content": "list files", "attachments": []},
                "id": "e2",
                "timestamp": _TS.format(1),
                "parentId": "e1",
            },
            {
                "type": "assistant.message",
                "data": {"messageId": "a1", "content": "Here.", "toolRequests": []},
                "id": "e3",
                "timestamp": _TS.format(2),
                "parentId": "e2",
            },
        ]
    )


def cline_task() -> dict[str, bytes]:
    """A Cline task directory: the API history (named), the panel's messages, the metadata."""
    api = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nfix the bug\n</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}], "ts": 1776679201000},
    ]
    ui = [
        {"ts": 1776679200000, "type": "say", "say": "task", "text": "fix the bug"},
        {"ts": 1776679201000, "type": "ask", "ask": "tool", "text": '{"tool":"readFile","path":"a.py"}'},
    ]
    return {
        "api_conversation_history.json": orjson.dumps(api),
        "ui_messages.json": orjson.dumps(ui),
        "task_metadata.json": orjson.dumps({"files_in_context": [], "model_usage": []}),
    }


AIDER_CHAT = b"\n# aider chat started at 2026-04-20 10:00:00\n\n> /add a.py\n\n#### fix the bug\n\nDone.\n"
AIDER_INPUT = b"\n# 2026-04-20 10:00:05.123456\n+fix the bug\n"


def _all() -> dict[str, tuple[bytes, SourceFormat]]:
    g, q, p = SourceFormat.GEMINI_CLI, SourceFormat.QWEN_CODE, SourceFormat.PI
    chats = "gemini/tmp/9a8b7c/chats"
    files = {
        f"{chats}/session-2026-04-20T10-00-7f1c2d3e.jsonl": (gemini_chat(), g),
        f"{chats}/{_SESSION}/sub-1.jsonl": (gemini_subagent(), g),
        f"{chats}/session-2026-03-01T09-00-7f1c2d3e.json": (gemini_legacy(), g),
        "gemini/tmp/9a8b7c/checkpoint-before-refactor.json": (gemini_checkpoint(bare=False), g),
        "gemini/tmp/9a8b7c/checkpoint-old.json": (gemini_checkpoint(bare=True), g),
        f"qwen/projects/-home-me-app/chats/{_SESSION}.jsonl": (qwen_chat(), q),
        f"pi/agent/sessions/--home-me-app--/2026-04-20T10-00-00-000Z_{_SESSION}.jsonl": (pi_session(), p),
        "pi/agent/sessions/--w--/2025-12-17T19-39-21-535Z_old.jsonl": (pi_session_v1(), p),
        f"openclaw/agents/main/sessions/{_SESSION}.jsonl": (pi_session(), p),
        f"copilot/session-state/{_SESSION}/events.jsonl": (copilot_events(), SourceFormat.COPILOT_CLI),
        f"copilot/session-state/{_SESSION}.jsonl": (copilot_events(), SourceFormat.COPILOT_CLI),
        "aider-repo/.aider.chat.history.md": (AIDER_CHAT, SourceFormat.AIDER),
        "aider-repo/.aider.input.history": (AIDER_INPUT, SourceFormat.AIDER),
    }
    files.update({f"opencode/storage/{k}": (v, SourceFormat.OPENCODE) for k, v in opencode_files().items()})
    files.update({f"cline/tasks/1776679200000/{k}": (v, SourceFormat.CLINE) for k, v in cline_task().items()})
    return files


AGENT_FILES: dict[str, tuple[bytes, SourceFormat]] = _all()
"""Every built file: its path under a root, its bytes, and the agent it must be detected as."""


def write_agent_files(root: Path) -> dict[str, SourceFormat]:
    """Write the files of every agent recognized but not processed under `root` (a processed
    agent's files are read, not reported unsupported); each relative path with its format."""
    processed = {signature.format for signature in PROCESSED}
    unprocessed = {k: v for k, v in AGENT_FILES.items() if v[1] not in processed}
    for relative, (data, _) in unprocessed.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return {relative: fmt for relative, (_, fmt) in unprocessed.items()}
