"""The deterministic summary's lists of files, commands, errors and refusals, scored by the real probes."""

from __future__ import annotations

from dataclasses import replace

from pipeline.fidelity import ProbeClass, extract_probes, resumed_context, score_probes
from pipeline.summarize import Heading, SummaryResult, write_summary
from pipeline.summarize.checkpoint.listing import Elsewhere, Grain, command_groups, file_groups, program
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.shell import CommandOutcome, FileAction
from pipeline.summarize.evidence.work_state import CommandRecord, FileOperation
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import summary_options
from tests.summarize.checkpoint.test_deterministic import bullet_texts, evidence_of

REFUSAL = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)


def recall(items: tuple[EvidenceItem, ...], result: SummaryResult, klass: ProbeClass) -> float | None:
    """The share of `klass`'s probes of the span that the summary alone carries."""
    summary = EvidenceItem(1, EvidenceKind.PRIOR_SUMMARY, result.text)
    return score_probes(extract_probes(items), resumed_context([summary])).of(klass).recall


def test_three_hundred_files_read_are_every_one_in_the_summary() -> None:
    b = TranscriptBuilder(seed=31)
    b.user("Read the whole tree")
    for n in range(300):
        b.tool_call("Read", {"file_path": f"/repo/pkg{n % 30}/module_{n}.py"}, f"     1→x = {n}")
    b.tool_call("Edit", {"file_path": "/repo/pkg3/module_3.py", "old_string": "x", "new_string": "y"}, "ok")
    items = evidence_of(b)
    result = write_summary(items, summary_options())
    files = bullet_texts(result.text, Heading.FILES)
    assert not any(" more" in bullet for bullet in files)  # never cut to "and N more"
    assert files[0].startswith("In /repo/pkg3/: modified (1): module_3.py; read (9): module_33.py, ")
    assert "Read in /repo/pkg0/ (10): module_0.py, module_30.py, module_60.py" in files[1]
    assert recall(items, result, ProbeClass.FILE_READ) == 1.0
    assert recall(items, result, ProbeClass.FILE_MODIFIED) == 1.0


def test_an_errors_first_line_survives_verbatim_with_its_exception_line_and_outcome() -> None:
    b = TranscriptBuilder(seed=32)
    b.user("Run the job")
    trace = (
        "Exit code 1\nwarning: config file /etc/job.toml is older than the schema (v3)\n"
        'Traceback (most recent call last):\n  File "job.py", line 9, in <module>\n    run()\n'
        "KeyError: 'tenant_id' missing from the request payload"
    )
    b.tool_call("Bash", {"command": "python job.py --tenant acme"}, trace, is_error=True)
    mcp = "MCP error -32603: the tracker refused the issue: project TRK is archived"
    b.tool_call("mcp__tracker__create_issue", {"title": "Broken job"}, mcp, is_error=True)
    items = evidence_of(b)
    result = write_summary(items, summary_options())
    errors = bullet_texts(result.text, Heading.ERRORS)
    assert errors == [
        "Bash failed (exit 1), unresolved: python job.py --tenant acme — warning: config file "
        "/etc/job.toml is older than the schema (v3) | KeyError: 'tenant_id' missing from the request payload",
        f"mcp__tracker__create_issue error, unresolved — {mcp}",
    ]
    assert recall(items, result, ProbeClass.ERROR) == 1.0


def test_a_refusal_is_the_users_decision_beside_the_instructions_not_an_error() -> None:
    b = TranscriptBuilder(seed=33)
    b.user("Clean the build folder")
    b.tool_call("Bash", {"command": "rm -rf build/"}, REFUSAL, is_error=True)
    b.user("Only remove the cache then")
    items = evidence_of(b)
    result = write_summary(items, summary_options())
    assert bullet_texts(result.text, Heading.CONSTRAINTS) == [
        "Clean the build folder",
        "User declined Bash: rm -rf build/",
        "Only remove the cache then",
    ]
    assert bullet_texts(result.text, Heading.ERRORS) == ["None"]
    assert recall(items, result, ProbeClass.ERROR) == 1.0  # the probe of the refusal is carried


