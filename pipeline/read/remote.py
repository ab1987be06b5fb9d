"""Sessions behind fsspec URLs (`s3://bucket/prefix`, `gs://...`, `file://...`): listing and fetching.

Listing follows the local discovery's rules (`.jsonl`/`.json` files, hidden names skipped, sorted
by key, labels relative to the root). A worker fetches a URL session into a local temporary file
in fixed-size blocks and runs the ordinary job on it, so the job's memory bound (2x the largest
file + 100 MB) holds for object storage too, and the reader stays the one place that parses
bytes. fsspec and each store's filesystem are optional (`session-compaction[cluster]`) and
imported on use; credentials come from each filesystem's own environment and configuration.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import IO, Any, Final
from urllib.parse import quote

from pipeline.read.discover import (
    NO_STORES,
    RootError,
    SessionFile,
    SessionStores,
    discover,
    is_session_name,
    root_labels,
)

__all__ = [
    "check_store",
    "discover_roots",
    "discover_urls",
    "fetch",
    "filesystem",
    "is_url",
    "mirror_label",
    "sha256_of",
]

_URL: Final = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_STORE_LOGGERS: Final = (
    "botocore",
    "aiobotocore",
    "s3fs",
    "gcsfs",
    "fsspec",
)  # their info lines are not ours
_UNSAFE_SEGMENTS: Final = frozenset({"", ".", ".."})  # an absolute key, `a//b`, `a/./b`, `a/../b`


def is_url(text: str) -> bool:
    """Whether a command-line path names an fsspec URL rather than a local path."""
    return bool(_URL.match(text))


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of a URL and the path inside it (an unknown scheme is a `RootError`)."""
    import fsspec  # noqa: PLC0415 - an optional dependency, loaded for URLs only

    for name in _STORE_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        found: tuple[Any, str] = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise RootError(f"cannot open {url}: {exc}") from exc
    return found


def _store_error(url: str, exc: Exception) -> RootError:
    """An endpoint that is no URL, a store that does not answer, credentials it refuses: one line."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return RootError(f"cannot reach {url}: {text}")


def mirror_label(relative: str) -> tuple[str, bool]:
    """A key's label under its root, and whether it mirrors safely (no empty, `.` or `..` segment).

    A key that does not is labelled as one escaped name, so its report stays inside the report
    directory and no other key's label is taken.
    """
    if not any(segment in _UNSAFE_SEGMENTS for segment in relative.split("/")):
        return relative, True
    escaped = quote(relative, safe="")
    return ("%2E" + escaped[1:] if escaped.startswith(".") else escaped), False


def _stamp(info: dict[str, object]) -> str:
    version = info.get("ETag") or info.get("etag") or info.get("mtime") or info.get("LastModified") or ""
    return f"{info.get('size', '')}:{version}"


def _listed(fs: Any, root: str, file_names: Collection[str]) -> Iterator[tuple[str, str, str, bool]]:
    """Every session key under `root`: the key, its stamp, its label, whether it mirrors safely."""
    found = fs.find(root, withdirs=False, detail=True)
    base = root.rstrip("/") + "/"
    for key in sorted(found):
        relative = key[len(base) :] if key.startswith(base) else key
        label, safe = mirror_label(relative)
        *folders, name = relative.split("/")
        hidden = any(part.startswith(".") for part in folders if part not in _UNSAFE_SEGMENTS)
        if is_session_name(name, file_names) and not hidden:
            yield key, _stamp(found[key]), label, safe


def discover_urls(url: str, root_label: str, file_names: Collection[str] = ()) -> list[SessionFile]:
    """Every session under one URL root (a prefix or a single object); a store that cannot be
    reached or listed is a `RootError` (one line, exit 2), never a traceback."""
    fs, root = filesystem(url)
    try:
        return _discovered(fs, root, url, root_label, file_names)
    except RootError:
        raise
    except Exception as exc:  # botocore's, aiohttp's, a filesystem's own: the store, not the session
        raise _store_error(url, exc) from exc


def _discovered(
    fs: Any, root: str, url: str, root_label: str, file_names: Collection[str]
) -> list[SessionFile]:
    protocol = url.split("://", 1)[0]
    if fs.isfile(root):
        name = PurePosixPath(root).name
        stamp = _stamp(fs.info(root))
        return [SessionFile(Path(root), Path(root).parent, root_label, name, url, url, stamp)]
    if not fs.isdir(root):
        raise RootError(f"no such file or directory: {url}")
    base = root.rstrip("/")
    return [
        SessionFile(
            Path(key),
            Path(base),
            root_label,
            label,
            url=f"{protocol}://{key}",
            root_url=url,
            stamp=stamp,
            unsafe_key=not safe,
        )
        for key, stamp, label, safe in _listed(fs, root, file_names)
    ]


def discover_roots(
    roots: Sequence[Path | str], file_names: Collection[str] = (), stores: SessionStores = NO_STORES
) -> list[SessionFile]:
    """Every session under local roots and URL roots alike, labelled as `discover` labels them
    (`file_names`: names taken as sessions whatever their suffix; `stores`: local files that give
    several sessions each; a URL root's are not read)."""
    names = [Path(PurePosixPath(str(root).split("://", 1)[-1]).name or "root") for root in roots]
    sessions: list[SessionFile] = []
    for root, name, label in zip(roots, names, root_labels(names), strict=True):
        if isinstance(root, str) and is_url(root):
            sessions.extend(discover_urls(root, label, file_names))
            continue
        alone = names.count(name) == 1  # a file named alone keeps its empty label: straight under --out
        for found in discover([Path(root)], file_names, stores):
            sessions.append(replace(found, root_label="" if alone and not found.root_label else label))
    return sessions


def check_store(url: str) -> None:
    """A report directory on a store: its endpoint answers (nothing need be there yet)."""
    fs, root = filesystem(url)
    try:
        fs.exists(root)
    except Exception as exc:  # an endpoint that is no URL, a store that does not answer
        raise _store_error(url, exc) from exc


def fetch(url: str, destination: IO[bytes], block_bytes: int) -> str:
    """Copy a URL's bytes into an open file, one block at a time; return their SHA-256."""
    fs, path = filesystem(url)
    digest = hashlib.sha256()
    with fs.open(path, "rb", block_size=block_bytes) as source:
        while block := source.read(block_bytes):
            digest.update(block)
            destination.write(block)
    return digest.hexdigest()


def sha256_of(path: Path, block_bytes: int) -> str:
    """The SHA-256 of a local file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(block_bytes):
            digest.update(block)
    return digest.hexdigest()
