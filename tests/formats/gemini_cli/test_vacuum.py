"""Vacuum drops what Gemini CLI no longer loads and nothing it does: the file shrinks, the
re-read conversation and history are identical, and the real client sends the same context."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.history import coalesce
from pipeline.formats.gemini_cli.vacuum import VacuumOutcome, VacuumRefusal, vacuum
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.gemini_cli.resume import resume_gemini
from tests.support.gemini_files import LEGACY_CORPUS, fixture, gemini_cli, rewound_and_reappended, with_lines

LIMITS = LineLimits(64 << 20, 256)


@pytest.mark.parametrize("name", ["tools.jsonl", "compressed.jsonl", "rewound.jsonl", "long.jsonl"])
def test_vacuum_shrinks_a_real_session_and_its_history_reads_the_same(name: str) -> None:
    data = fixture(name).read_bytes()
    result = vacuum(data, LIMITS)
    assert result.outcome is VacuumOutcome.VACUUMED
    assert result.bytes_before == len(data) and result.bytes_after == len(result.data) < len(data) * 2 // 3
    before, after = analyze_chat(data, LIMITS), analyze_chat(result.data, LIMITS)
    assert after.sent() == before.sent() and after.findings == ()
    assert vacuum(result.data, LIMITS).outcome is VacuumOutcome.UNCHANGED  # already as small as it gets


def test_vacuum_drops_rewound_and_superseded_versions() -> None:
    data = rewound_and_reappended(fixture("tools.jsonl"))
    result = vacuum(data, LIMITS)
    texts = result.data.decode()
    assert "the first prompt, edited" in texts and "look at the project and say hello" not in texts
    assert "thanks, that is all" not in texts and "$rewindTo" not in texts
    rewound = vacuum(fixture("rewound.jsonl").read_bytes(), LIMITS).data.decode()
    assert "The second answer." not in rewound and "The answer after the rewind." in rewound


@pytest.mark.parametrize(
    ("extra", "refusal"),
    [
        (b'{"id": "x", "type": "user", "content": [\n', VacuumRefusal.DAMAGED_LINES),
        ({"note": 1}, VacuumRefusal.UNKNOWN_RECORDS),
    ],
)
def test_vacuum_never_drops_a_line_it_cannot_account_for(extra: object, refusal: VacuumRefusal) -> None:
    data = with_lines(fixture("tools.jsonl"), extra)
    result = vacuum(data, LIMITS)
    assert (result.outcome, result.refusal, result.data) == (VacuumOutcome.REFUSED, refusal, data)


def test_vacuum_leaves_a_legacy_document_and_refuses_what_is_no_session() -> None:
    assert (
        vacuum(fixture("checkpoint-fixture-tag.json").read_bytes(), LIMITS).outcome is VacuumOutcome.UNCHANGED
    )
    if LEGACY_CORPUS.is_file():
        assert vacuum(LEGACY_CORPUS.read_bytes(), LIMITS).outcome is VacuumOutcome.UNCHANGED
    assert vacuum(orjson.dumps({"$set": {"a": 1}}) + b"\n", LIMITS).refusal is VacuumRefusal.NOT_A_SESSION


def test_the_real_client_sends_the_same_context_for_a_vacuumed_file(tmp_path: Path) -> None:
    """Against the original's rebuilt context, which the golden holds equal to what it sends."""
    script = gemini_cli()
    vacuumed = tmp_path / "tools.jsonl"
    vacuumed.write_bytes(vacuum(fixture("tools.jsonl").read_bytes(), LIMITS).data)
    again = resume_gemini(vacuumed, script=script, timeout=120)
    original = analyze_chat(fixture("tools.jsonl").read_bytes(), LIMITS)
    assert again.resumed
    assert [dict(c) for c in again.context] == coalesce(original.turns)