def test_every_refusal_is_kept_with_the_human_messages_when_the_summary_is_fitted() -> None:
    b = TranscriptBuilder(seed=34)
    for n in range(30):
        b.user(f"request {n} " + "y" * 1500)
        b.tool_call("Bash", {"command": f"rm -rf cache{n}/"}, REFUSAL, is_error=True)
    options = replace(summary_options(), char_budget=30_000, max_bullets_per_section=3)
    items = evidence_of(b)
    result = write_summary(items, options)
    assert result.fit is not None and len(result.text) <= 30_000
    declined = [d for d in bullet_texts(result.text, Heading.CONSTRAINTS) if d.startswith("User declined")]
    assert declined == [f"User declined Bash: rm -rf cache{n}/" for n in range(30)]
    assert recall(items, result, ProbeClass.ERROR) == 1.0


def test_a_summary_over_its_room_counts_its_lists_instead_of_dropping_them() -> None:
    b = TranscriptBuilder(seed=35)
    for n in range(40):
        b.user(f"request {n} " + "z" * 400)
        for k in range(12):
            b.tool_call("Read", {"file_path": f"/repo/d{k}/file_{n}_{k}.py"}, "1→x")
        b.tool_call("Bash", {"command": f"make target-{n} " + "--verbose " * 20}, "Exit code 0\nok")
    options = replace(summary_options(), char_budget=12_000)
    result = write_summary(evidence_of(b), options)
    assert result.fit is not None and len(result.text) <= 12_000
    files = bullet_texts(result.text, Heading.FILES)
    assert files[0] == "Read 40 files in /repo/d0/"
    counted = sum(int(bullet.split(" ")[1]) for bullet in files if bullet.startswith("Read "))
    assert counted == 480  # every file is accounted for, by directory
    (commands,) = bullet_texts(result.text, Heading.COMMANDS)
    assert commands.startswith("make: 40 commands (40 passed)")


def test_lists_group_by_directory_and_program() -> None:
    ops = (
        FileOperation("/r/a/x.py", FileAction.READ, ("Read",), (3,)),
        FileOperation("/r/b/y.py", FileAction.MODIFIED, ("Edit",), (5,)),
        FileOperation("/r/a/z.py", FileAction.READ, ("Read",), (9,)),
        FileOperation("notes.md", FileAction.READ, ("Read",), (11,)),
    )
    assert [b.text for b in file_groups(ops, Grain.NAMES)] == [
        "Modified: /r/b/y.py",
        "Read in /r/a/ (2): x.py, z.py",
        "Read: notes.md",
    ]
    assert [b.text for b in file_groups(ops, Grain.COUNTS)] == [
        "Modified 1 file in /r/b/",
        "Read 2 files in /r/a/",
        "Read 1 file",
    ]
    both = (*ops, FileOperation("/r/a/w.py", FileAction.MODIFIED, ("Write",), (12,)))
    assert [b.text for b in file_groups(both, Grain.NAMES)] == [  # a directory is written once
        "In /r/a/: modified (1): w.py; read (2): x.py, z.py",
        "Modified: /r/b/y.py",
        "Read: notes.md",
    ]
    assert file_groups(both, Grain.COUNTS)[0].text == "Modified 1 file, read 2 files in /r/a/"
    runs = (
        CommandRecord("git status", CommandOutcome.PASSED, (2, 3), validation=False),
        CommandRecord("FOO=1 pytest -x", CommandOutcome.FAILED, (4, 5), validation=True),
        CommandRecord("git push", CommandOutcome.CANCELED, (6, 7), validation=False),
    )
    assert [(line, b.text) for line, b in command_groups(runs, Grain.NAMES)] == [
        (7, "git: 2 commands (1 canceled, 1 passed)\ncanceled: `git push`\npassed: `git status`"),
        (5, "pytest: 1 command (1 failed)\nfailed: `FOO=1 pytest -x`"),
    ]
    counted = [b.text for _, b in command_groups(runs, Grain.COUNTS)]
    assert counted == [
        "git: 2 commands (1 canceled, 1 passed); 2 not named for room",
        "pytest: 1 command (1 failed); 1 not named for room",
    ]
    elsewhere = Elsewhere(under_errors=frozenset({"FOO=1 pytest -x"}), declined=frozenset({"git push"}))
    said = [b.text for _, b in command_groups(runs, Grain.COUNTS, frozenset({"git status"}), elsewhere)]
    assert said == [  # every command is named, here or where another section says how it ended
        "git: 2 commands (1 canceled, 1 passed); 1 declined by the user (see constraints)\npassed: `git status`",
        "pytest: 1 command (1 failed); 1 named under Errors",
    ]
    assert program("/usr/bin/env") == "env" and program("A=1 B=2 make -j4") == "make"


