"""generate_fleet writes a deterministic, realistic and structurally valid synthetic fleet."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from pipeline.testing import Feature
from pipeline.testing.synth import FleetManifest, generate_fleet, main, parse_size

TARGET = 5 * 1024 * 1024
SEED = 0


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FleetManifest]:
    root = tmp_path_factory.mktemp("fleet")
    seen: list[int] = []
    manifest = generate_fleet(root, target_bytes=TARGET, seed=SEED, progress=seen.append)
    assert seen == sorted(seen)
    assert seen[-1] == manifest.total_bytes
    return root, manifest


def load(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    assert b"\r" not in data
    recs = [json.loads(line) for line in data[:-1].split(b"\n")]
    assert all(isinstance(r, dict) for r in recs)
    return recs


def fleet_files(root: Path) -> list[Path]:
    return sorted(root.glob("projects/**/*.jsonl"))


# ---------------------------------------------------------------------------- fleet level
def test_same_seed_writes_the_same_bytes(fleet: tuple[Path, FleetManifest], tmp_path: Path) -> None:
    root, manifest = fleet
    again = generate_fleet(tmp_path, target_bytes=TARGET, seed=SEED)
    assert again == manifest
    for path in fleet_files(root):
        assert (tmp_path / path.relative_to(root)).read_bytes() == path.read_bytes()


def test_other_seed_writes_another_fleet(tmp_path: Path) -> None:
    a = generate_fleet(tmp_path / "a", target_bytes=200_000, seed=1)
    b = generate_fleet(tmp_path / "b", target_bytes=200_000, seed=2)
    assert [f.path for f in a.files] != [f.path for f in b.files]


def test_total_size_is_within_ten_percent_of_the_target(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    on_disk = sum(p.stat().st_size for p in fleet_files(root))
    assert on_disk == manifest.total_bytes
    assert abs(on_disk - TARGET) <= TARGET * 0.10


def test_manifest_lists_exactly_the_files_on_disk(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    assert sorted(f.path for f in manifest.files) == sorted(
        p.relative_to(root).as_posix() for p in fleet_files(root)
    )
    for entry in manifest.files:
        data = (root / entry.path).read_bytes()
        assert (len(data), data.count(b"\n")) == (entry.bytes, entry.lines)
        assert (entry.agent_id is not None) == ("/subagents/agent-" in entry.path)
        assert (Feature.SUBAGENT_FILE in entry.features) == (entry.agent_id is not None)
    assert json.loads(manifest.to_json())["total_bytes"] == manifest.total_bytes


def test_manifest_features_match_file_contents(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    for entry in manifest.files:
        recs = load(root / entry.path)
        kinds = Counter(r.get("type") for r in recs)
        subtypes = {r.get("subtype") for r in recs}
        pointers = [r for r in recs if r.get("type") == "last-prompt"]
        assert (Feature.COMPACTION in entry.features) == ("compact_boundary" in subtypes), entry.path
        assert (Feature.PROGRESS in entry.features) == (kinds["progress"] > 0), entry.path
        assert (Feature.FILE_HISTORY in entry.features) == (kinds["file-history-snapshot"] > 0), entry.path
        assert (Feature.SUMMARY_RECORD in entry.features) == (kinds["summary"] > 0), entry.path
        assert (Feature.LAST_PROMPT_LEAF in entry.features) == any("leafUuid" in p for p in pointers), (
            entry.path
        )
        assert (Feature.LAST_PROMPT_TEXT in entry.features) == any("leafUuid" not in p for p in pointers)
        assert (Feature.SIDECHAIN in entry.features) == any(r.get("isSidechain") for r in recs), entry.path
        assert {r.get("version") for r in recs if "version" in r} == {entry.version}


def test_fleet_is_varied(fleet: tuple[Path, FleetManifest]) -> None:
    _, manifest = fleet
    features = Counter(feat for f in manifest.files for feat in f.features)
    for wanted in (
        Feature.SPLIT_ASSISTANT,
        Feature.PARALLEL_TOOLS,
        Feature.THINKING,
        Feature.REWIND,
        Feature.COMPACTION,
        Feature.SUBAGENT_FILE,
        Feature.NON_ENGLISH,
        Feature.FILE_HISTORY,
        Feature.PROGRESS,
        Feature.LAST_PROMPT_LEAF,
        Feature.LAST_PROMPT_TEXT,
        Feature.SUMMARY_RECORD,
        Feature.TOOL_ERROR,
        Feature.LARGE_TOOL_RESULT,
        Feature.ATTACHMENT,
    ):
        assert features[wanted] > 0, wanted
    sessions = [f for f in manifest.files if f.agent_id is None]
    no_pointer = [
        f for f in sessions if not {Feature.LAST_PROMPT_LEAF, Feature.LAST_PROMPT_TEXT} & f.features
    ]
    assert no_pointer, "some sessions must have no last-prompt record"
    assert len({f.version for f in sessions}) >= 4
    sizes = sorted(f.bytes for f in sessions)
    assert sizes[0] < 20_000
    assert sizes[-1] > 400_000


def test_the_fleet_holds_every_kind_of_state_claude_code_derives_resume_reminders_from(
    fleet: tuple[Path, FleetManifest],
) -> None:
    # The resume gate is measured on fleets: each kind must occur (issue 35).
    markers = {
        "background shell": b'"backgroundTaskId"',
        "background agent": b'"async_launched"',
        "tool loaded through ToolSearch": b'"tool_reference"',
        "deferred tools announced": b'"deferred_tools_delta"',
        "MCP instructions": b'"mcp_instructions_delta"',
    }
    found = Counter(
        name
        for path in fleet_files(fleet[0])
        for name, marker in markers.items()
        if marker in path.read_bytes()
    )
    assert set(found) == set(markers), found


# ---------------------------------------------------------------------------- per file structure
def test_every_parent_resolves_except_subagent_roots(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    for entry in manifest.files:
        recs = load(root / entry.path)
        uuids = [r["uuid"] for r in recs if "uuid" in r]
        assert len(uuids) == len(set(uuids)), entry.path
        known = set(uuids)
        answered = False
        for r in recs:
            answered = answered or r.get("type") == "assistant"
            parent = r.get("parentUuid")
            if parent is None or parent in known:
                continue
            # Documented exception: a subagent file's leading user records point into the parent session.
            assert entry.agent_id is not None, entry.path
            assert r["type"] == "user", entry.path
            assert not answered, entry.path
            assert Feature.EXTERNAL_PARENT in entry.features


def test_every_tool_use_has_exactly_one_result_after_it(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    for entry in manifest.files:
        issued: dict[str, str] = {}
        answered: Counter[str] = Counter()
        for r in load(root / entry.path):
            content = (r.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else ():
                if block.get("type") == "tool_use":
                    assert block["id"] not in issued
                    issued[block["id"]] = r["uuid"]
                elif block.get("type") == "tool_result":
                    assert block["tool_use_id"] in issued, entry.path
                    assert r["parentUuid"] == issued[block["tool_use_id"]]
                    answered[block["tool_use_id"]] += 1
        assert set(answered) == set(issued), entry.path
        assert set(answered.values()) <= {1}, entry.path


def test_fragments_share_message_id_and_stream_in_order(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    for entry in manifest.files:
        recs = load(root / entry.path)
        line_of = {r["uuid"]: i for i, r in enumerate(recs) if "uuid" in r}
        last_fragment: dict[str, int] = {}
        request: dict[str, str] = defaultdict(str)
        for i, r in enumerate(recs):
            if r.get("type") != "assistant":
                continue
            mid = r["message"]["id"]
            assert len(r["message"]["content"]) == 1
            if mid in last_fragment:
                assert line_of[r["parentUuid"]] >= last_fragment[mid], entry.path
                assert request[mid] == r["requestId"]
            request[mid] = r["requestId"]
            last_fragment[mid] = i


def test_parallel_calls_fork_from_their_fragments(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    forks = 0
    for entry in manifest.files:
        if Feature.PARALLEL_TOOLS not in entry.features:
            continue
        recs = load(root / entry.path)
        children: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in recs:
            if r.get("parentUuid"):
                children[r["parentUuid"]].append(r)
        for r in recs:
            kinds = {
                (c["type"], "tool_result" in json.dumps(c.get("message", "")))
                for c in children[r.get("uuid", "")]
            }
            if r.get("type") == "assistant" and ("user", True) in kinds and len(children[r["uuid"]]) > 1:
                forks += 1
    assert forks > 0


def test_timestamps_never_go_back_and_sessions_are_consistent(fleet: tuple[Path, FleetManifest]) -> None:
    root, manifest = fleet
    for entry in manifest.files:
        recs = load(root / entry.path)
        stamps = [r["timestamp"] for r in recs if "timestamp" in r]
        assert stamps == sorted(stamps), entry.path
        assert {r["sessionId"] for r in recs if "sessionId" in r} == {entry.session_id}
        if entry.agent_id is None:
            assert entry.path.endswith(f"/{entry.session_id}.jsonl")
        else:
            assert all(r.get("isSidechain") is True and r.get("agentId") == entry.agent_id for r in recs)
            assert f"/{entry.session_id}/subagents/agent-{entry.agent_id}.jsonl" in entry.path


# ---------------------------------------------------------------------------- helpers and CLI
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12345", 12345),
        ("300K", 300 * 1024),
        ("5M", 5 * 1024**2),
        ("1G", 1024**3),
        ("1.5GiB", int(1.5 * 1024**3)),
        ("2mb", 2 * 1024**2),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_parse_size_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_generate_fleet_rejects_a_non_positive_target(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        generate_fleet(tmp_path, target_bytes=0)


def test_cli_writes_fleet_and_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path), "--bytes", "150K", "--seed", "4", "--quiet"]) == 0
    doc = json.loads((tmp_path / "fleet-manifest.json").read_bytes())
    assert doc["seed"] == 4
    assert doc["total_bytes"] == sum(p.stat().st_size for p in fleet_files(tmp_path))
    assert "MB/s" in capsys.readouterr().err
