"""File operations of the in-place transaction, confined to directories opened once, with a fault seam.

Every operation goes through a `Directory` (an open directory descriptor): names are single path
components, symlinks are never followed, and no path outside the directories the transaction
opened can be written to, whatever happens to the tree meanwhile (a directory swapped for a
symlink after it was opened does not redirect a single write). `exchange` swaps two names
atomically where the platform can (Linux `renameat2(RENAME_EXCHANGE)`, macOS
`renameatx_np(RENAME_SWAP)`); elsewhere `SwapUnsupported` tells the caller to use the link
strategy. Each operation consults the `FaultSeam` first, so tests fail it for real.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from pipeline.live_vocabulary import Step
from pipeline.publish.live.faults import Fault, FaultSeam, InjectedFault, injected

__all__ = ["Directory", "Operations", "SwapUnsupported", "exchange_supported", "lstat", "open_directory"]

T = TypeVar("T")

_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_PRIVATE_MODE: Final = 0o600  # a staged or backup file holds a private transcript until its mode is set
_NEW_DIRECTORY_MODE: Final = 0o700  # backup directories hold private transcripts
_READ_CHUNK: Final = 8 * 1024 * 1024  # large reads: the OS, not Python, splits the file
_LINUX_RENAME_EXCHANGE: Final = 2  # <linux/fs.h> RENAME_EXCHANGE
_MACOS_RENAME_SWAP: Final = 2  # <stdio.h> RENAME_SWAP
_UNSUPPORTED: Final = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})


class SwapUnsupported(OSError):
    """This platform or file system cannot exchange two names atomically."""


@dataclass(frozen=True, slots=True)
class Directory:
    """An open directory: its resolved path (for messages and receipts) and its descriptor."""

    path: Path
    fd: int

    def child(self, name: str) -> Path:
        """The path a name in this directory stands for."""
        return self.path / name

    def close(self) -> None:
        """Release the descriptor."""
        os.close(self.fd)


def open_directory(path: Path, *, create: bool = False) -> Directory:
    """Open a directory by its resolved path; `create` makes it (and parents) private first."""
    resolved = Path(os.path.realpath(path))
    if create:
        resolved.mkdir(mode=_NEW_DIRECTORY_MODE, parents=True, exist_ok=True)
    return Directory(resolved, os.open(resolved, _DIRECTORY_FLAGS))


def _component(name: str) -> str:
    if not name or name in (".", "..") or "/" in name or (os.altsep and os.altsep in name):
        raise ValueError(f"not a single path component: {name!r}")
    return name


def _libc_swap() -> Callable[[int, bytes, int, bytes], int] | None:
    """The C function that swaps two names, or None on platforms without one."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        function, flag = libc.renameat2, _LINUX_RENAME_EXCHANGE
    elif sys.platform == "darwin" and hasattr(libc, "renameatx_np"):
        function, flag = libc.renameatx_np, _MACOS_RENAME_SWAP
    else:
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return lambda a_fd, a, b_fd, b: int(function(a_fd, a, b_fd, b, flag))


_SWAP: Final = _libc_swap()


def exchange_supported() -> bool:
    """Whether the platform offers an atomic name swap (a file system may still refuse it)."""
    return _SWAP is not None


def _exchange(directory: Directory, first: str, second: str) -> None:
    if _SWAP is None:
        raise SwapUnsupported(errno.ENOSYS, "no atomic exchange on this platform")
    if _SWAP(directory.fd, os.fsencode(first), directory.fd, os.fsencode(second)) != 0:
        code = ctypes.get_errno()
        if code in _UNSUPPORTED:
            raise SwapUnsupported(code, os.strerror(code))
        raise OSError(code, os.strerror(code), str(directory.child(first)))


def _corrupted(data: bytes) -> bytes:
    """The bytes a faulty read returns: the last one flipped (or one extra for an empty file)."""
    return data[:-1] + bytes([data[-1] ^ 0x01]) if data else b"\x00"


