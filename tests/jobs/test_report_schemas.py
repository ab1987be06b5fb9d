"""The published JSON Schemas: the shipped files are what the report types generate, each is a
valid draft 2020-12 schema whose `$id` is its documents' `schema` string, and every report,
summary, tokens.json and probe output real runs write validates against the schema it names.

The runs are real processes over the real corpus (read in place) and a small generated fleet
(copied into a temporary home for the in-place night, its restore and the repairs)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema.exceptions import best_match

from pipeline.jobs.report_schemas import (
    DOCUMENTS,
    SCHEMA_DIALECT,
    UnknownSchema,
    document,
    schema_bytes,
    shipped,
)
from pipeline.testing.invoke import compaction
from pipeline.testing.synth import generate_fleet
from tests.conftest import CODEX_FILES, CORPUS_FILES
from tests.support.agent_files import write_agent_files
from tests.support.rollout_builder import RolloutBuilder

SCHEMAS_DIR = Path(__file__).resolve().parents[2] / "pipeline" / "report" / "schemas"
TWO_DAYS = 2 * 86400
SMALL = ("--min-tokens", "0", "--min-recent-records", "8")  # so the small generated sessions compress


def validator(schema_id: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(shipped(document(schema_id))))


def problems(doc: dict[str, Any]) -> str | None:
    """Why a document does not validate against the schema it names (None: it does)."""
    error = best_match(validator(doc["schema"]).iter_errors(doc))
    if error is None:
        return None
    deepest = min(error.context, key=lambda e: e.relative_schema_path.__len__(), default=error)
    return f"{error.message[:200]} at {list(error.absolute_path)}; {deepest.message[:200]}"


def test_the_shipped_schemas_are_the_ones_the_report_types_generate() -> None:
    for doc in DOCUMENTS:
        assert shipped(doc) == schema_bytes(doc), (
            f"{doc.file_name} differs from the types: run `python -m pipeline.jobs.report_schemas`"
        )
    assert sorted(p.name for p in SCHEMAS_DIR.iterdir()) == sorted(d.file_name for d in DOCUMENTS)


def test_each_schema_is_valid_and_its_id_is_the_version_its_documents_carry() -> None:
    for doc in DOCUMENTS:
        schema = json.loads(shipped(doc))
        jsonschema.Draft202012Validator.check_schema(schema)
        assert (schema["$schema"], schema["$id"]) == (SCHEMA_DIALECT, doc.id)
        for cls in doc.types:  # the version a written document carries, held as a constant
            first_default = len(cls.__struct_fields__) - len(cls.__struct_defaults__)
            assert cls.__struct_defaults__[cls.__struct_fields__.index("schema") - first_default] == doc.id
        roots = [schema["$defs"][ref["$ref"].rsplit("/", 1)[1]] for ref in schema.get("anyOf", [schema])]
        for root in roots:
            assert root["properties"]["schema"]["const"] == doc.id and "schema" in root["required"]


def test_a_name_no_schema_has_is_refused_with_the_names() -> None:
    with pytest.raises(UnknownSchema, match="session-report"):
        document("session")
    assert document("session-compaction/tokens-summary/v1").name == "tokens-summary"


@dataclass(frozen=True, slots=True)
class Written:
    """Every JSON document the runs wrote, by path, and what each run printed on failure."""

    documents: dict[Path, dict[str, Any]]
    probe: dict[str, Any]


def _run(*args: str) -> None:
    done = compaction(*args, "--quiet")
    assert done.returncode in (0, 1), f"{args[0]}: {done.returncode} {done.stderr[-2000:]}"


def _idle_fleet(tmp: Path) -> Path:
    """A small generated Claude Code fleet, one long Codex rollout and a file no agent wrote, last
    written two days ago."""
    home = tmp / "home"
    generate_fleet(home, target_bytes=300_000, seed=5)
    builder = RolloutBuilder(seed=41)
    builder.context()
    for number in range(12):
        builder.exchange(f"task {number}: fix module_{number}.py", tools=3, output_bytes=3000)
    rollouts = home / "projects" / "codex"
    rollouts.mkdir()
    builder.write(rollouts / f"rollout-2026-03-01T12-00-00-{builder.session_id}.jsonl")
    (home / "projects" / "notes.jsonl").write_text('{"note": "no agent wrote this"}\n')  # a brief report
    old = time.time() - TWO_DAYS
    for path in home.rglob("*.jsonl"):
        os.utime(path, (old, old))
    return home / "projects"


def _json_documents(folder: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(folder.rglob("*.json")):
        if ".resume" not in path.parts:  # completion markers are the runner's, not published
            yield path, json.loads(path.read_text())


def _first_compressed(reports: Path, out: Path) -> tuple[Path, Path]:
    """A Claude Code session of the corpus that compress compacted, and its candidate."""
    for path, report in _json_documents(reports):
        if report.get("status") == "compressed" and report["session"]["format"] == "claude-code":
            return CORPUS_FILES / path.name.removesuffix(".report.json"), out / report["output"]["path"]
    raise AssertionError(f"compress compacted no Claude Code session under {reports}")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    """validate, compress --out (no resume gate), tokens --out, repair and repair-read-pages over
    the corpus; compress --in-place, restore and both repairs in place over the generated fleet."""
    tmp = tmp_path_factory.mktemp("schemas")
    others = tmp_path_factory.mktemp("others")  # agents recognized, not processed: brief reports
    write_agent_files(others)
    corpus = (str(CORPUS_FILES), str(CODEX_FILES), str(others))
    _run("validate", *corpus, "--report-dir", str(tmp / "validate"))
    _run(
        "compress",
        *corpus,
        "--out",
        str(tmp / "out"),
        "--report-dir",
        str(tmp / "compress"),
        "--no-verify-resume",
    )
    _run("tokens", *corpus, "--out", str(tmp / "tokens"))
    _run("repair", *corpus, "--report-dir", str(tmp / "repair"))
    _run("repair-read-pages", *corpus, "--report-dir", str(tmp / "read-pages"))
    fleet = _idle_fleet(tmp)
    state = ("--state-dir", str(tmp / "state"))
    _run(
        "compress",
        str(fleet),
        "--in-place",
        *state,
        "--report-dir",
        str(tmp / "in-place"),
        "--no-verify-resume",
        *SMALL,
    )
    replaced = next(
        Path(report["in_place"]["receipt"]["path"])
        for _, report in _json_documents(tmp / "in-place")
        if report.get("in_place", {}).get("disposition") == "committed"
    )
    _run("restore", str(replaced), *state, "--report-dir", str(tmp / "restore"))
    _run("repair", str(fleet), "--in-place", *state, "--report-dir", str(tmp / "repair-in-place"))
    _run("repair-read-pages", str(fleet), "--in-place", *state, "--report-dir", str(tmp / "pages-in-place"))
    source, candidate = _first_compressed(tmp / "compress", tmp / "out")
    probe = compaction("probe", str(source), str(candidate), "--json")
    assert probe.returncode == 0, probe.stderr
    return Written(dict(_json_documents(tmp)), json.loads(probe.stdout))


def test_every_document_the_runs_wrote_validates_against_the_schema_it_names(written: Written) -> None:
    failing = {str(path): why for path, doc in written.documents.items() if (why := problems(doc))}
    assert failing == {}
    assert problems(written.probe) is None
    kinds = {doc["schema"] for doc in written.documents.values()} | {written.probe["schema"]}
    assert kinds == {doc.id for doc in DOCUMENTS}  # every schema was met by a real document


def test_every_report_type_of_the_session_schema_was_written_and_matched_only_by_its_own(
    written: Written,
) -> None:
    schema = json.loads(shipped(document("session-report")))
    alternatives = {ref["$ref"].rsplit("/", 1)[1]: ref for ref in schema["anyOf"]}
    matched: dict[str, int] = {}
    for doc in written.documents.values():
        if doc["schema"] != schema["$id"]:
            continue
        names = [
            name
            for name, ref in alternatives.items()
            if jsonschema.Draft202012Validator({**schema, "anyOf": [ref]}).is_valid(doc)
        ]
        assert len(names) == 1, (doc["session"]["label"], names)  # the report types do not overlap
        matched[names[0]] = matched.get(names[0], 0) + 1
    assert set(matched) == set(alternatives), matched


def test_a_report_with_a_key_or_a_value_its_types_never_write_does_not_validate(written: Written) -> None:
    report = next(doc for doc in written.documents.values() if doc.get("command") == "validate")
    assert problems(report) is None
    assert problems({**report, "transcript_text": "x"}) is not None  # no key beyond the types'
    assert problems({**report, "status": "fine"}) is not None  # closed vocabularies stay closed
    assert problems({key: value for key, value in report.items() if key != "counts"}) is not None
    later = {**report, "schema": "session-compaction/session-report/v2"}
    assert not validator(report["schema"]).is_valid(later)  # a version is exactly its own
