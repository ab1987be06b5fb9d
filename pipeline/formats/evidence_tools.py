"""The tool names of the summarizers' evidence: one vocabulary for every agent.

The summarizers and the fidelity probes tell a shell command, a file read and a file change apart
by the call's name and input. Claude Code's names are that vocabulary (its calls need no mapping);
every other agent's evidence reader names a call of one of these kinds by them, with the input
member they read (`command`, `file_path`). One list, so a reader, the summaries and the probes
cannot drift apart on what a shell call or a file change is.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = [
    "EDIT",
    "MODIFY_FILE_TOOLS",
    "READ",
    "READ_FILE_TOOLS",
    "SHELL",
    "SHELL_TOOLS",
    "TARGET_KEYS",
    "WRITE",
]

SHELL: Final = "Bash"
"""A shell command; its input's `command` is the command line."""
READ: Final = "Read"
EDIT: Final = "Edit"
WRITE: Final = "Write"

SHELL_TOOLS: Final = frozenset({SHELL})
READ_FILE_TOOLS: Final = MappingProxyType({READ: "file_path", "NotebookRead": "notebook_path"})
"""Calls that read a file -> the input member naming it."""
MODIFY_FILE_TOOLS: Final = MappingProxyType(
    {EDIT: "file_path", "MultiEdit": "file_path", WRITE: "file_path", "NotebookEdit": "notebook_path"}
)
"""Calls that change a file -> the input member naming it."""
TARGET_KEYS: Final = ("file_path", "notebook_path", "url")
"""Input members that name what a call works on, in the order they are looked for."""
