"""Settings: one typed object from the defaults file, a user file, the environment and flags.

`config/default.toml` is the only place a knob's default is written: the code holds no other
copy (the last test proves it by looking at every field and parameter named like a knob).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import tomllib
from collections import Counter
from dataclasses import MISSING, fields, is_dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

import pipeline
from pipeline.errors import ConfigError
from pipeline.settings import DEFAULTS_PATH, FREE_TABLES, SECTIONS, load_settings
from pipeline.vocabulary import CheckpointPolicy, LeafPolicy, ResumeGate

DEFAULTS = tomllib.loads(DEFAULTS_PATH.read_text())
_NAMES = Counter(key for name, section in DEFAULTS.items() if name not in FREE_TABLES for key in section)
# Knob names used by one section only: a field called `model` or `stream` elsewhere is not a copy.
KNOBS = {
    key: value
    for name, section in DEFAULTS.items()
    if name not in FREE_TABLES
    for key, value in section.items()
    if _NAMES[key] == 1
}


def test_layers_apply_in_order_defaults_file_environment_flags(tmp_path: Path) -> None:
    override = tmp_path / "c.toml"
    override.write_text("[compress]\nmin_tokens = 5\ntarget_ratio = 0.2\n")
    settings = load_settings(
        override, environ={"COMPACTION_SWEEP_JOBS": "3"}, flags={"compress": {"target_ratio": 0.5}}
    )
    assert settings.compress.min_tokens == 5  # the file
    assert settings.sweep.jobs == 3  # the environment
    assert settings.compress.target_ratio == 0.5  # flags beat the file
    assert settings.compress.summary_char_budget == DEFAULTS["compress"]["summary_char_budget"]
    assert settings.sources == (str(DEFAULTS_PATH), str(override), "environment", "flags")


def test_choices_become_enums_once() -> None:
    settings = load_settings(environ={"COMPACTION_SWEEP_LEAF_POLICY": "strict"})
    assert settings.sweep.leaf_policy is LeafPolicy.STRICT
    assert settings.sweep.checkpoint_policy is CheckpointPolicy(DEFAULTS["sweep"]["checkpoint_policy"])
    assert settings.compress.verify_resume is ResumeGate(DEFAULTS["compress"]["verify_resume"])
    with pytest.raises(ConfigError, match="leaf_policy"):
        load_settings(environ={"COMPACTION_SWEEP_LEAF_POLICY": "sideways"})


@pytest.mark.parametrize(
    ("section", "knob", "value"),
    [
        ("sweep", "jobs", -1),
        ("compress", "target_ratio", 0.0),
        ("compress", "target_ratio", 1.5),
        ("compress", "min_gain", 1.0),
        ("compress", "summary_char_budget", 3999),
        ("summary", "max_quote_chars", 0),
        ("verify", "resume_timeout_seconds", 0.5),
    ],
)
def test_values_out_of_range_are_refused_with_the_knob_named(section: str, knob: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"{section}.{knob} must be"):
        load_settings(environ={}, flags={section: {knob: value}})


def test_wrong_types_unknown_names_and_bad_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expects int"):
        load_settings(environ={"COMPACTION_SWEEP_JOBS": "many"})
    with pytest.raises(ConfigError, match="known section"):
        load_settings(environ={"COMPACTION_NOPE_X": "1"})
    bad = tmp_path / "bad.toml"
    bad.write_text("[sweep]\nunknown_knob = 1\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings(bad, environ={})
    broken = tmp_path / "broken.toml"
    broken.write_text("[sweep\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(broken, environ={})


def test_our_other_variables_are_not_mistaken_for_settings(tmp_path: Path) -> None:
    settings = load_settings(environ={"COMPACTION_CLAUDE_CODE": str(tmp_path), "COMPACTION_CONFIG": ""})
    assert settings.sources == (str(DEFAULTS_PATH),)


def test_the_package_reads_config_default_toml_itself_not_a_copy() -> None:
    """The packaged defaults are `config/default.toml` (here a symlink to it): they cannot drift.
    tests/test_packaging.py checks the built wheel and sdist carry the same bytes."""
    written = Path(pipeline.__file__).resolve().parents[1] / "config" / "default.toml"
    assert Path(str(DEFAULTS_PATH)).resolve() == written.resolve()
    assert DEFAULTS_PATH.read_bytes() == written.read_bytes()


def test_missing_packaged_defaults_say_the_install_is_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.settings import loading

    monkeypatch.setattr(loading, "DEFAULTS_PATH", tmp_path / "default.toml")
    with pytest.raises(ConfigError, match=r"package's defaults are missing .*reinstall session-compaction"):
        load_settings(environ={})


def test_every_knob_of_the_file_has_a_typed_home_and_every_typed_knob_a_default() -> None:
    assert set(DEFAULTS) == set(SECTIONS)
    for name, kind in SECTIONS.items():
        if name not in FREE_TABLES:
            assert {f.name for f in fields(kind)} == set(DEFAULTS[name]), name


def _defaults_named_like_knobs(module: Any) -> list[tuple[str, str, Any]]:
    """(owner, name, default) of every dataclass/struct field and parameter named like a knob."""
    found: list[tuple[str, str, Any]] = []
    for owner_name, owner in vars(module).items():
        if getattr(owner, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(owner) and is_dataclass(owner):
            found += [(owner_name, f.name, f.default) for f in fields(owner) if f.default is not MISSING]
        elif inspect.isclass(owner) and issubclass(owner, msgspec.Struct):
            pairs = zip(owner.__struct_fields__[::-1], owner.__struct_defaults__[::-1], strict=False)
            found += [(owner_name, n, v) for n, v in pairs if v is not msgspec.NODEFAULT]
        elif inspect.isfunction(owner):
            found += [
                (owner_name, p.name, p.default)
                for p in inspect.signature(owner).parameters.values()
                if p.default is not inspect.Parameter.empty
            ]
    return [(owner, name, value) for owner, name, value in found if name in KNOBS]


def test_the_code_holds_no_other_copy_of_a_default() -> None:
    """No field or parameter named like a knob has a default other than the file's."""
    stray = []
    for info in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        module = importlib.import_module(info.name)
        stray += [
            (info.name, owner, name, value)
            for owner, name, value in _defaults_named_like_knobs(module)
            if value != KNOBS[name]
        ]
    assert stray == []


