"""The chain `validate` selects is, message for message, the context Claude Code sends on resume.

`claude_code_resume.jsonl` holds what Claude Code 2.1.332 sent after resuming each corpus file
(texts cut to 120 characters, its reminders and the probe left out). For every file it resumed,
the `auto` chain turned into messages the way Claude Code turns rows into messages
(`pipeline.proof.claude_code.expected`) must give exactly that context: the same messages, blocks, texts and
tool ids, its closing additions included. Thinking blocks are sent only when the session is
resumed with the model that wrote them, which the golden run's pinned model decides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.formats.detect import detect_format
from pipeline.proof.claude_code.expected import TOOL_LOADED, expected_context
from pipeline.proof.claude_code.model import DEFAULT_MODEL, resumed_model
from pipeline.proof.claude_code.reminders import REMINDER_PREFIX
from pipeline.proof.claude_code.sent_context import TEXT_PREFIX_CHARS, ContextBlock
from pipeline.testing.settings import LIMITS
from tests.conftest import GOLDEN as GOLDEN_DIR

GOLDEN_RECORDED_ON = "2026-11-30"
GOLDEN = GOLDEN_DIR / "claude_code_resume.jsonl"
# Synthetic viewer fixtures that reuse uuids (`[trimmed for fixture]`, `edge_011` twice): the seed
# refuses a file whose uuid index is ambiguous, so no chain is selected for them.
REFUSED_DUPLICATE_UUIDS = ("claude_small", "edge_cases")


def golden_entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text().splitlines()] if GOLDEN.is_file() else []


def resumed_files() -> list[str]:
    return [e["file"] for e in golden_entries() if e["resumed"]]


def comparable(block: ContextBlock) -> ContextBlock:
    """A block as the golden file records it, with the one part Claude Code decides for itself.

    A tool result that loads deferred tools lists the tools Claude Code itself offers, which the
    transcript does not fix: such results compare by id alone.
    """
    text = block.text[:TEXT_PREFIX_CHARS]
    if block.kind == "tool_result" and text.startswith('[{"type": "tool_reference"'):
        text = "(deferred tools)"
    return ContextBlock(block.role, block.kind, text, block.id)


def our_context(path: Path) -> tuple[ContextBlock, ...] | None:
    data = path.read_bytes()
    index = build_index(data, detect_format(data), LIMITS)
    topology = resolve_topology(index, build_graph(index), AUTO)
    if topology.refused:
        return None
    keep_thinking = resumed_model(path, on=GOLDEN_RECORDED_ON) != DEFAULT_MODEL
    return expected_context(data, index, topology.chain, keep_thinking=keep_thinking)


@pytest.mark.parametrize("name", resumed_files())
def test_the_chain_is_the_context_claude_code_resumes(name: str, corpus_files: Path) -> None:
    entry = next(e for e in golden_entries() if e["file"] == name)
    ours = our_context(corpus_files / name)
    if any(marker in name for marker in REFUSED_DUPLICATE_UUIDS):
        assert ours is None, "a file with reused uuids must be refused"
        return
    assert ours is not None, "auto refused a file Claude Code resumes"
    sent = [
        comparable(ContextBlock.from_golden(block))
        for block in entry["context"]
        if not block["text_prefix"].startswith(REMINDER_PREFIX)
    ]
    mine = [comparable(block) for block in ours]
    first = next(
        (i for i, (a, b) in enumerate(zip(mine, sent, strict=False)) if a != b), min(len(mine), len(sent))
    )
    assert mine == sent, (
        f"{len(mine)} blocks selected, {len(sent)} sent; first difference at {first}: "
        f"{mine[first : first + 1]} vs {sent[first : first + 1]}"
    )


def test_every_resumed_corpus_file_is_compared() -> None:
    assert len(resumed_files()) >= 40
    assert any(TOOL_LOADED in json.dumps(e["context"]) for e in golden_entries())


@pytest.mark.parametrize("which", ["subagents_agent-a2898e3", "subagents_agent-acompact-e1f845"])
def test_sidechain_only_files_are_their_own_sessions(corpus_files: Path, which: str) -> None:
    """Claude Code refuses to resume them by session id; by path they load as their own chain."""
    path = next(corpus_files.glob(f"*{which}*.jsonl"))
    data = path.read_bytes()
    index = build_index(data, detect_format(data), LIMITS)
    topology = resolve_topology(index, build_graph(index), AUTO)
    assert topology.chain and all(index.entry(line).sidechain for line in topology.chain)
