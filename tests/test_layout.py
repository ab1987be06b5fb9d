"""The package's shape is a contract: stages import only earlier stages, inside a package too;
no module imports itself through others (lazy imports count); packages are the ones listed; no two modules share a name unless listed; tests mirror the tree;
functions fit on a screen; untyped JSON stays at the boundaries that read or write it. No module
line limit: a module ends where its concern ends, never to meet a count.

These tests read the source with `ast`; a new module or package must find its place here.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Final

import pytest

from pipeline.vocabulary import SourceFormat

PACKAGE: Final = Path(__file__).resolve().parents[1] / "pipeline"

STAGES: Final = (
    # The base everything may use: names (and live replacement's), errors, findings, reasons,
    # the typed settings (a package: loading, typed_sections).
    frozenset(
        {
            "__init__",
            "vocabulary",
            "live_vocabulary",
            "errors",
            "findings",
            "reasons",
            "settings",
            "installed",
        }
    ),
    frozenset({"estimate"}),  # the token-estimator library, below the readers that count bytes
    frozenset({"read"}),  # discover and load files
    frozenset({"formats"}),  # Claude Code's schema, decode, accessors, output record builders
    frozenset({"core"}),  # pure: index, topology, partition, validate, plan, compose, check
    frozenset({"summarize"}),  # evidence, the deterministic checkpoint, the model path (HTTP)
    frozenset({"fidelity"}),  # probes of a summarized span scored in a resumed context
    frozenset({"proof"}),  # the resume proof: each agent's client as judge
    frozenset({"report"}),  # frozen report sections, fleet totals, one renderer
    frozenset({"publish"}),  # atomic writes (files); live replacement (live/)
    frozenset({"agents"}),  # each agent's plug-in: reading, evidence, report part, judge (the seam)
    frozenset({"jobs"}),  # validate, compress, tokens, verify-resume: compositions of the stages
    frozenset({"execute"}),  # the executor seam: batches, markers, the process pool, Dask
    frozenset({"cli"}),  # grammar, one module per command, console output
    frozenset({"__main__"}),
)
TESTING: Final = "testing"  # builders and servers for tests; may use anything, used by nothing else
# Where a `pipeline/testing` module's users outside tests/ are: the helpers only tests use live under
# tests/support/, so the installed package ships none of them.
TESTING_USERS: Final = ("scripts", "benchmarks", "README.md", "pyproject.toml", "pipeline")
TESTING_NAMED: Final = re.compile(r"pipeline[./]testing(?:[./](\w+))?")

# Inside a package, the same rule over its parts: a part imports only earlier parts (or itself).
INNER_STAGES: Final = {
    "summarize": ("evidence", "checkpoint", "model"),  # the model path reads evidence, writes checkpoints
    "publish": ("files", "live"),  # live replacement writes through the atomic writes, never back
}

PACKAGES: Final = {
    "core": "pure: index, graph, topology, partition, validate, plan, compose, check",
    "core/check": "a candidate's structure and the format contract",
    "core/session_repair": "the damage repair's line edits, defect by defect",
    "core/topology": "strict chains, rows, checkpoints, Claude Code's resume chain, selection",
    "core/validate": "the per-line checks and tool-call pairing",
    "estimate": "the token estimators",
    "estimate/data": "the estimators' calibration data",
    "fidelity": "probes of a summarized span, scored in a resumed context",
    "formats": "transcript formats",
    "formats/claude_code": "Claude Code's schema, decode, accessors and record builders",
    "formats/claude_code/rust": "the compiled line index, a Rust crate (PyO3) that setup.py builds",
    "formats/claude_code/rust/src": "the crate's sources: scanner, kept members, estimate, records",
    "formats/codex": "Codex rollouts: schema, decode, Codex's resume reconstruction, integrity",
    "formats/gemini_cli": "Gemini CLI chats: decode, its loader and resume history, signature, vacuum",
    "formats/pi": "pi and OpenClaw sessions: signature, decode, the branch and context pi rebuilds, findings",
    "formats/codewhale": "CodeWhale session documents: decode, its resume history, checks, its compaction form",
    "formats/unsupported": "the agents recognized but not processed yet: each one's signature",
    "formats/qwen_code": "Qwen Code sessions: decode, active branch, rebuilt history, sent messages, compose",
    "agents": "each agent's plug-in bound to the seam the jobs drive, and their registry",
    "agents/claude_code": "Claude Code's active chain through the seam: its own parts of a compaction and its judge",
    "agents/codex": "Codex rollouts through the seam: session, evidence, the Codex CLI as judge",
    "agents/qwen_code": "Qwen Code sessions through the seam: session, evidence, the real Qwen Code as judge",
    "agents/gemini_cli": "Gemini CLI sessions through the seam: session, evidence, the Gemini CLI as judge",
    "agents/pi": "pi sessions through the seam: session, evidence, the real pi as judge",
    "agents/codewhale": "CodeWhale sessions through the seam: session, evidence, CodeWhale as judge",
    "jobs": "each command's composition of stages",
    "jobs/compress": "the compress job and its stages",
    "jobs/tokens": "the token benchmark",
    "proof": "the resume proof: each agent's judge, and the loopback servers and verdict parts they share",
    "proof/claude_code": "the Claude Code judge: Messages API capture, staging, resume, the verdict, repair proofs",
    "proof/codex": "the Codex judge: Responses API capture, staging, resume, the verdict, goldens",
    "proof/qwen_code": "the Qwen Code judge: locate, stage, resume against a loopback server, verdict",
    "proof/gemini_cli": "the real Gemini CLI against a loopback Gemini API: run, resume, capture",
    "proof/pi": "the pi judge: its Node.js process, staging, the resume",
    "proof/codewhale": "CodeWhale as judge: locate, stage, resume against the loopback server, the verdict",
    "publish": "the atomic writes",
    "publish/live": "live replacement: transaction, backups, state, recovery, restore",
    "read": "discover and load",
    "report": "frozen report sections, fleet totals, one renderer",
    "report/schemas": "the published JSON Schemas of the reports, generated by jobs/report_schemas.py",
    "cli": "the command line: grammar, one module per command, console output",
    "execute": "the one executor seam: the process pool and Dask behind it, completion markers",
    "settings": "loading the layers, the typed sections",
    "summarize": "summaries of the summarized span",
    "summarize/checkpoint": "the deterministic checkpoint, pure",
    "summarize/evidence": "the span read into typed items, work state, shell commands",
    "summarize/model": "the model path: calls HTTP providers or Claude Code",
    "summarize/model/providers": "Anthropic, OpenAI-compatible, Claude Code",
    "testing": "the builder, the fleet and giant generators, the fuzzer, the provider server",
}

# Where cargo builds the Rust core when no CARGO_TARGET_DIR points elsewhere (git ignores it).
CRATE_BUILD: Final = PACKAGE / "formats" / "claude_code" / "rust" / "target"

# Module names used twice, each the same role in sibling packages (at most four such pairs); the
# agents' own packages may share names among themselves (the package names the agent).
SHARED_NAMES: Final = {
    "job.py": "jobs/compress and jobs/tokens: each job's composition of its stages",
    "options.py": "jobs/compress and jobs/tokens: each job's options, as values a worker receives",
    "registry.py": "formats (signatures: detection, default roots) and agents (the plug-ins the jobs drive)",
}
MAX_SHARED_NAMES: Final = 4
# What tests/ holds besides the mirror of pipeline/.
TESTS_OWN: Final = frozenset(
    {
        "support",
        "fixtures",
        "fixtures/fuzz",
        "fixtures/codewhale",
        "fixtures/gemini_cli",
        "fixtures/pi",
        "fixtures/qwen_code",
        "fixtures/qwen_code/subagents",  # a subagent's transcript, beside the sessions
        "core/check/fixtures",
    }
)
TESTS: Final = PACKAGE.parent / "tests"

MAX_FUNCTION_LINES: Final = 60

UNTYPED_JSON: Final = ("dict[str, Any]", "Mapping[str, Any]")
UNTYPED_JSON_ALLOWED: Final = {
    "formats": "the transcript formats' boundary: raw records are parsed and built here",
    "testing": "builders write raw records on purpose, including malformed ones",
    "settings/loading.py": "the TOML and environment layers before they become the typed Settings",
    "settings/environment.py": "the environment layer: variables as TOML-shaped overrides",
    "cli/grammar.py": "argparse flags as a TOML-shaped override layer for the settings loader",
    "cli/live_grammar.py": "the in-place commands' flags, the same override layer",
    "estimate/seed.py": "seed 004's estimator is defined over the raw JSON record; kept as the reference",
    "proof/claude_code/capture.py": "the Messages API wire format the loopback server answers",
    "proof/claude_code/api_rules.py": "the Messages API's error body, built in the API's wire format",
    "proof/claude_code/client.py": "the captured request body, JSON from Claude Code",
    "proof/claude_code/sent_context.py": "reads the captured Messages API request into typed blocks",
    "proof/chat_capture.py": "the Chat Completions wire format the one loopback server answers and records",
    "proof/qwen_code": "the captured Chat Completions messages, JSON from Qwen Code",
    "proof/codex/responses_capture.py": "the Responses API stream events the loopback server answers Codex with",
    "proof/gemini_cli": "the Gemini API wire format the loopback server answers and captures",
    "proof/codex/codex_golden.py": "the Codex goldens' JSON lines, a fixture format shared with the Codex reader",
    "jobs/report_schemas.py": "a JSON Schema is a JSON document: msgspec's, completed as the renderer writes",
    "agents/codex/evidence.py": "a Codex rollout's summarized items, raw, become the summarizers' typed evidence",
    "agents/qwen_code/qwen_evidence.py": "a Qwen Code call's JSON arguments become the summarizers' tool input",
    "agents/codewhale/whale_evidence.py": "a CodeWhale call's raw JSON input becomes the evidence's tool input",
    "proof/codewhale/whale_excluded.py": "the original document's raw records, searched for excluded texts",
    "proof/codewhale/whale_resume.py": "the captured Chat Completions request, JSON from CodeWhale",
}

# The untyped JSON values one stage still hands another (a name its boundary module exports, with
# `dict[str, Any]` in its signature, imported by a module of another top-level package): each is
# a debt with its reason, and the list only shrinks.
UNTYPED_JSON_CROSSINGS: Final = {
    "formats.claude_code.build.attachment_line": "core/compose builds a state attachment from the raw one it kept",
    "formats.json_values.parse_object": "the Claude Code proof reads records' raw fields (and Codex's excluded texts)",
    "formats.claude_code.tasks.task_status": "the task-list state compose carries and the compress job reports, raw",
    "formats.codex.rollout_items.sent_pairs": "the Codex summary's evidence is read from raw items in agents/codex/evidence",
    "jobs.compress.in_place.config_digest": "the model settings enter the in-place config digest as TOML-shaped values",
}
MAX_UNTYPED_JSON_CROSSINGS: Final = 5
UNTYPED_VALUES: Final = (
    *UNTYPED_JSON,
    "dict[str, object]",
    "Mapping[str, object]",
)  # `object`: no type either


@functools.cache
def _parsed() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package, parsed once a run: the checks only read the trees, and a parse
    of the whole package is a second or two each time."""
    return tuple(
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    )


