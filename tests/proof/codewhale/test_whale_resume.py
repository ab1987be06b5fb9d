"""The CodeWhale judge: the verdict over what CodeWhale sent for an original and its candidate
(checkpoint, then a verbatim suffix, every call answered, nothing excluded), the texts it must
never send, and, when `scripts/install-codewhale` built it, the real CodeWhale resuming both."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.formats.codewhale.whale_analysis import analyze_session
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.codewhale.whale_client import CodewhaleNotInstalled, find_codewhale, require_codewhale
from pipeline.proof.codewhale.whale_excluded import session_exclusions
from pipeline.proof.codewhale.whale_resume import judge, prove_codewhale_resume, resolved, sent_history
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet
from tests.support.codewhale_sessions import SessionBuilder, call, result, text

LIMITS = LineLimits(max_line_bytes=1 << 24, max_json_depth=200)
SUMMARY = "Steps 0-1 built the tree."


def _wire(turns: int) -> list[dict[str, Any]]:
    """A history as Chat Completions carries it: prompt, a call, its result, an answer per turn."""
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        messages += [
            {"role": "user", "content": f"step {turn}"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{turn}", "type": "function"}]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": f"out {turn}"},
            {"role": "assistant", "content": f"done {turn}"},
        ]
    return messages


def _checkpoint(summary: str = SUMMARY) -> dict[str, Any]:
    return {"role": "user", "content": f"Codewhale handoff note.\n\n{summary}"}


def test_a_checkpoint_then_a_verbatim_suffix_holds() -> None:
    original = _wire(3)
    verdict = judge(original, [_checkpoint(), *original[4:]], (), (SUMMARY,))
    assert verdict.ok, verdict.differences
    assert (verdict.original.messages, verdict.compacted.messages) == (12, 9)


@pytest.mark.parametrize(
    ("compacted", "difference"),
    [
        (lambda o: [_checkpoint("another summary"), *o[4:]], "does not carry the summary"),
        (lambda o: [_checkpoint(), *o[4:-1], {"role": "assistant", "content": "edited"}], "verbatim suffix"),
        (lambda o: [_checkpoint(), *o[6:]], "not paired"),
        (
            lambda o: [{"role": "assistant", "content": SUMMARY}, *o[4:]],
            "does not start with a user checkpoint",
        ),
        (
            lambda o: [_checkpoint(), {"role": "user", "content": "secret of a rewound branch"}, *o[4:]],
            "excluded",
        ),
    ],
)
def test_what_breaks_the_contract_is_a_content_free_difference(compacted, difference) -> None:  # type: ignore[no-untyped-def]
    original = _wire(3)
    excluded = (ExcludedText("secret of a rewound branch", 3, "excluded_branch"),)
    verdict = judge(original, compacted(original), excluded, (SUMMARY,))
    assert not verdict.ok
    assert any(difference in d for d in verdict.differences), verdict.differences
    assert all("secret" not in d for d in verdict.differences)  # reports never hold excluded text


def test_codewhales_back_references_are_resolved_so_a_summarized_first_copy_is_no_difference() -> None:
    """The original sends its second turn's unchanged `<turn_meta>` and repeated result as
    references to the first turn's; the candidate, whose first turn is summarized, sends them in
    full: resolved, the candidate's kept messages are the original's suffix."""
    meta, output = "<turn_meta>\nCurrent local date: 2026-12-07\n</turn_meta>", "row\n" * 400
    sha = hashlib.sha256(output.encode()).hexdigest()
    reference = (
        f'<TOOL_RESULT_REF sha="{sha}" original_message="Message #2" chars="{len(output)}">\n'
        "source: full content appears in Message #2 earlier in this request\n</TOOL_RESULT_REF>"
    )
    original = _wire(2)
    original[0]["content"] = f"step 0\n{meta}"
    original[4]["content"] = "step 1\n<turn_meta_unchanged />"
    original[2]["content"], original[6]["content"] = output, reference
    candidate = [_checkpoint(), {"role": "user", "content": f"step 1\n{meta}"}, *original[5:]]
    candidate[3] = {**candidate[3], "content": output}
    assert not judge(original, candidate, (), (SUMMARY,)).ok
    assert judge(resolved(original), resolved(candidate), (), (SUMMARY,)).ok
    assert resolved(original)[6]["content"] == output and resolved(original)[4]["content"].endswith(meta)


def test_the_resumed_history_is_the_request_that_carries_the_prompt_without_it() -> None:
    prompt = {"role": "user", "content": "Reply ok\n<turn_meta>\nx\n</turn_meta>"}
    warmup = [{"role": "system", "content": "s"}, {"role": "user", "content": "OK?"}]
    turn = [{"role": "system", "content": "s"}, *_wire(1), prompt]
    assert sent_history([warmup, turn], "Reply ok") == _wire(1)
    assert sent_history([warmup], "Reply ok") is None


def test_a_rewound_branchs_text_the_candidate_holds_is_an_excluded_text() -> None:
    session = SessionBuilder()
    root = session.add(text("user", "first question"))
    session.add(text("assistant", "an abandoned answer about the secret plan"))
    session.add(text("assistant", "the kept answer"), parent=root)
    analysis = analyze_session(session.bytes(), LIMITS)
    sets = analysis.sweep_sets()
    assert sets[PartitionSet.EXCLUDED_BRANCH] == {2}
    leaking = json.dumps({"messages": [{"content": [{"text": "an abandoned answer about the secret plan"}]}]})
    found = session_exclusions(analysis, sets, leaking.encode(), min_chars=10)
    assert [(e.line, e.partition_set) for e in found] == [(2, "excluded_branch")]
    assert session_exclusions(analysis, sets, session.bytes().replace(b"abandoned", b"x"), 10) == ()


def test_a_named_path_without_codewhale_is_reported_not_installed(tmp_path: Path) -> None:
    with pytest.raises(CodewhaleNotInstalled, match="scripts/install-codewhale"):
        require_codewhale(tmp_path / "nowhere")


@pytest.mark.skipif(find_codewhale() is None, reason="CodeWhale not built (scripts/install-codewhale)")
def test_the_real_codewhale_resumes_a_candidate_as_its_checkpoint_then_the_original_suffix(
    tmp_path: Path,
) -> None:
    session = SessionBuilder()
    for turn in range(3):
        session.extend(
            [
                text("user", f"step {turn}: " + "explain the build " * 30),
                call(f"call_{turn}", say=f"running step {turn}"),
                result(f"call_{turn}", "output line\n" * 100),
                text("assistant", f"step {turn} done"),
            ]
        )
    analysis = analyze_session(session.bytes(), LIMITS)
    plan = analysis.plan_tail(room=400)
    assert plan is not None
    original, candidate = tmp_path / "original.json", tmp_path / "candidate.json"
    original.write_bytes(session.bytes())
    candidate.write_bytes(analysis.compose(plan, SUMMARY))
    executable = find_codewhale()
    assert executable is not None
    verdict = prove_codewhale_resume(
        original, candidate, executable=executable, timeout=120, excluded=(), summaries=(SUMMARY,)
    )
    assert verdict.ok, verdict.differences
