"""Identifiers a span wrote: read from what was said and from tool inputs, never from file contents."""

from __future__ import annotations

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.summarize import EvidenceItem
from pipeline.summarize.evidence.references import Reference, collect_references, references_in
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import SourceFormat


def items_of(b: TranscriptBuilder) -> tuple[EvidenceItem, ...]:
    data = b.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    return extract_evidence(data, index, range(1, len(index) + 1))


def test_each_kind_is_read_whole() -> None:
    text = (
        "See https://example.com/pr/12. for #42 and PROJ-7 (v2.1, 1.2.3-rc.1) on localhost:8080, not UTF-8."
    )
    assert list(references_in(text)) == [
        ("url", "https://example.com/pr/12"),
        ("issue", "#42"),
        ("ticket", "PROJ-7"),
        ("version", "v2.1"),
        ("version", "1.2.3-rc.1"),
        ("port", "8080"),
    ]
    assert list(references_in("1.2.3.4 and a#1 and x1.2.3")) == []


def test_references_come_once_from_text_and_inputs_but_not_from_file_contents() -> None:
    b = TranscriptBuilder(seed=1)
    b.user("Bump to 2.0.0 and see #12")
    b.assistant(b.text("Upgrading to 2.0.0 now."))
    b.tool_call("Write", {"file_path": "/r/pkg.json", "content": '{"version": "9.9.9"}'}, "ok")
    b.tool_call("Bash", {"command": "curl http://localhost:3000/health"}, "ok")
    found = collect_references(items_of(b))
    assert [(r.kind, r.value, r.line) for r in found] == [
        ("issue", "#12", 1),
        ("version", "2.0.0", 1),
        ("url", "http://localhost:3000/health", 5),
        ("port", "3000", 5),
    ]


def test_prior_references_come_first_and_keep_their_line() -> None:
    b = TranscriptBuilder(seed=2)
    b.user("deploy 1.4.0 on port 9000")
    prior = (Reference("version", "1.4.0", 1), Reference("issue", "#3", 1))
    found = collect_references(items_of(b), prior)
    assert found == (*prior, Reference("port", "9000", 1))
