"""`compaction schema [NAME]`: the list of the published schemas, one printed as shipped, and a
name no schema has refused with the names."""

from __future__ import annotations

import json

from pipeline.jobs.report_schemas import DOCUMENTS, document, shipped
from pipeline.testing.invoke import compaction


def test_schema_lists_every_document_with_its_id() -> None:
    done = compaction("schema")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [[doc.name, doc.id] for doc in DOCUMENTS]


def test_schema_name_prints_the_shipped_file_and_an_id_names_it_too() -> None:
    done = compaction("schema", "session-report")
    assert done.returncode == 0, done.stderr
    assert done.stdout.encode() == shipped(document("session-report"))
    by_id = compaction("schema", "session-compaction/tokens-summary/v1")
    assert json.loads(by_id.stdout)["$id"] == "session-compaction/tokens-summary/v1"


def test_an_unknown_schema_name_is_one_line_and_exit_2() -> None:
    done = compaction("schema", "summary")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == (
        "compaction: error: no schema named 'summary'; one of: " + ", ".join(d.name for d in DOCUMENTS)
    )
