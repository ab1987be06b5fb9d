"""CodeWhale's documents are told positively by their shape, wherever they sit; other agents'
JSON documents and damaged CodeWhale documents are not taken for one."""

from __future__ import annotations

import json
from pathlib import PurePath

import pytest

from pipeline.formats.detect import detect_format
from pipeline.vocabulary import SourceFormat
from tests.support.agent_files import write_agent_files
from tests.support.codewhale_sessions import SessionBuilder, call, result, text


def _document() -> dict:  # type: ignore[type-arg]
    session = SessionBuilder()
    session.extend([text("user", "q"), call("c1"), result("c1", "out"), text("assistant", "a")])
    return session.document()


@pytest.mark.parametrize(
    "path", [PurePath("/h/.codewhale/sessions/x.json"), PurePath("/h/.deepseek/sessions/x.json"), None]
)
def test_a_saved_session_is_codewhales_whatever_its_path(path: PurePath | None) -> None:
    assert detect_format(json.dumps(_document()).encode(), path) is SourceFormat.CODEWHALE


def test_a_journal_less_legacy_session_and_an_indented_one_are_codewhales_too() -> None:
    document = _document()
    del document["journal"], document["leaf_id"]
    assert detect_format(json.dumps(document, indent=2).encode()) is SourceFormat.CODEWHALE


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("metadata"),
        lambda d: d["metadata"].pop("workspace"),
        lambda d: d["metadata"].update(message_count="4"),
        lambda d: d.update(messages={"role": "user"}),
        lambda d: d.update(journal=[]),
    ],
)
def test_a_document_without_codewhales_shape_is_not_taken_for_one(change) -> None:  # type: ignore[no-untyped-def]
    document = _document()
    change(document)
    assert detect_format(json.dumps(document).encode()) is not SourceFormat.CODEWHALE


def test_no_other_agents_file_is_taken_for_codewhales(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for relative, agent in write_agent_files(tmp_path).items():
        data = (tmp_path / relative).read_bytes()
        assert detect_format(data, PurePath(relative)) is agent, relative
