"""Settings: `config/default.toml`, then a user file, then `COMPACTION_*` variables, then flags.

The defaults file is the single list of knobs and the only place their defaults are written: the
section types (`typed_sections`) declare each knob's type, never a default. The package carries it
as `pipeline/settings/default.toml` (in a checkout a symlink to `config/default.toml`, in a built
wheel that file's bytes) and reads it through `importlib.resources`, so an installed `compaction`
never looks for the repository. Layers are merged as
plain TOML values, each override checked against the default's type; the result is converted
once into one frozen `Settings` with a typed section per command and range-checked, at the CLI
edge, then passed down explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Final

import msgspec

from pipeline.errors import ConfigError
from pipeline.settings.environment import CONFIG_VARIABLE, environment_layer
from pipeline.settings.typed_sections import (
    SECTIONS,
    Settings,
    is_duration,
    is_retention,
)

__all__ = [
    "DEFAULTS_PATH",
    "FREE_TABLES",
    "MIN_SUMMARY_CHARS",
    "MIN_TOOL_OUTPUT_LIMIT",
    "READER_DEPTH_CEILING",
    "load_settings",
]

DEFAULTS_PATH: Final[Traversable] = resources.files("pipeline.settings").joinpath("default.toml")
"""The defaults file inside the installed package: `config/default.toml` itself, never a copy."""
MIN_SUMMARY_CHARS: Final = 4000  # seed 004: smaller budgets cannot carry a meaningful compact summary
MIN_TOOL_OUTPUT_LIMIT: Final = 1024  # room for a head, a tail and the marker line between them
READER_DEPTH_CEILING: Final = 800
"""The deepest `sweep.max_json_depth` allowed: Python's JSON readers recurse per level and stop near 1000."""


def _at_least(minimum: float) -> Callable[[float], bool]:
    return lambda value: value >= minimum


def _in_unit_interval(*, open_low: bool, open_high: bool) -> Callable[[float], bool]:
    return lambda value: (value > 0 if open_low else value >= 0) and (value < 1 if open_high else value <= 1)


_RANGES: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "jobs": (_at_least(0), "0 (one per core) or more"),
    "max_post_last_prompt_extension": (_at_least(0), "0 or more"),
    "max_file_history_snapshots": (_at_least(0), "0 or more"),
    "findings_per_code": (_at_least(1), "1 or more"),
    "max_line_bytes": (_at_least(1), "1 or more"),
    "max_json_depth": (
        lambda value: 1 <= value <= READER_DEPTH_CEILING,
        f"between 1 and {READER_DEPTH_CEILING} (the JSON readers' own limit)",
    ),
    "min_tokens": (_at_least(0), "0 or more"),
    "target_ratio": (_in_unit_interval(open_low=True, open_high=False), "in (0, 1]"),
    "target_estimated_tokens": (_at_least(0), "0 (no gate) or more"),
    "min_recent_records": (_at_least(0), "0 or more"),
    "context_window": (_at_least(1000), "at least 1000"),
    "max_window_share": (_in_unit_interval(open_low=True, open_high=False), "in (0, 1]"),
    "tool_output_limit": (
        lambda value: value == 0 or value >= MIN_TOOL_OUTPUT_LIMIT,
        f"0 (keep every byte) or at least {MIN_TOOL_OUTPUT_LIMIT}",
    ),
    "max_replans": (_at_least(0), "0 or more"),
    "task_retries": (_at_least(0), "0 or more"),
    "safety_margin": (_in_unit_interval(open_low=False, open_high=True), "in [0, 1)"),
    "context_window_tokens": (_at_least(1000), "at least 1000"),
    "max_output_tokens": (_at_least(1), "1 or more"),
    "min_gain": (_in_unit_interval(open_low=False, open_high=True), "in [0, 1)"),
    "min_fidelity": (_in_unit_interval(open_low=False, open_high=False), "in [0, 1]"),
    "lost_probes_per_class": (_at_least(0), "0 or more"),
    "summary_char_budget": (_at_least(MIN_SUMMARY_CHARS), f"at least {MIN_SUMMARY_CHARS}"),
    "max_names_per_class": (_at_least(1), "1 or more"),
    "resume_timeout_seconds": (_at_least(1), "at least 1"),
    "min_excluded_text_chars": (_at_least(1), "1 or more"),
    "idle_for": (is_duration, "a duration such as 12h, 30m, 2d or 90 (units s, m, h, d, w)"),
    "backup_keep": (is_retention, "all, an age such as 30d (units m, h, d, w) or last:N"),
    "gzip_level": (lambda value: 1 <= value <= 9, "between 1 and 9"),
    "zstd_level": (lambda value: 1 <= value <= 22, "between 1 and 22"),
    "busy_timeout_seconds": (lambda value: value > 0, "more than 0"),
}
# Sections whose bounds are at least 1 unless listed above.
_POSITIVE_SECTIONS: Final = frozenset({"summary", "model_summary", "limits", "cluster"})
FREE_TABLES: Final = frozenset({"prices", "model_windows", "judges"})  # tables whose keys are the user's


