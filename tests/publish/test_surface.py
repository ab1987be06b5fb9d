"""The public surface of `pipeline.publish`: the atomic writes, cheap to import."""

from __future__ import annotations

import subprocess
import sys

from pipeline import publish


def test_the_package_exports_the_atomic_writes_and_nothing_else() -> None:
    assert sorted(publish.__all__) == [
        "fsync_directory",
        "write_bytes_atomic",
        "write_report",
        "write_report_now",
    ]
    for name in publish.__all__:
        assert callable(getattr(publish, name)), name


def test_importing_the_package_for_report_writes_loads_no_live_replacement() -> None:
    probe = "import sys, pipeline.publish; print(sorted(m for m in sys.modules if m.startswith('pipeline.publish.')))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['pipeline.publish.files']"
