"""The real pi resumes a staged copy of a session and sends the context it rebuilt."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.proof.pi.pi_process import PiNotInstalled, find_pi, require_pi
from pipeline.proof.pi.pi_resume import PROBE, resume_pi
from pipeline.proof.pi.pi_staging import stage_session

FIXTURES = Path(__file__).parents[2] / "fixtures" / "pi"
PI = find_pi()
needs_pi = pytest.mark.skipif(PI is None, reason="pi is not installed (scripts/install-pi installs it)")


def test_staging_points_the_header_at_an_existing_directory_and_keeps_every_other_byte(
    tmp_path: Path,
) -> None:
    source = FIXTURES / "tools.jsonl"
    staged = stage_session(source, tmp_path)
    original, copy = source.read_bytes().split(b"\n"), staged.session.read_bytes().split(b"\n")
    assert copy[1:] == original[1:]
    header = orjson.loads(copy[0])
    assert header["cwd"] == str(staged.work_dir)
    assert staged.work_dir.is_dir()
    assert {k: v for k, v in header.items() if k != "cwd"} == {
        k: v for k, v in orjson.loads(original[0]).items() if k != "cwd"
    }


def test_a_missing_installation_names_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(PiNotInstalled, match=str(tmp_path)):
        require_pi(tmp_path)


@needs_pi
def test_pi_resumes_a_copy_and_sends_its_history_before_the_probe(tmp_path: Path) -> None:
    assert PI is not None
    source = FIXTURES / "tools.jsonl"
    before = source.read_bytes()
    kept = tmp_path / "after.jsonl"
    result = resume_pi(source, pi=PI, timeout=120, keep=kept)
    assert result.resumed, result.stderr
    assert result.system is not None and result.system["role"] == "system"
    roles = [message["role"] for message in result.context]
    assert roles[0] == "user" and "tool" in roles
    assert source.read_bytes() == before
    appended = kept.read_bytes()[len(before) :]
    assert PROBE.encode() in appended  # pi appended the new turn to the copy, not the original