"""The typed section of every `[section]` of the defaults file."""


def _read_toml(path: Path | Traversable) -> dict[str, Any]:
    import tomllib  # noqa: PLC0415 - only the loader reads TOML; workers receive typed settings

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        if path is DEFAULTS_PATH:  # a broken install, not a user's mistake: say how to mend it
            raise ConfigError(
                f"the package's defaults are missing ({path}): reinstall session-compaction"
            ) from exc
        raise ConfigError(f"configuration file not found: {path}") from exc
    except OSError as exc:  # a directory, a file we may not read: one line, never a traceback
        raise ConfigError(f"configuration file {path} cannot be read: {exc.strerror}") from exc
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
            if section in FREE_TABLES and key not in base[section]:
                base[section][key] = value  # a new row; its type is checked with the whole table
                continue
            if key not in base[section]:
                raise ConfigError(f"{origin}: unknown setting {section}.{key}")
            base[section][key] = _coerce(section, key, base[section][key], value, origin)


def _check_range(section: str, key: str, value: Any) -> None:
    positive = (lambda v: v > 0, "more than 0") if isinstance(value, float) else (_at_least(1), "1 or more")
    check, wanted = _RANGES.get(key, positive if section in _POSITIVE_SECTIONS else (None, ""))
    if check is not None and not isinstance(value, bool) and not check(value):
        raise ConfigError(f"{section}.{key} must be {wanted} (got {value!r})")


def _typed(base: dict[str, dict[str, Any]], sources: list[str]) -> Settings:
    """Convert the merged values into the typed sections, checking every choice and range."""
    if set(base) != set(SECTIONS):
        missing, extra = set(SECTIONS) - set(base), set(base) - set(SECTIONS)
        raise ConfigError(
            f"{DEFAULTS_PATH}: sections differ from the code's (missing {missing}, unknown {extra})"
        )
    sections: dict[str, Any] = {}
    for name, kind in SECTIONS.items():
        for key, value in base[name].items():
            if name not in FREE_TABLES:
                _check_range(name, key, value)
        try:
            sections[name] = msgspec.convert(base[name], kind, strict=True)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"[{name}] {exc}") from exc
    for model, bounds in sections["model_windows"].items():
        if min(bounds) < 1:
            wanted = "two token counts, each 1 or more"
            raise ConfigError(f"model_windows.{model} must be {wanted} (got {list(bounds)})")
    return Settings(**sections, sources=tuple(sources))


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
    config_file = config_file or (Path(environ[CONFIG_VARIABLE]) if environ.get(CONFIG_VARIABLE) else None)
    if config_file is not None:
        _merge(base, _read_toml(config_file), str(config_file))
        sources.append(str(config_file))
    env_values = environment_layer(base, environ, FREE_TABLES)
    if env_values:
        _merge(base, env_values, "environment")
        sources.append("environment")
    if flags:
        given = {
            section: {k: v for k, v in values.items() if v is not None} for section, values in flags.items()
        }
        _merge(base, given, "flags")
        sources.append("flags")
    return _typed(base, sources)
