"""Each class's rule, both ways: a fact the resumed context carries counts, one absent or mangled
does not."""

from __future__ import annotations

import pytest

from pipeline.fidelity import Probe, ProbeClass, Resolution, carried, extract_probes
from pipeline.formats.claude_code.bounded_output import CLEARED_MARKER
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.summarize.evidence.shell import CommandOutcome, FileAction
from tests.fidelity._items import bash, call, context, prompt, say

LONG_PROMPT = "Please rename the --verbose flag to --debug everywhere, and keep the old one as an alias."
REWRAPPED = LONG_PROMPT.replace("flag to", "flag\n  to")


def probe_of(
    klass: ProbeClass, *span: EvidenceItem | list[EvidenceItem], later: list[EvidenceItem] | None = None
) -> Probe:
    """The one probe of `klass` the span's items (single or in lists) give."""
    items = [item for part in span for item in (part if isinstance(part, list) else [part])]
    (found,) = [p for p in extract_probes(items, later or []) if p.klass is klass]
    return found


# ---------------------------------------------------------------------------------------- human
@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        (f"## User messages\n- {LONG_PROMPT} (L1)", True),
        (f"- {REWRAPPED} (L1)", True),  # re-wrapped and indented
        (f"- {LONG_PROMPT[:40]}[... 51 more characters at L1] (L1)", False),  # cut
        (
            "- Please rename the verbose flag to debug everywhere, keeping an alias. (L1)",
            False,
        ),  # paraphrased
        (f"- Xx{LONG_PROMPT} (L1)", False),  # glued to another word: not this message
    ],
)
def test_a_human_message_is_kept_only_whole(summary: str, kept: bool) -> None:
    assert carried(probe_of(ProbeClass.HUMAN, prompt(1, LONG_PROMPT)), context(summary)) is kept


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        ("## User messages\n- yes (L7)", True),
        ('- "yes"', True),
        ("- The user said yes to the plan (L7)", False),
    ],
)
def test_a_short_human_message_must_stand_alone_on_a_summary_line(summary: str, kept: bool) -> None:
    assert carried(probe_of(ProbeClass.HUMAN, prompt(7, "yes")), context(summary)) is kept


def test_a_short_human_message_kept_as_a_human_message_of_its_own_is_carried() -> None:
    """A masked middle keeps every prompt as it was: the short one is there, as the human's."""
    probe = probe_of(ProbeClass.HUMAN, prompt(7, "ok, do vite"))
    assert carried(probe, context("- nothing", prompt(40, "ok,  do vite")))
    assert not carried(probe, context("- nothing", say(40, "ok, do vite")))  # the assistant's words
    assert not carried(probe, context("- nothing", prompt(40, "ok, do vite later")))


# ---------------------------------------------------------------------------------------- files
@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        ("- Modified 2 paths: /r/src/a.py, /r/src/b.py (L3)", True),
        ("- modified /r/src/a.py via Edit (L3)", True),
        ("- Modified /r/src/a.pyc (L3)", False),
        ("- Modified src/a.py (L3)", False),  # another spelling is another path
        ("- Modified 2 paths (see File operations below)", False),
        ("- Modified in /r/src/ (2): b.py, a.py (L3)", True),  # listed under its directory
        ("- Modified in /r/src/ (1): a.pyc (L3)", False),
        ("- Modified in /r/ (1): a.py (L3)", False),  # another directory's a.py
        ("- Modified in /x/r/src/ (1): a.py (L3)", False),  # a directory ending the same way
        ("- Modified a.py (L3)\n\n- Read in /r/src/ (1): b.py (L4)", False),  # the name before it
        ("- Modified 2 files in /r/src/ (L3)", False),  # counted, not named
    ],
)
def test_a_file_is_kept_when_its_path_stands_whole(summary: str, kept: bool) -> None:
    probe = probe_of(ProbeClass.FILE_MODIFIED, call(3, "Edit", {"file_path": "/r/src/a.py"}, "updated"))
    assert carried(probe, context(summary)) is kept


def test_a_file_the_kept_records_name_is_kept() -> None:
    probe = probe_of(ProbeClass.FILE_READ, call(3, "Read", {"file_path": "/r/a.py"}, "x"))
    assert carried(probe, context("- nothing", *call(40, "Read", {"file_path": "/r/a.py"}, "x")))
    assert not carried(probe, context("- nothing", *call(40, "Read", {"file_path": "/r/b.py"}, "x")))


