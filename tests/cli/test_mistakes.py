"""The command line under a user's mistakes, on real files and real processes (issue 22): one
truth per file, one line and exit 2 for every mistake, failures a nightly log can see."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pipeline.cli.grammar import build_parser
from pipeline.testing import TranscriptBuilder
from pipeline.testing.invoke import compaction, compaction_command, reports
from tests.cli.conftest import make_idle


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


def ours(stderr: str) -> list[str]:
    """The command's own stderr lines: asyncio's child-watcher warning under load is not ours."""
    return [line for line in stderr.splitlines() if "Unknown child process pid" not in line]


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


def _value_options() -> dict[str, list[argparse.Action]]:
    """Every command's options that take a value, from the parser itself (so a new one is walked too)."""
    parser = build_parser(None)
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {
        name: [a for a in sub._actions if a.option_strings and a.nargs != 0]
        for name, sub in commands.choices.items()
    }


_DIRECTORIES = frozenset({"--report-dir", "--out", "--state-dir", "--work-dir", "--backup-dir"})
_MIRRORED = frozenset({"--report-dir", "--out", "--work-dir"})
_IN_PLACE_ONLY = frozenset(
    {"--idle-for", "--work-dir", "--state-dir", "--backup-dir", "--backup-compression"}
)


def _directory_values(command: str, flag: str, places: dict[str, Path]) -> list[tuple[str, bool]]:
    file, uncreatable = str(places["file"]), "/proc/no/such"
    if command == "backups":  # listing reads them: a file is the mistake, a missing one holds nothing
        return [(file, True), (uncreatable, False)]
    inside = places["root"] / "inside"  # only what mirrors the sessions' layout may not go there
    mirrored = flag in _MIRRORED and command != "restore"  # restore takes session files, not a root
    return [(file, True), (uncreatable, True), (str(inside), mirrored)]


def _bad_values(command: str, option: argparse.Action, places: dict[str, Path]) -> list[tuple[str, bool]]:
    """(value, whether it must be refused with exit 2) for one option of a command."""
    flag = option.option_strings[-1]
    if flag in _DIRECTORIES:
        return _directory_values(command, flag, places)
    judge = flag == "--claude" or (flag == "--codex" and command == "compress")  # verify-resume: by format
    if flag in ("--config", "--backup") or judge:
        return [(str(places["root"]), True), (str(places["root"] / "missing.toml"), True)]
    if option.choices:
        return [("bogus", True)]
    if getattr(option.type, "__name__", "") in ("int", "count", "float", "positive_seconds"):
        return [("x", True), ("-1", True)]
    fixed = {"--idle-for": [("12", True), ("soon", True)], "--all-since": [("", True), ("tuesday", True)]}
    return fixed.get(flag, [("bogus", False), ("", False)])


def _base(command: str, flag: str, places: dict[str, Path]) -> list[str]:
    """The rest of a command line that is right, so the option under test is the one mistake."""
    root, session, other = str(places["root"]), str(places["session"]), str(places["copy"])
    state = ["--state-dir", str(places["tmp"] / "state")] if flag != "--state-dir" else []
    if command == "compress":
        target = ["--in-place", *state] if flag in _IN_PLACE_ONLY else ["--out", str(places["tmp"] / "o")]
        gate = ["--verify-resume"] if flag in ("--claude", "--codex") else ["--no-verify-resume"]  # uses it
        return [root, *gate, *(target if flag != "--out" else [])]
    return {
        "validate": [root],
        "tokens": [root],
        "verify-resume": [session, other],
        "probe": [session, other],
        "restore": [session, *state],
        "backups": [root, *state],
        "repair-read-pages": [root, *([] if flag == "--out" else ["--out", str(places["tmp"] / "o2")])],
        "repair": [
            root,
            *state,
            *([] if flag == "--claude" else ["--no-verify-resume"]),  # --claude: the one it proves with
            *([] if flag == "--out" else ["--out", str(places["tmp"] / "o3")]),
        ],
        "report": [str(places["tmp"])],
        "vacuum": [
            root,
            *state,
            "--no-verify-resume",
            *([] if flag == "--out" else ["--out", str(places["tmp"] / "o4")]),
        ],
    }[command]


