"""Synthetic projects and the tool calls a coding session makes on them.

A :class:`Project` is a small, deterministic source tree (paths, sizes, one language) whose file
contents are cut from a :class:`~pipeline.testing._textbank.TextBank` on first use. ``ToolKit``
turns it into :class:`~pipeline.testing.builder.ToolSpec` values for Read, Edit, Write, Bash,
Grep, Glob and TodoWrite, with inputs, result text and ``toolUseResult`` shaped like the corpus.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline.testing._corpora import COMMANDS, EXTENSIONS, PROJECT_NAMES, PROJECT_ROOTS
from pipeline.testing._textbank import TextBank, numbered
from pipeline.testing.builder import ToolSpec

__all__ = ["Project", "SourceFile", "ToolKit", "make_project"]

FILE_SIZE_MEDIAN = 6_000  # bytes; project files follow a log-normal size distribution
FILE_SIZE_SIGMA = 1.2
FILE_SIZE_MAX = 200_000  # the largest source file a Read can return whole
MIN_RESULT = 120  # smallest tool output worth generating
BIG_OUTPUT = (64_000, 200_000)  # occasional huge command output (full test logs, builds)

_TODO_VERBS = (
    ("Fix", "Fixing"),
    ("Add tests for", "Adding tests for"),
    ("Refactor", "Refactoring"),
    ("Document", "Documenting"),
    ("Profile", "Profiling"),
    ("Remove", "Removing"),
)
_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
    "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
    "user to tell you how to proceed."
)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One project file: raw text and lines, and the same numbered as the Read tool shows it."""

    raw: str
    lines: tuple[str, ...]
    numbered: str
    numbered_lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Project:
    """A synthetic repository: where it lives, its language, and its files (contents cached)."""

    name: str
    cwd: str
    dir_name: str
    language: str
    branch: str
    seed: int
    paths: tuple[str, ...]
    sizes: tuple[int, ...]
    cache: dict[int, SourceFile] = field(default_factory=dict, compare=False)

    def content(self, bank: TextBank, index: int) -> SourceFile:
        """File ``index`` with its lines and ``cat -n`` numbering, built once."""
        hit = self.cache.get(index)
        if hit is None:
            rng = random.Random(self.seed * 1_000 + index)
            raw = bank.code(rng, self.language, self.sizes[index])
            num = numbered(raw)
            hit = SourceFile(raw, tuple(raw.split("\n")), num, tuple(num.split("\n")))
            self.cache[index] = hit
        return hit


def make_project(rng: random.Random, bank: TextBank, index: int, language: str) -> Project:
    """A project named after two identifiers, with 12-40 files of long-tailed sizes."""
    name = PROJECT_NAMES[index % len(PROJECT_NAMES)]
    if index >= len(PROJECT_NAMES):
        name += f"-{index // len(PROJECT_NAMES) + 1}"
    cwd = f"{rng.choice(PROJECT_ROOTS)}/{name}"
    if rng.random() < 0.2:  # a git worktree of the project, as in spotter-worktrees/spotter-dov
        cwd = f"{cwd}-worktrees/{name}-{bank.identifier(rng).split('_')[0]}"
    ext = EXTENSIONS[language]
    paths: list[str] = []
    sizes: list[int] = []
    for _ in range(rng.randint(12, 40)):
        stem = bank.identifier(rng)
        folder = rng.choice(
            ("src", "src/" + name.split("-")[0].replace("-", "_"), "lib", "tests", "internal")
        )
        prefix = "test_" if folder == "tests" and language == "python" else ""
        paths.append(f"{cwd}/{folder}/{prefix}{stem}{rng.choice(ext)}")
        size = int(rng.lognormvariate(math.log(FILE_SIZE_MEDIAN), FILE_SIZE_SIGMA))
        sizes.append(max(200, min(FILE_SIZE_MAX, size)))
    return Project(
        name=name,
        cwd=cwd,
        dir_name=cwd.replace("/", "-").replace(".", "-"),
        language=language,
        branch=rng.choice(("main", "main", "master", f"feature/{bank.identifier(rng)}", "HEAD")),
        seed=rng.getrandbits(32) + index,
        paths=tuple(paths),
        sizes=tuple(sizes),
    )