# ---------------------------------------------------------------------------------------- commands
FAILED_RUN = bash(5, "uv run pytest -m unit", "Exit code 1\nFAILED t.py::a")


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        ("- failed: uv run pytest -m unit (L5, L6)", True),
        ("- Ran `uv run pytest -m unit`, which failed with one test.", True),
        ("- passed: uv run pytest -m unit (L5, L6)", False),  # the outcome mangled
        ("- uv run pytest -m unit (L5, L6)", False),  # no outcome
        ("- failed: uv run pytest -m unit -v (L5, L6)", False),  # another command
        ("- failed: uv run pytest -m unitx (L5)", False),
    ],
)
def test_a_command_is_kept_with_its_outcome(summary: str, kept: bool) -> None:
    assert carried(probe_of(ProbeClass.COMMAND, FAILED_RUN), context(summary)) is kept


def test_a_command_s_own_words_do_not_state_its_outcome() -> None:
    probe = probe_of(ProbeClass.COMMAND, bash(1, "echo failed", "Exit code 1", is_error=True))
    assert not carried(probe, context("- ran echo failed (L1)"))
    assert carried(probe, context("- failed: echo failed (L1)"))


def test_a_long_command_is_identified_by_its_head() -> None:
    script = 'python -c "\n' + "\n".join(f"print({n})" for n in range(100)) + '\n"'
    probe = probe_of(ProbeClass.COMMAND, bash(1, script, "0\n1"))
    assert carried(probe, context(f"- passed: {script[:700]}[... 90 more characters at L1] (L1)"))
    assert not carried(probe, context(f"- passed: {script[:60]}[... 700 more characters at L1] (L1)"))


def test_a_command_the_kept_records_run_is_kept_with_its_current_outcome() -> None:
    probe = probe_of(ProbeClass.COMMAND, FAILED_RUN)
    assert carried(probe, context("- nothing", *bash(50, "uv run pytest -m unit", "2 passed")))
    assert not carried(probe, context("- nothing", *bash(50, "uv run pytest -m unit -x", "2 passed")))


def test_a_kept_run_whose_output_was_cleared_carries_no_outcome() -> None:
    probe = probe_of(ProbeClass.COMMAND, FAILED_RUN)
    cleared = bash(50, "uv run pytest -m unit", CLEARED_MARKER)
    assert not carried(probe, context("- nothing", *cleared, cleared_marker=CLEARED_MARKER))
    assert carried(
        probe, context("- failed: uv run pytest -m unit (L1)", *cleared, cleared_marker=CLEARED_MARKER)
    )


def test_a_cleared_output_is_only_the_marker_of_the_format_that_clears() -> None:
    """The marker is Claude Code's wording: in a format that clears nothing, the same words are
    an output like any other, and the kept run's outcome is read from it."""
    kept = bash(50, "uv run pytest -m unit", CLEARED_MARKER)
    plain = context("- nothing", *kept).text
    marked = context("- nothing", *kept, cleared_marker=CLEARED_MARKER).text
    assert "content cleared" in plain.lower()
    assert "content cleared" not in marked.lower()


def test_a_kept_error_is_read_without_its_terminal_colours() -> None:
    colored = "Exit code 1\n\x1b[31mAssertionError\x1b[22m: expected 1 to be 2"
    error = next(p for p in extract_probes(bash(1, "npx vitest", colored, is_error=True)) if p.kind)
    assert carried(error, context("- nothing", *bash(50, "npx vitest", colored, is_error=True)))


# ---------------------------------------------------------------------------------------- errors
EDIT_ERROR = call(
    3,
    "Edit",
    {"file_path": "/r/a.py"},
    "<tool_use_error>String to replace not found in file.</tool_use_error>",
    is_error=True,
)


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        ("- Edit error on /r/a.py: String to replace not found in file. (L4)", True),
        ("- Edit error: String to replace not found in file. (L4)", False),  # which file?
        ("- Edit error on /r/a.py (L4)", False),  # what error?
        ("- Edit error on /r/a.py: String not found (L4)", False),
    ],
)
def test_a_tool_error_is_kept_with_its_signature_and_its_target(summary: str, kept: bool) -> None:
    assert carried(probe_of(ProbeClass.ERROR, EDIT_ERROR), context(summary)) is kept


SHELL_ERROR = bash(1, "python app.py", "Exit code 1\nTraceback (most recent call last):\nKeyError: 'user_id'")


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        ("- Bash error: KeyError: 'user_id' (L2)", True),
        ("- Bash error: Traceback (most recent call last): (L2)", False),
        ("- failed: python app.py (L1, L2)", False),
    ],
)
def test_a_failed_command_s_error_is_kept_with_the_line_that_tells_it_apart(summary: str, kept: bool) -> None:
    assert carried(probe_of(ProbeClass.ERROR, SHELL_ERROR), context(summary)) is kept


