"""Run the real Gemini CLI offline in a throwaway home against a loopback Gemini API.

`GeminiHome` lays out what Gemini CLI needs to start without a network or an account: a `HOME`
whose `.gemini/settings.json` selects API-key auth, a project (work) directory registered in
`.gemini/projects.json` under a fixed slug, so its sessions live in `.gemini/tmp/<slug>/chats/`
where a staged copy is found. `run_gemini` runs one `gemini` command there in a clean
environment (nothing of the user's inherited but PATH) pointed at the loopback server.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.installed import JudgeError, source_checkout
from pipeline.proof.process_group import run_in_process_group
from pipeline.vocabulary import ResumeExit

__all__ = [
    "GEMINI_CLI_ENV",
    "GEMINI_CLI_VERSION",
    "GeminiCliError",
    "GeminiCliNotInstalled",
    "GeminiHome",
    "GeminiRun",
    "find_gemini_cli",
    "gemini_environment",
    "make_home",
    "require_gemini_cli",
    "run_gemini",
]

GEMINI_CLI_VERSION: Final = "0.61.0"  # the build scripts/install-gemini-cli pins (fixtures too)
GEMINI_CLI_ENV: Final = "COMPACTION_GEMINI_CLI"  # the bundle's gemini.js, or an npm prefix holding it
PROJECT_SLUG: Final = "proj"  # the staged project's folder under .gemini/tmp/
_PACKAGE_SCRIPT: Final = Path("node_modules/@google/gemini-cli/bundle/gemini.js")
_CACHE_PREFIX: Final = Path(".cache/gemini_cli")
_SETTINGS: Final = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
_OFFLINE_ENV: Final = {
    "GEMINI_API_KEY": "x",  # never sent anywhere but the loopback server
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "NO_COLOR": "1",
    "TZ": "UTC",
    "NO_PROXY": "127.0.0.1,localhost",
}


class GeminiCliError(JudgeError):
    """Gemini CLI could not be found, started or resumed."""

    resume_exit = ResumeExit.GEMINI_CLI_FAILED


class GeminiCliNotInstalled(GeminiCliError):
    """No Gemini CLI where it was looked for."""

    resume_exit = ResumeExit.USAGE

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(
            "Gemini CLI not found (looked in: " + ", ".join(looked_in) + "); run scripts/install-gemini-cli"
        )


def _script_in(candidate: Path) -> Path | None:
    """The bundle's entry script at `candidate`, or in the npm prefix it names."""
    for path in (candidate, candidate / _PACKAGE_SCRIPT):
        if path.is_file():
            return path
    return None


def _places(root: Path | None) -> list[Path]:
    places = [Path(os.environ[GEMINI_CLI_ENV])] if os.environ.get(GEMINI_CLI_ENV) else []
    checkout = root if root is not None else source_checkout()
    if checkout is not None:
        places.append(checkout / _CACHE_PREFIX)
    on_path = shutil.which("gemini")  # npm's global `gemini` links to the bundle's script
    if on_path is not None:
        places.append(Path(on_path).resolve())
    return places


def find_gemini_cli(root: Path | None = None) -> Path | None:
    """`$COMPACTION_GEMINI_CLI`, else the pinned build of a source checkout, else `gemini` on
    `PATH`; None when none."""
    for place in _places(root):
        found = _script_in(place)
        if found is not None:
            return found
    return None


def require_gemini_cli(given: Path | None = None, root: Path | None = None) -> Path:
    """`given` (a script or prefix) or the one `find_gemini_cli` finds; `GeminiCliNotInstalled`."""
    found = _script_in(given) if given is not None else find_gemini_cli(root)
    if found is None:
        looked = (str(given),) if given is not None else tuple(map(str, _places(root)))
        raise GeminiCliNotInstalled(looked or (GEMINI_CLI_ENV,))
    return found


@dataclass(frozen=True, slots=True)
class GeminiHome:
    """A throwaway home: `home` (HOME), `work_dir` (the project, Gemini CLI's cwd) and `chats`
    (where that project's sessions are)."""

    home: Path
    work_dir: Path

    @property
    def project_dir(self) -> Path:
        """`.gemini/tmp/<slug>`: the project's runtime folder."""
        return self.home / ".gemini" / "tmp" / PROJECT_SLUG

    @property
    def chats(self) -> Path:
        """`.gemini/tmp/<slug>/chats`: where Gemini CLI writes and looks up this project's sessions."""
        return self.project_dir / "chats"


def make_home(scratch: Path, settings: Mapping[str, object] | None = None) -> GeminiHome:
    """A fresh home under `scratch` with API-key auth, extra `settings` merged at the top level,
    and the work directory registered under `PROJECT_SLUG`."""
    home, work_dir = scratch / "home", scratch / "work"
    gemini = home / ".gemini"
    work_dir.mkdir(parents=True, exist_ok=True)
    gemini.mkdir(parents=True, exist_ok=True)
    (gemini / "settings.json").write_text(json.dumps({**_SETTINGS, **(settings or {})}))
    registry = {"projects": {str(work_dir.resolve()): PROJECT_SLUG}}
    (gemini / "projects.json").write_text(json.dumps(registry))
    staged = GeminiHome(home=home, work_dir=work_dir.resolve())
    staged.chats.mkdir(parents=True, exist_ok=True)
    (staged.project_dir / ".project_root").write_text(str(staged.work_dir))
    return staged


@dataclass(frozen=True, slots=True)
class GeminiRun:
    """One `gemini` command's exit code and output."""

    returncode: int
    stdout: str
    stderr: str


def _node() -> str:
    return shutil.which("node") or "node"


def gemini_environment(staged: GeminiHome, base_url: str) -> dict[str, str]:
    """A clean environment: nothing of the user's but PATH, the throwaway home, the loopback API."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(staged.home),
        "TMPDIR": str(staged.home),
        "GOOGLE_GEMINI_BASE_URL": base_url,
        **_OFFLINE_ENV,
    }


def run_gemini(
    script: Path, staged: GeminiHome, args: Sequence[str], *, base_url: str, timeout: float
) -> GeminiRun:
    """Run `gemini ARGS` in `staged` against the Gemini API at `base_url`, in its own process
    group (killed whole after `timeout` s: `subprocess.TimeoutExpired`)."""
    env = gemini_environment(staged, base_url)
    command = [_node(), str(script.absolute()), *args]
    try:
        code, out, err = run_in_process_group(command, cwd=staged.work_dir, env=env, timeout=timeout)
    except OSError as exc:
        raise GeminiCliError(f"node could not start {script}: {exc.strerror or type(exc).__name__}") from exc
    return GeminiRun(code, out, err)