def test_every_option_of_every_command_with_a_bad_value_is_one_line_and_never_a_traceback(
    tmp_path: Path,
) -> None:
    root = tmp_path / "projects"
    session = long_session(root / "p" / "s.jsonl", turns=4)
    (root / "p" / "t.jsonl").write_bytes(session.read_bytes())
    (tmp_path / "plain-file").write_text("")
    places = {
        "root": root,
        "session": session,
        "copy": root / "p" / "t.jsonl",
        "file": tmp_path / "plain-file",
    }
    places["tmp"] = tmp_path
    runs = [
        (command, flag.option_strings[-1], value, refused)
        for command, options in _value_options().items()
        for flag in options
        for value, refused in _bad_values(command, flag, places)
    ]

    def one(run: tuple[str, str, str, bool]) -> tuple[tuple[str, str, str, bool], int, str]:
        command, flag, value, _ = run
        done = compaction(command, *_base(command, flag, places), flag, value, timeout=300)
        return run, done.returncode, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, runs))
    tracebacks = [run for run, _, stderr in results if "Traceback" in stderr]
    assert not tracebacks
    wrong = [
        (run, code, stderr)
        for run, code, stderr in results
        if run[3] and (code != 2 or len(stderr.strip().splitlines()) != 1)
    ]
    assert not wrong
    assert len(runs) > 150  # every command's options were walked


def refused_session(path: Path) -> Path:
    """A session compress refuses: its last record written twice (a duplicate uuid on the chain)."""
    long_session(path)
    lines = path.read_bytes().split(b"\n")
    lines.insert(len(lines) - 1, lines[-2])
    path.write_bytes(b"\n".join(lines))
    make_idle(path.parent)
    return path


def test_a_refusal_is_reported_every_night_it_persists_and_quiet_still_says_so(tmp_path: Path) -> None:
    refused_session(tmp_path / "projects" / "p" / "s.jsonl")
    night = (
        "compress", str(tmp_path / "projects"), "--in-place", "--state-dir", str(tmp_path / "state"),
        "--no-verify-resume", "--min-tokens", "0", "--quiet",
    )  # fmt: skip
    first = compaction(*night, "--report-dir", str(tmp_path / "r1"))
    second = compaction(*night, "--report-dir", str(tmp_path / "r2"), "--log-format", "json")
    assert first.returncode == 1 and second.returncode == 1, second.stderr
    assert "p/s.jsonl: declined refused" in first.stderr and "1 session(s) failed" in first.stderr
    events = [json.loads(line) for line in second.stderr.splitlines()]  # every stderr line is JSON
    [line] = [e["event"] for e in events if "p/s.jsonl" in e["event"]]
    assert "skipped-unchanged-declined refused" in line and "refused-since:20" in line
    assert all(e["level"] == "error" for e in events)


def test_quiet_validate_prints_one_line_per_failed_session_and_the_counts(tmp_path: Path) -> None:
    refused_session(tmp_path / "projects" / "p" / "bad.jsonl")
    long_session(tmp_path / "projects" / "p" / "good.jsonl")
    done = compaction("validate", str(tmp_path / "projects"), "--report-dir", str(tmp_path / "r"), "--quiet")
    assert done.returncode == 1 and done.stdout == ""
    lines = ours(done.stderr)
    assert len(lines) == 2 and lines[0].startswith("compaction: error: projects/p/bad.jsonl: refused")
    assert "1 session(s) failed" in lines[1]


def test_a_closed_stdout_does_not_change_the_exit_code(tmp_path: Path) -> None:
    long_session(tmp_path / "projects" / "p" / "good.jsonl")
    refused_session(tmp_path / "projects" / "q" / "bad.jsonl")
    for root, expected in (("p", 0), ("q", 1)):
        reader, writer = os.pipe()
        os.close(reader)  # the reader is gone before the first line, like `| head -0`
        command = [*compaction_command(), "validate", str(tmp_path / "projects" / root), "--report-dir",
                   str(tmp_path / f"r-{root}")]  # fmt: skip
        done = subprocess.run(
            command, stdout=writer, stderr=subprocess.PIPE, text=True, check=False, timeout=300
        )
        os.close(writer)
        assert done.returncode == expected, done.stderr
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_root_without_session_files_says_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = compaction("validate", str(tmp_path / "empty"), "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 0 and done.stdout == ""
    assert ours(done.stderr) == [
        f"compaction: note: no session files (*.jsonl, *.json) under {tmp_path / 'empty'}"
    ]