def _modules() -> Iterator[tuple[str, ast.Module]]:
    yield from _parsed()


def _stage(name: str) -> int:
    for rank, members in enumerate(STAGES):
        if name in members:
            return rank
    raise AssertionError(f"pipeline/{name} has no place in STAGES: add it where the flow uses it")


def _top(relative: str) -> str:
    first = relative.split("/", 1)[0]
    return first.removesuffix(".py")


def _absolute_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every absolute import's line and dotted module name (lazy imports included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)


def _imported(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for line, name in _absolute_imports(tree):
        parts = name.split(".")
        if parts[0] == "pipeline":
            yield line, parts[1] if len(parts) > 1 else "__init__"


def test_every_import_follows_the_stage_order() -> None:
    against = []
    for relative, tree in _modules():
        if _top(relative) == TESTING:
            continue
        mine = _stage(_top(relative))
        for line, target in _imported(tree):
            if target == TESTING or _stage(target) > mine:
                against.append(f"pipeline/{relative}:{line} imports pipeline.{target}")
    assert not against, "imports against the stage order:\n" + "\n".join(against)


def test_the_check_catches_a_backward_import() -> None:
    tree = ast.parse("from pipeline.cli.main import main\nimport pipeline.testing\n")
    assert [target for _, target in _imported(tree)] == ["cli", "testing"]
    assert _stage("cli") > _stage("core")
    with pytest.raises(AssertionError, match="no place"):
        _stage("newpackage")


def _inner(relative: str) -> tuple[str, int] | None:
    """The package with an inner order a module belongs to, and its part's rank there."""
    package, _, rest = relative.partition("/")
    parts = INNER_STAGES.get(package)
    if parts is None or not rest or rest == "__init__.py":
        return None
    return package, parts.index(rest.split("/", 1)[0].removesuffix(".py"))


def _module_name(relative: str) -> str:
    """`core/topology/__init__.py` -> `pipeline.core.topology`; `cli/main.py` -> `pipeline.cli.main`."""
    parts = ["pipeline", *relative.removesuffix(".py").split("/")]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_targets(name: str, tree: ast.Module, package: bool) -> Iterator[tuple[int, str]]:
    """Every module of the package `name` imports, wherever the import sits (a lazy import in a
    function, or one under TYPE_CHECKING, is a dependency all the same), `from a import b` as `a.b`
    when `b` may be a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package, up `level - 1` more
                home = name.split(".")[: len(name.split(".")) - (0 if package else 1)]
                base = ".".join([*home[: len(home) - node.level + 1], *filter(None, [node.module])])
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def _import_graph(trees: dict[str, ast.Module]) -> dict[str, dict[str, int]]:
    """Module -> the pipeline modules it imports (with the first line that does), keyed by the
    package-relative paths of `trees`."""
    names = {_module_name(relative): relative for relative in trees}
    graph: dict[str, dict[str, int]] = {}
    for relative, tree in trees.items():
        name = _module_name(relative)
        edges = graph.setdefault(name, {})
        for line, target in _import_targets(name, tree, relative.endswith("__init__.py")):
            if target in names and target != name:
                edges.setdefault(target, line)
    return graph


def _import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle through each group of modules that import each other (Tarjan's strongly connected
    components, iteratively), each as the modules in import order, the first repeated at the end."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in order:
            continue
        work = [(root, iter(sorted(graph[root])))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    group = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(group) > 1:
                        cycles.append(_cycle_through(graph, set(group), node))
            elif target not in order:
                order[target] = low[target] = len(order)
                stack.append(target)
                work.append((target, iter(sorted(graph[target]))))
            elif target in stack:
                low[node] = min(low[node], order[target])
    return cycles


def _cycle_through(graph: dict[str, dict[str, int]], group: set[str], start: str) -> list[str]:
    """The shortest way from `start` back to itself inside `group` (breadth first)."""
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [*reversed(path), start]
                if target in group and target not in came:
                    came[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is in no cycle of {sorted(group)}")


def test_no_module_imports_itself_through_others() -> None:
    """An import cycle means two concerns that should be one, or a shared piece that belongs below
    both: move it where both can import it."""
    graph = _import_graph(dict(_modules()))
    cycles = [
        " -> ".join(f"{node}:{graph[node][after]}" for node, after in pairwise(cycle)) + f" -> {cycle[-1]}"
        for cycle in _import_cycles(graph)
    ]
    assert not cycles, "import cycles (module:line of each import):\n" + "\n".join(cycles)


def test_the_cycle_check_sees_lazy_and_relative_imports() -> None:
    trees = {
        "a.py": ast.parse("import pipeline.b\n"),
        "b.py": ast.parse("def f():\n    from pipeline.c import thing\n"),
        "c.py": ast.parse(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pipeline import a\n"
        ),
        "d/__init__.py": ast.parse("from .e import x\n"),
        "d/e.py": ast.parse("from pipeline.d import y\n"),
        "f.py": ast.parse("from pipeline.a import z\n"),
    }
    cycles = _import_cycles(_import_graph(trees))
    assert sorted(cycles) == [
        ["pipeline.a", "pipeline.b", "pipeline.c", "pipeline.a"],
        ["pipeline.d", "pipeline.d.e", "pipeline.d"],
    ]
    del trees["c.py"], trees["d/e.py"]
    assert _import_cycles(_import_graph(trees)) == []


def _testing_in_use(texts: Iterator[str], graph: dict[str, dict[str, int]]) -> set[str]:
    """The `pipeline.testing` modules the texts name (`pipeline.testing` alone: its `__init__`),
    and every testing module those import in turn."""
    modules = {name for name in graph if name.startswith(f"pipeline.{TESTING}")}
    named = {
        f"pipeline.{TESTING}.{found.group(1)}"
        if f"pipeline.{TESTING}.{found.group(1)}" in modules
        else f"pipeline.{TESTING}"
        for text in texts
        for found in TESTING_NAMED.finditer(text)
    }
    used: set[str] = set()
    while named:
        module = named.pop()
        used.add(module)
        named |= {target for target in graph[module] if target in modules} - used
    return used


def _outside_tests() -> Iterator[str]:
    """Every text outside tests/ that may name a testing module, but the testing package's own."""
    for place in TESTING_USERS:
        path = PACKAGE.parent / place
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file() and PACKAGE / TESTING not in file.parents and "__pycache__" not in file.parts:
                yield file.read_text(encoding="utf-8", errors="replace")


def test_every_testing_module_has_a_user_outside_the_tests() -> None:
    graph = _import_graph(dict(_modules()))
    used = _testing_in_use(_outside_tests(), graph)
    unused = sorted(name for name in graph if name.startswith(f"pipeline.{TESTING}") and name not in used)
    assert not unused, f"testing modules only tests use (move them under tests/support/): {unused}"


def test_the_testing_check_follows_imports_from_the_named_modules() -> None:
    graph = {
        "pipeline.testing": {"pipeline.testing.builder": 1},
        "pipeline.testing.builder": {"pipeline.testing._records": 3, "pipeline.vocabulary": 4},
        "pipeline.testing._records": {},
        "pipeline.testing.synth": {},
        "pipeline.testing.only_tests": {},
    }
    texts = iter(["from pipeline.testing import TranscriptBuilder", "python -m pipeline/testing/synth.py"])
    assert _testing_in_use(texts, graph) == {
        "pipeline.testing",
        "pipeline.testing.builder",
        "pipeline.testing._records",
        "pipeline.testing.synth",
    }


def test_the_parts_of_a_package_import_only_earlier_parts() -> None:
    against = []
    for relative, tree in _modules():
        mine = _inner(relative)
        if mine is None:
            continue
        package, rank = mine
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith(f"pipeline.{package}.")
            ):
                target = _inner(node.module.removeprefix("pipeline.").replace(".", "/") + ".py")
                if target is not None and target[1] > rank:
                    against.append(f"pipeline/{relative}:{node.lineno} imports {node.module}")
    assert not against, "imports against a package's inner order:\n" + "\n".join(against)


