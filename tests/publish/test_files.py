"""Publishing on its own: a write lands whole or not at all, and never leaves a temporary file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.publish.files import ReportFiles, fsync_directory, write_bytes_atomic, write_report


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_an_atomic_write_replaces_the_file_whole_and_creates_its_directory(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "candidate.jsonl"
    write_bytes_atomic(target, b"first\n")
    write_bytes_atomic(target, b"second version\n")
    assert target.read_bytes() == b"second version\n"
    assert _leftovers(target.parent) == []


def test_a_failed_write_keeps_the_previous_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "candidate.jsonl"
    write_bytes_atomic(target, b"previous\n")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)  # the failure a full disk gives at flush time
    with pytest.raises(OSError, match="No space"):
        write_bytes_atomic(target, b"new bytes that never land\n")
    assert target.read_bytes() == b"previous\n"
    assert _leftovers(tmp_path) == []


def test_a_failed_rename_keeps_the_previous_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "candidate.jsonl"
    write_bytes_atomic(target, b"previous\n")

    def refused(source: Path, destination: Path) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(PermissionError):
        write_bytes_atomic(target, b"replacement\n")
    assert target.read_bytes() == b"previous\n"
    assert _leftovers(tmp_path) == []


@pytest.mark.anyio
async def test_reports_are_written_whole_and_directories_made_once(tmp_path: Path) -> None:
    made: set[Path] = set()
    first, second = tmp_path / "r" / "a.report.json", tmp_path / "r" / "b.report.json"
    await write_report(first, b'{"a": 1}', made=made)
    await write_report(second, b'{"b": 2}', made=made)
    await write_report(first, b'{"a": 3}', made=made)
    assert made == {tmp_path / "r"}
    assert (first.read_bytes(), second.read_bytes()) == (b'{"a": 3}', b'{"b": 2}')
    assert _leftovers(tmp_path / "r") == []


def test_a_batch_writes_new_and_existing_reports_whole_and_leaves_nothing_behind(tmp_path: Path) -> None:
    files = ReportFiles()
    first, second = tmp_path / "r" / "a.report.json", tmp_path / "r" / ".resume" / "a.done.json"
    files.write(first, b'{"a": 1}\n')
    files.write(second, b'{"done": 1}\n')
    files.write(first, b'{"a": 2}\n')  # a rerun's report: replaced whole, not refused
    assert (first.read_bytes(), second.read_bytes()) == (b'{"a": 2}\n', b'{"done": 1}\n')
    assert files.made == {first.parent, second.parent}
    assert oct(first.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # as any file this run creates
    assert _leftovers(first.parent) == [] and _leftovers(second.parent) == []


@pytest.mark.parametrize("failing", ["write", "replace"])
def test_a_batch_write_that_fails_keeps_the_previous_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "a.report.json"
    files = ReportFiles()
    files.write(target, b"previous\n")

    def full_disk(*args: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing, full_disk)
    with pytest.raises(OSError, match="No space"):
        files.write(target, b"new bytes that never land\n")
    with pytest.raises(OSError, match="No space"):
        files.write(tmp_path / "new.report.json", b"never\n")
    assert target.read_bytes() == b"previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.report.json"]


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_directory_fsync_reports_whether_it_could(tmp_path: Path) -> None:
    assert fsync_directory(tmp_path) is True
    assert fsync_directory(tmp_path / "missing") is False
