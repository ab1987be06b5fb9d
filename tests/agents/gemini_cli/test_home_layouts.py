"""Where Gemini CLI 0.61 keeps sessions, as a run without paths finds them: a home relocated by
`GEMINI_CLI_HOME`, project folders named by the slug of `.gemini/projects.json` and (not migrated
yet) by the project path's hash, the seatbelt sandbox's `.cache/.gemini/tmp`, a subagent's chat
under its parent's folder, beside the other files Gemini CLI keeps in a project's folder."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Final

from pipeline.formats.gemini_cli.signature import session_roots
from pipeline.testing.invoke import compaction, reports
from tests.support.gemini_files import fixture

PARENT: Final = "4d074cff-2339-48fc-b146-d29901be3085"
HASHED: Final = hashlib.sha256(b"/home/u/old-app").hexdigest()  # the folder before the slugs
CHATS: Final = {  # where each recorded fixture is put, under the relocated home
    "tools.jsonl": ".gemini/tmp/my-app/chats/session-2026-12-07T06-35-aaaa0001.jsonl",
    "subagent-subagent.jsonl": f".gemini/tmp/my-app/chats/{PARENT}/bbbd1f57.jsonl",
    "checkpoint-fixture-tag.json": ".gemini/tmp/my-app/checkpoint-fixture-tag.json",
    "long.jsonl": f".gemini/tmp/{HASHED}/chats/session-2026-11-01T09-00-cccc0003.jsonl",
    "rewound.jsonl": ".cache/.gemini/tmp/my-app/chats/session-2026-12-07T08-00-dddd0004.jsonl",
}
RESTORE_CHECKPOINT: Final = {  # what `/restore` reads back: the UI's history, not a session
    "history": [{"type": "user", "text": "write the notes", "id": 1}],
    "clientHistory": [{"role": "user", "parts": [{"text": "write the notes"}]}],
    "toolCall": {"name": "write_file", "args": {"file_path": "/home/u/my-app/notes.txt"}},
    "commitHash": "0123456789abcdef0123456789abcdef01234567",
    "messageId": "p-1",
}
OTHER_FILES: Final = {  # the rest of what Gemini CLI keeps in a project's folder
    ".gemini/projects.json": json.dumps({"projects": {"/home/u/my-app": "my-app"}}),
    ".gemini/tmp/my-app/.project_root": "/home/u/my-app",
    ".gemini/tmp/my-app/logs.json": json.dumps(
        [{"sessionId": PARENT, "messageId": 0, "type": "user", "message": "hi", "timestamp": "t"}]
    ),
    ".gemini/tmp/my-app/shell_history": "ls\n",
    ".gemini/tmp/my-app/checkpoints/2026-12-07T10-00-00_000Z-notes.txt-write_file.json": json.dumps(
        RESTORE_CHECKPOINT
    ),
    ".gemini/tmp/my-app/tool-outputs/read_file_abc.txt": "a masked tool output\n",
    f".gemini/tmp/my-app/{PARENT}/plans/plan.md": "# plan\n",
}
NOT_SESSIONS: Final = ("logs.json", "2026-12-07T10-00-00_000Z-notes.txt-write_file.json")


def _relocated_home(base: Path) -> Path:
    for name, place in CHATS.items():
        (base / place).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fixture(name), base / place)
    for place, text in OTHER_FILES.items():
        (base / place).parent.mkdir(parents=True, exist_ok=True)
        (base / place).write_text(text)
    return base


def test_the_sandbox_folder_is_a_root_only_where_gemini_cli_made_one(tmp_path: Path) -> None:
    assert session_roots({}, tmp_path) == (tmp_path / ".gemini" / "tmp",)
    (tmp_path / ".cache" / ".gemini" / "tmp").mkdir(parents=True)
    assert session_roots({}, tmp_path) == (
        tmp_path / ".gemini" / "tmp",
        tmp_path / ".cache" / ".gemini" / "tmp",
    )


def test_a_run_without_paths_validates_every_chat_of_a_relocated_home(tmp_path: Path) -> None:
    """Each chat and the checkpoint read as Gemini CLI's (the subagent's as a subagent), the prompt
    log and a `/restore` checkpoint nobody's session, the text files not taken; exit 0."""
    home = _relocated_home(tmp_path / "relocated")
    (tmp_path / "home").mkdir()
    nowhere = str(tmp_path / "none")
    env = {"HOME": str(tmp_path / "home"), "GEMINI_CLI_HOME": str(home)}
    env |= {name: nowhere for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "QWEN_HOME")}
    env |= {"CODEWHALE_HOME": nowhere}
    done = compaction("validate", "--report-dir", str(tmp_path / "r"), "--quiet", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    found = {Path(r["session"]["label"]).name: r for r in reports(tmp_path / "r")}
    chats = {Path(place).name for place in CHATS.values()}
    assert set(found) == chats | set(NOT_SESSIONS)
    assert {(found[name]["status"], found[name]["session"]["format"]) for name in chats} == {
        ("valid", "gemini-cli")
    }
    assert found["bbbd1f57.jsonl"]["session"]["kind"] == "subagent"
    assert {found[name]["status"] for name in NOT_SESSIONS} == {"not-a-transcript"}
