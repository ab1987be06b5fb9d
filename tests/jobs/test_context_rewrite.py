"""The rewrite job on real files: the gate (a format without the rewrite, a subagent's session, a
file the client does not resume by design), the check that refuses a rewrite its client would
not send the same for, and a rewrite that checks out, still unwritten (the caller publishes)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

from pipeline.agents.codex import CODEX
from pipeline.agents.gemini_cli import GEMINI_CLI
from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteEdit, RewriteKind, SentEdit
from pipeline.jobs.context_rewrite import (
    NOT_RESUMED,
    REREAD_DIFFERS,
    RewriteOptions,
    check_rewrite,
    no_such_rewrite,
    rewrite_session,
)
from pipeline.read.load import read_source
from pipeline.report.rewrite_documents import RewriteStatus
from pipeline.vocabulary import FindingCode, ResumeGate
from tests.conftest import CODEX_FILES
from tests.proof.qwen_code.test_resume_run import VARIANTS
from tests.support.gemini_files import FIXTURES as GEMINI_FIXTURES
from tests.support.gemini_files import with_open_calls

LIMITS: Final = LineLimits(max_line_bytes=64 << 20, max_json_depth=256)
ROLLOUT: Final = (
    "EdofEngland__code_butler__.codex_sessions_2025_11_24_rollout-2025-11-24T13-38-49-"
    "019ab760-3d78-7fd0-9ea1-4c39e889b87b.jsonl"
)


def _options(kind: RewriteKind) -> RewriteOptions:
    return RewriteOptions(kind, LIMITS, ResumeGate.OFF, {}, 60.0)


def _copy(source: Path, to: Path) -> Path:
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, to)
    return to


def test_a_vacuum_checks_out_and_says_what_it_dropped_without_writing(tmp_path: Path) -> None:
    path = _copy(GEMINI_FIXTURES / "tools.jsonl", tmp_path / "chats" / "tools.jsonl")
    before = path.read_bytes()
    done = rewrite_session(
        GEMINI_CLI, "tools", read_source(path), _options(RewriteKind.VACUUM), mode="report", prove=True
    )
    report = done.report
    assert report.status is RewriteStatus.PLANNED and report.reasons == []
    assert done.data is not None and len(done.data) == report.bytes_after < report.bytes_before == len(before)
    assert report.findings_after == report.findings_before and report.sent_items
    assert [item.digest for item in GEMINI_CLI.read(done.data, None, LIMITS).sent()] == [
        item.digest for item in GEMINI_CLI.read(before, path, LIMITS).sent()
    ]
    assert path.read_bytes() == before  # the job writes nothing


def test_what_has_no_such_rewrite_or_is_never_resumed_is_skipped_saying_why(tmp_path: Path) -> None:
    subagent = _copy(GEMINI_FIXTURES / "subagent-subagent.jsonl", tmp_path / "chats" / "parent" / "s.jsonl")
    checkpoint = _copy(GEMINI_FIXTURES / "checkpoint-fixture-tag.json", tmp_path / "checkpoint-tag.json")
    rollout = _copy(CODEX_FILES / ROLLOUT, tmp_path / "rollout.jsonl")
    vacuum = _options(RewriteKind.VACUUM)
    cases = {
        subagent: (GEMINI_CLI, RewriteStatus.SKIPPED_SUBAGENT, "subagent-transcript-is-not-resumed"),
        checkpoint: (GEMINI_CLI, RewriteStatus.SKIPPED, NOT_RESUMED),
        rollout: (CODEX, RewriteStatus.SKIPPED, no_such_rewrite(CODEX.format, RewriteKind.VACUUM)),
    }
    for path, (agent, status, reason) in cases.items():
        done = rewrite_session(agent, path.name, read_source(path), vacuum, mode="in-place", prove=True)
        assert (done.report.status, done.report.reasons, done.data) == (status, [reason], None), path.name
    repair = rewrite_session(CODEX, "r", read_source(rollout), _options(RewriteKind.REPAIR), mode="report", prove=False)  # fmt: skip
    assert repair.report.reasons == [no_such_rewrite(CODEX.format, RewriteKind.REPAIR)]


def test_a_rewrite_its_client_would_send_otherwise_is_refused_by_the_check() -> None:
    damaged = VARIANTS["interrupted-call"]
    session = QWEN_CODE.read(damaged, None, LIMITS)
    good = session.rewrite(RewriteKind.REPAIR, LIMITS)
    assert isinstance(good, Rewrite)
    after = QWEN_CODE.read(good.data, None, LIMITS)
    assert check_rewrite(session, after, good) == []
    lines = good.data.splitlines(keepends=True)
    dropped = Rewrite(RewriteKind.REPAIR, b"".join(lines[:5] + lines[6:]), good.edits)  # a message lost
    problems = check_rewrite(session, QWEN_CODE.read(dropped.data, None, LIMITS), dropped)
    assert REREAD_DIFFERS in problems
    unrepaired = Rewrite(
        RewriteKind.REPAIR, damaged + b"\n", (RewriteEdit(1, FindingCode.TOOL_USE_UNANSWERED, "x"),)
    )
    problems = check_rewrite(session, QWEN_CODE.read(unrepaired.data, None, LIMITS), unrepaired)
    assert "finding-remains-tool-use-unanswered" in problems and "finding-new-blank-line" in problems


def test_a_repair_that_changes_what_is_sent_is_held_to_exactly_the_items_it_declares(tmp_path: Path) -> None:
    """Gemini CLI sends an open call as it is, so its repair changes what is sent: the check takes
    the original's items with the declared ones put in, and nothing else."""
    path = tmp_path / "chats" / "session-killed.jsonl"
    path.parent.mkdir()
    path.write_bytes(with_open_calls(GEMINI_FIXTURES / "killed.jsonl"))
    done = rewrite_session(GEMINI_CLI, "k", read_source(path), _options(RewriteKind.REPAIR), mode="report", prove=True)  # fmt: skip
    report = done.report
    assert (report.status, report.reasons, report.findings_after) == (RewriteStatus.PLANNED, [], {})
    assert {(e.line, e.code, e.change) for e in report.edits} == {
        (7, "tool-use-unanswered", "cancelled-response-added"),
        (7, "turn-unfinished", "call-status-cancelled"),
    }
    session = GEMINI_CLI.read(path.read_bytes(), path, LIMITS)
    good = session.rewrite(RewriteKind.REPAIR, LIMITS)
    assert isinstance(good, Rewrite) and good.data == done.data and len(good.sent) == 1
    after = GEMINI_CLI.read(good.data, None, LIMITS)
    assert check_rewrite(session, after, good) == []
    (declared,) = good.sent
    undeclared = Rewrite(good.kind, good.data, good.edits)
    inserted = Rewrite(good.kind, good.data, good.edits, (SentEdit(declared.position, declared.item),))
    other = Rewrite(good.kind, good.data, good.edits, (SentEdit(declared.position, b"{}", replaces=True),))
    for wrong in (undeclared, inserted, other):
        assert check_rewrite(session, after, wrong) == [REREAD_DIFFERS]