def test_every_part_of_an_ordered_package_has_its_place() -> None:
    for package, parts in INNER_STAGES.items():
        found = {path.name.removesuffix(".py") for path in (PACKAGE / package).iterdir()}
        found -= {"__init__", "__pycache__"}
        assert found == set(parts), f"pipeline/{package}: {sorted(found ^ set(parts))} out of INNER_STAGES"


def test_the_packages_are_the_listed_ones_and_say_what_they_hold() -> None:
    found = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_dir()
        and path.name != "__pycache__"
        and CRATE_BUILD not in path.parents
        and path != CRATE_BUILD
    }
    assert found == set(PACKAGES), f"packages not in PACKAGES, or gone: {sorted(found ^ set(PACKAGES))}"
    silent = [
        name
        for name in PACKAGES
        if (PACKAGE / name / "__init__.py").exists()
        and (PACKAGE / name / "__init__.py").stat().st_size
        and not ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8")))
    ]
    assert not silent, f"an __init__ with code but no docstring saying what the package holds: {silent}"


def _names() -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py":
            names.setdefault(path.name, []).append(path.relative_to(PACKAGE).parent.as_posix())
    return names


def _agents_own(places: list[str]) -> bool:
    """Every place is an agent's package: each agent's `session.py` or `judge.py` is named by it."""
    return all(place.replace("/", ".").startswith(AGENT_PACKAGES) for place in places)


