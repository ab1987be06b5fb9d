"""The reference pages of the documentation, generated from the code so nothing is written twice.

MkDocs runs this file as a hook (`hooks:` in mkdocs.yml): `on_files` adds the pages below, built
at each build, never stored in `docs/`:

- `reference/commands.md`: every command and option, from the argument parser (`build_parser`);
- `reference/configuration.md`: every knob, its default and the comment above it (its reason),
  from `config/default.toml`;
- `reference/vocabulary.md`: every status, finding code and reason code, from the closed
  vocabularies (the `StrEnum`s the reports' values come from);
- `reference/exit-codes.md`: every command's exit codes, from the `IntEnum`s and the epilogs;
- `reference/schemas.md`: every JSON Schema the package ships, each file served beside it.

`tests/test_docs.py` builds the site with `--strict` and checks each page against the code.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import importlib.resources
import inspect
import pkgutil
import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any, Final

from mkdocs.structure.files import File

import pipeline
from pipeline.cli.grammar import build_parser
from pipeline.findings import REASONS
from pipeline.jobs.report_schemas import DOCUMENTS, shipped
from pipeline.live_vocabulary import Disposition
from pipeline.reasons import ReasonCode
from pipeline.vocabulary import ExitCode, FindingCode, ProbeExit, ResumeExit, SessionStatus, StrictStatus

DEFAULTS: Final = "default.toml"  # config/default.toml, as the package reads it (pipeline/settings/)
PAGES: Final = ("commands", "configuration", "vocabulary", "exit-codes", "schemas")
SCHEMAS: Final = "reference/schemas"  # where the site serves the shipped schema files
_MEMBER: Final = re.compile(r"^\s+([A-Z][A-Z0-9_]*)\s*=\s*[^#]*?(?:#\s*(.*))?$")


class UndocumentedKnob(ValueError):
    """A key of config/default.toml without the comment that gives its reason."""


def _cell(text: object) -> str:
    """Text for one Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: object) -> str:
    return f"`{text}`" if str(text) else ""


# --- commands: the argument parser -----------------------------------------------------------


def _commands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """Each subcommand's name, its one-line help and its parser, in the order `--help` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, command in action.choices.items():
                yield name, helps.get(name, ""), command


def _option_value(action: argparse.Action) -> str:
    """What an option takes: its choices, its metavar, or nothing for a switch."""
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return str(action.metavar or action.dest.upper())


def _options_table(command: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | value | what it does |", "| --- | --- | --- |"]
    for action in command._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        names = ", ".join(map(_code, action.option_strings)) or _code(action.metavar or action.dest)
        value = "..." if action.nargs in ("*", "+") else ""
        value = _option_value(action) if action.option_strings else value
        rows.append(f"| {names} | {_code(value)} | {_cell(action.help or '')} |")
    return rows


def commands_page(parser: argparse.ArgumentParser) -> str:
    """Every command with its description, usage, arguments and epilog, as `--help` prints them."""
    lines = [
        "# Commands",
        "",
        "Generated from the argument parser (`pipeline/cli/grammar.py`, `live_grammar.py`): what",
        "`compaction COMMAND --help` prints. Flags have no defaults of their own: an absent flag",
        "takes the setting of the same name ([Configuration](configuration.md)).",
        "",
    ]
    for name, summary, command in _commands(parser):
        sentence = f"{summary[:1].upper()}{summary[1:]}." if summary else ""
        lines += [f"## `compaction {name}`", "", sentence, ""]
        if command.description:
            lines += [command.description, ""]
        usage = command.format_usage().removeprefix("usage: ").strip()
        lines += ["```text", usage, "```", "", *_options_table(command), ""]
        if command.epilog:
            lines += [command.epilog[0].upper() + command.epilog[1:] + ".", ""]
    return "\n".join(lines)


# --- configuration: config/default.toml ------------------------------------------------------


def _knobs(text: str) -> Iterator[tuple[str, str, Any, str]]:
    """(section, key, default, reason) for every key, in file order; a key's reason is the comment
    block right above it, else the comment after its value, else, for a key written on the line
    after another, that key's reason."""
    section, comment, reason = "", list[str](), ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section, comment, reason = line.strip("[]"), [], ""
        elif line.startswith("#"):
            comment.append(line.lstrip("# "))
        elif not line:
            comment, reason = [], ""
        elif section:
            ((key, value),) = tomllib.loads(line).items()
            reason = " ".join(comment) or _inline_comment(line) or reason
            if not reason:
                where = f"config/default.toml:{number}: [{section}] {key}"
                raise UndocumentedKnob(f"{where} has no reason above it")
            comment = []
            yield section, key, value, reason


