"""The compress gate of the seam's formats on what a client does not resume: a subagent's session
is `skipped-subagent` and a checkpoint `skipped-not-resumed` (a nightly run over ~/.gemini/tmp
exits 0), while a session of a resumable kind that the reader finds broken is still refused,
with its error's code."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

from pipeline.testing.invoke import compaction, reports
from tests.support.gemini_files import FIXTURES as GEMINI_FIXTURES
from tests.support.qwen_records import chain, jsonl, turn

SUBAGENT: Final = "chats/4d074cff-2339-48fc-b146-d29901be3085/subagent-bbbd1f57.jsonl"


def test_what_its_client_never_resumes_is_skipped_and_a_broken_session_refused(tmp_path: Path) -> None:
    project = tmp_path / ".gemini" / "tmp" / "0123abcd"
    (project / SUBAGENT).parent.mkdir(parents=True)
    shutil.copyfile(GEMINI_FIXTURES / "subagent-subagent.jsonl", project / SUBAGENT)
    shutil.copyfile(GEMINI_FIXTURES / "checkpoint-fixture-tag.json", project / "checkpoint-fixture-tag.json")
    args = ("--out", str(tmp_path / "out"), "--quiet", "--no-verify-resume", "--min-tokens", "0")
    done = compaction("compress", str(project), *args)
    assert done.returncode == 0, done.stderr
    found = {Path(r["session"]["label"]).name: (r["status"], r["reasons"]) for r in reports(tmp_path / "out")}
    assert found == {
        "subagent-bbbd1f57.jsonl": ("skipped-subagent", ["subagent-transcript-is-not-resumed"]),
        "checkpoint-fixture-tag.json": ("skipped-not-resumed", ["not-resumed-by-its-client"]),
    }
    other = [{**record, "sessionId": "another"} for record in chain(*turn(5, "c", "d"))]
    broken = tmp_path / "qwen" / "two-sessions.jsonl"  # Qwen Code refuses a file of two session ids
    broken.parent.mkdir()
    broken.write_bytes(jsonl([*chain(*turn(1, "a", "b")), *other]))
    done = compaction("compress", str(broken.parent), "--out", str(tmp_path / "q"), *args[2:])
    assert done.returncode == 1
    (report,) = reports(tmp_path / "q")
    assert (report["status"], report["reasons"]) == ("refused", ["topology", "cross-session-parent"])
    assert not any(path.suffix == ".jsonl" for path in (tmp_path / "q").rglob("*"))  # nothing written
