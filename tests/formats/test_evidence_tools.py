"""The evidence's tool vocabulary is written in one place: every reader and summarizer takes it
from `formats/evidence_tools.py`, so none can name a shell call or a file change differently."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from pipeline.formats.evidence_tools import MODIFY_FILE_TOOLS, READ_FILE_TOOLS, SHELL_TOOLS

PACKAGE: Final = Path(__file__).resolve().parents[2] / "pipeline"
VOCABULARY: Final = frozenset({*SHELL_TOOLS, *READ_FILE_TOOLS, *MODIFY_FILE_TOOLS})
# Claude Code's own packages read and write its records, whose tool names these are; the
# generators in `testing` write Claude Code records too.
OWN_NAMES: Final = ("formats/claude_code/", "agents/claude_code/", "proof/claude_code/", "core/", "testing/")
PROSE: Final = {
    "summarize/checkpoint/listing.py": "'Read' is the summary's word for the files read, not a tool"
}


def _written(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in VOCABULARY:
            yield node.lineno, node.value


def _places(root: Path) -> list[str]:
    places = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == "formats/evidence_tools.py" or relative.startswith(OWN_NAMES) or relative in PROSE:
            continue
        places += [f"{relative}:{line} {name!r}" for line, name in _written(ast.parse(path.read_text()))]
    return places


def test_the_vocabulary_is_written_only_where_it_is_defined() -> None:
    assert _places(PACKAGE) == []


def test_the_check_finds_a_name_written_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "summarize").mkdir()
    (tmp_path / "summarize" / "shells.py").write_text('SHELLS = frozenset({"Bash"})\n')
    (tmp_path / "formats" / "claude_code").mkdir(parents=True)
    (tmp_path / "formats" / "claude_code" / "tools.py").write_text('TOOL = "Bash"\n')
    assert _places(tmp_path) == ["summarize/shells.py:1 'Bash'"]
