"""Report sections computed from the process itself: the worker's peak memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.report.sections import peak_rss_mb

BALLAST_MB = 160


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux carries ru_maxrss over an exec")
def test_a_process_reports_its_own_peak_not_the_one_of_the_process_that_started_it() -> None:
    ballast = bytearray(BALLAST_MB * 2**20)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # resident, page by page
    assert peak_rss_mb() > BALLAST_MB
    child = subprocess.run(
        [sys.executable, "-c", "from pipeline.report.sections import peak_rss_mb; print(peak_rss_mb())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert float(child.stdout) < BALLAST_MB / 2
