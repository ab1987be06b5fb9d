"""Where the installed judges are: Claude Code (`--claude`, `$COMPACTION_CLAUDE_CODE`, the pinned
build, PATH) and the Codex CLI (`--codex`, `$COMPACTION_CODEX`, the pinned build, PATH).

Both the resume proof and the `claude-code` summary provider run the user's Claude Code, and the
resume proof of a Codex rollout runs Codex; finding them is a fact about the machine, so it sits
below every stage that runs them. `reported_version` is the one reader of `--version` for both.
The pinned builds under `.cache/` exist only in a source checkout (`source_checkout`): an installed
`compaction` (pipx, uv tool, a wheel) looks where the user says and on PATH, never for a repository.

Each format's judge is one `ResumeJudge` (`JUDGES`, by format): the gate asks the judge of a
session's own format, so a tree of one agent's sessions never needs the other's client. A judge's
failures are its own `JudgeError` subclasses, each carrying the `verify-resume` exit code it maps
to and named in reports by its class: no judge failure is reported as another judge's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import ClassVar, Final, Protocol

from pipeline.errors import CompactionError
from pipeline.settings import VerifySettings
from pipeline.vocabulary import ResumeExit, SourceFormat

__all__ = [
    "CLAUDE_CODE_ENV",
    "CLAUDE_CODE_VERSION",
    "CODEX_ENV",
    "CODEX_VERSION",
    "INSTALL_HINT",
    "JUDGES",
    "OFFLINE_ENV",
    "ClaudeCodeError",
    "ClaudeCodeNotInstalled",
    "CodexError",
    "CodexNotInstalled",
    "CodexNotStarted",
    "CodexThreadNotFound",
    "JudgeError",
    "ResumeJudge",
    "find_claude_code",
    "find_codex",
    "reported_version",
    "require_claude_code",
    "require_codex",
    "source_checkout",
]

CLAUDE_CODE_VERSION: Final = "2.1.332"  # the build scripts/install-claude-code pins (goldens too)
CLAUDE_CODE_ENV: Final = "COMPACTION_CLAUDE_CODE"  # an executable, or an npm prefix holding one
INSTALL_HINT: Final = (
    "run scripts/install-claude-code in a checkout, put `claude` on PATH, or pass --claude PATH"
)
# Switches that keep Claude Code off the network apart from where we point it, its output plain.
OFFLINE_ENV: Final = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "NO_PROXY": "127.0.0.1,localhost",
    "NO_COLOR": "1",
}
_PACKAGE_EXE: Final = Path("node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
CODEX_VERSION: Final = "0.171.0"  # the build scripts/install-codex pins (the Codex goldens too)
CODEX_ENV: Final = "COMPACTION_CODEX"  # an executable, or an npm prefix holding one
CODEX_INSTALL_HINT: Final = (
    "run scripts/install-codex in a checkout, put `codex` on PATH, or pass --codex PATH"
)
# The npm wrapper is a node script choosing a native binary; the binary itself is run, so node is
# not needed at run time and a timeout kills the process that does the work.
_CODEX_PACKAGE_EXE: Final = Path(
    "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex"
)
_VERSION_TIMEOUT_SECONDS: Final = 30.0  # `--version` answers in well under a second
_VERSION_WORD: Final = re.compile(r"\d+\.\d+\.\d+\S*")


def source_checkout() -> Path | None:
    """The source checkout this package is imported from (an editable install), else None.

    A checkout is the folder above the package holding `pyproject.toml` and `config/default.toml`;
    an installed package sits in site-packages, which holds neither.
    """
    package = resources.files("pipeline")
    if not isinstance(package, Path):  # imported from a zip: never a checkout
        return None
    root = package.parent
    return (
        root if (root / "pyproject.toml").is_file() and (root / "config" / "default.toml").is_file() else None
    )


class JudgeError(CompactionError):
    """A judge (the client that resumes a format's sessions) could not give a verdict.

    Reports name the failure by its class (`code`); `verify-resume` exits with `resume_exit`.
    """

    resume_exit: ClassVar[ResumeExit] = ResumeExit.USAGE

    @property
    def code(self) -> str:
        """What a report's `resume_check.error` says: the failure's own name, never a builtin's."""
        return type(self).__name__


class ClaudeCodeError(JudgeError):
    """Running Claude Code failed."""

    resume_exit = ResumeExit.CLAUDE_CODE_FAILED


class ClaudeCodeNotInstalled(ClaudeCodeError):
    """No Claude Code executable was found where we look."""

    resume_exit = ResumeExit.USAGE

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(f"Claude Code not found (looked in {', '.join(looked_in)}); {INSTALL_HINT}")


class CodexError(JudgeError):
    """Running the Codex CLI failed."""

    resume_exit = ResumeExit.CODEX_FAILED


class CodexNotInstalled(CodexError):
    """No Codex executable was found where we look."""

    resume_exit = ResumeExit.USAGE

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(f"Codex not found (looked in {', '.join(looked_in)}); {CODEX_INSTALL_HINT}")


class CodexNotStarted(CodexError):
    """The Codex executable could not be started (not executable, wrong architecture, ...)."""

    def __init__(self, executable: str, reason: str) -> None:
        self.executable = executable
        super().__init__(f"{executable} could not be started: {reason}")


class CodexThreadNotFound(CodexError):
    """A rollout names no thread Codex could look up (no id in its file name nor a session_meta)."""

    resume_exit = ResumeExit.NOT_RESUMABLE

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"{name}: no thread id in the file name or a session_meta line")


