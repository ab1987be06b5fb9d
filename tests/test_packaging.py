"""`compaction` installs as a tool: the wheel and the sdist that `python -m build` makes, each
installed into a fresh virtualenv outside the repository, run from a folder outside it.

This is what pipx, `uv tool install` and a published wheel do (not the editable install of
scripts/_env): everything the tool reads at run time must come from the package. The sdist is
installed with no compiler or Rust toolchain on the path, so the one-line notice and the pure-Python indexing are
checked where users without a compiler meet them. The builds and installs are shared by the module
(about a minute in all); pip reaches PyPI for the dependencies through the shared cache `.cache/pip`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from pipeline import __version__
from pipeline.formats.claude_code.compiled import NOTICE
from tests.conftest import CODEX_FILES, CORPUS_FILES

REPO: Final = Path(__file__).resolve().parents[1]
DEFAULTS: Final = REPO / "config" / "default.toml"
PACKAGED_DEFAULTS: Final = "pipeline/settings/default.toml"
SESSIONS: Final = (
    CORPUS_FILES
    / "jnarowski__agentcmd__packages_agent-cli-sdk_tests_fixtures_claude_full_full-session.jsonl",
    CORPUS_FILES / "marot__spotter__test_fixtures_transcripts_tool_heavy.jsonl",
)
ROLLOUT: Final = (
    CODEX_FILES / "EdofEngland__code_butler__.codex_sessions_2025_11_24_"
    "rollout-2025-11-24T13-38-49-019ab760-3d78-7fd0-9ea1-4c39e889b87b.jsonl"
)
RUST_SOURCES: Final = "pipeline/formats/claude_code/rust/"
BUILD_NOTICE: Final = "session-compaction: the compiled line index was not built"  # setup.py's line
STEP_TIMEOUT_SECONDS: Final = 300  # a build or an install from a cold pip cache


@dataclass(frozen=True, slots=True)
class Built:
    """What `python -m build` made: the wheel (built from the sdist) and the sdist."""

    wheel: Path
    sdist: Path


@dataclass(frozen=True, slots=True)
class Installed:
    """A fresh virtualenv holding the package, a home and a working folder outside the repository."""

    bin: Path
    home: Path
    install_log: str


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the checkout's: no COMPACTION_* settings, no PYTHONPATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("COMPACTION_") and key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    return {
        **env,
        "PIP_CACHE_DIR": str(REPO / ".cache" / "pip"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **extra,
    }


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_SECONDS, check=False
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The sdist and the wheel `python -m build` makes from this checkout (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], out, _clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,), (sdist,) = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    return Built(wheel, sdist)


def _install(folder: Path, artifact: Path, env: dict[str, str]) -> Installed:
    """A virtualenv outside the repository with `artifact` installed by this interpreter's pip."""
    venv = folder / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], folder, _clean_env())
    assert made.returncode == 0, made.stderr
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-v"]
    done = _run([*pip, str(artifact)], folder, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder / "home").mkdir()
    return Installed(venv / "bin", folder / "home", done.stdout + done.stderr)