def _inline_comment(line: str) -> str:
    """The comment after a key's value on its own line (`key = 1  # why`), or ""."""
    head, mark, tail = line.partition(" #")
    try:
        return tail.strip() if mark and tomllib.loads(head) == tomllib.loads(line) else ""
    except tomllib.TOMLDecodeError:  # the mark was inside a string value
        return ""


def _section_comments(text: str) -> dict[str, str]:
    """The comment right under each section header (what a keyless section such as [judges] says)."""
    found: dict[str, list[str]] = {}
    section, heading = "", False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section, heading = line.strip("[]"), True
            found[section] = []
        elif line.startswith("#") and heading:
            found[section].append(line.lstrip("# "))
        else:
            heading = False
    return {name: " ".join(note) for name, note in found.items()}


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return repr(value)


def configuration_page(text: str) -> str:
    """Every knob with its default and reason, by section; checked against the parsed file."""
    parsed = tomllib.loads(text)
    knobs = list(_knobs(text))
    listed = {(section, key) for section, key, _, _ in knobs}
    parsed_keys = {(section, key) for section, table in parsed.items() for key in table}
    if listed != parsed_keys:
        raise UndocumentedKnob(f"keys the line reader missed: {sorted(parsed_keys ^ listed)}")
    lines = [
        "# Configuration",
        "",
        "Generated from `config/default.toml`, the one place a default is written: each knob with its",
        "default and the reason given beside it. Override with a file (`--config FILE` or",
        "`COMPACTION_CONFIG`), then environment variables `COMPACTION_<SECTION>_<KEY>` (for example",
        "`COMPACTION_SWEEP_JOBS=4`), then flags. The layers are merged and checked once (type and",
        "range) into one frozen `Settings`; an unknown key or a value out of range stops the run with",
        "exit 2 before any work.",
        "",
    ]
    notes = _section_comments(text)
    for section in parsed:
        lines += [f"## `[{section}]`", ""]
        rows = [(key, value, reason) for name, key, value, reason in knobs if name == section]
        if not rows:
            lines += [notes[section] or "No keys by default.", ""]
            continue
        if {reason for _, _, reason in rows} == {notes[section]}:  # a map: one reason for its entries
            lines += [notes[section], "", "| key | default |", "| --- | --- |"]
            lines += [f"| `{key}` | `{_cell(_toml(value))}` |" for key, value, _ in rows]
        else:
            lines += ["| key | default | why |", "| --- | --- | --- |"]
            lines += [f"| `{k}` | `{_cell(_toml(value))}` | {_cell(reason)} |" for k, value, reason in rows]
        lines.append("")
    return "\n".join(lines)


# --- vocabulary: the closed vocabularies -----------------------------------------------------


def _every_module() -> None:
    """Import every module of the package, so every vocabulary class exists (as test_reasons does)."""
    for module in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        if ".testing" not in module.name:
            importlib.import_module(module.name)


def _member_notes(vocabulary: type[enum.Enum]) -> dict[str, str]:
    """The comment written beside each member in the source, by member name."""
    notes = {}
    for line in inspect.getsource(vocabulary).splitlines():
        match = _MEMBER.match(line)
        if match and match.group(2):
            notes[match.group(1)] = match.group(2).strip()
    return notes


def _docstring(vocabulary: type) -> str:
    return " ".join((inspect.getdoc(vocabulary) or "").split())


def vocabulary_table(vocabulary: type[enum.Enum], explain: Mapping[Any, str] | None = None) -> list[str]:
    """One vocabulary: where it is defined, what it is, and each value with its note."""
    notes = _member_notes(vocabulary)
    where = f"{vocabulary.__module__}.{vocabulary.__qualname__}"
    lines = [f"### `{vocabulary.__name__}`", "", f"{_docstring(vocabulary)} (`{where}`)", ""]
    lines += ["| value | meaning |", "| --- | --- |"]
    for member in vocabulary:
        meaning = (explain or {}).get(member) or notes.get(member.name, "")
        lines.append(f"| `{member.value}` | {_cell(meaning)} |")
    return [*lines, ""]


def _subclasses(base: type[enum.Enum]) -> list[type[enum.Enum]]:
    """Every vocabulary deriving from `base`, however deep, by module and name."""
    found: list[type[enum.Enum]] = []
    pending = list(base.__subclasses__())
    while pending:
        vocabulary = pending.pop()
        found.append(vocabulary)
        pending.extend(vocabulary.__subclasses__())
    return sorted(found, key=lambda v: (v.__module__, v.__qualname__))


