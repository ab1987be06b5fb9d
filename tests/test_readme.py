"""Every command line the README and the documentation pages show runs as written (real processes,
a sandboxed home): none is a usage error, none ends in a traceback. An example that stops working
fails here, whichever page shows it."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from pipeline.testing.invoke import compaction
from pipeline.testing.synth import generate_fleet
from tests.cli.conftest import SMALL, make_idle
from tests.support.codewhale_sessions import SessionBuilder, text
from tests.support.codex_rollouts import conversation, write_rollout
from tests.support.gemini_files import write_gemini_chats
from tests.support.pi_files import FIXTURES as PI_FIXTURES

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# Fences paired from the line start: a `text` block's closing fence never opens a block.
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_RUN = ("sh", "cron", "")  # the blocks whose command lines are run
# Examples that need a service this machine does not have: each with why it is only parsed.
_NEEDS_SERVICE = {
    "--summarizer anthropic": "an Anthropic API key and the network",
    "--summarizer openai": "an OpenAI-compatible server at the URL shown",
    "--summarizer claude-code": "a Claude Code login",
    "s3://": "an object store",
    "tcp://": "a Dask scheduler",
}


def documents() -> list[Path]:
    """The README and every page of the documentation site (the generated reference shows no example)."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def examples(document: Path) -> list[str]:
    """Every `compaction ...` command line of a page's code blocks, continuation lines joined."""
    found = []
    for block in (body for language, body in _FENCE.findall(document.read_text()) if language in _RUN):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split(" #", 1)[0].split(">>", 1)[0].strip()
            at = command.find("compaction ")
            if at >= 0 and (command.startswith((".venv/bin/compaction", "compaction")) or "* * *" in command):
                found.append(command[at + len("compaction ") :])
    return found


def every_example() -> list[str]:
    """Each example once, however many pages show it, in page order."""
    return list(dict.fromkeys(example for document in documents() for example in examples(document)))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with Claude Code sessions, the files the examples name, and the places they write."""
    root = tmp_path_factory.mktemp("home")
    generate_fleet(root / ".claude", target_bytes=300_000, seed=5)
    projects = root / ".claude" / "projects"
    make_idle(projects)
    first = max(projects.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    named = projects / "-home-me-app" / "0b7c....jsonl"
    named.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(first, named)
    for name in ("one-session.jsonl", "session.jsonl"):
        shutil.copy(first, root / name)
    made = compaction(
        "compress",
        str(root / "session.jsonl"),
        "--out",
        str(root / "compacted"),
        "--no-verify-resume",
        *SMALL,
    )  # the pair verify-resume and probe compare
    assert made.returncode == 0 and (root / "compacted" / "session.jsonl").is_file(), made.stderr
    shutil.copytree(projects, root / "work" / "sessions")
    write_rollout(root / ".codex" / "sessions" / "2026" / "03" / "01", conversation(turns=6))
    qwen = root / ".qwen" / "projects" / "-home-me-app" / "chats"
    qwen.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "fixtures" / "qwen_code" / "tools.jsonl", qwen)
    write_gemini_chats(root / ".gemini" / "tmp" / "0123abcd" / "chats")
    pi_sessions = root / ".pi" / "agent" / "sessions" / "--home-me-notes--"
    shutil.copytree(PI_FIXTURES, pi_sessions, ignore=shutil.ignore_patterns("*.md"))
    whale = SessionBuilder()
    whale.extend([text("user", "build it"), text("assistant", "built")])
    (root / ".codewhale" / "sessions").mkdir(parents=True)
    (root / ".codewhale" / "sessions" / f"{whale.session_id}.json").write_bytes(whale.bytes())
    shutil.copytree(projects, root / "team-b")
    return root


@pytest.mark.parametrize("example", every_example())
def test_an_example_runs_as_written(home: Path, example: str) -> None:
    words = [word.replace("$HOME", str(home)) for word in shlex.split(example)]
    words = [str(home) + word[1:] if word.startswith("~") else word for word in words]
    words = [
        w.replace("ROOT", str(home / ".claude" / "projects")).replace("OUT", str(home / "out")) for w in words
    ]
    needs = next((why for marker, why in _NEEDS_SERVICE.items() if marker in example), None)
    if needs is not None:
        done = compaction(*words[:1], "--help", cwd=home)  # its command still exists
        assert done.returncode == 0, f"{example}: needs {needs}; its command is gone"
        return
    done = compaction(*words, cwd=home, env={"HOME": str(home)}, timeout=600)
    assert "Traceback" not in done.stderr, example
    assert done.returncode != 2, f"{example}: {done.stderr}"  # an example is never a usage error


def test_the_readme_and_the_pages_show_examples() -> None:
    assert len(examples(README)) >= 5
    assert len(every_example()) >= 30
    shown = {document.relative_to(ROOT).as_posix() for document in documents() if examples(document)}
    assert {"docs/quickstart.md", "docs/guides/nightly.md", "docs/guides/cluster.md"} <= shown


def test_examples_are_read_from_every_kind_of_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\ncompaction validate ~/a  # a comment\n```\n\n```text\ncompaction not-run\n```\n\n"
        "```cron\n1 2 * * * $HOME/.local/bin/compaction compress ~/b \\\n    --in-place >>log 2>&1\n```\n"
    )
    assert examples(page) == ["validate ~/a", "compress ~/b      --in-place"]


def test_the_readme_stays_a_front_page() -> None:
    """A new user on a fresh machine runs exactly two commands from it; the manual is docs/."""
    text = README.read_text()
    first = next(body for language, body in _FENCE.findall(text) if language == "sh")
    assert [line.split("#", 1)[0].strip() for line in first.splitlines()] == ["scripts/demo", "scripts/test"]
    lines = len(text.splitlines())
    assert lines <= 200, f"README.md has {lines} lines: move the detail to its page under docs/"
