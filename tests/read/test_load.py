"""Reading a session's bytes: a pipe, socket or device named like a session is never waited on."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import warnings
from pathlib import Path

import pytest

from pipeline.errors import NotARegularFile
from pipeline.read.load import read_source
from pipeline.testing.invoke import compaction, reports


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"user"}\n')
    assert read_source(path).data == b'{"type":"user"}\n'


def test_a_large_file_is_hashed_as_it_is_in_a_process_and_in_its_forked_child(tmp_path: Path) -> None:
    """Large files are hashed on the process's reused threads; a forked child inherits none of
    them and must start its own rather than wait on a thread that is not there."""
    path = tmp_path / "big.jsonl"
    data = b'{"type":"user"}\n' * 40_000  # past the size hashed on another thread
    path.write_bytes(data)
    expected = hashlib.sha256(data).hexdigest()
    assert read_source(path).sha256 == expected  # the parent's hashing thread is started now
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads (3.12+)
        child = os.fork()
    if child == 0:
        signal.alarm(30)  # a child waiting on a missing thread dies instead of hanging the test
        os._exit(0 if read_source(path).sha256 == expected else 1)
    _, status = os.waitpid(child, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile) as raised:
        read_source(fifo)
    assert raised.value.kind == "named pipe"


def test_a_link_to_a_device_is_refused_instead_of_read_without_end(tmp_path: Path) -> None:
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(NotARegularFile) as raised:
        read_source(link)
    assert raised.value.kind == "character device"


def test_validate_skips_a_pipe_and_a_socket_under_a_root_with_a_finding(tmp_path: Path) -> None:
    root = tmp_path / "projects" / "p"
    root.mkdir(parents=True)
    (root / "good.jsonl").write_bytes(b'{"type":"summary","summary":"s","leafUuid":"u"}\n')
    os.mkfifo(root / "fifo.jsonl")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(root / "sock.jsonl"))
    try:
        done = compaction(
            "validate", str(tmp_path / "projects"), "--report-dir", str(tmp_path / "r"), timeout=120
        )
    finally:
        listener.close()
    assert "Traceback" not in done.stderr
    by_label = {report["session"]["label"]: report for report in reports(tmp_path / "r")}
    for name, kind in (("fifo.jsonl", "named pipe"), ("sock.jsonl", "socket")):
        report = by_label[f"p/{name}"]
        assert report["status"] == "not-a-transcript", json.dumps(report)
        [finding] = report["findings"]
        assert finding["code"] == "not-a-regular-file" and kind in finding["ids"]