def test_a_counted_list_still_names_its_newest_commands_while_the_room_holds_them() -> None:
    b = TranscriptBuilder(seed=36)
    for n in range(40):
        b.user(f"request {n} " + "z" * 300)
        b.tool_call("Read", {"file_path": f"/repo/d{n % 4}/file_{n}.py"}, "1→x")
        b.tool_call("Bash", {"command": f"make target-{n} " + "--verbose " * 30}, "Exit code 0\nok")
    options = replace(summary_options(), char_budget=18_000)
    result = write_summary(evidence_of(b), options)
    assert result.fit is not None and len(result.text) <= 18_000
    (commands,) = bullet_texts(result.text, Heading.COMMANDS)
    head, named = commands.split("\n")
    numbers = [int(part.split(" ")[0].removeprefix("target-")) for part in named.split("`make ")[1:]]
    assert 0 < len(numbers) < 40 and numbers == list(range(40 - len(numbers), 40))  # the newest, named
    assert head == f"make: 40 commands (40 passed); {40 - len(numbers)} not named for room"  # all counted
    assert all(bullet.startswith("Read in /repo/d") for bullet in bullet_texts(result.text, Heading.FILES))


def test_hundreds_of_distinct_commands_over_the_room_stay_recoverable_with_how_they_ended() -> None:
    b = TranscriptBuilder(seed=37)
    programs = ("git", "pytest", "npm", "make", "cargo", "ruff")
    for n in range(300):
        if n % 10 == 0:
            b.user(f"request {n}: keep going with batch {n // 10} and report what fails " + "w" * 150)
        command = f"{programs[n % 6]} job-{n} --shard {n % 17}"
        if n % 7 == 0:  # fails, and a quarter of those pass when run again
            error = f"Exit code 1\n{programs[n % 6]}: error: shard {n % 17} of job-{n} is broken"
            b.tool_call("Bash", {"command": command}, error, is_error=True)
            if n % 4 == 0:
                b.tool_call("Bash", {"command": command}, "Exit code 0\nok")
        elif n % 11 == 0:
            b.tool_call("Bash", {"command": f"rm -rf out-{n}"}, REFUSAL, is_error=True)
        else:
            b.tool_call("Bash", {"command": command}, f"done {n}")
        b.tool_call("Read", {"file_path": f"/repo/src/d{n % 40}/f{n}.py"}, "1→x")
    items = evidence_of(b)
    options = replace(summary_options(), char_budget=25_000)  # 30,578 to hold everything
    result = write_summary(items, options)
    assert result.fit is not None and len(result.text) <= 25_000  # short of room, within budget
    commands = bullet_texts(result.text, Heading.COMMANDS)
    assert any("named under Errors" in bullet for bullet in commands)  # not named twice
    assert any("declined by the user" in bullet for bullet in commands)
    assert (recall(items, result, ProbeClass.COMMAND) or 0) >= 0.95
    assert recall(items, result, ProbeClass.FILE_READ) == 1.0
    assert recall(items, result, ProbeClass.ERROR) == 1.0
    assert recall(items, result, ProbeClass.HUMAN) == 1.0
