"""Without the compiled index (no Rust toolchain at install time) everything works, a run says so once,
and the reports are the same; the install itself goes on with a one-line notice."""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import setuptools
from setuptools_rust import Binding, RustExtension

from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.compiled import NOTICE
from pipeline.testing.sessions import build_session
from tests.support.validate_runs import reports_without_timings, validate_from

REPO = Path(__file__).resolve().parents[3]


def test_without_the_scanner_a_run_says_so_once_and_reports_the_same(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(
        REPO / "pipeline", plain / "pipeline", ignore=shutil.ignore_patterns("*.so", "__pycache__", "rust")
    )
    shutil.copytree(REPO / "config", plain / "config")
    fleet = tmp_path / "fleet"
    for seed in range(3):
        build_session(fleet / "project" / f"s{seed}.jsonl", turns=4, seed=seed)
    without = validate_from(plain, fleet, tmp_path / "without")
    assert without.returncode in (0, 1), without.stderr
    said = without.stderr.splitlines()
    assert sum(NOTICE in line for line in said) == 1  # once a run, not once a worker
    assert said[0].endswith(f"notice='{NOTICE}'")  # before any session's lines
    probe = subprocess.run(
        [sys.executable, "-c", "from pipeline.formats.claude_code import scan; print(scan.COMPILED)"],
        cwd=plain,
        env={**os.environ, "PYTHONPATH": str(plain)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "False"
    with_scanner = validate_from(REPO, fleet, tmp_path / "with")
    assert with_scanner.returncode == without.returncode
    assert (NOTICE in with_scanner.stderr) is not scan.COMPILED
    mine, theirs = reports_without_timings(tmp_path / "with"), reports_without_timings(tmp_path / "without")
    assert mine.keys() == theirs.keys() and len(mine) == 3
    for name, report in mine.items():  # the same report, timings aside
        assert report == theirs[name], name


def _build_rust(tmp_path: Path, manifest: Path) -> Any:
    """setup.py's own optional `build_rust` command, for one extension built into `tmp_path`."""
    namespace = runpy.run_path(str(REPO / "setup.py"))  # setuptools.setup is patched out
    extension = RustExtension("probe._core", path=str(manifest), binding=Binding.PyO3, optional=True)
    distribution = setuptools.Distribution({"name": "probe", "rust_extensions": [extension]})
    command = namespace["RUST_COMMANDS"]["build_rust"](distribution)
    command.build_lib = str(tmp_path / "lib")
    with warnings.catch_warnings():  # setuptools always sets the --build-temp it deprecates
        warnings.filterwarnings("ignore", "`--build-temp`", DeprecationWarning)
        command.ensure_finalized()
    return command


def _broken_crate(tmp_path: Path) -> Path:
    crate = tmp_path / "crate"
    (crate / "src").mkdir(parents=True)
    (crate / "src" / "lib.rs").write_text("this is not Rust\n")
    manifest = crate / "Cargo.toml"
    manifest.write_text('[package]\nname = "probe"\nversion = "0.1.0"\n[lib]\ncrate-type = ["cdylib"]\n')
    return manifest


@pytest.mark.parametrize("cause", ["no Rust toolchain", "a failed compile"])
def test_a_failed_build_is_a_one_line_notice(
    cause: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    command = _build_rust(tmp_path, _broken_crate(tmp_path))
    capsys.readouterr()
    if cause == "no Rust toolchain":
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    command.run()  # no exception: the package installs without the core
    said = capsys.readouterr()
    notices = [line for line in (said.out + said.err).splitlines() if "compiled line index" in line]
    assert len(notices) == 1 and "not built" in notices[0], said
    assert not list(tmp_path.rglob("*.so"))


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no Rust toolchain here: the reference indexes")
def test_where_cargo_is_installed_the_core_is_built() -> None:
    """A core that stops building (a lock out of date, a compile error) would otherwise pass every
    test on the pure-Python path alone, its differential tests skipped: here it fails instead."""
    assert scan.COMPILED, "the Rust core did not build: reinstall (scripts/_env) and read its notice"