def reported_version(executable: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The version an executable reports: the first word of `--version` shaped like one
    (`2.1.332 (Claude Code)` gives `2.1.332`, `codex-cli 0.171.0` gives `0.171.0`), or None."""
    environment = {"PATH": os.environ.get("PATH", ""), **(env or {})}
    try:
        done = subprocess.run(
            [str(executable), "--version"],
            capture_output=True,
            text=True,
            env=environment,
            timeout=_VERSION_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION_WORD.search(done.stdout) if done.returncode == 0 else None
    return found.group(0) if found else None


def _executable_in(candidate: Path, package_exe: Path = _PACKAGE_EXE) -> Path | None:
    if candidate.is_dir():
        candidate = candidate / package_exe
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _search_places(root: Path | None) -> list[Path]:
    configured = os.environ.get(CLAUDE_CODE_ENV)
    places = [Path(configured).expanduser()] if configured else []
    checkout = root or source_checkout()
    if checkout is not None:
        places.append(checkout / ".cache" / "claude-code")
    on_path = shutil.which("claude")
    if on_path:
        places.append(Path(on_path))
    return places


def find_claude_code(root: Path | None = None) -> Path | None:
    """`$COMPACTION_CLAUDE_CODE`, else the pinned build in `<root>/.cache/claude-code` (root: the
    checkout, if any), else PATH's `claude`."""
    return next((exe for place in _search_places(root) if (exe := _executable_in(place))), None)


def require_claude_code(given: Path | None = None, root: Path | None = None) -> Path:
    """`given` (an executable or npm prefix) or :func:`find_claude_code`; raise when there is none."""
    if given is not None:
        executable = _executable_in(given.expanduser())
        if executable is None:
            raise ClaudeCodeNotInstalled((str(given),))
        return executable
    executable = find_claude_code(root)
    if executable is None:
        looked = [str(place) for place in _search_places(root)]
        if shutil.which("claude") is None:
            looked.append("`claude` on PATH")
        raise ClaudeCodeNotInstalled(tuple(looked))
    return executable


def _codex_places(root: Path | None) -> list[Path]:
    configured = os.environ.get(CODEX_ENV)
    places = [Path(configured).expanduser()] if configured else []
    checkout = root or source_checkout()
    if checkout is not None:
        places.append(checkout / ".cache" / "codex")
    on_path = shutil.which("codex")
    if on_path:
        places.append(Path(on_path))
    return places


def find_codex(root: Path | None = None) -> Path | None:
    """`$COMPACTION_CODEX`, else the pinned build in `<root>/.cache/codex` (root: the checkout, if
    any), else PATH's `codex`."""
    places = _codex_places(root)
    return next((exe for place in places if (exe := _executable_in(place, _CODEX_PACKAGE_EXE))), None)


def require_codex(given: Path | None = None, root: Path | None = None) -> Path:
    """`given` (an executable or npm prefix) or :func:`find_codex`; raise when there is none."""
    if given is not None:
        executable = _executable_in(given.expanduser(), _CODEX_PACKAGE_EXE)
        if executable is None:
            raise CodexNotInstalled((str(given),))
        return executable
    executable = find_codex(root)
    if executable is None:
        raise CodexNotInstalled(tuple(str(place) for place in _codex_places(root)))
    return executable


class ResumeJudge(Protocol):
    """The client that resumes one format's sessions: what it is called and where it is found."""

    @property
    def source_format(self) -> SourceFormat:
        """The format whose sessions this judge resumes."""
        ...

    @property
    def name(self) -> str:
        """The client's name, as messages say it (`Claude Code`, `Codex`)."""
        ...

    @property
    def flag(self) -> str:
        """Its own command-line flag (`--claude`, `--codex`), "" when it has none (`--judge` names it)."""
        ...

    @property
    def install_hint(self) -> str:
        """How a user gets the client (the script of a checkout, the package, the flag)."""
        ...

    @property
    def not_installed(self) -> str:
        """The code a report gives when the client is not found (its `*NotInstalled` class name)."""
        ...

    def named(self, verify: VerifySettings) -> str:
        """The client the user named (`--claude`, `[verify] claude`, ...), or "" when none."""
        ...

    def locate(self, given: Path | None) -> Path:
        """`given` when it holds the client, else the usual places; raises the judge's
        `*NotInstalled` (a `JudgeError`) when there is none."""
        ...


@dataclass(frozen=True, slots=True)
class _ClaudeCodeJudge:
    source_format: SourceFormat = SourceFormat.CLAUDE_CODE
    name: str = "Claude Code"
    flag: str = "--claude"
    install_hint: str = "scripts/install-claude-code installs it, [verify] claude names one"
    not_installed: str = "ClaudeCodeNotInstalled"

    def named(self, verify: VerifySettings) -> str:
        return verify.claude

    def locate(self, given: Path | None) -> Path:
        return require_claude_code(given)


@dataclass(frozen=True, slots=True)
class _CodexJudge:
    source_format: SourceFormat = SourceFormat.CODEX
    name: str = "Codex"
    flag: str = "--codex"
    install_hint: str = "scripts/install-codex installs it, [verify] codex names one"
    not_installed: str = "CodexNotInstalled"

    def named(self, verify: VerifySettings) -> str:
        return verify.codex

    def locate(self, given: Path | None) -> Path:
        return require_codex(given)


JUDGES: Final[Mapping[SourceFormat, ResumeJudge]] = {
    judge.source_format: judge for judge in (_ClaudeCodeJudge(), _CodexJudge())
}
"""Each format the resume gate can prove, and its judge."""
