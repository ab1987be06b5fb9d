"""The golden: the context the reader rebuilds equals what the real Gemini CLI 0.61.0 sends when
it resumes the same file (its environment part and the probe set aside)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.chat_lines import decode_chat
from pipeline.formats.gemini_cli.conversation import load_conversation, load_legacy
from pipeline.formats.gemini_cli.estimate import estimate_parts
from pipeline.formats.gemini_cli.history import coalesce, rebuild_history
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.gemini_cli.resume import GeminiResumeResult, resume_gemini
from pipeline.vocabulary import FindingCode
from tests.support.gemini_files import (
    LEGACY_CORPUS,
    fixture,
    gemini_cli,
    rewound_and_reappended,
    with_pairing_defects,
    without_call_ids,
)

LIMITS = LineLimits(64 << 20, 256)
GOLDEN = [
    "tools.jsonl",
    "compressed.jsonl",
    "subagent.jsonl",
    "rewound.jsonl",
    "long.jsonl",
    "killed.jsonl",
    "unidentified.jsonl",
]
WORKERS = 2  # the golden resumes run two at a time: a resume is one Node process, mostly on one core


def _rebuilt(data: bytes) -> list[dict[str, object]]:
    return coalesce(rebuild_history(load_conversation(decode_chat(data, LIMITS)).messages))


def _variant(tmp_path: Path, name: str) -> Path:
    built = {"unidentified.jsonl": without_call_ids}
    if name in built:
        path = tmp_path / name
        path.write_bytes(built[name](fixture("tools.jsonl")))
        return path
    return fixture(name)


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[GeminiResumeResult]]]:
    """Each golden session resumed once, all started at once (each test takes its own file's
    result; the token test reads long.jsonl's)."""
    script, folder = gemini_cli(), tmp_path_factory.mktemp("golden")
    with ThreadPoolExecutor(WORKERS) as pool:
        yield {
            name: pool.submit(resume_gemini, _variant(folder, name), script=script, timeout=120)
            for name in GOLDEN
        }


@pytest.mark.parametrize("name", GOLDEN)
def test_rebuilt_context_equals_what_gemini_cli_sends(
    name: str, resumed: dict[str, Future[GeminiResumeResult]], tmp_path: Path
) -> None:
    path = _variant(tmp_path, name)
    result = resumed[name].result()
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.resumed
    assert [dict(c) for c in result.context] == _rebuilt(path.read_bytes())


def test_a_rewind_drops_the_rewound_prompt_and_an_edit_keeps_its_place(tmp_path: Path) -> None:
    original = _rebuilt(fixture("tools.jsonl").read_bytes())
    edited = _rebuilt(rewound_and_reappended(fixture("tools.jsonl")))
    assert edited[0]["parts"] == [{"text": "the first prompt, edited"}]
    assert edited[1:] == original[1:-2]  # the last prompt and its reply are rewound


def test_a_legacy_json_session_from_the_corpus_is_read_as_gemini_cli_reads_it() -> None:
    script = gemini_cli()
    if not LEGACY_CORPUS.is_file():
        pytest.skip(f"the shared corpus is not here: {LEGACY_CORPUS}")
    conversation = load_legacy(LEGACY_CORPUS.read_bytes())
    assert conversation is not None
    result = resume_gemini(LEGACY_CORPUS, script=script, timeout=120)
    assert result.resumed, result.stderr[-2000:]
    assert [dict(c) for c in result.context] == coalesce(rebuild_history(conversation.messages))


def test_gemini_cli_sends_a_sessions_pairing_defects_as_they_are(tmp_path: Path) -> None:
    """Gemini CLI 0.61 repairs no pairing on resume (its history hardener runs only under its
    experimental context manager): the unanswered call and the stray response are sent, so the
    reader's findings name what the real API would be given."""
    path = tmp_path / "session-2026-12-07T10-00-unpaired.jsonl"
    path.write_bytes(with_pairing_defects(fixture("tools.jsonl")))
    found = {(f.code, f.ids) for f in analyze_chat(path.read_bytes(), LIMITS).findings}
    assert found == {
        (FindingCode.TOOL_USE_UNANSWERED, ("c1",)),
        (FindingCode.TURN_UNFINISHED, ("c1",)),
        (FindingCode.TOOL_RESULT_WITHOUT_USE, ("c9",)),
    }
    result = resume_gemini(path, script=gemini_cli(), timeout=120)
    assert result.resumed, result.stderr[-2000:]
    assert [dict(c) for c in result.context] == _rebuilt(path.read_bytes())
    sent = [part for content in result.context for part in content["parts"]]
    assert {"functionResponse": {"id": "c9", "name": "read_file", "response": {"output": "stray"}}} in sent
    assert not any(part.get("functionResponse", {}).get("id") == "c1" for part in sent)


def test_the_context_tokens_are_gemini_clis_estimate_of_what_it_sent(
    resumed: dict[str, Future[GeminiResumeResult]],
) -> None:
    """The report's context tokens are counted on the history as Gemini CLI sends it (wire form,
    thoughts stripped): its own estimate of the contents it sent, less at most the rounding down
    the reader does once per item where Gemini CLI does it once."""
    path = fixture("long.jsonl")
    analysis = analyze_chat(path.read_bytes(), LIMITS)
    result = resumed["long.jsonl"].result()
    assert result.resumed, result.stderr[-2000:]
    sent = estimate_parts([part for content in result.context for part in content["parts"]])
    assert 0 <= sent - analysis.context_tokens() < len(analysis.sent())
    assert analysis.context_tokens() > 0 and len(analysis.sent()) > 10
