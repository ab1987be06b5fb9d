"""The detector library's seam: only its pure pattern matching runs, its values are cleaned and
filtered, and a plugin that fails withholds its line."""

from __future__ import annotations

import pytest

from pipeline.summarize.model.redaction import SecretKind, redact
from pipeline.summarize.model.secret_detector import LIBRARY, DetectorLibrary, Finding, findings_in
from tests.summarize.model.test_redaction import PLANTED

needs_library = pytest.mark.skipif(LIBRARY is None, reason="the redaction extra is not installed")


@needs_library
def test_the_library_never_verifies_a_secret_over_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LIBRARY is not None
    for plugin in LIBRARY.plugins:
        monkeypatch.setattr(plugin, "verify", lambda *a, **k: pytest.fail("verify was called"))
    assert redact("aws_access_key_id = " + PLANTED[SecretKind.AWS_ACCESS_KEY]).counts.total == 1


@needs_library
def test_a_flagged_value_is_cleaned_of_what_the_regex_took_around_it() -> None:
    assert LIBRARY is not None
    key = "AKCp8" + "k2Lm9Qx7Rt4Vw1Yz3Bn6Cd8Ef0Gh2Ij5Kl7Mn9Op1Qr3St6Uv8Wx0Yz2Ab4Cd6Ef8Gh0Ij2Kl"
    found = list(findings_in(f"artifactory {key} here", LIBRARY))
    assert found == [Finding("Artifactory Credentials", key)]  # the plugin's match holds the spaces


@needs_library
@pytest.mark.parametrize(
    "line",
    [
        'alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"',
        '"id": "msg_01J6DPiGJcuVzMb47chNN9Q2"',
        "path = '/var/folders/4n/2f7pppjd2_n0fftzg8vrlg040000gn/T/tmpzpz61wxy'",
        '"signature": "EoIGCkYICxgCKkCfwPhqMHgFplGaeAwAqphgMw4hYQYQutyB7Tb17MfDH9dulJxbmizpU755"',
    ],
)
def test_the_entropy_plugin_leaves_alphabets_ids_paths_and_signatures(line: str) -> None:
    assert LIBRARY is not None
    assert list(findings_in(line, LIBRARY)) == []


class _FailingPlugin:
    secret_type = "Broken"

    def analyze_string(self, string: str) -> list[str]:
        raise ValueError("a plugin bug")


def test_a_line_a_plugin_fails_on_is_withheld_whole_not_sent_unscanned() -> None:
    broken = DetectorLibrary("broken-detector", "0", (_FailingPlugin(),), lambda value, line, plugin: True)
    result = redact("first line here\nsecond line here", broken)
    assert result.text == "[REDACTED:unscanned-line]\n[REDACTED:unscanned-line]"
    assert result.counts.counts == ((SecretKind.UNSCANNED_LINE, 2),)
