"""Where the CodeWhale client is: the build `scripts/install-codewhale` keeps outside the clone,
`$COMPACTION_CODEWHALE`, a path the user names (`--judge codewhale-session=PATH`, `[judges]`),
or PATH's `codewhale`; and how its absence is reported."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.installed import JudgeError
from pipeline.settings.typed_sections import VerifySettings
from pipeline.vocabulary import ResumeExit, SourceFormat

__all__ = [
    "CODEWHALE_CLIENT",
    "CODEWHALE_ENV",
    "CodewhaleClient",
    "CodewhaleError",
    "CodewhaleNotInstalled",
    "find_codewhale",
    "require_codewhale",
]

CODEWHALE_ENV: Final = "COMPACTION_CODEWHALE"
INSTALL_HINT: Final = (
    "run scripts/install-codewhale in a checkout, put `codewhale` on PATH, "
    "or pass --judge codewhale-session=PATH"
)


class CodewhaleError(JudgeError):
    """Running CodeWhale failed."""

    resume_exit = ResumeExit.CODEWHALE_FAILED


class CodewhaleNotInstalled(CodewhaleError):
    """No CodeWhale executable was found where we look."""

    resume_exit = ResumeExit.USAGE

    def __init__(self, looked_in: tuple[str, ...]) -> None:
        self.looked_in = looked_in
        super().__init__(f"CodeWhale not found (looked in {', '.join(looked_in)}); {INSTALL_HINT}")


def _pinned_build() -> Path:
    """Where scripts/install-codewhale installs (its cache is shared by every clone, CI's too)."""
    cache = os.environ.get("SESSION_COMPACTION_CACHE") or str(Path.home() / ".cache" / "session-compaction")
    return Path(cache) / "codewhale" / "bin" / "codewhale"


def _places() -> list[Path]:
    configured = os.environ.get(CODEWHALE_ENV)
    places = [Path(configured).expanduser()] if configured else []
    places.append(_pinned_build())
    on_path = shutil.which("codewhale")
    if on_path:
        places.append(Path(on_path))
    return places


def _executable(place: Path) -> Path | None:
    candidate = place / "bin" / "codewhale" if place.is_dir() else place
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def find_codewhale() -> Path | None:
    """`$COMPACTION_CODEWHALE`, else the pinned build, else PATH's `codewhale`."""
    return next((exe for place in _places() if (exe := _executable(place))), None)


def require_codewhale(given: Path | None = None) -> Path:
    """`given` (the executable or its install root) or :func:`find_codewhale`; raises when none."""
    if given is not None:
        executable = _executable(given.expanduser())
        if executable is None:
            raise CodewhaleNotInstalled((str(given),))
        return executable
    executable = find_codewhale()
    if executable is None:
        raise CodewhaleNotInstalled(tuple(map(str, _places())))
    return executable


@dataclass(frozen=True, slots=True)
class CodewhaleClient:
    """CodeWhale as a `ResumeJudge`: no flag of its own, `--judge`/`[judges]` name it."""

    source_format: SourceFormat = SourceFormat.CODEWHALE
    name: str = "CodeWhale"
    flag: str = ""
    install_hint: str = "scripts/install-codewhale installs it, [judges] codewhale-session names one"
    not_installed: str = "CodewhaleNotInstalled"

    def named(self, verify: VerifySettings) -> str:
        return ""  # [verify] has no key for it: [judges] and --judge name it

    def locate(self, given: Path | None) -> Path:
        return require_codewhale(given)


CODEWHALE_CLIENT: Final = CodewhaleClient()
