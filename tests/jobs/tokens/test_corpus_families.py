"""Acceptance on the shared corpus: every billed session names its family; `auto` tracks the bills."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from pipeline.estimate.real import MissingExtra, check_available
from pipeline.jobs.tokens.job import tokens_session
from pipeline.read.discover import discover
from pipeline.testing import as_json
from pipeline.testing.settings import tokens_options

MAX_MEDIAN_SLOPE_ERROR = 0.05  # issue 27's target for `auto` on the shared corpus


@pytest.fixture(scope="module")
def corpus_tokens(corpus_files: Path) -> list[dict[str, Any]]:
    try:
        check_available("claude-legacy")
    except MissingExtra:
        pytest.skip("the tokenizers extra is not installed")
    options = tokens_options(estimators="claude-legacy,auto")
    reports = []
    for session in discover([corpus_files]):
        report = as_json(tokens_session(session.path, session.label, options))
        # Claude Code sessions only: a Codex rollout's billed truth is its own (test_context_tokens).
        if report.get("tokens") and report["session"].get("format") == "claude-code":
            reports.append(report["tokens"])
    return reports


def test_every_session_with_billed_turns_names_its_family(corpus_tokens: list[dict[str, Any]]) -> None:
    billed = [tokens for tokens in corpus_tokens if tokens["usage"]["turns"]]
    assert len(billed) >= 40
    assert all(tokens["models"]["family"] for tokens in billed)


def test_auto_tracks_the_bills_better_than_the_raw_chain(corpus_tokens: list[dict[str, Any]]) -> None:
    fits = [tokens["usage"]["fits"] for tokens in corpus_tokens if "auto" in tokens["usage"]["fits"]]
    auto = statistics.median(abs(fit["auto"]["slope"] - 1) for fit in fits)
    legacy = statistics.median(
        abs(fit["claude-legacy"]["slope"] - 1) for fit in fits if "claude-legacy" in fit
    )
    assert auto <= MAX_MEDIAN_SLOPE_ERROR
    assert auto < legacy
