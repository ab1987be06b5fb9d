"""generate_giant writes one long, realistic session: deterministic, streamed, mostly active chain."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.jobs.validate import validate_session
from pipeline.testing import Feature, as_json
from pipeline.testing.giant import generate_giant, main
from pipeline.testing.settings import validate_options
from pipeline.testing.synth import FleetFile

TARGET = 4 * 1024 * 1024
WINDOW = 200_000


@pytest.fixture(scope="module")
def giant(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FleetFile]:
    root = tmp_path_factory.mktemp("giant")
    made = generate_giant(root, target_bytes=TARGET, seed=3)
    return root / made.path, made


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_same_seed_same_bytes_other_seed_other_session(giant: tuple[Path, FleetFile], tmp_path: Path) -> None:
    path, made = giant
    again = generate_giant(tmp_path / "again", target_bytes=TARGET, seed=3)
    assert again == made
    assert (tmp_path / "again" / again.path).read_bytes() == path.read_bytes()
    other = generate_giant(tmp_path / "other", target_bytes=TARGET, seed=4)
    assert other.session_id != made.session_id


def test_the_session_is_its_target_size_and_one_file_of_record_lines(giant: tuple[Path, FleetFile]) -> None:
    path, made = giant
    assert path.stat().st_size == made.bytes
    assert 0.95 * TARGET <= made.bytes <= 1.2 * TARGET
    assert len(records(path)) == made.lines


def test_it_holds_what_a_months_long_session_holds(giant: tuple[Path, FleetFile]) -> None:
    path, made = giant
    rows = records(path)
    kinds = Counter(row["type"] for row in rows)
    humans = [
        row
        for row in rows
        if row["type"] == "user"
        and isinstance(row["message"]["content"], str)
        and not row.get("isCompactSummary")
        and not row.get("isMeta")
    ]
    boundaries = [row for row in rows if row.get("subtype") == "compact_boundary"]
    assert {
        Feature.PARALLEL_TOOLS,
        Feature.THINKING,
        Feature.SPLIT_ASSISTANT,
        Feature.COMPACTION,
    } <= made.features
    assert kinds["progress"] > 100 and kinds["assistant"] > 200 and len(humans) > 5
    assert 1 <= len(boundaries) <= 6  # a few prior compact pairs, early on
    assert all(rows.index(boundary) < len(rows) // 5 for boundary in boundaries)


def test_its_calls_bill_a_context_within_the_window(giant: tuple[Path, FleetFile]) -> None:
    path, _ = giant
    billed = [
        sum(row["message"]["usage"][key] for key in ("input_tokens", "cache_read_input_tokens"))
        for row in records(path)
        if row["type"] == "assistant"
    ]
    assert max(billed) <= WINDOW
    assert max(billed) > WINDOW // 2  # it does fill up, and is cleared again


def test_most_of_the_file_is_one_active_chain_beside_side_branches(giant: tuple[Path, FleetFile]) -> None:
    """Prior compactions and rewinds leave history off the chain; most of the session is on it."""
    path, made = giant
    report = as_json(validate_session(path, path.name, validate_options()))
    assert report["status"] == "valid"
    chain, tokens = report["chain"], report["tokens"]
    assert chain["records"] > made.lines // 2
    assert tokens["active_chain"] > 0.8 * tokens["session"]
    assert chain["excluded"]["rewound"]["count"] > 0
    assert chain["excluded"]["pre_compaction"]["count"] > 0


def test_the_command_line_writes_the_session_where_it_is_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--out", str(tmp_path), "--bytes", "300K", "--seed", "1"]) == 0
    (written,) = tmp_path.glob("*.jsonl")
    assert written.name in capsys.readouterr().err
    assert written.stat().st_size > 250_000
