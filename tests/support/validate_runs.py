"""`compaction validate` run as a user runs it from a given package root, and its reports read back.

The differential tests of the compiled core run it twice, from this tree and from a copy without
any compiled module, and compare every report but its timings (the one part runs differ in).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["TIMING", "reports_without_timings", "validate_from"]

TIMING = "timing_ms"


def validate_from(package_root: Path, fleet: Path, reports: Path) -> subprocess.CompletedProcess[str]:
    """`compaction validate FLEET` with `package_root`'s `pipeline` first on the path."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "validate",
            str(fleet),
            "--report-dir",
            str(reports),
            "--jobs",
            "2",
        ],
        cwd=package_root,
        env={**os.environ, "PYTHONPATH": str(package_root), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )


def reports_without_timings(folder: Path) -> dict[str, object]:
    """Every report under a folder, parsed, by path, without its timings (a session never analysed,
    such as another agent's file, has none)."""
    reports = {}
    for path in folder.rglob("*.report.json"):
        report = json.loads(path.read_bytes())
        report.pop(TIMING, None)
        reports[path.relative_to(folder).as_posix()] = report
    return reports
