"""Client versions as the per-family figures group them: a session's newest, in release order."""

from __future__ import annotations

from pipeline.jobs.tokens.by_family import UNKNOWN_VERSION, newest_version, version_key


def test_a_session_belongs_to_the_newest_version_its_records_name() -> None:
    # An upgrade mid-session: the later client wrote the lines a resume would send.
    assert newest_version(["2.0.9", "2.0.10", "1.0.128"]) == "2.0.10"
    assert newest_version([]) == UNKNOWN_VERSION


def test_versions_sort_number_by_number_not_as_text() -> None:
    versions = ["2.1.40", "2.0.10", "unknown", "2.0.9", "1.0.128"]
    assert sorted(versions, key=version_key) == ["unknown", "1.0.128", "2.0.9", "2.0.10", "2.1.40"]
