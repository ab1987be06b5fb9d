"""The environment layer of the settings: `COMPACTION_<SECTION>_<KNOB>` variables as overrides.

A scalar's text is coerced like a flag by the loader; a list or a table row is a TOML value
(`COMPACTION_PRICES_MY_MODEL="[1.0, 5.0]"`), and a table's key is found without the `-` and `.`
a shell name cannot hold (`COMPACTION_PRICES_GPT_4_1_MINI` is `gpt-4.1-mini`).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any, Final

from pipeline.errors import ConfigError

__all__ = ["CONFIG_VARIABLE", "ENV_PREFIX", "environment_layer"]

ENV_PREFIX: Final = "COMPACTION_"
CONFIG_VARIABLE: Final = f"{ENV_PREFIX}CONFIG"
# Variables of ours that share the prefix but are not settings: the config file, and where Claude
# Code and Codex are (pipeline.installed.CLAUDE_CODE_ENV and CODEX_ENV).
_NOT_SETTINGS: Final = frozenset({CONFIG_VARIABLE, f"{ENV_PREFIX}CLAUDE_CODE", f"{ENV_PREFIX}CODEX"})


def _value(name: str, values: Mapping[str, Any], key: str, text: str, *, free: bool) -> tuple[str, Any]:
    """A variable's key and value: TOML for a list or a new table row, else the text."""
    key = next((k for k in values if k.replace("-", "_").replace(".", "_").lower() == key), key)
    if not isinstance(values.get(key, [] if free else ""), list | dict):
        return key, text  # coerced like a flag (an unknown key is named by the loader)
    import tomllib  # noqa: PLC0415 - only the loader reads TOML; workers receive typed settings

    try:
        return key, tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"environment: {name} is not a TOML value ({exc}); a list is [1.0, 5.0]") from exc


def environment_layer(
    base: Mapping[str, Mapping[str, Any]], environ: Mapping[str, str], free_tables: Set[str]
) -> dict[str, dict[str, Any]]:
    """The overrides the variables name, by section; `free_tables` take keys of the user's."""
    found: dict[str, dict[str, Any]] = {}
    for name, text in environ.items():
        if not name.startswith(ENV_PREFIX) or name in _NOT_SETTINGS:
            continue
        rest = name[len(ENV_PREFIX) :].lower()
        section = next((s for s in base if rest.startswith(f"{s}_")), None)
        if section is None:
            raise ConfigError(f"environment: {name} does not name a known section")
        free = section in free_tables
        key, value = _value(name, base[section], rest[len(section) + 1 :], text, free=free)
        found.setdefault(section, {})[key] = value
    return found
