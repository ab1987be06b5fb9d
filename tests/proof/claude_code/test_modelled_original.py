"""An original Claude Code cannot send whole is judged by its modelled context, the candidate for real.

Claude Code gives up on a session whose context is over the API's request limit (hundreds of
413s, minutes), so the gate resumes only the candidate and compares it with what
`pipeline.proof.claude_code.expected` says Claude Code would rebuild from the original (held to the real
client by the golden tests). Here the real Claude Code resumes a real candidate of a builder
session; the modelled original is that session's chain. A model that disagrees with the
candidate's tail must refuse, so the judgement is not a formality.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from msgspec import UnsetType

from pipeline.proof.claude_code.expected import modelled_context
from pipeline.proof.claude_code.model import DEFAULT_MODEL, resumed_model
from pipeline.proof.claude_code.prove import ProofOptions, prove_resume
from pipeline.proof.claude_code.sent_context import ContextBlock, SentContext
from pipeline.report.resume_check import resume_check_section
from pipeline.testing.invoke import candidate_of, compaction
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import default_settings
from pipeline.vocabulary import Verdict
from tests.support.resolved import resolve

pytestmark = pytest.mark.claude_code


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A builder session and the candidate `compress` writes for it (gate off)."""
    root = tmp_path_factory.mktemp("modelled")
    source = root / "in" / "session.jsonl"
    source.parent.mkdir()
    build_session(source, turns=12, seed=5)
    out = root / "out"
    args = ("compress", str(source), "--out", str(out), "--min-tokens", "0", "--no-verify-resume", "--quiet")
    done = compaction(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    return source, candidate_of(out, source)


def modelled(source: Path) -> SentContext:
    resolved = resolve(source.read_bytes())
    keep_thinking = resumed_model(source) != DEFAULT_MODEL
    return modelled_context(resolved.data, resolved.index, resolved.chain, keep_thinking=keep_thinking)


def options(claude_code: Path) -> ProofOptions:
    verify = default_settings().verify
    return ProofOptions(str(claude_code), verify.resume_timeout_seconds)


def test_a_candidate_matches_the_modelled_original(claude_code: Path, session: tuple[Path, Path]) -> None:
    source, candidate = session
    verdict = prove_resume(source, candidate, options(claude_code), excluded=(), modelled=modelled(source))
    assert verdict.ok, verdict.differences
    assert verdict.original is not None and verdict.original.modelled
    assert verdict.kept_blocks > 0 and verdict.summary_blocks == 1
    assert any("modelled" in note for note in verdict.notes), verdict.notes
    sent = resume_check_section(verdict, 0.0).sent
    assert not isinstance(sent, UnsetType) and sent.original is None, (
        "a modelled part's size is no original's"
    )


def test_a_model_the_candidate_does_not_end_refuses(claude_code: Path, session: tuple[Path, Path]) -> None:
    source, candidate = session
    model = modelled(source)
    last = model.blocks[-1]
    changed = (*model.blocks[:-1], ContextBlock(last.role, last.kind, last.text + " (changed)", last.id))
    verdict = prove_resume(
        source, candidate, options(claude_code), excluded=(), modelled=replace(model, blocks=changed)
    )
    assert verdict.verdict is Verdict.MISMATCH
    assert any("text differs" in difference for difference in verdict.differences), verdict.differences
