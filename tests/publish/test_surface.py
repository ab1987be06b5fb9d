"""The public surface of `pipeline.publish`: complete, and cheap to import."""

from __future__ import annotations

import subprocess
import sys

from pipeline import publish


def test_every_public_name_resolves_and_none_is_missing() -> None:
    assert len(set(publish.__all__)) == len(publish.__all__)  # ruff (RUF022) keeps it sorted
    for name in publish.__all__:
        assert getattr(publish, name) is not None, name
    lazy = {name for names in publish._LAZY.values() for name in names}
    assert set(publish.__all__) - lazy == {
        "fsync_directory",
        "write_bytes_atomic",
        "write_report",
        "write_report_now",
    }


def test_importing_the_package_for_report_writes_loads_no_in_place_machinery() -> None:
    probe = "import sys, pipeline.publish; print(sorted(m for m in sys.modules if m.startswith('pipeline.publish.')))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['pipeline.publish.files']"