@pytest.fixture(scope="module")
def installs(built: Built, tmp_path_factory: pytest.TempPathFactory) -> tuple[Installed, Installed]:
    """The wheel installed as pipx or `uv tool install` would (its own virtualenv, no checkout),
    and the sdist installed where no compiler works (`CC` fails, PATH holds no gcc, cc or cargo); side
    by side, since each mostly waits for pip."""
    wheel, sdist = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("sdist")
    (sdist / "empty-path").mkdir()
    no_compiler = _clean_env(CC="/bin/false", PATH=str(sdist / "empty-path"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        from_wheel = pool.submit(_install, wheel, built.wheel, _clean_env())
        from_sdist = pool.submit(_install, sdist, built.sdist, no_compiler)
        return from_wheel.result(), from_sdist.result()


@pytest.fixture(scope="module")
def from_wheel(installs: tuple[Installed, Installed]) -> Installed:
    """The installed wheel."""
    return installs[0]


@pytest.fixture(scope="module")
def from_sdist(installs: tuple[Installed, Installed]) -> Installed:
    """The sdist installed without a compiler."""
    return installs[1]


def _compaction(tool: Installed, *args: str) -> subprocess.CompletedProcess[str]:
    """`compaction` of that virtualenv, run from its home (outside the repository)."""
    env = _clean_env(HOME=str(tool.home), PATH=f"{tool.bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return _run([str(tool.bin / "compaction"), *args], tool.home, env)


def _summary(folder: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((folder / "summary.json").read_text())
    return summary


def _partitions(reports: Path) -> dict[str, Any]:
    """Each session's partition (line sets by count and digest): what the index decided."""
    return {path.name: json.loads(path.read_text())["partition"] for path in reports.glob("*.report.json")}


def _validate_and_compress(tool: Installed, tag: str) -> subprocess.CompletedProcess[str]:
    """Validate the sessions and a Codex rollout, then compress the sessions into `<tag>-out`."""
    files = [str(path) for path in SESSIONS]
    checked = _compaction(tool, "validate", *files, str(ROLLOUT), "--report-dir", f"{tag}-validate")
    assert checked.returncode == 0, checked.stderr
    assert _summary(tool.home / f"{tag}-validate")["by_status"] == {"valid": 2, "warnings": 1}
    compressed = _compaction(
        tool, "compress", *files, "--out", f"{tag}-out", "--report-dir", f"{tag}-compress",
        "--min-tokens", "0", "--no-verify-resume",
    )  # fmt: skip
    assert compressed.returncode == 0, compressed.stderr
    assert _summary(tool.home / f"{tag}-compress")["by_status"] == {"compressed": 2}
    for source in SESSIONS:
        written = (tool.home / f"{tag}-out" / source.name).read_bytes()
        assert 0 < len(written) < source.stat().st_size  # a candidate, smaller than its source
    return checked


@pytest.fixture(scope="module")
def wheel_checked(from_wheel: Installed) -> subprocess.CompletedProcess[str]:
    """The installed wheel's validate and compress runs (shared: the sdist's are compared to them)."""
    return _validate_and_compress(from_wheel, "wheel")


def test_the_built_package_carries_the_defaults_file_byte_for_byte(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as wheel:
        names = set(wheel.namelist())
        assert wheel.read(PACKAGED_DEFAULTS) == DEFAULTS.read_bytes()
    assert not any(name.startswith("config/") for name in names)  # inside the package, not beside it
    # Every file the package holds in the repository ships (data beside a module, a schema, the
    # core's stub): one that package-data misses would be found only by an installed user. The
    # Rust core's sources ship in the sdist (below), its compiled module in the wheel.
    # A cargo build run without scripts/_env's CARGO_TARGET_DIR leaves its `target/` in the crate:
    # build output, never a file of the package.
    held = {
        relative
        for path in (REPO / "pipeline").rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix not in (".so", ".pyc")
        and not (relative := path.relative_to(REPO).as_posix()).startswith(f"{RUST_SOURCES}target/")
    }
    rust = {name for name in held if name.startswith(RUST_SOURCES)}
    assert held - rust - names == set()
    assert not any(name.startswith(RUST_SOURCES) for name in names)  # the sdist's, for compiling
    assert any(
        name.startswith("pipeline/formats/claude_code/_core.") and name.endswith(".so") for name in names
    )
    assert "pipeline/estimate/data/claude-legacy-tokenizer.json.gz" in names
    with tarfile.open(built.sdist) as sdist:
        root = built.sdist.name.removesuffix(".tar.gz")
        for name in ("config/default.toml", PACKAGED_DEFAULTS):  # a wheel built from the sdist has both
            member = sdist.extractfile(f"{root}/{name}")
            assert member is not None and member.read() == DEFAULTS.read_bytes(), name
        shipped = {name.removeprefix(f"{root}/") for name in sdist.getnames()}
        assert rust and rust <= shipped  # the wheel built from it compiles the core


def test_the_installed_wheel_works_from_any_folder_without_the_checkout(
    from_wheel: Installed, wheel_checked: subprocess.CompletedProcess[str]
) -> None:
    version = _compaction(from_wheel, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"compaction {__version__}")
    code = "from pipeline.installed import source_checkout as s; from pipeline.settings import DEFAULTS_PATH as d"
    where = _run(
        [str(from_wheel.bin / "python"), "-c", f"{code}; print(s(), d)"], from_wheel.home, _clean_env()
    )
    checkout, defaults = where.stdout.split()
    assert checkout == "None" and Path(defaults).is_relative_to(from_wheel.bin.parent), where.stderr
    assert NOTICE not in wheel_checked.stderr  # the wheel carries the compiled core
    tokens = _compaction(from_wheel, "tokens", *map(str, SESSIONS), "--out", "tokens", "--quiet")
    assert tokens.returncode == 0, tokens.stderr
    figures = json.loads((from_wheel.home / "tokens" / "tokens.json").read_text())
    assert figures["all"]["sessions"] == len(figures["sessions"]) == len(SESSIONS)
    assert {"seed", "calibrated"} <= set(figures["estimators"])
    assert str(REPO) not in tokens.stderr + wheel_checked.stderr  # nothing names the repository


def test_the_sdist_without_a_compiler_says_so_once_and_indexes_in_python(
    from_sdist: Installed, from_wheel: Installed, wheel_checked: subprocess.CompletedProcess[str]
) -> None:
    assert from_sdist.install_log.count(BUILD_NOTICE) == 1, from_sdist.install_log[-3000:]
    assert not [p for p in from_sdist.bin.parent.rglob("_core*.so") if "pipeline" in p.parts]
    checked = _validate_and_compress(from_sdist, "sdist")
    assert NOTICE in checked.stderr  # the run says it indexes with the reference
    # The reference decides every line as the compiled core does: the same partitions.
    assert _partitions(from_sdist.home / "sdist-compress") == _partitions(from_wheel.home / "wheel-compress")