def test_no_two_modules_share_a_name_unless_listed() -> None:
    shared = {
        name: places for name, places in _names().items() if len(places) > 1 and not _agents_own(places)
    }
    unlisted = {name: places for name, places in shared.items() if name not in SHARED_NAMES}
    assert not unlisted, f"modules that share a name: {unlisted}"
    assert len(SHARED_NAMES) <= MAX_SHARED_NAMES
    stale = set(SHARED_NAMES) - set(shared)
    assert not stale, f"listed as shared but no longer are: {sorted(stale)}"


def test_tests_mirror_the_tree() -> None:
    found = {
        path.relative_to(TESTS).as_posix()
        for path in TESTS.rglob("*")
        if path.is_dir() and path.name != "__pycache__"
    }
    strays = sorted(found - set(PACKAGES) - TESTS_OWN)
    assert not strays, f"test directories with no package of that path in pipeline/: {strays}"


def test_no_function_is_longer_than_a_screen() -> None:
    long = [
        f"pipeline/{relative}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for relative, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, "\n".join(long)


def _allowed_untyped(relative: str) -> bool:
    return any(relative == key or relative.startswith(key + "/") for key in UNTYPED_JSON_ALLOWED)


def test_nothing_is_found_next_to_a_source_file() -> None:
    """Run-time data comes from the package (`importlib.resources`), never from `__file__`'s
    folders: in an installed wheel those are site-packages, and the repository is not there."""
    found = [
        f"pipeline/{relative}:{node.lineno}"
        for relative, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == "__file__"
    ]
    assert not found, "paths taken from __file__ (use importlib.resources):\n" + "\n".join(found)


def test_untyped_json_stays_at_its_boundaries() -> None:
    hits = [
        (relative, node.lineno)
        for relative, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and ast.unparse(node) in UNTYPED_JSON
    ]
    found = [f"pipeline/{relative}:{line}" for relative, line in hits if not _allowed_untyped(relative)]
    assert not found, "dict[str, Any] between stages:\n" + "\n".join(found)
    used = {key for key in UNTYPED_JSON_ALLOWED for relative, _ in hits if relative.startswith(key)}
    assert used == set(UNTYPED_JSON_ALLOWED), (
        f"exceptions no longer needed: {set(UNTYPED_JSON_ALLOWED) - used}"
    )


def _untyped_names(tree: ast.Module) -> Iterator[str]:
    """A module's top-level functions, classes and aliases whose signatures (a class's: its fields'
    and methods') hold untyped JSON."""
    for node in tree.body:
        if isinstance(node, ast.Assign):
            if _untyped(node.value):
                yield from (target.id for target in node.targets if isinstance(target, ast.Name))
            continue
        parts = node.body if isinstance(node, ast.ClassDef) else [node]
        if any(_untyped(annotation) for part in parts for annotation in _annotations(part)):
            yield getattr(node, "name", "")


def _untyped(expression: ast.expr) -> bool:
    return any(ast.unparse(sub) in UNTYPED_VALUES for sub in ast.walk(expression))


def _annotations(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = node.args
        yield from (
            a.annotation
            for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            if a.annotation is not None
        )
        if node.returns is not None:
            yield node.returns
    elif isinstance(node, ast.AnnAssign):
        yield node.annotation


def _untyped_crossings(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """`module.name` -> the modules of other stages that import it, for every untyped name."""
    untyped = {
        f"{_module_name(relative).removeprefix('pipeline.')}.{name}"
        for relative, tree in trees.items()
        for name in _untyped_names(tree)
    }
    crossings: dict[str, set[str]] = {}
    for relative, tree in trees.items():
        if _top(relative) == TESTING:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline."):
                source = node.module.removeprefix("pipeline.")
                for alias in node.names:
                    name = f"{source}.{alias.name}"
                    if name in untyped and source.split(".", 1)[0] != _top(relative):
                        crossings.setdefault(name, set()).add(relative)
    return crossings


def test_untyped_json_crosses_a_stage_only_where_listed() -> None:
    crossings = _untyped_crossings(dict(_modules()))
    unlisted = {
        name: sorted(users) for name, users in crossings.items() if name not in UNTYPED_JSON_CROSSINGS
    }
    assert not unlisted, f"dict[str, Any] handed to another stage (give it a type): {unlisted}"
    stale = set(UNTYPED_JSON_CROSSINGS) - set(crossings)
    assert not stale, f"listed untyped crossings that are gone (drop them): {sorted(stale)}"
    assert len(UNTYPED_JSON_CROSSINGS) <= MAX_UNTYPED_JSON_CROSSINGS


def test_the_crossing_check_sees_signatures_fields_and_aliases() -> None:
    trees = {
        "formats/raw.py": ast.parse(
            "Json = dict[str, Any]\n"
            "def parse(line: bytes) -> dict[str, Any]: ...\n"
            "def typed(line: bytes) -> int: ...\n"
            "class Held:\n    record: Mapping[str, Any]\n"
            "class Method:\n    def of(self, x: int) -> dict[str, Any]: ...\n"
        ),
        "formats/beside.py": ast.parse("from pipeline.formats.raw import parse\n"),
        "jobs/user.py": ast.parse("from pipeline.formats.raw import Json, Held, Method, parse, typed\n"),
    }
    assert _untyped_crossings(trees) == {
        name: {"jobs/user.py"}
        for name in ("formats.raw.Json", "formats.raw.Held", "formats.raw.Method", "formats.raw.parse")
    }


COMMAND_MODULES: Final = {
    "validate": "validate_command",
    "compress": "compress_command",
    "compress --in-place": "compress_in_place_command",
    "compress --dry-run": "dry_run_command",
    "tokens": "tokens_command",
    "verify-resume": "verify_resume_command",
    "probe": "probe_command",
    "restore": "restore_command",
    "backups": "backups_command",
    "repair-read-pages": "repair_command",
    "vacuum": "vacuum_command",
    "schema": "schema_command",
    "report": "report_command",
}
EXECUTORS: Final = {
    "Executor": "execute/seam.py",  # the protocol
    "ProcessPoolExecutor": "execute/process_pool.py",
    "DaskExecutor": "execute/dask_cluster.py",
}
# The in-place commands' drive is a runner of its own beside the executor, one per backend.
IN_PLACE_RUNNERS: Final = {
    "InPlaceRunner": "execute/in_place_drive.py",  # the protocol
    "ProcessPoolInPlaceRunner": "execute/process_pool.py",
    "DaskInPlaceRunner": "execute/dask_cluster.py",
}
ROLE_NAMED: Final = ("cli", "execute")  # packages whose every module name is its own in pipeline/


def test_one_module_per_command_and_one_executor_per_backend() -> None:
    missing = [
        command for command, name in COMMAND_MODULES.items() if not (PACKAGE / f"cli/{name}.py").is_file()
    ]
    assert not missing, f"commands without their module in cli/: {missing}"
    runs = {
        node.name: relative
        for relative, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(item, ast.FunctionDef) and item.name == "run" for item in node.body)
    }
    assert {name: at for name, at in runs.items() if name.endswith("Executor")} == EXECUTORS
    assert {name: at for name, at in runs.items() if name.endswith("InPlaceRunner")} == IN_PLACE_RUNNERS


def test_command_line_and_executor_modules_have_names_of_their_own() -> None:
    names: dict[str, list[str]] = {}
    for relative, _ in _modules():
        names.setdefault(relative.rsplit("/", 1)[-1], []).append(relative)
    shared = [
        paths
        for relative, _ in _modules()
        if _top(relative) in ROLE_NAMED and not relative.endswith("__init__.py")
        for paths in [names[relative.rsplit("/", 1)[-1]]]
        if len(paths) > 1
    ]
    assert not shared, f"module names used twice: {shared}"


# An agent is named only in its own packages (`formats/<agent>`, `proof/<agent>`, `agents/<agent>`)
# and the registries: the jobs, the executors, the reports and the command line reach it through
# the seam (`agents/protocol.py`): Claude Code's active-chain jobs reach its format's parts through
# `ChainFormat` (`agents/registry.CHAIN_PARTS`).
AGENTS: Final = tuple(
    sorted(path.name for path in (PACKAGE / "formats").iterdir() if (path / "__init__.py").is_file())
)  # every agent with a package of its own under formats/ (`unsupported` holds only signatures)
AGENT_STAGES: Final = ("formats", "proof", "agents")  # where an agent has a package of its own
AGENT_PACKAGES: Final = tuple(
    f"{stage}.{agent}" for agent in AGENTS if agent != "unsupported" for stage in AGENT_STAGES
)
REGISTRIES: Final = frozenset({"formats/registry.py", "agents/registry.py"})
SEAM_SIDE: Final = ("jobs", "execute", "report", "cli")
# Claude Code owes nothing: its active-chain jobs reach its format through `CHAIN_PARTS` and its
# judge through `chain_judge`, and live replacement carries `proof/damage_repair`'s neutral types.


def _agent_package(name: str) -> str | None:
    """The agent package (`proof.codex`) a dotted module name (`proof.codex.codex_client`) lies in."""
    return next((p for p in AGENT_PACKAGES if name == p or name.startswith(p + ".")), None)


def _agent_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for line, name in _absolute_imports(tree):
        inner = name.removeprefix("pipeline.")
        if name.startswith("pipeline.") and _agent_package(inner) is not None:
            yield line, inner


# What detection says of a file no agent wrote: every other `SourceFormat` member is an agent's.
NOT_AN_AGENT: Final = frozenset({SourceFormat.EMPTY, SourceFormat.UNKNOWN})
AGENT_FORMATS: Final = {member.name: member for member in SourceFormat if member not in NOT_AN_AGENT}


def _is_source_format(node: ast.expr) -> bool:
    """`SourceFormat`, or a module's `SourceFormat` (`vocabulary.SourceFormat`)."""
    return (isinstance(node, ast.Name) and node.id == "SourceFormat") or (
        isinstance(node, ast.Attribute) and node.attr == "SourceFormat"
    )


def _agent_formats(tree: ast.Module) -> Iterator[tuple[int, SourceFormat]]:
    """Every agent's `SourceFormat` member a module names: `SourceFormat.CODEX`, or
    `SourceFormat("codex-rollout")`."""
    values = {member.value: member for member in AGENT_FORMATS.values()}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_source_format(node.value) and node.attr in AGENT_FORMATS:
            yield node.lineno, AGENT_FORMATS[node.attr]
        elif isinstance(node, ast.Call) and _is_source_format(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value in values:
                yield node.lineno, values[first.value]


def test_no_agent_is_named_outside_its_packages_and_the_registries() -> None:
    against = []
    for relative, tree in _modules():
        if not relative.startswith(SEAM_SIDE) or relative in REGISTRIES:
            continue
        against += [
            f"pipeline/{relative}:{line} imports pipeline.{target}" for line, target in _agent_imports(tree)
        ]
        against += [
            f"pipeline/{relative}:{line} names SourceFormat.{member.name}"
            for line, member in _agent_formats(tree)
        ]
    assert not against, "an agent named outside its packages (reach it through the seam):\n" + "\n".join(
        against
    )


def test_a_judge_is_imported_only_by_its_own_agent_and_the_registries() -> None:
    """Wherever the importer sits (publish/ too): a judge's package is its agent's business."""
    against = []
    for relative, tree in _modules():
        if _top(relative) == TESTING or relative in REGISTRIES:
            continue
        home = _agent_package(_module_name(relative).removeprefix("pipeline."))
        mine = home.split(".", 1)[1] if home else None
        for line, target in _agent_imports(tree):
            stage, agent = target.split(".")[:2]
            if stage == "proof" and agent != mine:
                against.append(f"pipeline/{relative}:{line} imports pipeline.{target}")
    assert not against, "a judge named outside its agent's packages:\n" + "\n".join(against)


def test_the_agent_check_knows_every_agent_package() -> None:
    assert {"claude_code", "codex"} <= set(AGENTS)
    for stage in AGENT_STAGES:
        assert {f"{stage}.claude_code", f"{stage}.codex"} <= set(AGENT_PACKAGES)
    assert _agent_package("proof.codex.codex_client") == "proof.codex"
    assert _agent_package("proof.codex_client") is None  # a package, not a prefix of a name


def test_the_agent_check_sees_an_agents_import() -> None:
    tree = ast.parse(
        "from pipeline.formats.codex.analysis import analyze_rollout\nimport pipeline.read.load\n"
    )
    assert [target for _, target in _agent_imports(tree)] == ["formats.codex.analysis"]


def test_the_agent_check_sees_an_agents_format_named() -> None:
    tree = ast.parse(
        "a = SourceFormat.CODEX\n"
        "b = vocabulary.SourceFormat.CLAUDE_CODE\n"
        "c = SourceFormat('pi-session')\n"
        "d = SourceFormat.UNKNOWN, SourceFormat.EMPTY, SourceFormat(name), Other.CODEX\n"
    )
    assert sorted(_agent_formats(tree)) == [
        (1, SourceFormat.CODEX),
        (2, SourceFormat.CLAUDE_CODE),
        (3, SourceFormat.PI),
    ]
    assert {SourceFormat.OPENCODE, SourceFormat.QWEN_CODE} <= set(AGENT_FORMATS.values())
