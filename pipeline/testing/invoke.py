"""Running the `compaction` command line as a user does, and reading what it wrote (for tests)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["candidate_of", "compaction", "compaction_command", "offline", "reports"]


def offline() -> list[str]:
    """A prefix running a command in its own network namespace with only loopback up, if allowed here."""
    wrapper = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline"]
    available = shutil.which("unshare") and shutil.which("ip")
    if available and subprocess.run([*wrapper, "true"], capture_output=True, check=False).returncode == 0:
        return wrapper
    return []


def compaction_command() -> list[str]:
    """The `compaction` console script beside this interpreter, else `python -m pipeline`."""
    script = Path(sys.executable).with_name("compaction")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pipeline"]


def compaction(
    *args: str,
    env: dict[str, str] | None = None,
    unset: tuple[str, ...] = (),
    prefix: list[str] | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `compaction ARGS` (after `prefix`, if any) with colour off; never raises on exit codes.

    `unset` names variables of this process's environment the command must not see; `cwd` is the
    directory relative paths are taken from.
    """
    inherited = {name: value for name, value in os.environ.items() if name not in unset}
    return subprocess.run(
        [*(prefix or []), *compaction_command(), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**inherited, "NO_COLOR": "1", **(env or {})},
    )


def reports(out: Path) -> Iterator[dict[str, Any]]:
    """Every session report under a report directory, in path order."""
    for path in sorted(out.rglob("*.report.json")):
        yield json.loads(path.read_text())


def candidate_of(out: Path, source: Path) -> Path:
    """The one candidate `compress` wrote for `source` under `out`."""
    found = [p for p in out.rglob(source.name) if p.is_file()]
    assert len(found) == 1, found
    return found[0]