def _module_enums(*modules: str) -> list[type[enum.Enum]]:
    """The enums a module defines (not those it imports), in source order."""
    found = []
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, enum.Enum) and value.__module__ == name:
                found.append(value)
    return found


def vocabulary_page() -> str:
    """Statuses, finding codes, reason codes and the other values reports hold."""
    _every_module()
    lines = [
        "# Statuses, findings and reasons",
        "",
        "Generated from the closed vocabularies (`StrEnum`s) the reports' values come from: a consumer",
        "can rely on these spellings, and a value not listed here is never written.",
        "",
        "## Session statuses",
        "",
    ]
    failing = {status: ("fails the run (exit 1). " if status.is_failure else "") for status in SessionStatus}
    notes = _member_notes(SessionStatus)
    lines += vocabulary_table(SessionStatus, {s: failing[s] + notes.get(s.name, "") for s in SessionStatus})
    lines += vocabulary_table(StrictStatus) + vocabulary_table(Disposition)
    lines += ["## Finding codes", "", "Each finding: code, severity, 1-based line, ids; never text.", ""]
    lines += vocabulary_table(FindingCode, REASONS)
    lines += ["## Reason codes", "", "What a report's `reasons` may hold: every `ReasonCode` vocabulary.", ""]
    for vocabulary in _subclasses(ReasonCode):
        if vocabulary is not FindingCode:
            lines += vocabulary_table(vocabulary)
    lines += ["## Other report values", ""]
    shown = {*_subclasses(ReasonCode), SessionStatus, StrictStatus, Disposition, FindingCode}
    for vocabulary in _module_enums("pipeline.vocabulary", "pipeline.reasons", "pipeline.live_vocabulary"):
        if vocabulary not in shown and issubclass(vocabulary, enum.StrEnum) and list(vocabulary):
            lines += vocabulary_table(vocabulary)
    return "\n".join(lines)


# --- exit codes ------------------------------------------------------------------------------


def exit_codes_page(parser: argparse.ArgumentParser) -> str:
    """Every exit-code vocabulary, then what each command's `--help` says of its codes."""
    lines = ["# Exit codes", "", "Generated from the exit-code vocabularies and each command's `--help`.", ""]
    for vocabulary in (ExitCode, ResumeExit, ProbeExit):
        notes = _member_notes(vocabulary)
        lines += [f"## {_docstring(vocabulary).rstrip('.')}", ""]
        lines += ["| code | name | meaning |", "| ---: | --- | --- |"]
        for code in vocabulary:
            lines.append(f"| {code.value} | `{code.name.lower()}` | {_cell(notes.get(code.name, ''))} |")
        lines.append("")
    lines += ["## As each command's `--help` says", ""]
    for name, _, command in _commands(parser):
        if command.epilog and "exit codes" in command.epilog:
            lines += [f"- `compaction {name}`: {_cell(command.epilog.removeprefix('exit codes: '))}"]
    return "\n".join([*lines, ""])


# --- schemas: the JSON Schemas the package ships -----------------------------------------------


def schemas_page() -> str:
    """Each document's schema: its name, `$id`, what writes it, and the shipped file."""
    lines = [
        "# Report schemas",
        "",
        "Every document the tool writes carries its `schema` string, the `$id` of a JSON Schema",
        "(draft 2020-12) shipped in the package (`pipeline/report/schemas/`), generated from the report",
        "types: validate a report against it, or print it with `compaction schema NAME`.",
        "",
        "| name | `$id` | what it describes | file |",
        "| --- | --- | --- | --- |",
    ]
    for doc in DOCUMENTS:
        link = f"[{doc.file_name}](schemas/{doc.file_name})"
        lines.append(f"| `{doc.name}` | `{doc.id}` | {_cell(doc.description)} | {link} |")
    return "\n".join([*lines, ""])


# --- the build -------------------------------------------------------------------------------


def pages(config_text: str | None = None) -> dict[str, str]:
    """Each generated page by its path under docs/."""
    parser = build_parser()
    shipped = importlib.resources.files("pipeline.settings") / DEFAULTS
    text = shipped.read_text(encoding="utf-8") if config_text is None else config_text
    built = {
        "commands": commands_page(parser),
        "configuration": configuration_page(text),
        "vocabulary": vocabulary_page(),
        "exit-codes": exit_codes_page(parser),
        "schemas": schemas_page(),
    }
    return {f"reference/{name}.md": built[name] for name in PAGES}


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated pages to the build (nothing is written into docs/)."""
    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    for doc in DOCUMENTS:
        files.append(File.generated(config, f"{SCHEMAS}/{doc.file_name}", content=shipped(doc)))
    return files
