"""What a run says it achieved (`totals` in summary.json, the line under the status table) is the
sum of its per-session reports and of the files on disk: compress --out over the real corpus,
compress --in-place and repair over small generated fleets (without the resume gate)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli.totals_line import counts, size
from pipeline.testing.fuzz import Mutation, plant, result_lines
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.sessions import build_session
from tests.cli.conftest import in_place, make_idle, originals
from tests.publish.live.test_read_pages_repair import PAGES
from tests.publish.live.test_read_pages_repair import session as read_pages_session

Group = dict[str, Any]


def _empty() -> Group:
    return {
        "sessions": 0,
        "by_status": Counter(),
        "bytes": 0,
        "written": 0,
        "before": 0,
        "after": 0,
        "tokens": {},
    }


def _add(group: Group, report: dict[str, Any], written: bool) -> None:
    group["sessions"] += 1
    group["by_status"][report["status"]] += 1
    group["bytes"] += report["session"].get("bytes", 0)
    if not written:
        return
    group["written"] += 1
    group["before"] += report["session"]["bytes"]
    group["after"] += report["output"]["bytes"]
    tokens = report["tokens"]
    mine = group["tokens"].setdefault(tokens["estimator"], Counter())
    mine.update(
        sessions=1,
        before=tokens["active_chain"],
        after=tokens["output"],
        target=tokens["target"],
        target_met=int(tokens["output"] <= tokens["target"]),
    )


def resummed(found: list[tuple[str, dict[str, Any], bool]]) -> dict[str, Group]:
    """Each report (its root, itself, whether its file was written) added to its groups by hand."""
    groups: dict[str, Group] = {}
    for root, report, written in found:
        fmt = report["session"].get("format", "unknown")
        for key in ("all", f"format:{fmt}", f"root:{root}"):
            _add(groups.setdefault(key, _empty()), report, written)
    return groups


def assert_totals_match(totals: dict[str, Any], groups: dict[str, Group]) -> None:
    named = {"all": totals["all"]}
    named.update({f"format:{k}": v for k, v in totals["by_format"].items()})
    named.update({f"root:{k}": v for k, v in totals["by_root"].items()})
    assert set(named) == set(groups)
    for key, expected in groups.items():
        got = named[key]
        assert got["sessions"] == expected["sessions"] and got["by_status"] == dict(expected["by_status"]), (
            key
        )
        assert got["bytes"] == expected["bytes"] and got["written"] == expected["written"], key
        assert (got["files"]["before"], got["files"]["after"]) == (expected["before"], expected["after"]), key
        resume = {name: {f: t[f] for f in ("sessions", "before", "after", "target", "target_met")}
                  for name, t in got["resume_tokens"].items()}  # fmt: skip
        assert resume == {name: dict(c) for name, c in expected["tokens"].items()}, key


def test_compress_out_totals_over_the_real_corpus_are_the_sums_of_its_reports(
    corpus_files: Path, codex_files: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = compaction(
        "compress",
        str(corpus_files),
        str(codex_files),
        "--out",
        str(out),
        "--no-verify-resume",
        "--jobs",
        "2",
    )
    assert done.returncode in (0, 1), done.stderr
    summary = json.loads((out / "summary.json").read_text())
    totals = summary["totals"]
    root_of = dict(zip(("files", "files-2"), summary["roots"], strict=True))
    found = [
        (root_of[path.relative_to(out).parts[0]], r, r["status"] == "compressed" and "output" in r)
        for path in sorted(out.rglob("*.report.json"))
        for r in [json.loads(path.read_text())]
    ]
    assert len(found) == summary["sessions"] == totals["all"]["sessions"] > 70
    assert_totals_match(totals, resummed(found))
    every = totals["all"]
    assert every["bytes"] == summary["bytes"] == sum(p.stat().st_size for p in (*corpus_files.iterdir(), *codex_files.rglob("*.jsonl")) if p.is_file())  # fmt: skip
    on_disk = sum((out / r["output"]["path"]).stat().st_size for _, r, written in found if written)
    assert every["files"]["after"] == on_disk < every["files"]["before"]
    assert set(every["resume_tokens"]) == {"seed", "codex-approx", "pi-approx"}  # each agent's own estimator
    assert "seed_tokens" not in summary  # a compress report holds no whole-file tokens to add up
    seed = every["resume_tokens"]["seed"]
    line = f"{every['written']} of {every['sessions']} sessions compacted: resume contexts "
    assert line in done.stdout
    assert f"{counts(seed['before'], seed['after'])} seed tokens ({seed['ratio']:.2f}, target " in done.stdout
    assert f"files {size(every['files']['before'])} -> {size(every['files']['after'])}" in done.stdout
    assert "by agent: claude-code " in done.stdout  # the corpus holds several agents' sessions


def test_validate_totals_hold_the_tokens_of_every_report_by_estimator(
    corpus_files: Path, tmp_path: Path
) -> None:
    done = compaction("validate", str(corpus_files), "--report-dir", str(tmp_path / "r"), "--jobs", "2")
    assert done.returncode in (0, 1), done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    held: dict[str, Counter[str]] = {}
    for report in reports(tmp_path / "r"):
        if "tokens" in report:
            tokens = report["tokens"]
            held.setdefault(tokens["estimator"], Counter()).update(
                sessions=1, session=tokens["session"], active_chain=tokens["active_chain"]
            )
    totals = summary["totals"]["all"]["tokens"]
    assert {name: {k: v for k, v in t.items() if k != "need_compaction"} for name, t in totals.items()} == {
        name: dict(c) for name, c in held.items()
    }
    assert summary["seed_tokens"] == totals["seed"]["session"] > 0
    assert 0 < totals["seed"]["need_compaction"] < totals["seed"]["sessions"]
    assert "would need compaction at the current target" in done.stdout


def test_in_place_totals_are_the_sums_of_its_reports_and_of_the_files_replaced(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    code, summary, output = in_place(idle_fleet, tmp_path, "--no-verify-resume", quiet=False)
    assert code == 0, output
    root = summary["roots"][0]
    found = [
        (root, r, r["in_place"]["receipt"] is not None and r["in_place"]["receipt"]["operation_state"] == "committed")
        for r in reports(tmp_path / "r1")
    ]  # fmt: skip
    totals = summary["totals"]
    assert_totals_match(totals, resummed(found))
    replaced = [path for path, data in before.items() if path.read_bytes() != data]
    every = totals["all"]
    assert every["written"] == len(replaced) == summary["in_place"]["by_disposition"]["committed"] > 0
    assert every["files"]["before"] == sum(len(before[path]) for path in replaced)
    assert every["files"]["after"] == sum(path.stat().st_size for path in replaced)
    backups = [r["in_place"]["receipt"]["backup"] for _, r, written in found if written]
    assert every["backups"] == {
        "backups": len(backups),
        "original_bytes": sum(b["bytes"] for b in backups),
        "stored_bytes": sum(b["stored_bytes"] for b in backups),
        "ratio": round(sum(b["stored_bytes"] for b in backups) / sum(b["bytes"] for b in backups), 4),
        "by_compression": {"zstd": len(backups)},  # the default: zstd, its extra being installed
        "reused": 0,
    }
    assert (
        f"{every['written']} of {every['sessions']} sessions compacted in place: resume contexts " in output
    )
    assert f"backups {size(every['backups']['original_bytes'])} stored in " in output


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """Two damaged sessions (a torn line, a result behind text) and a sound one, idle."""
    project = tmp_path / "projects" / "-repo"
    project.mkdir(parents=True)
    build_session(project / "torn.jsonl", turns=3, seed=1)
    build_session(project / "sound.jsonl", turns=3, seed=2)
    data = b"\n".join(
        line for line in (project / "sound.jsonl").read_bytes().split(b"\n") if b"CANARY" not in line or b'"uuid"' in line
    )  # fmt: skip
    (project / "sound.jsonl").write_bytes(data)
    (project / "moved.jsonl").write_bytes(plant(data, Mutation.RESULT_NOT_FIRST, result_lines(data)[2]))
    make_idle(tmp_path / "projects")
    return tmp_path / "projects"


@pytest.mark.parametrize("mode", ["--in-place", "--out"])
def test_repair_totals_are_the_sizes_of_the_files_it_wrote(damaged: Path, tmp_path: Path, mode: str) -> None:
    before = originals(damaged)
    reports_dir = tmp_path / "r"
    where = ["--report-dir", str(reports_dir)] if mode == "--in-place" else [str(tmp_path / "out")]
    done = compaction("repair", str(damaged), mode, *where, "--state-dir", str(tmp_path / "state"), "--no-verify-resume")  # fmt: skip
    assert done.returncode == 0, done.stderr
    folder = reports_dir if mode == "--in-place" else tmp_path / "out"
    summary = json.loads((folder / "summary.json").read_text())
    found = {Path(r["session"]).name: r for r in reports(folder)}
    written = [r for r in found.values() if "bytes_after" in r]
    assert {Path(r["session"]).name for r in written} == {"torn.jsonl", "moved.jsonl"}
    every = summary["totals"]["all"]
    assert every["written"] == 2 and every["by_status"] == summary["by_status"]
    assert (
        every["files"]["before"]
        == sum(r["bytes_before"] for r in written)
        == sum(len(data) for path, data in before.items() if path.name in ("torn.jsonl", "moved.jsonl"))
    )
    after = (
        [damaged / "-repo" / name for name in ("torn.jsonl", "moved.jsonl")]
        if mode == "--in-place"
        else [Path(r["output"]) for r in written]
    )
    assert (
        every["files"]["after"]
        == sum(r["bytes_after"] for r in written)
        == sum(p.stat().st_size for p in after)
    )
    assert every["files"]["after"] < every["files"]["before"]  # the torn line is gone
    assert ("backups" in every) is (mode == "--in-place")
    assert (
        f"2 of {every['sessions']} sessions repaired: files {size(every['files']['before'])} -> "
        in done.stdout
    )


def test_quiet_ends_the_failure_count_with_the_totals(damaged: Path, tmp_path: Path) -> None:
    done = compaction("validate", str(damaged), "--report-dir", str(tmp_path / "r"), "--quiet")
    assert done.returncode == 1 and done.stdout == ""  # the damaged sessions are invalid
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    seed = summary["totals"]["all"]["tokens"]["seed"]
    last = done.stderr.strip().splitlines()[-1]  # the failure count, then what the run found
    assert last.startswith("compaction: error: 2 session(s) failed (2 invalid, 1 valid); ")  # torn, moved
    assert f"; 3 sessions, {size(summary['bytes'])}: active chains hold " in last
    assert last.endswith(f"; {seed['need_compaction']} would need compaction at the current target")


@pytest.mark.parametrize("mode", ["--in-place", "--out"])
def test_read_pages_repair_totals_are_the_sizes_of_the_file_it_wrote(tmp_path: Path, mode: str) -> None:
    builder = read_pages_session(pending=True)
    builder.last_prompt()  # the strict leaf policy's pointer, as Claude Code writes it
    live = builder.write(tmp_path / "home" / "projects" / "p" / "s.jsonl")
    make_idle(tmp_path / "home" / "projects")
    original = live.read_bytes()
    folder = tmp_path / ("r" if mode == "--in-place" else "out")
    where = ["--report-dir", str(folder)] if mode == "--in-place" else [str(folder)]
    done = compaction(
        "repair-read-pages", str(tmp_path / "home" / "projects"), mode, *where, "--state-dir", str(tmp_path / "state")
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((folder / "summary.json").read_text())
    [report] = list(reports(folder))
    written = live if mode == "--in-place" else Path(report["output"])
    assert (report["bytesBefore"], report["bytesAfter"]) == (len(original), written.stat().st_size)
    files = summary["totals"]["all"]["files"]
    assert (files["before"], files["after"]) == (len(original), len(original) - len(PAGES))
    assert f"1 of 1 sessions repaired: files {size(len(original))} -> " in done.stdout
