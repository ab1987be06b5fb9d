"""Run a judge (Claude Code, Codex) in its own process group, killed whole at its time limit.

A client binary starts helpers of its own (shells, sandboxes, language servers); killing only the
binary would leave them holding its pipes, so a timeout ends the group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["run_in_process_group"]


def run_in_process_group(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> tuple[int, str, str]:
    """Exit code, stdout and stderr (text, undecodable bytes replaced), stdin closed.

    Raises subprocess.TimeoutExpired once the whole group is killed after `timeout` s.
    """
    with subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return process.returncode, stdout, stderr
