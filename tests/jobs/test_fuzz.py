"""The fuzz suite: damaged copies of builder sessions and real corpus files, through the real
command line, with every invariant checked on every case (`pipeline.testing.fuzzing`).

`scripts/fuzz` runs the same harness for longer, over many seeds.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pipeline.testing.fuzz import Mutation
from pipeline.testing.fuzzing import (
    FuzzRun,
    builder_sources,
    corpus_sources,
    exclusive_texts,
    fuzz_cases,
    run_fleet,
    violations,
)

SEED = 20261201
CASES = 30 * len(Mutation)


@pytest.fixture(scope="module")
def fuzz_run(corpus_files: Path, tmp_path_factory: pytest.TempPathFactory) -> FuzzRun:
    sources = {**builder_sources(), **corpus_sources(corpus_files)}
    cases = fuzz_cases(sources, seed=SEED, count=CASES, huge_bytes=1_000_000)
    return run_fleet(cases, tmp_path_factory.mktemp("fuzz"))


def test_every_kind_of_damage_is_tried_on_many_sources(fuzz_run: FuzzRun) -> None:
    kinds = {kind: [c for c in fuzz_run.cases if c.mutation is kind] for kind in Mutation}
    assert all(len(cases) == 30 for cases in kinds.values())
    assert all(len({c.source for c in cases}) >= 10 for cases in kinds.values())
    assert len({c.data for c in fuzz_run.cases}) > 0.95 * CASES  # nearly every case is a different file


def test_no_damaged_session_breaks_an_invariant(fuzz_run: FuzzRun) -> None:
    assert violations(fuzz_run) == []


def test_damage_is_reported_on_its_line(fuzz_run: FuzzRun) -> None:
    def codes(kind: Mutation) -> set[str]:
        return {
            finding["code"]
            for case in fuzz_run.cases
            if case.mutation is kind
            for finding in fuzz_run.validated[case.name].get("findings", [])
            if finding.get("line")
        }

    assert "line-invalid-utf8" in codes(Mutation.INVALID_UTF8_VALUE)
    assert "line-nesting-too-deep" in codes(Mutation.DEEP_NESTING)
    assert "line-not-object" in codes(Mutation.NOT_OBJECT)
    assert codes(Mutation.TRUNCATE_LINE) & {"line-truncated", "line-not-json"}


def test_the_harness_sees_a_broken_invariant(fuzz_run: FuzzRun) -> None:
    """The check above can fail: a crash, a stray candidate and a leaked text are each caught."""
    leaking = next(c for c in fuzz_run.cases if exclusive_texts(fuzz_run.root / "project" / c.name))
    text = exclusive_texts(fuzz_run.root / "project" / leaking.name)[0]
    leaked = dataclasses.replace(fuzz_run, cases=(leaking,), logs=fuzz_run.logs + text)
    assert violations(dataclasses.replace(leaked, logs=fuzz_run.logs)) == []
    assert [v.split(": ", 1)[1] for v in violations(leaked)] == [
        f"excluded text of {len(text)} chars reached a report, log or candidate"
    ]
    case = next(c for c in fuzz_run.cases if fuzz_run.compressed[c.name]["status"] == "refused")
    name, alone = case.name, dataclasses.replace(fuzz_run, cases=(case,))
    assert violations(alone) == []
    crashed = {**fuzz_run.validated, name: {**fuzz_run.validated[name], "status": "internal-error"}}
    assert violations(dataclasses.replace(alone, validated=crashed)) == [f"{name}: validate: internal-error"]
    # Checked in worker processes, the same problems come back in case order.
    other = next(c for c in fuzz_run.cases if c.name != leaking.name)
    broken = {
        **fuzz_run.validated,
        other.name: {**fuzz_run.validated[other.name], "status": "internal-error"},
    }
    both = dataclasses.replace(leaked, cases=(other, leaking), validated=broken)
    pooled = violations(both, workers=2, share=1)
    assert pooled == violations(both, workers=1)
    assert list(dict.fromkeys(v.split(": ", 1)[0] for v in pooled)) == [other.name, leaking.name]
    stray = fuzz_run.out / "fleet" / "project" / name
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(case.data)
    try:
        assert any(
            "a candidate was written" in v for v in violations(dataclasses.replace(fuzz_run, cases=(case,)))
        )
    finally:
        stray.unlink()
