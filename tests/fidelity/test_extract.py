"""What the probes read out of a summarized span: each class from the records that state it."""

from __future__ import annotations

from pipeline.fidelity import Probe, ProbeClass, Resolution, extract_probes
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.shell import CommandOutcome, FileAction
from tests.fidelity._items import bash, call, prompt, say


def of(probes: tuple[Probe, ...], klass: ProbeClass) -> list[Probe]:
    return [probe for probe in probes if probe.klass is klass]


def test_every_human_message_is_a_probe_without_the_context_the_client_added() -> None:
    span = [
        prompt(1, "<ide_opened_file>The user opened x.py</ide_opened_file>Rename   the flag"),
        say(2, "Done."),
        prompt(3, "yes"),
        EvidenceItem(4, EvidenceKind.COMMAND, "<command-name>/clear</command-name>"),
    ]
    assert [(p.line, p.key) for p in of(extract_probes(span), ProbeClass.HUMAN)] == [
        (1, "Rename the flag"),
        (3, "yes"),
    ]


def test_files_come_from_successful_file_tools_and_shell_commands_and_a_modified_file_is_modified() -> None:
    span = [
        *call(1, "Read", {"file_path": "/r/a.py"}, "1 import os"),
        *call(3, "Edit", {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"}, "updated"),
        *call(5, "Read", {"file_path": "/r/missing.py"}, "File does not exist.", is_error=True),
        *call(7, "Edit", {"file_path": "/r/b.py"}, "String to replace not found in file.", is_error=True),
        *bash(9, "cat /r/notes.md && sed -i s/x/y/ /r/c.py", "ok"),
        *call(11, "Glob", {"pattern": "**/*.py"}, "/r/a.py"),
        *call(13, "Grep", {"pattern": "x", "path": "/r"}, "a.py:1"),
    ]
    probes = extract_probes(span)
    assert [(p.line, p.key) for p in of(probes, ProbeClass.FILE_MODIFIED)] == [(3, "/r/a.py"), (9, "/r/c.py")]
    assert [(p.line, p.key) for p in of(probes, ProbeClass.FILE_READ)] == [(9, "/r/notes.md")]


def test_each_command_is_probed_once_with_the_outcome_of_its_latest_run() -> None:
    span = [
        *bash(1, "pytest  -x", "Exit code 1\nFAILED t.py::a"),
        *bash(3, "ls", "a\nb"),
        *bash(5, "pytest -x", "3 passed"),
        *bash(7, "sleep 100", "Command running in background with ID: bash_3"),
        *bash(9, "rm -rf build", "The user doesn't want to proceed with this tool use.", is_error=True),
    ]
    assert [(p.line, p.key, p.outcome) for p in of(extract_probes(span), ProbeClass.COMMAND)] == [
        (3, "ls", CommandOutcome.PASSED),
        (5, "pytest -x", CommandOutcome.PASSED),
        (7, "sleep 100", CommandOutcome.UNKNOWN),
        (9, "rm -rf build", CommandOutcome.CANCELED),
    ]


def test_an_error_names_its_signature_its_target_and_the_action_that_resolved_it() -> None:
    span = [
        *bash(1, "pytest -x", "Exit code 1\nFAILED t.py::test_a - AssertionError"),
        *call(
            3,
            "Edit",
            {"file_path": "/r/a.py"},
            "<tool_use_error>File has not been read yet.</tool_use_error>",
            is_error=True,
        ),
        *call(5, "Read", {"file_path": "/r/a.py"}, "1 x"),
        *call(7, "Edit", {"file_path": "/r/a.py"}, "updated"),
        *bash(9, "make", "Exit code 2"),
    ]
    later = bash(20, "pytest -x", "1 passed")
    errors = of(extract_probes(span, later), ProbeClass.ERROR)
    assert [(e.line, e.kind, e.key, e.target, e.command) for e in errors] == [
        (2, "failed-command", "FAILED t.py::test_a - AssertionError", "", "pytest -x"),
        (4, "tool-error", "File has not been read yet.", "/r/a.py", ""),
        (10, "failed-command", "", "", "make"),
    ]
    assert errors[0].resolution == Resolution(command="pytest -x")  # resolved in the kept tail
    assert errors[1].resolution == Resolution(path="/r/a.py", action=FileAction.MODIFIED)
    assert errors[2].resolution is None


def test_test_failures_in_a_test_run_s_output_are_an_error_even_with_a_zero_status() -> None:
    span = bash(1, "pytest | tail -3", "FAILED t.py::test_b - KeyError\n1 failed, 3 passed")
    (error,) = of(extract_probes(span), ProbeClass.ERROR)
    assert error.key == "FAILED t.py::test_b - KeyError" and error.outcome is CommandOutcome.FAILED


def test_a_rejection_is_an_error_about_what_was_rejected_with_the_user_s_reason() -> None:
    reason = (
        "The user doesn't want to proceed. The user provided the following reason for the rejection: use pnpm"
    )
    span = [
        *bash(1, "npm install", reason, is_error=True),
        *call(
            3,
            "Write",
            {"file_path": "/r/CLAUDE.md", "content": "x"},
            "The user doesn't want to proceed.",
            is_error=True,
        ),
    ]
    errors = of(extract_probes(span), ProbeClass.ERROR)
    assert [(e.kind, e.key, e.target) for e in errors] == [
        ("rejected", "use pnpm", "npm install"),
        ("rejected", "", "/r/CLAUDE.md"),
    ]


def test_the_same_error_twice_is_one_probe_at_its_latest_occurrence() -> None:
    span = [
        *bash(1, "pytest", "Exit code 1\nE999 boom in a.py"),
        *bash(3, "pytest", "Exit code 1\nE999 boom in a.py"),
    ]
    assert [e.line for e in of(extract_probes(span), ProbeClass.ERROR)] == [4]


def test_identifiers_come_from_what_was_said_and_run_never_from_file_contents() -> None:
    span = [
        prompt(1, "See https://github.com/o/r/issues/12**, ticket PROJ-42 and #7; UTF-8 is no ticket"),
        say(2, "Upgrading to v2.1.0 and serving on localhost:8080."),
        *call(3, "Write", {"file_path": "/r/package.json", "content": '"left-pad": "1.3.0"'}, "ok"),
        *bash(5, "curl http://127.0.0.1:9000/health --retry 3", "ok"),
    ]
    found = [(p.kind, p.key) for p in of(extract_probes(span), ProbeClass.IDENTIFIER)]
    assert found == [
        ("url", "https://github.com/o/r/issues/12"),
        ("issue", "#7"),
        ("ticket", "PROJ-42"),
        ("version", "v2.1.0"),
        ("port", "8080"),
        ("url", "http://127.0.0.1:9000/health"),
        ("port", "9000"),
    ]


def test_the_last_state_is_the_last_message_the_open_todos_and_the_work_still_running() -> None:
    todos = {
        "todos": [
            {"content": "Write the parser", "status": "completed"},
            {"content": "Add tests", "status": "pending"},
        ]
    }
    span = [
        *call(1, "TodoWrite", todos, "Todos have been modified successfully."),
        *bash(3, "npm run dev", "Command running in background with ID: bash_1"),
        *bash(5, "make watch", "Command running in background with ID: bash_2"),
        say(7, "The parser is written; the tests come next."),
    ]
    later = call(10, "KillShell", {"shell_id": "bash_2"}, "Successfully killed shell: bash_2")
    state = [(p.kind, p.key) for p in of(extract_probes(span, later), ProbeClass.LAST_STATE)]
    assert state == [
        ("latest-message", "The parser is written; the tests come next."),
        ("todo", "Add tests"),
        ("background-shell", "npm run dev"),
    ]


def test_a_todo_list_the_kept_tail_replaces_is_not_the_last_state() -> None:
    todos = {"todos": [{"content": "Add tests", "status": "pending"}]}
    span = call(1, "TodoWrite", todos, "ok")
    later = call(10, "TodoWrite", {"todos": []}, "ok")
    assert of(extract_probes(span, later), ProbeClass.LAST_STATE) == []
    assert [p.key for p in of(extract_probes(span), ProbeClass.LAST_STATE)] == ["Add tests"]


def test_a_probe_s_anchor_is_a_short_digest_that_tells_facts_apart() -> None:
    first, second = (Probe(ProbeClass.COMMAND, 1, key) for key in ("ls", "ls -la"))
    assert len(first.anchor) == 12 and first.anchor != second.anchor
    assert first.anchor == Probe(ProbeClass.COMMAND, 9, "ls").anchor  # the fact, not where it was
    assert all(char in "0123456789abcdef" for char in first.anchor)


def test_what_follows_may_come_from_another_file_whose_line_numbers_say_nothing() -> None:
    span = bash(1, "make build", "Exit code 2\nerror: missing header foo.h")
    later = bash(1, "make build", "ok")  # the candidate's line 1: another file, another record
    probes = extract_probes(span, later)
    assert [(p.klass, p.key) for p in probes if p.klass is ProbeClass.COMMAND] == [
        (ProbeClass.COMMAND, "make build")
    ]
    (error,) = of(probes, ProbeClass.ERROR)
    assert error.resolution == Resolution(command="make build")
    assert of(extract_probes(later, span), ProbeClass.ERROR) == []  # the span's own failure is not later's
