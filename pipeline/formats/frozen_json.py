"""Parsed JSON made deeply immutable, as the typed values between stages carry it (a tool call's
input in the summarizer's evidence, whichever agent's session it was read from)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, TypeAlias

__all__ = ["EMPTY_INPUT", "FrozenJson", "freeze_json"]

FrozenJson: TypeAlias = "bool | int | float | str | tuple[FrozenJson, ...] | Mapping[str, FrozenJson] | None"
EMPTY_INPUT: Final[Mapping[str, FrozenJson]] = MappingProxyType({})


def freeze_json(value: Any) -> FrozenJson:
    """A deeply immutable copy of parsed JSON: objects become read-only mappings, arrays tuples."""
    if isinstance(value, dict):
        return MappingProxyType({str(key): freeze_json(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(freeze_json(item) for item in value)
    return value  # type: ignore[no-any-return]  # str, int, float, bool or None
