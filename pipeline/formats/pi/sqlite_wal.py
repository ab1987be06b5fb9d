"""An SQLite database as its readers see it: the main file with its write-ahead log applied.

OpenClaw keeps its store in WAL mode, so the newest turns of a live session sit in
`openclaw-agent.sqlite-wal` until a checkpoint copies them into the main file. The log is applied
here from bytes, as SQLite recovers it (https://www.sqlite.org/fileformat.html#the_write_ahead_log):
frames whose salts match the log's header and whose running checksum holds, up to the last commit
frame; a torn or uncommitted tail is not part of the database. The image is marked as a
rollback-journal database (header bytes 18 and 19), which is what an in-memory copy can open; the
files themselves are never opened by SQLite here, so a running OpenClaw is neither locked nor written.
"""

from __future__ import annotations

import struct
from typing import Final

__all__ = ["database_image"]

_WAL_MAGIC: Final = frozenset({0x377F0682, 0x377F0683})  # the low bit: checksums big-endian
_WAL_HEADER: Final = 32
_FRAME_HEADER: Final = 24
_FORMAT_VERSION_AT: Final = slice(18, 20)  # write and read version: 2 = WAL, 1 = rollback journal
_ROLLBACK_JOURNAL: Final = b"\x01\x01"
_MASK: Final = 0xFFFFFFFF


def _checksum(data: bytes, big_endian: bool, s0: int, s1: int) -> tuple[int, int]:
    """SQLite's WAL checksum over 32-bit words, continued from (s0, s1)."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    for first, second in zip(words[::2], words[1::2], strict=True):
        s0 = (s0 + first + s1) & _MASK
        s1 = (s1 + second + s0) & _MASK
    return s0, s1


def _committed_pages(wal: bytes) -> tuple[list[tuple[int, bytes]], int | None]:
    """The frames of every committed transaction in log order, and the database's size in pages
    after the last commit (None: no committed frame, or no valid log)."""
    if len(wal) < _WAL_HEADER:
        return [], None
    magic, _, page_size, _, salt1, salt2, check1, check2 = struct.unpack(">8I", wal[:_WAL_HEADER])
    big_endian = bool(magic & 1)
    if magic not in _WAL_MAGIC or page_size < 512 or page_size & (page_size - 1):
        return [], None
    s0, s1 = _checksum(wal[:24], big_endian, 0, 0)
    if (s0, s1) != (check1, check2):
        return [], None
    committed: list[tuple[int, bytes]] = []
    pending: list[tuple[int, bytes]] = []
    pages: int | None = None
    at = _WAL_HEADER
    while at + _FRAME_HEADER + page_size <= len(wal):
        number, size, frame_salt1, frame_salt2, f_check1, f_check2 = struct.unpack(
            ">6I", wal[at : at + _FRAME_HEADER]
        )
        page = wal[at + _FRAME_HEADER : at + _FRAME_HEADER + page_size]
        if (frame_salt1, frame_salt2) != (salt1, salt2) or number == 0:
            break
        s0, s1 = _checksum(wal[at : at + 8], big_endian, s0, s1)
        s0, s1 = _checksum(page, big_endian, s0, s1)
        if (s0, s1) != (f_check1, f_check2):
            break
        pending.append((number, page))
        if size:  # a commit frame: its transaction, and those before it, are the database
            committed += pending
            pending, pages = [], size
        at += _FRAME_HEADER + page_size
    return committed, pages


def database_image(main: bytes, wal: bytes = b"") -> bytes:
    """The database's bytes with its committed log applied, openable in memory."""
    frames, pages = _committed_pages(wal)
    image = bytearray(main)
    if frames and pages is not None:
        page_size = len(frames[0][1])
        for number, page in frames:
            start = (number - 1) * page_size
            if len(image) < start:
                image.extend(bytes(start - len(image)))
            image[start : start + page_size] = page
        del image[pages * page_size :]
    if len(image) >= _FORMAT_VERSION_AT.stop:
        image[_FORMAT_VERSION_AT] = _ROLLBACK_JOURNAL
    return bytes(image)
