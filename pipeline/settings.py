"""Settings: `config/default.toml`, then a user file, then `COMPACTION_*` variables, then flags.

The defaults file is the single list of knobs; this module only reads it, checks each value
against the default's type, and freezes the result. It is built once at the CLI edge and
passed down explicitly.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pipeline.errors import ConfigError

__all__ = ["DEFAULTS_PATH", "Settings", "load_settings"]

DEFAULTS_PATH: Final = Path(__file__).resolve().parent.parent / "config" / "default.toml"
_ENV_PREFIX: Final = "COMPACTION_"
# Variables of ours that share the prefix but are not settings: the config file, and where Claude
# Code is (pipeline.proof.client.CLAUDE_CODE_ENV).
_NOT_SETTINGS: Final = frozenset({f"{_ENV_PREFIX}CONFIG", f"{_ENV_PREFIX}CLAUDE_CODE"})


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob, by section, after all overrides."""

    values: MappingProxyType[str, MappingProxyType[str, Any]]
    sources: tuple[str, ...]  # where values came from, for the summary report

    def get(self, section: str, key: str) -> Any:
        """One knob's value."""
        return self.values[section][key]

    def section(self, section: str) -> Mapping[str, Any]:
        """All knobs of a section."""
        return self.values[section]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"configuration file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration file {path} is not valid TOML: {exc}") from exc


def _coerce(section: str, key: str, default: Any, value: Any, origin: str) -> Any:
    """Check an override against the default's type; environment strings are parsed."""
    if isinstance(value, str) and not isinstance(default, str):
        text = value.strip().lower()
        try:
            if isinstance(default, bool):
                if text not in ("1", "0", "true", "false", "yes", "no"):
                    raise ValueError(text)
                value = text in ("1", "true", "yes")
            elif isinstance(default, int):
                value = int(text)
            elif isinstance(default, float):
                value = float(text)
        except ValueError as exc:
            raise ConfigError(
                f"{origin}: {section}.{key} expects {type(default).__name__}, got {value!r}"
            ) from exc
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not type(default):
        raise ConfigError(
            f"{origin}: {section}.{key} expects {type(default).__name__}, got {type(value).__name__}"
        )
    return value


def _merge(base: dict[str, dict[str, Any]], override: Mapping[str, Any], origin: str) -> None:
    for section, values in override.items():
        if section not in base or not isinstance(values, Mapping):
            raise ConfigError(f"{origin}: unknown section [{section}]")
        for key, value in values.items():
            if key not in base[section]:
                raise ConfigError(f"{origin}: unknown setting {section}.{key}")
            base[section][key] = _coerce(section, key, base[section][key], value, origin)


def _environment(base: dict[str, dict[str, Any]], environ: Mapping[str, str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for name, value in environ.items():
        if not name.startswith(_ENV_PREFIX) or name in _NOT_SETTINGS:
            continue
        rest = name[len(_ENV_PREFIX) :].lower()
        section = next((s for s in base if rest.startswith(f"{s}_")), None)
        if section is None:
            raise ConfigError(f"environment: {name} does not name a known section")
        found.setdefault(section, {})[rest[len(section) + 1 :]] = value
    return found


def load_settings(
    config_file: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Build the frozen settings from defaults, an optional file, the environment and flags."""
    environ = os.environ if environ is None else environ
    base = _read_toml(DEFAULTS_PATH)
    sources = [str(DEFAULTS_PATH)]
    config_file = config_file or (
        Path(environ[f"{_ENV_PREFIX}CONFIG"]) if environ.get(f"{_ENV_PREFIX}CONFIG") else None
    )
    if config_file is not None:
        _merge(base, _read_toml(config_file), str(config_file))
        sources.append(str(config_file))
    env_values = _environment(base, environ)
    if env_values:
        _merge(base, env_values, "environment")
        sources.append("environment")
    if flags:
        given = {
            section: {k: v for k, v in values.items() if v is not None} for section, values in flags.items()
        }
        _merge(base, given, "flags")
        sources.append("flags")
    frozen = MappingProxyType({section: MappingProxyType(dict(values)) for section, values in base.items()})
    return Settings(frozen, tuple(sources))