def test_named_bounds_are_not_knob_literals_in_disguise() -> None:
    """Source literals equal to a characteristic knob default sit only where they mean something else."""
    characteristic = {60000, 180.0}  # the summary budget and the resume timeout were copied around
    hits = []
    for path in Path(pipeline.__file__).parent.rglob("*.py"):
        if "testing" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Constant)
                and type(node.value) in (int, float)
                and node.value in characteristic
            ):
                hits.append((path.name, node.lineno, node.value))
    assert hits == []


def test_list_valued_knobs_in_the_environment_parse_as_toml_values() -> None:
    settings = load_settings(
        None,
        environ={
            "COMPACTION_PRICES_GPT_4_1_MINI": "[0.5, 2.0]",  # a shell name cannot spell gpt-4.1-mini
            "COMPACTION_PRICES_MY_MODEL": "[1, 4.5]",
        },
    )
    assert list(settings.prices["gpt-4.1-mini"]) == [0.5, 2.0]
    assert list(settings.prices["my_model"]) == [1.0, 4.5]
    with pytest.raises(ConfigError, match="COMPACTION_PRICES_MY_MODEL is not a TOML value"):
        load_settings(None, environ={"COMPACTION_PRICES_MY_MODEL": "1.0, 4.5"})


def test_a_price_from_the_environment_leaves_every_command_working(tmp_path: Path) -> None:
    from pipeline.testing import TranscriptBuilder
    from pipeline.testing.invoke import compaction

    builder = TranscriptBuilder(seed=1)
    builder.user("first request")
    builder.assistant(builder.text("done"))
    builder.write(tmp_path / "s.jsonl")
    done = compaction(
        "validate", str(tmp_path / "s.jsonl"), "--report-dir", str(tmp_path / "r"), "--quiet",
        env={"COMPACTION_PRICES_CLAUDE_SONNET_4_5": "[3.0, 15.0]"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
