"""Publishing: the only place that writes files. Every write is atomic and never touches sources.

A file is written to a unique temporary name in its destination directory, flushed and fsynced,
then renamed over the destination; the directory is fsynced where the platform allows. A
failure removes the temporary file and leaves any previous destination intact.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path
from typing import Any

import aiofiles
import aiofiles.os
import orjson

__all__ = ["fsync_directory", "write_bytes_atomic", "write_json_atomic", "write_json_report"]


def fsync_directory(path: Path) -> bool:
    """Best-effort durability of a directory entry; False where unsupported."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        os.fsync(descriptor)
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write bytes to `path` atomically (temp file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with temporary.open("xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    fsync_directory(path.parent)


def write_json_atomic(path: Path, value: Any) -> None:
    """Write a JSON document (indented, sorted keys, trailing newline) atomically."""
    write_bytes_atomic(path, orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")


async def write_json_report(path: Path, value: Any) -> None:
    """`write_json_atomic` for the event loop: the bytes go through aiofiles, then fsync and rename."""
    data = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    await aiofiles.os.makedirs(path.parent, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        async with aiofiles.open(temporary, "xb") as handle:
            await handle.write(data)
            await handle.flush()
            await aiofiles.os.wrap(os.fsync)(handle.fileno())
        await aiofiles.os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            await aiofiles.os.remove(temporary)
        raise
