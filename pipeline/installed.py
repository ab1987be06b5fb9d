"""Where the installed Claude Code is: `--claude`, `$COMPACTION_CLAUDE_CODE`, the pinned build, PATH.

Both the resume proof and the `claude-code` summary provider run the user's Claude Code; finding
it is a fact about the machine, so it sits below every stage that runs it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Final

from pipeline.errors import CompactionError

__all__ = [
    "CLAUDE_CODE_ENV",
    "CLAUDE_CODE_VERSION",
    "INSTALL_HINT",
    "OFFLINE_ENV",
    "ClaudeCodeError",
    "ClaudeCodeNotInstalled",
    "find_claude_code",
    "require_claude_code",
]

CLAUDE_CODE_VERSION: Final = "2.1.332"  # the build scripts/install-claude-code pins (goldens too)
CLAUDE_CODE_ENV: Final = "COMPACTION_CLAUDE_CODE"  # an executable, or an npm prefix holding one
INSTALL_HINT: Final = "run scripts/install-claude-code, or pass --claude PATH"
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
_REPO_ROOT: Final = Path(__file__).resolve().parents[1]


class ClaudeCodeError(CompactionError):
    """Running Claude Code failed."""


class ClaudeCodeNotInstalled(ClaudeCodeError):
    """No Claude Code executable was found where we look."""

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(f"Claude Code not found (looked in {', '.join(looked_in)}); {INSTALL_HINT}")


def _executable_in(candidate: Path) -> Path | None:
    if candidate.is_dir():
        candidate = candidate / _PACKAGE_EXE
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _search_places(root: Path | None) -> list[Path]:
    configured = os.environ.get(CLAUDE_CODE_ENV)
    places = [Path(configured).expanduser()] if configured else []
    places.append((root or _REPO_ROOT) / ".cache" / "claude-code")
    on_path = shutil.which("claude")
    if on_path:
        places.append(Path(on_path))
    return places


def find_claude_code(root: Path | None = None) -> Path | None:
    """`$COMPACTION_CLAUDE_CODE`, else the pinned build in `<root>/.cache/claude-code`, else PATH's."""
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
