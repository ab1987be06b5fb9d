"""The command line under a user's mistakes, on real files and real processes (issue 22): one
truth per file, one line and exit 2 for every mistake, failures a nightly log can see."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.testing import TranscriptBuilder
from pipeline.testing.invoke import compaction, reports


def long_session(path: Path, *, seed: int = 5, turns: int = 30) -> Path:
    """A session long enough to compress, every turn a request, a tool call and an answer."""
    builder = TranscriptBuilder(seed=seed)
    for turn in range(turns):
        builder.user(f"request {turn} " + "word " * 200)
        builder.tool_call("Read", {"file_path": f"/repo/a{turn}.py"}, "print('a')\n" * 100)
        builder.assistant(builder.text("read it " * 100))
    path.parent.mkdir(parents=True, exist_ok=True)
    builder.write(path)
    return path


def truncate_line(path: Path, number: int) -> None:
    """Cut 1-based line `number` in half, as a crash mid-write leaves it."""
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = lines[number - 1][: len(lines[number - 1]) // 2]
    path.write_bytes(b"\n".join(lines))


def findings_of(report: dict[str, object]) -> set[tuple[str, int | None]]:
    return {(f["code"], f.get("line")) for f in report["findings"]}  # type: ignore[attr-defined,index]


def test_compress_reports_every_finding_validate_reports_for_the_same_file(tmp_path: Path) -> None:
    source = long_session(tmp_path / "in" / "s.jsonl")
    truncate_line(source, 21)
    checked = compaction("validate", str(tmp_path / "in"), "--report-dir", str(tmp_path / "v"), "--quiet")
    compressed = compaction(
        "compress", str(tmp_path / "in"), "--out", str(tmp_path / "o"), "--no-verify-resume",
        "--min-tokens", "0", "--quiet",
    )  # fmt: skip
    assert checked.returncode == 1 and compressed.returncode == 0, compressed.stderr
    [validated] = reports(tmp_path / "v")
    [report] = reports(tmp_path / "o")
    assert ("line-truncated", 21) in findings_of(validated)
    assert report["status"] == "compressed"
    assert findings_of(validated) <= findings_of(report)
    assert report["counts"]["error"] == validated["counts"]["error"] == 1
    json.dumps(report)


def test_every_candidate_holds_exactly_one_last_prompt_pointer_naming_its_leaf(tmp_path: Path) -> None:
    long_session(tmp_path / "in" / "none.jsonl", seed=6)  # a source without a pointer
    many = TranscriptBuilder(seed=7)
    for turn in range(30):
        many.user(f"request {turn} " + "word " * 200)
        many.assistant(many.text("answer " * 150))
        many.last_prompt()  # Claude Code writes one per prompt
    many.write(tmp_path / "in" / "many.jsonl")
    done = compaction(
        "compress", str(tmp_path / "in"), "--out", str(tmp_path / "o"), "--no-verify-resume",
        "--min-tokens", "0", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = {report["session"]["label"]: report for report in reports(tmp_path / "o")}
    assert {label for label, r in written.items() if r["status"] == "compressed"} == {
        "none.jsonl",
        "many.jsonl",
    }
    for name in ("none.jsonl", "many.jsonl"):
        records = [json.loads(line) for line in (tmp_path / "o" / "in" / name).read_text().splitlines()]
        [pointer] = [r for r in records if r.get("type") == "last-prompt"]
        assert pointer["leafUuid"] == written[name]["leaf"]["uuid"] == records[-2]["uuid"]
        assert records[-1] is not None and records[-1]["type"] == "last-prompt"
