"""The active chain ends exactly where Claude Code's own resumed context ends (golden file).

`claude_code_resume.jsonl` holds what Claude Code 2.1.332 sent after resuming each corpus file.
The chain chosen by the `auto` policy must carry the same tool calls and results in the same
order, and its last message must be the context's last stored message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.formats.detect import detect_format
from pipeline.graph import build_graph
from pipeline.index import build_index
from pipeline.pairing import api_messages
from pipeline.topology import TopologyOptions, resolve_topology

# Blocks Claude Code adds on resume, not stored in the transcript.
SYNTHETIC_TEXTS = ("No response requested.",)
SYNTHETIC_RESULT = "[Tool call interrupted"


def golden(golden_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (golden_dir / "claude_code_resume.jsonl").read_text().splitlines()]


def chain_blocks(data: bytes, path: Path) -> tuple[list[tuple[str, str, str | None]], str]:
    """(role, kind, tool id) of every tool block of the auto chain's API messages, and its last text."""
    index = build_index(data, detect_format(data))
    graph = build_graph(index)
    topology = resolve_topology(index, graph, TopologyOptions())
    assert not topology.refused, path.name
    blocks: list[tuple[str, str, str | None]] = []
    for message in api_messages(index, topology.chain):
        blocks += [(message.role, "tool_use", tool) for tool in message.uses]
        blocks += [(message.role, "tool_result", tool) for tool in message.results]
    last_text = ""
    for line in topology.chain:
        record = orjson.loads(index.raw_line(data, line))
        if record.get("type") == "system" and record.get("subtype") == "local_command":
            last_text = record.get("content") or last_text  # local commands reach the model as user text
        elif record.get("type") in ("user", "assistant") and isinstance(record.get("message"), dict):
            content = record["message"].get("content")
            texts = (
                [content]
                if isinstance(content, str)
                else [
                    b.get("text", "")
                    for b in content or []
                    if isinstance(b, dict) and b.get("type") == "text"
                ]
            )
            last_text = next((t for t in reversed(texts) if t.strip()), last_text)
    return blocks, last_text


def test_auto_chain_matches_claude_codes_resumed_context(corpus_files: Path, golden_dir: Path) -> None:
    compared = 0
    for entry in golden(golden_dir):
        if not entry["resumed"] or "claude_small" in entry["file"] or "edge_cases" in entry["file"]:
            continue  # the two synthetic fixtures with reused uuids are refused (see test_corpus_acceptance)
        path = corpus_files / entry["file"]
        blocks, last_text = chain_blocks(path.read_bytes(), path)
        context = [
            m
            for m in entry["context"]
            if not (m["kind"] == "text" and m["text_prefix"] in SYNTHETIC_TEXTS)
            and not (m["kind"] == "tool_result" and SYNTHETIC_RESULT in (m["text_prefix"] or ""))
        ]
        expected = [
            (m["role"], m["kind"], m["id"]) for m in context if m["kind"] in ("tool_use", "tool_result")
        ]
        # Claude Code drops a call whose results are nowhere (seed: an unanswered trailing call).
        answered = {tool for _, kind, tool in blocks if kind == "tool_result"}
        dropped = {tool for _, kind, tool in blocks if kind == "tool_use" and tool not in answered}
        assert [b for b in blocks if b[2] not in dropped] == [b for b in expected if b[2] not in dropped], (
            entry["file"]
        )
        last = next(m for m in reversed(context) if m["kind"] == "text")
        assert last_text.strip().startswith(last["text_prefix"].strip()[:60]), entry["file"]
        compared += 1
    assert compared >= 38


@pytest.mark.parametrize("which", ["subagents_agent-a2898e3", "subagents_agent-acompact-e1f845"])
def test_sidechain_only_files_are_their_own_sessions(corpus_files: Path, which: str) -> None:
    """Claude Code refuses to resume them by session id; by path they load as their own chain."""
    path = next(corpus_files.glob(f"*{which}*.jsonl"))
    data = path.read_bytes()
    index = build_index(data, detect_format(data))
    topology = resolve_topology(index, build_graph(index), TopologyOptions())
    assert topology.chain and all(index.record(line).sidechain for line in topology.chain)  # type: ignore[union-attr]
