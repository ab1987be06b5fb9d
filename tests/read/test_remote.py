"""Sessions and reports on an object store: moto's S3 server on loopback, driven through s3fs as a
real bucket (write, list, streamed read, a conditional put rejected for the second writer), and a
cluster run over `s3://` giving the reports a local copy gives."""

from __future__ import annotations

import io
import logging
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import s3fs
from moto.server import ThreadedMotoServer

from pipeline.execute.dask_cluster import loopback_cluster
from pipeline.formats.registry import session_file_names
from pipeline.publish.files import PublishConflict, put_object, read_object
from pipeline.read.remote import discover_roots, fetch, is_url
from pipeline.testing.invoke import compaction
from pipeline.testing.sessions import build_session

BUCKET = "fleet"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """An S3 endpoint on loopback and the environment every s3fs client (ours, workers') reads."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "FSSPEC_S3_ENDPOINT_URL": f"http://127.0.0.1:{port}",
    }
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    s3fs.S3FileSystem.clear_instance_cache()
    s3fs.S3FileSystem(endpoint_url=env["AWS_ENDPOINT_URL"]).mkdir(BUCKET)
    try:
        yield env
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _fs(env: dict[str, str]) -> Any:
    return s3fs.S3FileSystem(endpoint_url=env["AWS_ENDPOINT_URL"])


def test_urls_are_told_from_paths() -> None:
    assert is_url("s3://bucket/prefix") and is_url("file:///tmp/x") and is_url("gs://b")
    assert not is_url("/tmp/x") and not is_url("relative/s3:/x")


def test_a_bucket_is_listed_read_in_blocks_and_written_once(s3: dict[str, str], tmp_path: Path) -> None:
    fs = _fs(s3)
    build_session(tmp_path / "a.jsonl", turns=3)
    data = (tmp_path / "a.jsonl").read_bytes()
    fs.pipe_file(f"{BUCKET}/list/p/a.jsonl", data)
    fs.pipe_file(f"{BUCKET}/list/p/.hidden.jsonl", data)
    fs.pipe_file(f"{BUCKET}/list/p/notes.txt", b"x")
    fs.pipe_file(f"{BUCKET}/list/p/.aider.chat.history.md", b"# aider chat started at 2026-04-20 10:00:00\n")
    fs.pipe_file(f"{BUCKET}/list/.git/.aider.chat.history.md", b"x")  # under a hidden folder: never
    found = discover_roots([f"s3://{BUCKET}/list"])
    assert [(s.report_label, s.url) for s in found] == [("list/p/a.jsonl", f"s3://{BUCKET}/list/p/a.jsonl")]
    named = discover_roots([f"s3://{BUCKET}/list"], session_file_names())  # the agents' named files too
    assert [s.report_label for s in named] == ["list/p/.aider.chat.history.md", "list/p/a.jsonl"]
    copy = io.BytesIO()
    fetch(f"s3://{BUCKET}/list/p/a.jsonl", copy, block_bytes=1024)  # many ranged reads
    assert copy.getvalue() == data
    target = f"s3://{BUCKET}/out/r.json"
    assert put_object(target, b"first", once=True)
    assert not put_object(target, b"first", once=True)  # the same bytes again: idempotent
    with pytest.raises(PublishConflict):
        put_object(target, b"second", once=True)  # a second writer is rejected
    assert read_object(target) == b"first"
    assert read_object(f"s3://{BUCKET}/out/none.json") is None


@pytest.fixture(scope="module")
def cluster(s3: dict[str, str]) -> Iterator[str]:
    """Workers started after the S3 environment is set, so they reach the same endpoint."""
    with loopback_cluster(2, quiet_below=logging.ERROR) as local:
        yield local.scheduler_address


def _reports(directory: Path) -> dict[str, Any]:
    found = {}
    for path in sorted(directory.rglob("*.report.json")):
        report = orjson.loads(path.read_bytes())
        report.pop("timing_ms", None)
        found[path.relative_to(directory).as_posix()] = report
    return found


def test_a_fleet_on_s3_gives_the_reports_of_its_local_copy(
    s3: dict[str, str], cluster: str, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    for index in range(6):
        build_session(root / f"p{index % 2}" / f"s{index}.jsonl", turns=2 + index, seed=index)
    fs = _fs(s3)
    fs.put(str(root), f"{BUCKET}/copy/fleet", recursive=True)
    local = compaction("validate", str(root), "--report-dir", str(tmp_path / "local"), "--quiet")
    args = ["validate", f"s3://{BUCKET}/copy/fleet", "--quiet", "--cluster", cluster]
    remote = compaction(*args, "--report-dir", str(tmp_path / "remote"), env=s3)
    assert remote.returncode == local.returncode, remote.stderr
    assert _reports(tmp_path / "local") == _reports(tmp_path / "remote")
    on_s3 = compaction(*args, "--report-dir", f"s3://{BUCKET}/reports", env=s3)
    assert on_s3.returncode == local.returncode, on_s3.stderr
    fs.get(f"{BUCKET}/reports", str(tmp_path / "bucket"), recursive=True)
    assert _reports(tmp_path / "bucket") == _reports(tmp_path / "local")
    assert (tmp_path / "bucket" / "summary.json").exists()
    again = compaction(*args, "--report-dir", f"s3://{BUCKET}/reports", env=s3)  # resumed: nothing rewritten
    assert again.returncode == local.returncode, again.stderr
    shutil.rmtree(tmp_path / "bucket")


def test_keys_that_cannot_be_mirrored_are_findings_inside_the_report_dir(
    s3: dict[str, str], cluster: str, tmp_path: Path
) -> None:
    build_session(tmp_path / "a.jsonl", turns=2)
    data = (tmp_path / "a.jsonl").read_bytes()
    fs = _fs(s3)
    for key in ("odd/p/a.jsonl", "odd/p/../up.jsonl", "odd/p/./here.jsonl", "odd//lead.jsonl"):
        fs.pipe_file(f"{BUCKET}/{key}", data)
    listed = {s.label: s.unsafe_key for s in discover_roots([f"s3://{BUCKET}/odd"])}
    assert listed == {
        "p/a.jsonl": False,
        "p%2F..%2Fup.jsonl": True,
        "p%2F.%2Fhere.jsonl": True,
        "%2Flead.jsonl": True,
    }
    reports = tmp_path / "reports"
    args = ["validate", f"s3://{BUCKET}/odd", "--quiet", "--cluster", cluster, "--report-dir", str(reports)]
    done = compaction(*args, env=s3)
    local = compaction(
        "validate", str(tmp_path / "a.jsonl"), "--report-dir", str(tmp_path / "one"), "--quiet"
    )
    assert done.returncode == local.returncode, done.stderr  # the unsafe keys fail nothing: warnings
    assert "Traceback" not in done.stderr
    found = _reports(reports)
    assert sorted(found) == [f"odd/{label}.report.json" for label in sorted(listed)]
    for label, unsafe in listed.items():
        codes = [f["code"] for f in found[f"odd/{label}.report.json"]["findings"]]
        assert ("object-key-unsafe" in codes) is unsafe, (label, codes)
    assert (
        not (tmp_path / "up.jsonl.report.json").exists() and not (reports / "up.jsonl.report.json").exists()
    )


@pytest.mark.parametrize("on_store", ["sessions", "reports"])
@pytest.mark.parametrize("endpoint", ["not a url", "http://127.0.0.1:{port}"])
def test_a_store_that_cannot_be_reached_is_one_line_and_exit_2(
    endpoint: str, on_store: str, tmp_path: Path
) -> None:
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint.format(port=_free_port()),  # nothing listens there
        "AWS_MAX_ATTEMPTS": "1",
    }
    url = f"s3://{BUCKET}/x"
    build_session(tmp_path / "in" / "a.jsonl", turns=2)
    where = [url, "--report-dir", str(tmp_path / "r")] if on_store == "sessions" else [str(tmp_path / "in")]
    reports = ["--report-dir", url] if on_store == "reports" else []
    done = compaction(
        "validate", *where, *reports, "--cluster", "local:1", env=env, unset=("FSSPEC_S3_ENDPOINT_URL",)
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"compaction: error: cannot reach {url}"), lines
    assert "Traceback" not in done.stderr
