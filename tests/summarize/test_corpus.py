"""On every real Claude Code transcript: a valid checkpoint, every prompt verbatim, stable re-summaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.summarize import (
    APPENDIX_MARKER,
    EvidenceKind,
    validate_checkpoint,
    write_summary,
)
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS, summary_options
from pipeline.vocabulary import SourceFormat

CLAUDE_CODE = (
    "marot__spotter__*",
    "iansherr__*",
    "codemie-ai__*claude*",
    "jnarowski__*claude*",
    "jimmc414__*",
)
ROOMY = summary_options(char_budget=1_000_000)


def claude_files(corpus: Path) -> list[Path]:
    found = {path for pattern in CLAUDE_CODE for path in corpus.glob(pattern) if path.suffix == ".jsonl"}
    return sorted(found)


def test_every_corpus_transcript_gets_a_valid_checkpoint_with_every_prompt(corpus_files: Path) -> None:
    files = claude_files(corpus_files)
    assert files
    for path in files:
        data = path.read_bytes()
        index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
        items = extract_evidence(data, index, range(1, len(index) + 1))
        result = write_summary(items, ROOMY)
        assert validate_checkpoint(result.text) == (), path.name
        assert result.text == write_summary(items, ROOMY).text, path.name
        assert all(1 <= line <= len(index) for line in result.cited_lines), path.name
        for item in items:
            if item.kind is EvidenceKind.HUMAN_PROMPT and len(item.text) <= ROOMY.max_prompt_chars:
                assert "\n  ".join(item.text.split("\n")) in result.text, (path.name, item.line)


def test_a_corpus_summary_summarized_again_keeps_one_checkpoint_and_one_appendix(corpus_files: Path) -> None:
    for path in claude_files(corpus_files)[:6]:
        data = path.read_bytes()
        index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
        first = write_summary(extract_evidence(data, index, range(1, len(index) + 1)), ROOMY).text
        b = TranscriptBuilder(seed=1)
        b.compact(first)
        b.user("and now?")
        again = b.to_bytes()
        again_index = build_index(again, SourceFormat.CLAUDE_CODE, LIMITS)
        items = extract_evidence(again, again_index, range(1, len(again_index) + 1))
        second = write_summary(items, ROOMY).text
        assert second.count(APPENDIX_MARKER) == 1, path.name
        assert validate_checkpoint(second) == (), path.name


@pytest.mark.parametrize("verbatim", [False, True])
def test_native_compactions_in_the_corpus_are_folded_or_embedded(corpus_files: Path, verbatim: bool) -> None:
    path = next(p for p in claude_files(corpus_files) if b'"isCompactSummary":true' in p.read_bytes())
    data = path.read_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    items = extract_evidence(data, index, range(1, len(index) + 1))
    result = write_summary(items, summary_options(char_budget=1_000_000, preserve_prior_verbatim=verbatim))
    priors = [item.line for item in items if item.kind is EvidenceKind.PRIOR_SUMMARY]
    assert result.prior_summaries == tuple(priors)
    assert set(priors) <= set(result.cited_lines)
