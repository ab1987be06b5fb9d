"""Small frozen values shared by the transaction, the state database and recovery.

A `Fingerprint` is what a `stat` tells about a file's identity and content version, enough to
skip it at the cost of one `stat` when nothing changed. An `Intent` is what a transaction writes
down before it touches the session's directory, so an interrupted run can be finished cleanly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

__all__ = ["Fingerprint", "Intent", "fingerprint_of"]


class Fingerprint(NamedTuple):
    """Size, modification and change times (ns), inode and device of a file (a named tuple: one
    is made and compared per session per run, so it is as cheap as a tuple).

    Any write changes the change time, even one that restores the size and modification time,
    so two equal fingerprints mean the bytes were not rewritten in between (as git's index
    assumes for its own stat cache).
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int


def fingerprint_of(status: os.stat_result) -> Fingerprint:
    """The fingerprint of a `stat` result."""
    return Fingerprint(status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev)


@dataclass(frozen=True, slots=True)
class Intent:
    """What a replacement is about to do, recorded before its first write in the session directory.

    `stage` and `capture` are the only names it creates there; `backup` is the verified backup
    of the frozen original, which recovery requires before it deletes any copy of the original.
    """

    session: Path
    stage: Path
    capture: Path
    backup: Path
    frozen_sha256: str
    frozen_size: int
    candidate_sha256: str
    candidate_size: int
