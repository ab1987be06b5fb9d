"""Gemini CLI files are identified positively, from their first lines or their one document and
their path, and nobody else's are taken for them."""

from __future__ import annotations

from pathlib import Path, PurePath

import orjson
import pytest

from pipeline.formats.detect import detect_format
from pipeline.formats.gemini_cli.signature import GEMINI_CLI, session_roots
from pipeline.formats.registry import PROCESSED, RECOGNIZED
from pipeline.vocabulary import SourceFormat
from tests.conftest import CORPUS
from tests.support.gemini_files import FIXTURES, LEGACY_CORPUS, fixture, lines_of

CHATS = PurePath("/home/u/.gemini/tmp/proj/chats")


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_every_file_the_real_client_wrote_is_gemini_clis(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    assert detect_format(data, CHATS / f"session-2026-12-07T06-35-{name}") is SourceFormat.GEMINI_CLI
    assert detect_format(data) is SourceFormat.GEMINI_CLI  # the lines alone suffice
    claimants = {s.format for s in RECOGNIZED if s.record for r in lines_of(FIXTURES / name) if s.record(r)}
    assert claimants == {SourceFormat.GEMINI_CLI}


def test_the_legacy_document_of_the_corpus_is_gemini_clis() -> None:
    if not LEGACY_CORPUS.is_file():
        pytest.skip(f"the shared corpus is not here: {LEGACY_CORPUS}")
    assert detect_format(LEGACY_CORPUS.read_bytes(), CHATS / "session-x.json") is SourceFormat.GEMINI_CLI


def test_a_checkpoint_the_real_client_saved_is_gemini_clis() -> None:
    data = fixture("checkpoint-fixture-tag.json").read_bytes()
    path = PurePath("/home/u/.gemini/tmp/proj/checkpoint-fixture-tag.json")
    assert detect_format(data, path) is SourceFormat.GEMINI_CLI
    assert (
        detect_format(data, PurePath("/home/u/.qwen/tmp/proj/checkpoint-fixture-tag.json"))
        is SourceFormat.QWEN_CODE
    )


def test_no_other_corpus_file_is_taken_for_gemini_clis() -> None:
    files = sorted((CORPUS / "files").glob("*")) if (CORPUS / "files").is_dir() else []
    if not files:
        pytest.skip("the shared corpus is not here")
    taken = [
        p.name
        for p in files
        if p != LEGACY_CORPUS and detect_format(p.read_bytes(), PurePath(p.name)) is SourceFormat.GEMINI_CLI
    ]
    assert taken == []


def test_a_rewind_or_an_update_alone_names_gemini_cli() -> None:
    for record in ({"$rewindTo": "abc"}, {"$set": {"lastUpdated": "2026-01-01T00:00:00Z"}}):
        assert detect_format(orjson.dumps(record) + b"\n") is SourceFormat.GEMINI_CLI


def test_sessions_are_looked_for_under_the_relocated_home_when_one_is_set(tmp_path: Path) -> None:
    assert session_roots({}, tmp_path) == (tmp_path / ".gemini" / "tmp",)
    assert session_roots({"GEMINI_CLI_HOME": "/srv/g"}, tmp_path) == (Path("/srv/g/.gemini/tmp"),)


def test_gemini_cli_is_processed_with_its_session_roots() -> None:
    assert GEMINI_CLI in RECOGNIZED and GEMINI_CLI in PROCESSED and GEMINI_CLI.roots is session_roots
