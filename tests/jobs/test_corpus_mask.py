"""Acceptance of `--strategy mask` on the real corpus: every masked candidate passes the resume gate
(the real Claude Code 2.1.332 against the capture server), and resumed, it sends every human text
of its source's active chain. Only Claude Code files are masked: the corpus's other formats are
reported unsupported and left out here by their detected format."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.core.topology.select import AUTO
from pipeline.jobs.front import Analysis, open_session
from pipeline.proof.claude_code.client import resume
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.settings import LIMITS, default_settings
from pipeline.vocabulary import SourceFormat
from tests.jobs.test_compress_strategy import human_texts

TIMEOUT = default_settings().verify.resume_timeout_seconds
RESUMES_AT_ONCE = 2  # Claude Code resumes of the candidates, side by side on two cores


def _chain_human_texts(path: Path) -> list[str]:
    """What a human typed on the chain Claude Code resumes (after its own last compact boundary)."""
    analysis = open_session(path, path.name, AUTO, command="compress", per_code=1, limits=LIMITS)
    assert isinstance(analysis, Analysis)
    data, index, chain = analysis.source.data, analysis.index, analysis.topology.chain
    boundaries = [at for at, line in enumerate(chain) if index.entry(line).compact_boundary]
    start = boundaries[-1] if boundaries else 0
    records: list[dict[str, Any]] = [orjson.loads(index.raw_line(data, line)) for line in chain[start:]]
    return [text for text in human_texts(records) if text.strip()]


def _normalized(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.claude_code
def test_masked_corpus_candidates_resume_with_every_human_text_of_the_source_chain(
    corpus_files: Path, claude_code: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = compaction(
        "compress", str(corpus_files), "--out", str(out), "--strategy", "mask", "--jobs", "2",
        "--verify-resume", "--claude", str(claude_code), "--quiet",
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]  # two corpus files are refused on their topology
    every = reports(out)
    compressed = [r for r in every if r["status"] == "compressed"]
    assert all(r["session"]["format"] == SourceFormat.CLAUDE_CODE for r in compressed)
    assert len(compressed) >= 15, len(compressed)
    refused = {r["session"]["label"]: r["reasons"] for r in every if r["status"] == "refused"}
    assert all(reasons[0].startswith("topology-") for reasons in refused.values()), refused
    # Every candidate resumed again, two at a time: each resume mostly waits on its own Claude Code.
    with ThreadPoolExecutor(RESUMES_AT_ONCE) as pool:
        results = list(
            pool.map(
                lambda report: resume(
                    out / report["output"]["path"], executable=claude_code, timeout=TIMEOUT
                ),
                compressed,
            )
        )
    checked = 0
    for report, result in zip(compressed, results, strict=True):
        label = report["session"]["label"]
        check = report["resume_check"]
        # summary blocks only where the source holds Claude Code's own compaction
        assert check["verdict"] == "match" and check["summary_blocks"] <= 1, (label, check["differences"])
        assert report["mask"]["cleared_outputs"] > 0 and "summary" not in report
        assert result.resumed, (label, result.stderr[-2000:])
        sent = _normalized(" ".join(result.context.strings))
        texts = _chain_human_texts(corpus_files / label)
        missing = [len(text) for text in texts if _normalized(text) not in sent]
        assert not missing, (label, missing)
        checked += len(texts)
    assert checked >= 100, checked