class Operations:
    """The transaction's hands: every file operation, each under a named step of the seam."""

    def __init__(self, seam: FaultSeam) -> None:
        self._seam = seam
        self.last_step: Step | None = None  # the step of the operation running or last run

    def _fault(self, step: Step) -> Fault | None:
        self.last_step = step
        return self._seam.fault_at(step)

    def _run(self, step: Step, action: Callable[[], T]) -> T:
        fault = self._fault(step)
        if fault is Fault.FAIL:
            raise injected(step)
        result = action()
        if fault is Fault.FAIL_AFTER:
            raise injected(step)
        return result

    def checkpoint(self, step: Step) -> None:
        """A step that is not a file operation (a check): only a failure can be injected there."""
        self._run(step, lambda: None)

    def read(self, step: Step, directory: Directory, name: str) -> tuple[bytes, os.stat_result]:
        """A file's complete bytes and its status, read through one descriptor."""
        fault = self._fault(step)
        if fault is Fault.FAIL:
            raise injected(step)
        descriptor = os.open(_component(name), _READ_FLAGS, dir_fd=directory.fd)
        with open(descriptor, "rb", buffering=0, closefd=True) as handle:
            status = os.fstat(handle.fileno())
            chunks = []
            while chunk := handle.read(_READ_CHUNK):
                chunks.append(chunk)
        data = b"".join(chunks)
        return (_corrupted(data) if fault is Fault.CORRUPT_READ else data), status

    def create(self, step: Step, directory: Directory, name: str) -> int:
        """A new private file, created exclusively (an existing name is an error, never reused)."""
        return self._run(
            step, lambda: os.open(_component(name), _CREATE_FLAGS, _PRIVATE_MODE, dir_fd=directory.fd)
        )

    def write(self, step: Step, descriptor: int, data: bytes) -> None:
        """All of `data`; a short-write fault leaves half of it and raises ENOSPC."""
        fault = self._fault(step)
        if fault is Fault.FAIL:
            raise injected(step)
        view = memoryview(data)
        if fault is Fault.SHORT_WRITE:
            os.write(descriptor, view[: len(view) // 2])
            raise InjectedFault(errno.ENOSPC, f"injected short write at {step.value}")
        while view:
            view = view[os.write(descriptor, view) :]
        if fault is Fault.FAIL_AFTER:
            raise injected(step)

    def fsync(self, step: Step, descriptor: int) -> None:
        """Flush a file's data to the device."""
        self._run(step, lambda: os.fsync(descriptor))

    def copy_attributes(self, step: Step, descriptor: int, original: os.stat_result, *, times: bool) -> None:
        """Give a staged file the original's mode and owner (and times, when asked)."""

        def apply() -> None:
            if (original.st_uid, original.st_gid) != _owner(descriptor):
                os.fchown(descriptor, original.st_uid, original.st_gid)
            os.fchmod(descriptor, stat.S_IMODE(original.st_mode))
            if times:
                os.utime(descriptor, ns=(original.st_atime_ns, original.st_mtime_ns))

        self._run(step, apply)

    def link(self, step: Step, source: Directory, name: str, target: Directory, new_name: str) -> None:
        """A second name for a file; fails with EEXIST rather than replace anything."""
        self._run(
            step,
            lambda: os.link(
                _component(name),
                _component(new_name),
                src_dir_fd=source.fd,
                dst_dir_fd=target.fd,
                follow_symlinks=False,
            ),
        )

    def rename(self, step: Step, directory: Directory, name: str, new_name: str) -> None:
        """Move a name within one directory (replaces `new_name`: callers check it first)."""
        self._run(
            step,
            lambda: os.rename(
                _component(name), _component(new_name), src_dir_fd=directory.fd, dst_dir_fd=directory.fd
            ),
        )

    def exchange(self, step: Step, directory: Directory, first: str, second: str) -> None:
        """Swap two names atomically; `SwapUnsupported` where the system cannot."""
        self._run(step, lambda: _exchange(directory, _component(first), _component(second)))

    def unlink(self, step: Step, directory: Directory, name: str) -> None:
        """Remove a name; a name already gone is not an error."""

        def remove() -> None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_component(name), dir_fd=directory.fd)

        self._run(step, remove)

    def fsync_directory(self, step: Step, directory: Directory) -> bool:
        """Best-effort durability of a directory's entries; False where that failed."""
        try:
            self._run(step, lambda: os.fsync(directory.fd))
        except OSError:
            return False
        return True


def lstat(directory: Directory, name: str) -> os.stat_result | None:
    """A name's own status (a symlink is not followed), or None when it does not exist."""
    try:
        return os.stat(_component(name), dir_fd=directory.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _owner(descriptor: int) -> tuple[int, int]:
    status = os.fstat(descriptor)
    return status.st_uid, status.st_gid
