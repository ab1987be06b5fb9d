"""The value a probe is: the class of a fact, where it was read, and what must be found to keep it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.summarize.evidence.shell import CommandOutcome, FileAction

__all__ = ["ANCHOR_HEX", "Probe", "ProbeClass", "Resolution"]

ANCHOR_HEX: Final = 12  # a lost probe's id in reports: a digest prefix, never its text


class ProbeClass(StrEnum):
    """The kinds of facts probed, in the order reports list them."""

    HUMAN = "human-instruction"
    FILE_MODIFIED = "file-modified"
    FILE_READ = "file-read"
    COMMAND = "command"
    ERROR = "error"
    IDENTIFIER = "identifier"
    LAST_STATE = "last-state"


@dataclass(frozen=True, slots=True)
class Resolution:
    """The later action that resolved an error: a command that passed, a file handled again, a call."""

    command: str = ""  # the command's identity
    path: str = ""
    action: FileAction | None = None
    tool: str = ""


@dataclass(frozen=True, slots=True)
class Probe:
    """One fact: its class, the source line it was read from, and what must be found to keep it.

    `key` is the fact (a prompt, a path, a command's identity, an error's signature, an
    identifier); `kind` refines the class (`url`, `rejected`, `todo`, ...); `target` is what must
    stand beside an error's signature; `command` the failing command of a shell error.
    """

    klass: ProbeClass
    line: int
    key: str
    kind: str = ""
    outcome: CommandOutcome | None = None
    target: str = ""
    command: str = ""
    resolution: Resolution | None = None

    @property
    def anchor(self) -> str:
        """A short content-free id: a digest prefix of the class, kind and fact."""
        text = "\0".join((self.klass.value, self.kind, self.key, self.target, self.command))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:ANCHOR_HEX]
