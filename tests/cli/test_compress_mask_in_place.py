"""`compaction compress --in-place --strategy mask`: the nightly job masks sessions in place, with
the process pool and on a local Dask cluster alike (the executor seam builds the candidates), each
replaced file its original's chain with no compact pair and a verified backup of the original."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.core.check.structure import structural_failures
from pipeline.core.topology.select import AUTO
from pipeline.publish.live.backups import read_backup
from pipeline.testing.settings import LIMITS
from tests.cli.conftest import backups_of, committed, in_place, originals

MASK = ("--strategy", "mask", "--no-verify-resume")


@pytest.fixture
def config(tmp_path: Path) -> tuple[str, str]:
    """min_gain 0: the generated sessions' outputs are short, so masking saves under the default 10%."""
    path = tmp_path / "config.toml"
    path.write_text("[compress]\nmin_gain = 0.0\n")
    return "--config", str(path)


def _rows(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines()]


def _masked_in_place(fleet: Path, before: dict[Path, bytes], reports: Path) -> int:
    """How many sessions were replaced, each checked to be its original masked (`reports` sits
    beside the run's state directory, whose archive holds the backups)."""
    replaced = 0
    for path, original in before.items():
        now = path.read_bytes()
        if now == original:
            continue
        replaced += 1
        assert len(now) < len(original) and not structural_failures(now, AUTO, LIMITS)
        assert read_backup(backups_of(reports.parent, fleet, path)[0]) == original
        written = _rows(now)
        assert not any(r.get("subtype") == "compact_boundary" for r in written)
        assert written[-1]["type"] == "last-prompt" and "sessionCompaction" in written[-1]
        report = json.loads((reports / f"projects/{path.relative_to(fleet)}.report.json").read_text())
        assert report["status"] == "compressed" and report["mask"]["cleared_outputs"] > 0
        assert report["in_place"]["disposition"] == "committed"
    return replaced


def test_in_place_masks_sessions_with_a_verified_backup(
    idle_fleet: Path, tmp_path: Path, config: tuple[str, str]
) -> None:
    before = originals(idle_fleet)
    code, summary, output = in_place(idle_fleet, tmp_path, *MASK, *config)
    assert code == 0, output
    assert committed(summary) >= 3
    assert _masked_in_place(idle_fleet, before, tmp_path / "r1") == committed(summary)


def test_in_place_mask_on_a_local_dask_cluster_does_what_the_process_pool_does(
    idle_fleet: Path, tmp_path: Path, config: tuple[str, str]
) -> None:
    pytest.importorskip("distributed")
    twin = tmp_path / "twin" / "home" / "projects"
    shutil.copytree(idle_fleet, twin, symlinks=True)
    before = originals(twin)
    code, local, output = in_place(idle_fleet, tmp_path, *MASK, *config)
    assert code == 0, output
    code, dask, output = in_place(twin, tmp_path / "twin", *MASK, *config, "--cluster", "local:2")
    assert code == 0, output
    assert dask["in_place"]["by_disposition"] == local["in_place"]["by_disposition"]
    assert _masked_in_place(twin, before, tmp_path / "twin" / "r1") == committed(dask) >= 3


@pytest.mark.claude_code
def test_in_place_mask_through_the_resume_gate_commits_only_matches(
    idle_fleet: Path, tmp_path: Path, config: tuple[str, str], claude_code: Path
) -> None:
    before = originals(idle_fleet)
    gate = ("--strategy", "mask", "--verify-resume", "--claude", str(claude_code))
    code, summary, output = in_place(idle_fleet, tmp_path, *gate, *config)
    assert code == 0, output
    assert committed(summary) >= 3
    assert summary["resume_checks"]["by_verdict"] == {"match": committed(summary)}
    assert _masked_in_place(idle_fleet, before, tmp_path / "r1") == committed(summary)
