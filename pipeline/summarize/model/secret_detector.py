"""The maintained secret detector (detect-secrets' plugins), run line by line after our patterns.

Optional: the `redaction` extra installs it (the Bridgecrew fork, `bc-detect-secrets`; Yelp's
`detect-secrets` imports the same way and works too). Absent, `LIBRARY` is None and only our
patterns run; reports name what ran. Only the plugins' pure `analyze_string` is called: never
their `verify` (which would send a found secret over the network), nor the library's global
settings or logging (which may log a skipped secret). detect-secrets' own false-positive heuristics
(sequential strings, uuids, ids, templates, `$`-references, indirect references) are applied here.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["LIBRARY", "UNSCANNABLE", "DetectorLibrary", "Finding", "findings_in"]


@dataclass(frozen=True, slots=True)
class DetectorLibrary:
    """The installed detector: its distribution name and version, and its plugins."""

    name: str
    version: str
    plugins: tuple[Any, ...]
    kept: Callable[[str, str, Any], bool]


@dataclass(frozen=True, slots=True)
class Finding:
    """One value a plugin flagged in a line: the plugin's secret type, and the value."""

    secret_type: str
    value: str


UNSCANNABLE: Final = "unscannable line"
"""The finding a plugin's failure on a line becomes: the whole line is replaced."""
# Shortest flagged value replaced: a plugin's regex groups can yield fragments (a key's name).
MIN_VALUE_CHARS: Final = 8
# Plugins left out: Azure's needs a file's context (our `AccountKey=` rule covers it), and hex
# entropy flags every git SHA and digest a session prints (the vendors' hex keys have rules).
_SKIPPED: Final = frozenset({"AzureStorageKeyDetector", "HexHighEntropyString"})
# Words one of which a line must hold for the keyword plugin to match it (its denylist's stems): its
# many regexes cost most of the library's time, and most lines of a session name no secret.
_HINTS: Final = {"KeywordDetector": ("key", "pass", "pwd", "secret", "contrase")}
# What an entropy plugin flags in ordinary sessions: an API object's id (`msg_01...`, `req_011...`,
# `toolu_01...`, `chatcmpl-...`; the vendors' key prefixes were replaced by our rules before), and a
# file path (`/var/folders/4n/...`).
_ID_OR_PATH: Final = re.compile(r"[a-z]{2,12}[_\-][A-Za-z0-9]{8,}|(?:~|\.{1,2})?/[^/]*/.*")
# An integrity, digest or signature value (`sha512-...`, `sha256:...`) is base64 of a hash, not a secret.
_DIGEST: Final = r"(?:sha(?:1|224|256|384|512)|md5|integrity|signature)"
_DIGEST_BEFORE: Final = re.compile(r"(?i)" + _DIGEST + r"[\"']?\s*[-:=]\s*[\"']?$")
_DIGEST_PREFIX: Final = re.compile(r"(?i)" + _DIGEST + r"[-:]")


def findings_in(line: str, library: DetectorLibrary) -> Iterator[Finding]:
    """What the library's plugins flag in one line, after the false-positive heuristics."""
    lowered = line.lower()
    for plugin in library.plugins:
        hints = _HINTS.get(type(plugin).__name__)
        if hints is not None and not any(hint in lowered for hint in hints):
            continue
        try:
            flagged = tuple(plugin.analyze_string(line))
        except Exception:  # a plugin that fails on a line: the line is withheld, not sent unscanned
            yield Finding(UNSCANNABLE, line.rstrip("\r\n"))
            continue
        for found in flagged:
            # what a plugin's regex takes around a value (a space, a quote, a JSON escape's
            # backslash, the `=` before it) is not part of it
            value = found.strip(" \t\r\n\"'\\").lstrip("=:").strip() if isinstance(found, str) else ""
            if len(value) >= MIN_VALUE_CHARS and library.kept(value, line, plugin):
                yield Finding(plugin.secret_type, value)


def _installed() -> DetectorLibrary | None:
    try:
        # the optional `redaction` extra, loaded once when this module is
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class  # noqa: PLC0415
        from detect_secrets.filters import heuristic  # noqa: PLC0415
    except ImportError:
        return None
    name, version = _distribution()
    classes = get_mapping_from_secret_type_to_class().values()
    plugins = tuple(
        cls() for cls in sorted(classes, key=lambda cls: cls.__name__) if cls.__name__ not in _SKIPPED
    )
    return DetectorLibrary(name, version, plugins, _kept_by(heuristic))


def _kept_by(heuristic: Any) -> Callable[[str, str, Any], bool]:
    def kept(value: str, line: str, plugin: Any) -> bool:
        if "[REDACTED:" in value or "..." in value or any(char.isspace() for char in value):
            return False
        if _is_digest(value, line):
            return False
        if hasattr(plugin, "entropy_limit") and (
            _ID_OR_PATH.fullmatch(value) or not _entropic(value, plugin)
        ):
            return False
        return not (
            heuristic.is_sequential_string(value)
            or heuristic.is_potential_uuid(value)
            or heuristic.is_likely_id_string(value, line, plugin)
            or heuristic.is_templated_secret(value)
            or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_indirect_reference(line)
            or heuristic.is_not_alphanumeric_string(value)
        )

    return kept


def _entropic(value: str, plugin: Any) -> bool:
    """An entropy plugin's `analyze_string` yields every quoted string: its limit applies here."""
    if _ID_OR_PATH.fullmatch(value) or _ascending(value):
        return False
    return bool(plugin.calculate_shannon_entropy(value) > plugin.entropy_limit)


def _ascending(value: str) -> bool:
    """An alphabet written out (`"123456789ABCDEFGH..."`): most characters follow a smaller one."""
    rises = sum(1 for before, after in itertools.pairwise(value) if after > before)
    return rises >= 0.8 * (len(value) - 1)


def _is_digest(value: str, line: str) -> bool:
    if _DIGEST_PREFIX.match(value):
        return True
    at = line.find(value)
    return at > 0 and _DIGEST_BEFORE.search(line, 0, at) is not None


def _distribution() -> tuple[str, str]:
    for name in ("bc-detect-secrets", "detect-secrets"):
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "detect-secrets", "unknown"


LIBRARY: Final = _installed()
"""The installed detector, or None when the `redaction` extra is not installed."""
