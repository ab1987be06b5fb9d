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
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import IO, Any, Final

from pipeline.read.discover import SESSION_SUFFIXES, RootError, SessionFile, discover, root_labels

__all__ = ["discover_roots", "discover_urls", "fetch", "filesystem", "is_url", "sha256_of"]

_URL: Final = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_url(text: str) -> bool:
    """Whether a command-line path names an fsspec URL rather than a local path."""
    return bool(_URL.match(text))


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of a URL and the path inside it (an unknown scheme is a `RootError`)."""
    import fsspec  # noqa: PLC0415 - an optional dependency, loaded for URLs only

    try:
        found: tuple[Any, str] = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise RootError(f"cannot open {url}: {exc}") from exc
    return found


def _stamp(info: dict[str, object]) -> str:
    version = info.get("ETag") or info.get("etag") or info.get("mtime") or info.get("LastModified") or ""
    return f"{info.get('size', '')}:{version}"


def _listed(fs: Any, root: str) -> Iterator[tuple[str, str]]:
    try:
        found = fs.find(root, withdirs=False, detail=True)
    except OSError as exc:
        raise RootError(f"cannot list {root}: {exc}") from exc
    base = PurePosixPath(root.rstrip("/"))
    for key in sorted(found):
        parts = PurePosixPath(key).relative_to(base).parts
        if key.endswith(SESSION_SUFFIXES) and not any(part.startswith(".") for part in parts):
            yield key, _stamp(found[key])


def discover_urls(url: str, root_label: str) -> list[SessionFile]:
    """Every session under one URL root (a prefix or a single object)."""
    fs, root = filesystem(url)
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
            PurePosixPath(key).relative_to(base).as_posix(),
            url=f"{protocol}://{key}",
            root_url=url,
            stamp=stamp,
        )
        for key, stamp in _listed(fs, root)
    ]


def discover_roots(roots: Sequence[Path | str]) -> list[SessionFile]:
    """Every session under local roots and URL roots alike, labelled as `discover` labels them."""
    names = [Path(PurePosixPath(str(root).split("://", 1)[-1]).name or "root") for root in roots]
    sessions: list[SessionFile] = []
    for root, name, label in zip(roots, names, root_labels(names), strict=True):
        if isinstance(root, str) and is_url(root):
            sessions.extend(discover_urls(root, label))
            continue
        alone = names.count(name) == 1  # a file named alone keeps its empty label: straight under --out
        for found in discover([Path(root)]):
            sessions.append(replace(found, root_label="" if alone and not found.root_label else label))
    return sessions


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
