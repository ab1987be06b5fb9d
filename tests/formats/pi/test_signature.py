"""pi's signature: every pi session (corpus, pi-mono, pi-written) is identified as pi's from its
lines, positively, pi's session directories follow its own environment variable, and discovery
takes OpenClaw's archives of reset and deleted sessions by their names."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.formats.detect import detect_format
from pipeline.formats.pi.signature import is_openclaw_archive, is_pi_record, session_roots
from pipeline.formats.registry import session_file_names
from pipeline.read.discover import discover
from pipeline.vocabulary import SourceFormat
from tests.support.pi_files import pi_session_files


@pytest.mark.parametrize("path", pi_session_files(), ids=lambda p: p.name[-48:])
def test_every_real_pi_session_is_detected_as_pi(path: Path) -> None:
    assert detect_format(path.read_bytes(), path) is SourceFormat.PI


@pytest.mark.parametrize(
    ("record", "claimed"),
    [
        ({"type": "session", "version": 3, "id": "u", "timestamp": "t", "cwd": "/w"}, True),
        ({"type": "session", "id": "u", "timestamp": "t", "cwd": "/w"}, True),  # the oldest layout
        ({"type": "message", "timestamp": "t", "message": {"role": "user", "content": "hi"}}, True),
        ({"type": "compaction", "id": "a1b2c3d4", "parentId": None, "summary": "s"}, True),
        ({"type": "context_edit", "id": "a1b2c3d4", "parentId": "b", "targetId": "c"}, True),
        ({"type": "session"}, False),  # a bare type is no one's own record
        (
            {"type": "user", "uuid": "u", "parentUuid": None, "message": {"role": "user"}},
            False,
        ),  # Claude Code
        ({"type": "message", "role": "user", "content": []}, False),  # a Codex 0.2x bare item
    ],
)
def test_a_record_is_pis_only_by_pis_own_shape(record: dict[str, object], claimed: bool) -> None:
    assert is_pi_record(record) is claimed
    assert (detect_format(orjson.dumps(record) + b"\n") is SourceFormat.PI) is claimed


def test_pis_session_directory_follows_its_agent_dir_variable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert session_roots({}, home) == (home / ".pi" / "agent" / "sessions", home / ".openclaw" / "agents")
    moved = session_roots({"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}, home)
    assert moved[0] == tmp_path / "agent" / "sessions"


@pytest.mark.parametrize(
    ("name", "archive"),
    [
        ("849098c8.jsonl.reset.2026-06-15T10-00-00.000Z", True),  # OpenClaw's /reset
        ("849098c8.jsonl.deleted.1781000000000", True),  # its soft delete (Date.now())
        ("849098c8.jsonl", False),  # the live session: discovered by its suffix already
        ("849098c8.jsonl.reset.", False),  # no timestamp
        (".849098c8.jsonl.reset.1", False),  # hidden files stay unread
        ("849098c8.jsonl.bak-1", False),  # a repair's backup is no archive of OpenClaw's
        ("849098c8.json.deleted.1", False),
    ],
)
def test_openclaws_archives_are_named_by_the_live_name_a_kind_and_a_timestamp(
    name: str, archive: bool
) -> None:
    assert is_openclaw_archive(name) is archive


def test_discovery_takes_openclaws_archives_beside_the_live_sessions(tmp_path: Path) -> None:
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    names = (
        "a.jsonl",
        "a.jsonl.reset.2026-06-15T10-00-00.000Z",
        "b.jsonl.deleted.1781000000000",
        "sessions.json",
    )
    for name in (*names, ".a.jsonl.reset.1", "a.jsonl.bak-1"):
        (sessions / name).write_text("{}\n")
    assert [s.label for s in discover([tmp_path])] == [
        f"agents/main/sessions/{n}" for n in ("a.jsonl", "sessions.json")
    ]
    found = [s.label.rsplit("/", 1)[1] for s in discover([tmp_path], session_file_names())]
    assert found == sorted(names)
