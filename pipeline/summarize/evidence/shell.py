"""Shell commands, read the way a POSIX shell would: which files they touch, which are validation.

The command line is split into simple commands by `shell_lex`; this module reads each one: its
program (assignments, reserved words and wrappers such as `sudo` or `timeout 5` removed), the files
its operands and redirections read or modify, and whether it runs tests, a linter, a type checker
or a build. A command that cannot be lexed (an unclosed quote) yields no file operations, never a
guess, and is still checked for validation programs word by word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.summarize.evidence.shell_lex import ShellParse, SimpleCommand, parse_shell

__all__ = [
    "CommandFacts",
    "CommandOutcome",
    "FileAction",
    "ShellFileOp",
    "ShellParse",
    "SimpleCommand",
    "analyze_command",
    "background_id",
    "is_validation_command",
    "outcome_of",
    "parse_shell",
    "shell_file_operations",
]

_WRITES: Final = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_READS: Final = frozenset({"<", "<>"})
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

_RESERVED: Final = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time"})
_WRAPPERS: Final = {
    "sudo": 0,
    "env": 0,
    "nohup": 0,
    "nice": 0,
    "command": 0,
    "exec": 0,
    "builtin": 0,
    "stdbuf": 0,
    "timeout": 1,
}  # value: operands the wrapper takes before the command
_MODIFY_ALL: Final = frozenset({"rm", "rmdir", "unlink", "touch", "mkdir", "truncate", "shred", "mv", "tee"})
_COPY_LIKE: Final = frozenset({"cp", "install", "ln"})  # the last operand is written, the others read
_READ_ALL: Final = frozenset({"cat", "head", "tail", "less", "more", "wc"})
_GREP_LIKE: Final = frozenset({"grep", "egrep", "fgrep", "rg"})
_VALUE_OPTIONS: Final = {
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c", "-s"}),
    "grep": frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "-d", "-D"}),
    "egrep": frozenset({"-e", "-f", "-A", "-B", "-C", "-m"}),
    "fgrep": frozenset({"-e", "-f", "-A", "-B", "-C", "-m"}),
    "rg": frozenset({"-e", "-f", "-g", "-t", "-T", "-A", "-B", "-C", "-m", "-j", "-M", "--glob", "--type"}),
    "sed": frozenset({"-e", "-f", "-l"}),
    "truncate": frozenset({"-s", "-r"}),
    "mkdir": frozenset({"-m"}),
    "install": frozenset({"-m", "-o", "-g"}),
}
_PATTERN_OPTIONS: Final = frozenset({"-e", "-f", "--regexp", "--file", "--expression"})
_NOT_PATHS: Final = frozenset({"-", "{}", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})

_VALIDATION_TOOLS: Final = frozenset(
    {
        "pytest",
        "py.test",
        "tox",
        "nox",
        "ruff",
        "mypy",
        "pyright",
        "basedpyright",
        "flake8",
        "pylint",
        "tsc",
        "eslint",
        "biome",
        "jest",
        "vitest",
        "mocha",
        "rspec",
        "phpunit",
        "ctest",
        "golangci-lint",
        "shellcheck",
        "make",
        "gmake",
        "pre-commit",
        "stylelint",
        "hadolint",
        "bats",
        "prettier",
    }
)
_VALIDATION_SUBCOMMANDS: Final = {
    "go": frozenset({"test", "vet", "build"}),
    "cargo": frozenset({"test", "clippy", "build", "check", "nextest"}),
    "mix": frozenset({"test", "compile", "credo", "dialyzer", "format"}),
    "dotnet": frozenset({"test", "build"}),
    "gradle": frozenset({"test", "build", "check"}),
    "gradlew": frozenset({"test", "build", "check"}),
    "mvn": frozenset({"test", "verify", "package"}),
    "deno": frozenset({"test", "lint", "check"}),
    "swift": frozenset({"test", "build"}),
    "bazel": frozenset({"test", "build"}),
    "flutter": frozenset({"test", "analyze"}),
    "ty": frozenset({"check"}),
    "bun": frozenset({"test"}),
    "npm": frozenset({"test", "t"}),
}
_RUNNERS: Final = frozenset({"npx", "bunx", "uvx", "pnpx"})
_RUNNER_SUBCOMMANDS: Final = {
    "uv": frozenset({"run"}),
    "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "rye": frozenset({"run"}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"exec", "dlx"}),
    "bundle": frozenset({"exec"}),
    "npm": frozenset({"exec"}),
}
_SCRIPT_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"})
_SCRIPT_PREFIXES: Final = ("test", "lint", "build", "typecheck", "type-check", "check", "tsc", "verify")
_PYTHON_MODULES: Final = frozenset(
    {"pytest", "unittest", "mypy", "ruff", "pyright", "tox", "nox", "pylint", "flake8", "compileall"}
)
_PYTHON: Final = re.compile(r"python(\d+(\.\d+)?)?")
_MAX_RUNNER_DEPTH: Final = 4  # `uv run poetry run npx jest` nests runners; deeper is not a real command

_REJECTED: Final = ("The user doesn't want to", "[Request interrupted by user")
_EXIT_CODE: Final = re.compile(r"^Exit code (\d+)")
_TAGGED_EXIT: Final = re.compile(r"<exit_code>(\d+)</exit_code>|\(exit code (\d+)\)")
_BACKGROUND: Final = re.compile(r"Command running in background with ID: ([\w-]+)")


class FileAction(StrEnum):
    """What a command did to a file."""

    READ = "read"
    MODIFIED = "modified"


class CommandOutcome(StrEnum):
    """The durable result of a command run (seed 001's validation outcomes)."""

    PASSED = "passed"
    FAILED = "failed"
    CANCELED = "canceled"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ShellFileOp:
    """A file a command read or modified, and the program (or redirection) that did it."""

    action: FileAction
    path: str
    program: str


@dataclass(frozen=True, slots=True)
class CommandFacts:
    """What one command line does to files and whether it validates, from a single parse."""

    file_operations: tuple[ShellFileOp, ...]
    validation: bool


def analyze_command(command: str) -> CommandFacts:
    """File operations and the validation verdict of `command`, lexing it once."""
    parsed = parse_shell(command)
    validation = any(_is_validation(_command_words(simple.argv), 0) for simple in parsed.commands)
    return CommandFacts(_file_operations(parsed), validation)


def shell_file_operations(command: str) -> tuple[ShellFileOp, ...]:
    """Files `command` reads or modifies, in order; nothing for a command shlex cannot lex."""
    return _file_operations(parse_shell(command))


def _file_operations(parsed: ShellParse) -> tuple[ShellFileOp, ...]:
    if not parsed.lexed:
        return ()
    ops: list[ShellFileOp] = []
    for simple in parsed.commands:
        for operator, target in simple.redirects:
            if operator == ">&" and (target.isdigit() or target == "-"):
                continue  # `2>&1`: a descriptor copy, not a file
            if _is_path(target) and (operator in _WRITES or operator in _READS):
                action = FileAction.READ if operator in _READS else FileAction.MODIFIED
                ops.append(ShellFileOp(action, target, operator))
        ops.extend(_program_ops(_command_words(simple.argv)))
    return tuple(ops)


def is_validation_command(command: str) -> bool:
    """Whether any simple command in `command` runs tests, a linter, a type checker or a build."""
    return any(_is_validation(_command_words(simple.argv), 0) for simple in parse_shell(command).commands)


def outcome_of(text: str, is_error: bool) -> CommandOutcome:
    """The outcome a tool result reports: rejection, exit code, error flag, background start."""
    if text.startswith(_REJECTED):
        return CommandOutcome.CANCELED
    tagged = _TAGGED_EXIT.search(text)
    match = tagged or _EXIT_CODE.match(text)
    if match is not None:
        code = next(group for group in match.groups() if group is not None)
        return CommandOutcome.PASSED if int(code) == 0 else CommandOutcome.FAILED
    if is_error:
        return CommandOutcome.FAILED
    if _BACKGROUND.search(text):
        return CommandOutcome.UNKNOWN
    return CommandOutcome.PASSED


def background_id(text: str) -> str | None:
    """The shell id of a command Claude Code started in the background, from its tool result."""
    match = _BACKGROUND.search(text)
    return match.group(1) if match else None


# ---------------------------------------------------------------------------------------------- reading
def _command_words(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The words from the program name on: assignments, reserved words and wrappers removed."""
    words = list(argv)
    while words:
        head = words[0]
        if head in _RESERVED or _ASSIGNMENT.match(head):
            words.pop(0)
        elif head in _WRAPPERS:
            takes = _WRAPPERS[head]
            words.pop(0)
            while words and (words[0].startswith("-") or _ASSIGNMENT.match(words[0])):
                words.pop(0)
            del words[:takes]
        else:
            break
    if words:
        words[0] = words[0].rsplit("/", 1)[-1]  # `/usr/bin/rm`, `./gradlew`, `node_modules/.bin/jest`
    return tuple(words)


def _operands(program: str, args: tuple[str, ...]) -> tuple[list[str], set[str]]:
    """Operands of a command (option values skipped) and the options given."""
    takes_value = _VALUE_OPTIONS.get(program, frozenset())
    operands: list[str] = []
    options: set[str] = set()
    skip = False
    literal = False
    for arg in args:
        if skip:
            skip = False
        elif literal or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg == "--":
            literal = True
        else:
            name = arg.split("=", 1)[0]
            options.add(name)
            skip = arg in takes_value
    return operands, options


def _program_ops(words: tuple[str, ...]) -> list[ShellFileOp]:
    if not words:
        return []
    program, args = words[0], words[1:]
    operands, options = _operands(program, args)
    operands = [operand for operand in operands if operand]
    reads: list[str] = []
    writes: list[str] = []
    if program in _MODIFY_ALL:
        writes = operands
    elif program in _COPY_LIKE and len(operands) >= 2:
        reads, writes = operands[:-1], operands[-1:]
    elif program in _READ_ALL:
        reads = operands
    elif program in _GREP_LIKE:
        reads = operands if options & _PATTERN_OPTIONS else operands[1:]
    elif program == "sed":
        files = operands if options & _PATTERN_OPTIONS else operands[1:]
        in_place = any(_is_in_place(option) for option in options)
        writes, reads = (files, []) if in_place else ([], files)
    ops = [ShellFileOp(FileAction.READ, path, program) for path in reads if _is_path(path)]
    ops.extend(ShellFileOp(FileAction.MODIFIED, path, program) for path in writes if _is_path(path))
    return ops


def _is_in_place(option: str) -> bool:
    if option.startswith("--"):
        return option == "--in-place"
    return "i" in option[1:] and not option[1:].startswith(("e", "f", "l"))


def _is_path(word: str) -> bool:
    return bool(word) and word not in _NOT_PATHS and "$" not in word and "`" not in word


def _is_validation(words: tuple[str, ...], depth: int) -> bool:  # noqa: PLR0911 - one return per command family
    if not words or depth > _MAX_RUNNER_DEPTH:
        return False
    program, rest = words[0], words[1:]
    if program in _VALIDATION_TOOLS:
        return True
    positional = [word for word in rest if not word.startswith("-")]
    first = positional[0] if positional else ""
    if program in _RUNNERS:
        return _is_validation(tuple(positional), depth + 1)
    if first in _RUNNER_SUBCOMMANDS.get(program, ()):
        return _is_validation(tuple(positional[1:]), depth + 1)
    if first in _VALIDATION_SUBCOMMANDS.get(program, ()):
        return True
    if program in _SCRIPT_RUNNERS:
        if first in ("run", "run-script"):
            return len(positional) > 1 and positional[1].startswith(_SCRIPT_PREFIXES)
        # pnpm, yarn and bun run a package script named directly; npm only `test` (above)
        return program != "npm" and first.startswith(_SCRIPT_PREFIXES)
    if _PYTHON.fullmatch(program) and "-m" in rest:
        module = rest[rest.index("-m") + 1] if rest.index("-m") + 1 < len(rest) else ""
        return module.split(".")[0] in _PYTHON_MODULES
    return False