class ToolKit:
    """Build realistic tool calls against one project, bounded by a size cap per result."""

    def __init__(
        self,
        rng: random.Random,
        bank: TextBank,
        project: Project,
        *,
        verbose_edits: bool,
        big_rate: float = 0.06,
    ) -> None:
        self._big_rate = big_rate  # share of calls (when the cap allows) returning 64-200 KB of output
        mix: tuple[tuple[Callable[[int], ToolSpec], int], ...] = (
            (self.read, 34),
            (self.bash, 18),
            (self.grep, 14),
            (self.edit, 18),
            (lambda _cap: self.glob(), 6),
            (self.write, 5),
            (lambda _cap: self.todo_write(), 5),
        )
        self._makers = tuple(make for make, _ in mix)
        self._weights = tuple(weight for _, weight in mix)
        self._read_only = (
            self.read,
            self.bash,
            self.grep,
            lambda _cap: self.glob(),
        )  # what Explore agents use
        self._read_only_weights = (45, 15, 25, 15)
        self._rng = rng
        self._bank = bank
        self._project = project
        self._verbose_edits = verbose_edits  # 2.1.3x echoes a numbered snippet after an Edit

    def pick(
        self, cap: int, *, big_cap: int = 0, error_rate: float = 0.04, read_only: bool = False
    ) -> ToolSpec:
        """A random tool call whose result stays near or under ``cap`` bytes.

        When ``big_cap`` leaves room, a share of calls returns a huge output instead (up to it).
        ``read_only`` limits the choice to Read, Bash, Grep and Glob (exploring subagents).
        """
        rng = self._rng
        if rng.random() < error_rate:
            return self.failure()
        if big_cap >= BIG_OUTPUT[0] + 16_000 and rng.random() < self._big_rate:
            return self.bash(big_cap, big=True)
        if read_only:
            return rng.choices(self._read_only, self._read_only_weights)[0](cap)
        make = rng.choices(self._makers, self._weights)[0]
        return make(cap)

    def _file(self, cap: int) -> int:
        """Index of a file, preferring ones whose numbered text fits ``cap``."""
        sizes = self._project.sizes
        fitting = [i for i, s in enumerate(sizes) if s * 1.2 <= cap]
        return self._rng.choice(fitting) if fitting else min(range(len(sizes)), key=sizes.__getitem__)

    def read(self, cap: int) -> ToolSpec:
        """Read a file, whole or (when it exceeds ``cap``) its first lines with ``limit``."""
        i = self._file(cap)
        src = self._project.content(self._bank, i)
        path = self._project.paths[i]
        inp: dict[str, Any] = {"file_path": path}
        raw, num, count = src.raw, src.numbered, len(src.lines)
        if len(num) > cap:
            cut = num.rfind("\n", 0, max(MIN_RESULT, cap // 2))
            num = num[: cut if cut > 0 else len(num)]
            count = num.count("\n") + 1
            inp["limit"] = count
            raw = "\n".join(src.lines[:count])
        file_info = {
            "filePath": path,
            "content": raw,
            "numLines": count,
            "startLine": 1,
            "totalLines": len(src.lines),
        }
        return ToolSpec("Read", inp, num, tool_use_result={"type": "text", "file": file_info})

    def edit(self, cap: int) -> ToolSpec:
        """Replace a few lines of a file; the result carries the original file like Claude Code."""
        rng = self._rng
        i = self._file(cap)
        src = self._project.content(self._bank, i)
        lines = src.lines
        path = self._project.paths[i]
        at = int(rng.random() * max(1, len(lines) - 4))
        span = rng.randint(1, 4)
        old = "\n".join(lines[at : at + span])
        new = old + "\n" + self._bank.code(rng, self._project.language, rng.randint(40, 400))
        text = f"The file {path} has been updated"
        if self._verbose_edits:
            snippet = "\n".join(src.numbered_lines[max(0, at - 4) : at + span + 6])
            text += ". Here's the result of running `cat -n` on a snippet of the edited file:\n" + snippet
        else:
            text += " successfully."
        added = new.count("\n") + 1
        patch = [
            {
                "oldStart": at + 1,
                "oldLines": span,
                "newStart": at + 1,
                "newLines": added,
                "lines": [" " + lines[at]] + ["+" + s for s in new.split("\n")[span:][:8]],
            }
        ]
        result = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": src.raw,
            "structuredPatch": patch,
            "userModified": False,
            "replaceAll": False,
        }
        return ToolSpec(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
            text,
            tool_use_result=result,
        )

    def write(self, cap: int) -> ToolSpec:
        """Create a new file."""
        rng = self._rng
        path = f"{self._project.cwd}/src/{self._bank.identifier(rng)}{EXTENSIONS[self._project.language][0]}"
        content = self._bank.code(rng, self._project.language, min(cap // 2, rng.randint(300, 9000)))
        result: dict[str, Any] = {
            "type": "create",
            "filePath": path,
            "content": content,
            "structuredPatch": [],
            "originalFile": None,
        }
        return ToolSpec(
            "Write",
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
            tool_use_result=result,
        )

    def bash(self, cap: int, *, big: bool = False) -> ToolSpec:
        """Run a command: tests, builds, git; its output is a slice of logs (``big``: 64-200 KB)."""
        rng = self._rng
        pool = COMMANDS[self._project.language] + COMMANDS["any"]
        command = rng.choice(pool).replace("@F", self._bank.identifier(rng))
        size = min(cap, int(rng.lognormvariate(math.log(1_500), 1.4)))
        if big:
            size = rng.randint(BIG_OUTPUT[0], min(cap, BIG_OUTPUT[1]))
        out = self._bank.log(rng, max(MIN_RESULT, size))
        if rng.random() < 0.1:
            command = f"curl -s localhost:4000/api/{self._bank.identifier(rng)} | jq ."
            out = self._bank.json(rng, max(MIN_RESULT, size))
        inp = {"command": command, "description": f"Run {command.split()[0]}"}
        if rng.random() < 0.08:
            body = "Exit code 1\n" + out
            return ToolSpec("Bash", inp, body, is_error=True, tool_use_result="Error: " + body)
        result = {
            "stdout": out,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return ToolSpec("Bash", inp, out, tool_use_result=result)

    def grep(self, cap: int) -> ToolSpec:
        """Search the project: ``path:line:text`` matches drawn from its files."""
        rng = self._rng
        pattern = self._bank.identifier(rng)
        rows: list[str] = []
        total = 0
        target = min(cap, int(rng.lognormvariate(math.log(900), 1.2)))
        paths = self._project.paths
        while total < target:
            i = int(rng.random() * len(paths))
            lines = self._project.content(self._bank, i).lines
            start = int(rng.random() * len(lines))
            for n in range(start, min(len(lines), start + 1 + int(rng.random() * 6))):
                row = f"{paths[i]}:{n + 1}:{lines[n]}"
                rows.append(row)
                total += len(row) + 1
        content = "\n".join(rows)
        result = {
            "mode": "content",
            "numFiles": 0,
            "filenames": [],
            "content": content,
            "numLines": len(rows),
        }
        return ToolSpec(
            "Grep",
            {"pattern": pattern, "path": self._project.cwd, "output_mode": "content", "-n": True},
            content,
            tool_use_result=result,
        )

    def glob(self) -> ToolSpec:
        """List files matching a pattern."""
        rng = self._rng
        names = rng.sample(self._project.paths, min(len(self._project.paths), rng.randint(1, 25)))
        ext = EXTENSIONS[self._project.language][0]
        result = {
            "filenames": names,
            "durationMs": rng.randint(5, 400),
            "numFiles": len(names),
            "truncated": False,
        }
        return ToolSpec("Glob", {"pattern": f"**/*{ext}"}, "\n".join(names), tool_use_result=result)

    def todo_write(self) -> ToolSpec:
        """Update the todo list."""
        rng = self._rng
        todos = []
        for _ in range(rng.randint(2, 6)):
            verb, doing = rng.choice(_TODO_VERBS)
            thing = self._bank.identifier(rng).replace("_", " ")
            todos.append(
                {
                    "content": f"{verb} {thing}",
                    "status": rng.choice(("pending", "in_progress", "completed")),
                    "activeForm": f"{doing} {thing}",
                }
            )
        text = (
            "Todos have been modified successfully. Ensure that you continue to use the todo list to track "
            "your progress. Please proceed with the current tasks if applicable"
        )
        return ToolSpec(
            "TodoWrite", {"todos": todos}, text, tool_use_result={"oldTodos": [], "newTodos": todos}
        )

    def failure(self) -> ToolSpec:
        """A failing call: missing file, stale edit, or a rejection by the user."""
        rng = self._rng
        path = rng.choice(self._project.paths)
        kind = rng.random()
        if kind < 0.4:
            return ToolSpec(
                "Read",
                {"file_path": path + ".orig"},
                "<tool_use_error>File does not exist.</tool_use_error>",
                is_error=True,
            )
        if kind < 0.7:
            old = self._bank.code(rng, self._project.language, 120)
            return ToolSpec(
                "Edit",
                {"file_path": path, "old_string": old, "new_string": old + "\n", "replace_all": False},
                "<tool_use_error>String to replace not found in file.\nString: " + old + "</tool_use_error>",
                is_error=True,
            )
        return ToolSpec(
            "Bash",
            {"command": "rm -rf build/", "description": "Clean build output"},
            _REJECTED,
            is_error=True,
            tool_use_result="User rejected tool use",
        )
