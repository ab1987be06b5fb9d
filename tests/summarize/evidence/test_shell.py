"""Shell commands are read like a POSIX shell reads them: quotes, pipes, `&&`, redirections."""

from __future__ import annotations

import pytest

from pipeline.summarize.evidence.shell import (
    CommandOutcome,
    FileAction,
    analyze_command,
    background_id,
    is_validation_command,
    outcome_of,
    parse_shell,
    shell_file_operations,
)

R, M = FileAction.READ, FileAction.MODIFIED


def ops(command: str) -> list[tuple[str, str]]:
    return [(op.action.value, op.path) for op in shell_file_operations(command)]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -rf build/ && mkdir -p out/dir", [("modified", "build/"), ("modified", "out/dir")]),
        ("echo hi > out.txt; echo more >> log.txt", [("modified", "out.txt"), ("modified", "log.txt")]),
        ("sort < in.txt | uniq | tee result.txt", [("read", "in.txt"), ("modified", "result.txt")]),
        ("cat a.txt b.txt | grep -n foo", [("read", "a.txt"), ("read", "b.txt")]),
        ("grep -rn 'def main' src/ tests/", [("read", "src/"), ("read", "tests/")]),
        ("grep -e pattern -A 3 notes.md", [("read", "notes.md")]),
        ("grep '>' notes.md", [("read", "notes.md")]),  # a quoted operator is an argument
        ('echo "a ; rm b > c"', []),  # operators inside quotes do nothing
        ("head -n 20 x.py && tail -5 y.py", [("read", "x.py"), ("read", "y.py")]),
        ("sed -i 's/a/b/' x.py y.py", [("modified", "x.py"), ("modified", "y.py")]),
        ("sed -i '' -e 's/a/b/' mac.py", [("modified", "mac.py")]),
        ("sed -n '1,5p' x.py", [("read", "x.py")]),
        ("mv old.py new.py", [("modified", "old.py"), ("modified", "new.py")]),
        ("cp a.txt b.txt dest/", [("read", "a.txt"), ("read", "b.txt"), ("modified", "dest/")]),
        ("touch 'with space.txt'", [("modified", "with space.txt")]),
        ("touch my\\ file.txt", [("modified", "my file.txt")]),
        ("pytest -q 2>&1 | tail -20", []),  # `2>&1` copies a descriptor, it writes no file
        ("make build > /dev/null 2> errors.log", [("modified", "errors.log")]),
        ("(cd sub && make) > log.txt", [("modified", "log.txt")]),
        ("FOO=1 sudo -E rm x  # rm not-this\nls", [("modified", "x")]),
        ("cat > gen.py <<'EOF'\nrm -rf /\necho > nope\nEOF\npython gen.py", [("modified", "gen.py")]),
        ("rm $TMPDIR/x", []),  # unexpanded variables are not paths
        ("echo 'unterminated > x.txt", []),  # unparsable: no guesses
        ("", []),
    ],
)
def test_file_operations_of_a_command(command: str, expected: list[tuple[str, str]]) -> None:
    assert ops(command) == expected


def test_an_unparsable_command_is_reported_as_not_lexed_and_still_split_into_words() -> None:
    parsed = parse_shell("pytest -q && echo 'oops")
    assert not parsed.lexed
    assert parsed.commands[0].argv == ("pytest", "-q")
    assert is_validation_command("pytest -q && echo 'oops")


def test_pipes_and_lists_split_into_simple_commands() -> None:
    parsed = parse_shell("cd a && npm test | tee out.log; echo done || true")
    assert parsed.lexed
    assert [c.argv for c in parsed.commands] == [
        ("cd", "a"),
        ("npm", "test"),
        ("tee", "out.log"),
        ("echo", "done"),
        ("true",),
    ]


@pytest.mark.parametrize(
    ("command", "validation"),
    [
        ("pytest -q", True),
        ("python -m pytest tests/ -x", True),
        ("python3.11 -m mypy pipeline", True),
        ("uv run pytest", True),
        ("cd web && npm test", True),
        ("npm run lint", True),
        ("npm run typecheck", True),
        ("pnpm test", True),
        ("yarn build", True),
        ("go test ./...", True),
        ("go vet ./...", True),
        ("cargo test --all", True),
        ("cargo clippy -- -D warnings", True),
        ("make", True),
        ("ruff check .", True),
        ("mypy --strict pkg", True),
        ("npx tsc --noEmit", True),
        ("npx eslint src", True),
        ("timeout 60 npm test", True),
        ("/usr/local/bin/pytest", True),
        ("mix test 2>&1 | tail -20", True),
        ("npm install", False),
        ("git status", False),
        ("python script.py", False),
        ("echo pytest", False),
        ("cargo run", False),
    ],
)
def test_validation_commands_are_recognized(command: str, validation: bool) -> None:
    assert is_validation_command(command) is validation
    assert analyze_command(command).validation is validation


@pytest.mark.parametrize(
    ("text", "is_error", "outcome"),
    [
        ("3 passed in 0.2s", False, CommandOutcome.PASSED),
        ("Exit code 1\nFAILED test_x", True, CommandOutcome.FAILED),
        ("Exit code 2\nboom", False, CommandOutcome.FAILED),
        ("something broke", True, CommandOutcome.FAILED),
        ("The user doesn't want to proceed with this tool use.", True, CommandOutcome.CANCELED),
        ("Command running in background with ID: b1c2", False, CommandOutcome.UNKNOWN),
        ("<status>completed</status>\n<exit_code>0</exit_code>", False, CommandOutcome.PASSED),
        ("<status>completed</status>\n<exit_code>1</exit_code>", False, CommandOutcome.FAILED),
    ],
)
def test_outcome_of_a_result(text: str, is_error: bool, outcome: CommandOutcome) -> None:
    assert outcome_of(text, is_error) is outcome


def test_background_ids_are_read_from_results() -> None:
    started = "Command running in background with ID: b7636e2. Output is being written to: /tmp/x"
    assert background_id(started) == "b7636e2"
    assert background_id("all good") is None