def test_an_error_without_output_is_kept_as_its_command_with_a_word_of_failure() -> None:
    probe = probe_of(ProbeClass.ERROR, bash(1, "make lint", "Exit code 2"))
    assert carried(probe, context("- failed: make lint (L1)"))
    assert not carried(probe, context("- passed: make lint (L1)"))


def test_a_resolved_error_is_kept_only_with_its_resolution() -> None:
    later = bash(30, "python app.py", "ok")
    probe = probe_of(ProbeClass.ERROR, SHELL_ERROR, later=later)
    assert probe.resolution == Resolution(command="python app.py")
    error = "- Bash error: KeyError: 'user_id' (L2)"
    assert not carried(probe, context(error))  # reads as still failing
    assert carried(probe, context(f"{error}\n- passed: python app.py (L30)"))
    assert carried(probe, context("- KeyError: 'user_id' at L2, resolved by defaulting the id"))
    assert carried(probe, context(error, *later))  # the kept tail runs it successfully
    assert not carried(probe, context(f"{error}\n- failed: python app.py (L30)"))


def test_a_file_error_resolved_by_a_later_edit_is_kept_with_that_edit() -> None:
    later = call(9, "Edit", {"file_path": "/r/a.py"}, "updated")
    probe = probe_of(ProbeClass.ERROR, EDIT_ERROR, later=later)
    assert probe.resolution == Resolution(path="/r/a.py", action=FileAction.MODIFIED)
    error = "- Edit error on /r/a.py: String to replace not found in file. (L4)"
    assert carried(probe, context(f"{error}\n- Modified 1 paths: /r/a.py (L9)"))
    assert not carried(probe, context(f"{error}\n- Read 1 paths: /r/a.py (L9)"))


REJECTION = bash(
    1,
    "npm install",
    "The user doesn't want to proceed with this tool use. The user provided the following reason for the rejection: use pnpm",
    is_error=True,
)


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        ("- canceled: npm install (the user rejected it: use pnpm) (L1)", True),
        ("- Bash error: The user doesn't want to proceed with this tool use. (L2)", False),  # what?
        ("- canceled: npm install (L1)", False),  # the user's reason lost
        ("- passed: npm install; use pnpm (L1)", False),
    ],
)
def test_a_rejection_is_kept_with_its_target_a_word_of_refusal_and_the_reason(
    summary: str, kept: bool
) -> None:
    assert carried(probe_of(ProbeClass.ERROR, REJECTION), context(summary)) is kept


# ---------------------------------------------------------------------------------------- identifiers
@pytest.mark.parametrize(
    ("said", "summary", "kept"),
    [
        ("see https://x.org/a/b?q=1", "- see https://x.org/a/b?q=1.", True),
        ("see https://x.org/a/b?q=1", "- see https://x.org/a/b", False),
        ("fixes #123", "- fixes #123 (L1)", True),
        ("fixes #12", "- fixes #123 (L1)", False),
        ("bump to v1.2.3", "- bump to v1.2.3 (L1)", True),
        ("bump to v1.2.3", "- bump to v1.2.30 (L1)", False),
        ("serve on localhost:8080", "- served at http://localhost:8080/", True),
        ("serve on localhost:8080", "- served on port 8080", True),
        ("serve on localhost:8080", "- served on 18080", False),
        ("JIRA-77 is open", "- JIRA-77", True),
        ("JIRA-77 is open", "- JIRA-7", False),
    ],
)
def test_an_identifier_is_kept_when_it_stands_whole(said: str, summary: str, kept: bool) -> None:
    assert carried(probe_of(ProbeClass.IDENTIFIER, prompt(1, said)), context(summary)) is kept


# ---------------------------------------------------------------------------------------- last state
def test_the_last_state_is_kept_when_its_identity_stands_in_the_context() -> None:
    probe = probe_of(ProbeClass.LAST_STATE, say(9, "The parser is done; the tests are next."))
    assert carried(probe, context("- Latest update: The parser is done; the tests are next. (L9)"))
    assert not carried(probe, context("- Latest update: The parser is done. (L9)"))


def test_a_probe_is_never_kept_by_the_original_span_itself() -> None:
    probe = probe_of(ProbeClass.COMMAND, FAILED_RUN)
    assert probe.outcome is CommandOutcome.FAILED
    assert not carried(probe, context(""))
