"""The Gemini CLI fixtures (written by the real client) and variants of them built line by line.

Variants add what the scripted runs cannot reach non-interactively (a `/rewind`, a message
re-appended with new content, damaged lines), so the reader and the real client can be held to
each other over them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import orjson
import pytest

from pipeline.proof.gemini_cli.gemini_run import find_gemini_cli
from tests.conftest import CORPUS

__all__ = [
    "FIXTURES",
    "LEGACY_CORPUS",
    "fixture",
    "gemini_cli",
    "lines_of",
    "long_task",
    "rewound_and_reappended",
    "with_lines",
    "with_open_calls",
    "with_pairing_defects",
    "write_gemini_chats",
]

FIXTURES: Final = Path(__file__).resolve().parent.parent / "fixtures" / "gemini_cli"
# The one public Gemini CLI session found (a legacy JSON document, Apache-2.0), read in place.
LEGACY_CORPUS: Final = (
    CORPUS
    / "files"
    / "codemie-ai__codemie-code__tests_integration_metrics_fixtures_gemini_session-2025-12-01T21-45-5b959dae.json"
)


def fixture(name: str) -> Path:
    """A fixture file by name (`tools.jsonl`, ...)."""
    return FIXTURES / name


def write_gemini_chats(folder: Path) -> list[Path]:
    """Copies of the recorded chat files in `folder` (a project's `chats/`), as Gemini CLI names them."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(FIXTURES.glob("*.jsonl")):
        written.append(folder / f"session-2026-12-07T07-00-{source.stem}.jsonl")
        written[-1].write_bytes(source.read_bytes())
    return written


def gemini_cli() -> Path:
    """The pinned Gemini CLI's script, or a skip saying how to install it."""
    found = find_gemini_cli()
    if found is None:
        pytest.skip("Gemini CLI 0.61.0 is not installed: run scripts/install-gemini-cli")
    return found


def lines_of(path: Path) -> list[dict[str, Any]]:
    """The records of a fixture, in order."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def with_lines(path: Path, *extra: object) -> bytes:
    """A fixture's bytes with `extra` records (or raw bytes) appended."""
    tail = b"".join(e if isinstance(e, bytes) else orjson.dumps(e) + b"\n" for e in extra)
    return path.read_bytes() + tail


def rewound_and_reappended(path: Path) -> bytes:
    """`path` with its first prompt re-appended with new text (it keeps its place) and a rewind to
    its last user prompt (dropping it and the reply after it), as Gemini CLI appends them."""
    records = lines_of(path)
    prompts = [r for r in records if r.get("type") == "user" and isinstance(r.get("content"), list)]
    typed = [r for r in prompts if "text" in r["content"][0] and not r["content"][0]["text"].startswith("<")]
    first = {**typed[0], "content": [{"text": "the first prompt, edited"}]}
    return with_lines(path, first, {"$rewindTo": typed[-1]["id"]})


def with_pairing_defects(path: Path) -> bytes:
    """A short session in `path`'s header holding the defects a killed run or a hand edit leaves:
    a call still `executing` that nothing answers, then a response whose call no model turn made."""
    header = lines_of(path)[0]
    call = {"id": "c1", "name": "read_file", "args": {"file_path": "notes.txt"}, "status": "executing"}
    stray = {"functionResponse": {"id": "c9", "name": "read_file", "response": {"output": "stray"}}}
    records = [
        header,
        {"id": "m1", "timestamp": "t", "type": "user", "content": [{"text": "read the notes"}]},
        {"id": "m2", "timestamp": "t", "type": "gemini", "content": "", "toolCalls": [call]},
        {"id": "m3", "timestamp": "t", "type": "user", "content": [{"text": "and then?"}]},
        {"id": "m4", "timestamp": "t", "type": "gemini", "content": "Fine."},
        {"id": "m5", "timestamp": "t", "type": "user", "content": [stray]},
        {"id": "m6", "timestamp": "t", "type": "gemini", "content": "Done."},
    ]
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def with_open_calls(path: Path) -> bytes:
    """The killed run's session (`killed.jsonl`) as a writer that records each call when it starts
    would have left it: the last reply re-appended with its two calls, the read done and answered,
    the command still `executing` with no result. Gemini CLI 0.61 records a reply's calls only once
    all of them have completed, so its own killed run lost both instead."""
    records = lines_of(path)
    reply = next(r for r in reversed(records) if r.get("type") == "gemini")
    read_id, shell_id = (
        "read_file__read_file_1796700000000_0",
        "run_shell_command__run_shell_command_1796700000000_1",
    )
    output = {"output": "hello from the notes\n"}
    answer = {"functionResponse": {"id": read_id, "name": "read_file", "response": output}}
    calls = [
        {
            "id": read_id,
            "name": "read_file",
            "args": {"file_path": "notes.txt"},
            "result": [answer],
            "status": "success",
        },
        {"id": shell_id, "name": "run_shell_command", "args": {"command": "sleep 30"}, "status": "executing"},
    ]
    return with_lines(path, {**reply, "toolCalls": calls})


def without_call_ids(path: Path) -> bytes:
    """A short session in `path`'s header whose tool call and its results carry no ids (as older
    Gemini CLI versions wrote them), so Gemini CLI makes up stable ones on resume; its first prompt
    is re-appended edited (the new text in the old place) and its last rewound."""
    header = lines_of(path)[0]
    response = {"functionResponse": {"name": "read_file", "response": {"output": "the notes"}}}
    call = {
        "name": "read_file",
        "args": {"file_path": "notes.txt"},
        "status": "success",
        "result": [response],
    }
    records = [
        header,
        {"id": "m1", "timestamp": "t", "type": "user", "content": [{"text": "read the notes"}]},
        {"id": "m2", "timestamp": "t", "type": "gemini", "content": "", "toolCalls": [call]},
        {"id": "m3", "timestamp": "t", "type": "user", "content": [response]},
        {"id": "m4", "timestamp": "t", "type": "gemini", "content": "Read."},
        {"id": "m5", "timestamp": "t", "type": "user", "content": [{"text": "and then?"}]},
        {"id": "m1", "timestamp": "t", "type": "user", "content": [{"text": "read the notes, edited"}]},
        {"$rewindTo": "m5"},
    ]
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def _read_records(task: int, read: int, output_bytes: int) -> list[dict[str, Any]]:
    """One `read_file` call as Gemini CLI 0.61 records it (see `long.jsonl`): the reply, the reply
    re-appended with its completed call, the response as a user record."""
    stamp, call_id = f"2026-12-07T08:{task % 60:02d}:{read:02d}.000Z", f"read_file__read_file_{task}_{read}"
    output = f"task {task} source {read}: " + "def parse(line):\n    return line.split(',')\n" * (
        output_bytes // 44
    )
    response = {"functionResponse": {"id": call_id, "name": "read_file", "response": {"output": output}}}
    reply = {"id": f"g{task}-{read}", "timestamp": stamp, "type": "gemini", "content": "", "thoughts": []}
    call = {"id": call_id, "name": "read_file", "args": {"file_path": f"src{task}_{read}.txt"}}
    done = {**reply, "toolCalls": [{**call, "result": [response], "status": "success"}]}
    result = {"id": f"r{task}-{read}", "timestamp": stamp, "type": "user", "content": [response]}
    return [reply, {"$set": {"lastUpdated": stamp}}, done, result]


def long_task(tasks: int, reads: int, output_bytes: int) -> bytes:
    """A session in `long.jsonl`'s header grown as the real client grows one, larger: `tasks`
    prompts, each reading `reads` files of about `output_bytes` and answering."""
    records: list[dict[str, Any]] = [lines_of(fixture("long.jsonl"))[0]]
    for task in range(tasks):
        stamp = f"2026-12-07T08:{task % 60:02d}:00.000Z"
        records.append(
            {"id": f"u{task}", "timestamp": stamp, "type": "user", "content": [{"text": f"task {task}"}]}
        )
        for read in range(reads):
            records.extend(_read_records(task, read, output_bytes))
        records.append(
            {"id": f"a{task}", "timestamp": stamp, "type": "gemini", "content": f"Task {task} is read."}
        )
    return b"".join(orjson.dumps(record) + b"\n" for record in records)
