"""The documentation site builds with `mkdocs build --strict` (a broken link or a missing page
fails), and its reference pages, generated from the code at each build (`docs/gen_reference.py`),
hold every command option, every knob with its default and reason, every status, finding and
reason code, and every exit code: a new one without documentation fails here."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from pipeline.cli.grammar import build_parser
from pipeline.findings import REASONS
from pipeline.jobs.report_schemas import DOCUMENTS, shipped
from pipeline.reasons import ReasonCode
from pipeline.vocabulary import ExitCode, FindingCode, ProbeExit, ResumeExit, SessionStatus

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "docs" / "gen_reference.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    built: dict[str, str] = gen.pages()
    return built


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about MkDocs 2 is no warning of ours
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    return subprocess.run(command, cwd=config.parent, env=env, capture_output=True, text=True, timeout=300)


def test_the_site_builds_strictly_with_the_generated_reference(tmp_path: Path) -> None:
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    for page in gen.PAGES:
        assert (tmp_path / "site" / "reference" / page / "index.html").is_file(), page
    for doc in DOCUMENTS:  # each shipped schema is served as is, where its page links it
        assert (tmp_path / "site" / gen.SCHEMAS / doc.file_name).read_bytes() == shipped(doc)
    home = (tmp_path / "site" / "index.html").read_text()
    assert "Codex CLI 0.171.0" in home  # the README's agents table, included, not copied
    assert not (tmp_path / "site" / "gen_reference.py").exists()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copy(ROOT / "README.md", copy / "README.md")
    page = copy / "docs" / "quickstart.md"
    page.write_text(page.read_text() + "\nSee [the missing page](guides/no-such-page.md).\n")
    done = _build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_every_command_and_option_is_in_the_reference(pages: dict[str, str]) -> None:
    page = pages["reference/commands.md"]
    parser = build_parser()
    (commands,) = (action for action in parser._actions if action.choices and action.dest == "command")
    assert isinstance(commands.choices, dict)
    for name, command in commands.choices.items():
        assert f"## `compaction {name}`" in page, name
        for action in command._actions:
            for option in [] if isinstance(action, argparse._HelpAction) else action.option_strings:
                assert f"`{option}`" in page, f"{name} {option}"


def test_every_knob_is_in_the_reference_with_its_default(pages: dict[str, str]) -> None:
    page = pages["reference/configuration.md"]
    defaults = tomllib.loads((ROOT / "config" / "default.toml").read_text())
    for section, table in defaults.items():
        assert f"## `[{section}]`" in page, section
        for key, value in table.items():
            assert f"| `{key}` | `{gen._cell(gen._toml(value))}` |" in page, f"[{section}] {key}"


def test_a_knob_without_a_reason_fails_the_generator() -> None:
    documented = "[sweep]\n# Workers: one per core.\njobs = 0\n"
    assert "Workers: one per core." in gen.configuration_page(documented)
    with pytest.raises(gen.UndocumentedKnob, match=r"\[sweep\] quiet"):
        gen.configuration_page(documented + "\nquiet = false\n")


def test_a_comment_after_the_value_is_a_reason_and_a_hash_in_a_string_is_not() -> None:
    page = gen.configuration_page('[sweep]\njobs = 0  # one per core\n# A mark.\nmark = "a #b"\n')
    assert "| `jobs` | `0` | one per core |" in page
    assert '| `mark` | `"a #b"` | A mark. |' in page


def test_grouped_knobs_share_the_comment_above_them() -> None:
    text = "[compress]\n# Below it: skipped.\nmin = 1\n# The target's two bounds.\nratio = 0.3\nshare = 0.4\n"
    page = gen.configuration_page(text)
    assert "| `share` | `0.4` | The target's two bounds. |" in page
    assert page.count("The target's two bounds.") == 2


def _codes() -> list[ReasonCode]:
    vocabularies, pending = [], list(ReasonCode.__subclasses__())
    while pending:
        vocabulary = pending.pop()
        vocabularies.append(vocabulary)
        pending.extend(vocabulary.__subclasses__())
    return [member for vocabulary in vocabularies for member in vocabulary]


def test_every_status_finding_and_reason_code_is_in_the_reference(pages: dict[str, str]) -> None:
    page = pages["reference/vocabulary.md"]
    for status in SessionStatus:
        assert f"| `{status.value}` |" in page, status
    for finding in FindingCode:
        assert f"| `{finding.value}` | {gen._cell(REASONS[finding])} |" in page, finding
    codes = _codes()
    assert len(codes) > 100
    for code in codes:
        assert f"| `{code.value}` |" in page, f"{type(code).__name__}.{code.name}"


def test_every_schema_is_in_the_reference(pages: dict[str, str]) -> None:
    page = pages["reference/schemas.md"]
    for doc in DOCUMENTS:
        assert f"| `{doc.name}` | `{doc.id}` |" in page and f"(schemas/{doc.file_name})" in page, doc.id


def test_every_exit_code_is_in_the_reference(pages: dict[str, str]) -> None:
    page = pages["reference/exit-codes.md"]
    for vocabulary in (ExitCode, ResumeExit, ProbeExit):
        for code in vocabulary:
            assert f"| {code.value} | `{code.name.lower()}` |" in page, code
    assert "`compaction restore`:" in page and "`compaction repair`:" in page
