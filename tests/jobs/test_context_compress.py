"""`compress` of Codex rollouts: a Codex-native checkpoint, the tail byte for byte, the target met,
and the candidate's rebuilt context the summary followed by the original's from the cut on."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.formats.codex.rollout_items import item_digest, sent_items
from pipeline.jobs.compress.job import compress_session
from pipeline.read.discover import discover
from pipeline.report.documents import Compressed, Refused, Skipped
from pipeline.testing import as_json
from pipeline.testing.settings import LIMITS, compress_options
from tests.support.rollout_builder import RolloutBuilder

HALF = 0.5  # the bound on a candidate's resume context against the original's


def _long(seed: int, turns: int = 12) -> RolloutBuilder:
    b = RolloutBuilder(seed=seed)
    b.item(b.message("developer", "<permissions instructions>sandboxed</permissions instructions>"))
    b.context()
    for number in range(turns):
        b.exchange(f"task number {number}: fix the parser in module_{number}.py", tools=3, output_bytes=3000)
    return b


def _compress(tmp_path: Path, b: RolloutBuilder, **knobs: Any) -> tuple[Any, dict[str, Any], Path]:
    source = b.write(tmp_path / "rollout-2026-03-01T12-00-00-x.jsonl")
    outcome = compress_session(source, source.name, compress_options(tmp_path / "out", min_tokens=0, **knobs))
    return outcome, as_json(outcome), source


def _digests(data: bytes) -> list[str]:
    analysis = analyze_rollout(data, LIMITS)
    return [item_digest(item) for item in sent_items(analysis.rollout, analysis.data, analysis.rebuilt)]


def test_a_long_rollout_becomes_a_checkpoint_and_its_tail_verbatim(tmp_path: Path) -> None:
    outcome, report, source = _compress(tmp_path, _long(21))
    assert isinstance(outcome, Compressed), report.get("reasons")
    tokens, cut = report["tokens"], report["cut"]
    assert tokens["target_met"] and tokens["output"] <= tokens["target"] < tokens["active_chain"]
    written = tmp_path / "out" / "root" / source.name
    data, original = written.read_bytes(), source.read_bytes()
    lines = data.splitlines(keepends=True)
    assert lines[0] == original.splitlines(keepends=True)[0]  # session_meta
    compacted = orjson.loads(lines[1])
    assert compacted["type"] == "compacted" and len(compacted["payload"]["replacement_history"]) == 1
    assert orjson.loads(lines[2])["payload"] == {"type": "context_compacted"}
    tail = b"".join(original.splitlines(keepends=True)[cut["cut_line"] - 1 :])
    assert data.endswith(tail) and len(data) == len(b"".join(lines[:3])) + len(tail)
    assert report["output"]["sha256"] and report["output"]["bytes"] == len(data) < len(original)
    mine, theirs = _digests(data), _digests(original)
    assert mine[1:] == theirs[-cut["kept_items"] :] and cut["summarized_items"] + cut["kept_items"] == len(
        theirs
    )
    assert cut["at_turn_start"]


def test_the_summary_restates_the_summarized_prompts_and_cites_their_lines(tmp_path: Path) -> None:
    outcome, report, source = _compress(tmp_path, _long(22))
    assert isinstance(outcome, Compressed)
    data = (tmp_path / "out" / "root" / source.name).read_bytes()
    summary = orjson.loads(data.splitlines()[1])["payload"]["message"]
    assert "task number 0: fix the parser" in summary and "L" in summary
    assert report["summary"]["cited_lines"] > 0
    partition = report["partition"]
    assert sum(entry["count"] for entry in partition.values()) == source.read_bytes().count(b"\n")
    assert partition["summary"]["count"] > 0 and partition["control_projection"]["count"] == 1


def test_a_compressed_rollout_compresses_again_folding_its_own_checkpoint(tmp_path: Path) -> None:
    first, _, source = _compress(tmp_path, _long(23, turns=16))
    assert isinstance(first, Compressed)
    again = tmp_path / "again" / source.name
    again.parent.mkdir()
    again.write_bytes((tmp_path / "out" / "root" / source.name).read_bytes())
    assert analyze_rollout(again.read_bytes(), LIMITS).rebuilt.base_line == 2
    second = compress_session(
        again, again.name, compress_options(tmp_path / "out2", min_tokens=0, target_ratio=0.6)
    )
    report = as_json(second)
    assert isinstance(second, Compressed), report.get("reasons")
    assert report["summary"]["prior_summaries_folded"] == 1
    data = (tmp_path / "out2" / "root" / again.name).read_bytes()
    assert data.count(b'"type":"compacted"') == 1  # one checkpoint: the earlier one is folded, not stacked


def test_a_small_or_damaged_rollout_is_not_written(tmp_path: Path) -> None:
    small = RolloutBuilder(seed=24)
    small.exchange("one thing", tools=1)
    source = small.write(tmp_path / "small.jsonl")
    outcome = compress_session(source, source.name, compress_options(tmp_path / "out"))
    assert isinstance(outcome, Skipped) and as_json(outcome)["status"] == "skipped-small"
    damaged = _long(25)
    damaged.raw(b'{"timestamp":"x","type":"response_item","payload":{"type":"mess')
    outcome, report, source = _compress(tmp_path, damaged)
    assert isinstance(outcome, Refused) and report["reasons"][0] == "source-active-chain-invalid"
    assert not (tmp_path / "out" / "root" / source.name).exists()


def test_a_rollout_under_mask_or_hybrid_is_left_as_it_is_and_says_why(tmp_path: Path) -> None:
    for strategy in ("mask", "hybrid"):
        outcome, report, source = _compress(tmp_path, _long(26), strategy=strategy)
        assert isinstance(outcome, Skipped), strategy
        assert report["status"] == "unsupported-format" and report["reasons"] == ["strategy-not-for-format"]
        assert not (tmp_path / "out" / "root" / source.name).exists()
    outcome, _, _ = _compress(tmp_path, _long(26), strategy="summary")
    assert isinstance(outcome, Compressed)


def test_every_large_corpus_rollout_compresses_within_target_at_half_its_context(
    codex_files: Path, tmp_path: Path
) -> None:
    large = [path for path in sorted(codex_files.glob("*.jsonl")) if path.stat().st_size > 300_000]
    options = compress_options(tmp_path / "out", min_tokens=0)
    results = {}
    for path in large:
        outcome = compress_session(path, path.name, options)
        report = as_json(outcome)
        if not analyze_rollout(path.read_bytes(), LIMITS).rebuilt.resumable:
            assert report["status"] == "refused"  # the 0.2x layout: Codex itself does not resume it
            continue
        assert isinstance(outcome, Compressed), (path.name, report.get("reasons"))
        tokens = report["tokens"]
        assert tokens["target_met"] and tokens["output"] <= HALF * tokens["active_chain"]
        candidate = (tmp_path / "out" / "root" / path.name).read_bytes()
        kept = report["cut"]["kept_items"]
        assert _digests(candidate)[1:] == _digests(path.read_bytes())[-kept:]
        results[path.name] = tokens["ratio"]
    assert len(results) == 12  # every rollout over 300 KB but the 0.2x one


def test_no_excluded_text_reaches_the_candidate_or_its_report(tmp_path: Path) -> None:
    """Records Codex would not send (rolled back, or before the base compaction) stay out."""
    b = RolloutBuilder(seed=26)
    b.exchange("CANARY-BEFORE-BASE prompt that a compaction already summarized", tools=1)
    b.turn("the task")
    b.compacted("earlier summary", [b.message("user", "the task"), b.message("user", "earlier summary")])
    b.end_turn()
    for turn in range(8):
        b.exchange(f"kept work {turn}", tools=3, output_bytes=3000)
    b.exchange("CANARY-ROLLED-BACK prompt the user took back", tools=1)
    rolled_back = b.rollback(1)
    for turn in range(4):
        b.exchange(f"later work {turn}", tools=3, output_bytes=3000)
    outcome, report, source = _compress(tmp_path, b)
    assert isinstance(outcome, Compressed), report.get("reasons")
    candidate = (tmp_path / "out" / "root" / source.name).read_bytes()
    assert report["cut"]["cut_line"] > rolled_back  # a tail never reaches back over a rollback
    for canary in (b"CANARY-BEFORE-BASE", b"CANARY-ROLLED-BACK"):
        assert canary not in candidate
        assert canary.decode() not in json.dumps(report)
    assert b"earlier summary" in candidate  # what Codex does send was summarized


def test_a_rollouts_target_is_claude_codes_rule_the_ratio_capped_by_the_window_share(
    tmp_path: Path,
) -> None:
    window = {"context_window": 20_000, "max_window_share": 0.4}  # a ceiling under the ratio's goal
    outcome, report, _ = _compress(tmp_path, _long(21), **window)
    tokens = report["tokens"]
    assert 0.3 * tokens["active_chain"] > 8_000, "the ratio alone would allow more than the window share"
    assert tokens["target"] == 8_000  # min(ratio x context, window x share), as for Claude Code
    assert isinstance(outcome, Compressed) and tokens["output"] <= 8_000, report.get("reasons")
    (tmp_path / "ratio").mkdir()
    _, by_ratio, _ = _compress(tmp_path / "ratio", _long(21))
    assert by_ratio["tokens"]["target"] == round(0.3 * by_ratio["tokens"]["active_chain"])


def _numbered(data: bytes) -> bytes:
    """The rollout as a paginated thread writes it: every record numbered (`ordinal`) in order."""
    records = [orjson.loads(line) for line in data.splitlines()]
    return b"".join(
        orjson.dumps({"timestamp": r["timestamp"], "ordinal": n, "type": r["type"], "payload": r["payload"]})
        + b"\n"
        for n, r in enumerate(records)
    )


def test_a_numbered_rollouts_checkpoint_takes_numbers_the_summarized_span_freed(tmp_path: Path) -> None:
    source = tmp_path / "in" / "rollout-2026-03-01T12-00-00-x.jsonl"
    source.parent.mkdir()
    source.write_bytes(_numbered(_long(22).to_bytes()))
    outcome = compress_session(source, source.name, compress_options(tmp_path / "out", min_tokens=0))
    assert isinstance(outcome, Compressed), as_json(outcome).get("reasons")
    written = (tmp_path / "out" / "root" / source.name).read_bytes()
    numbers = [orjson.loads(line).get("ordinal") for line in written.splitlines()]
    assert None not in numbers and numbers == sorted(set(numbers))  # unique and in order
    assert numbers[1:3] == [1, 2] and numbers[-1] == len(source.read_bytes().splitlines()) - 1
    assert analyze_rollout(written, LIMITS).rollout.numbered


def _cold(path: Path) -> Path:
    """The rollout as recent Codex versions store a thread they no longer write to: `.jsonl.zst`."""
    cold = path.with_name(path.name + ".zst")
    cold.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    path.unlink()
    return cold


def test_a_cold_rollout_is_read_decompressed_and_its_candidate_written_back_compressed(
    tmp_path: Path,
) -> None:
    (tmp_path / "in").mkdir()
    plain = _long(23).write(tmp_path / "in" / "rollout-2026-03-01T12-00-00-x.jsonl")
    original = plain.read_bytes()
    cold = _cold(plain)
    (found,) = discover([tmp_path / "in"])
    assert found.path == cold
    outcome = compress_session(cold, cold.name, compress_options(tmp_path / "out", min_tokens=0))
    report = as_json(outcome)
    assert isinstance(outcome, Compressed), report.get("reasons")
    assert report["session"]["format"] == "codex-rollout"
    written = (tmp_path / "out" / "root" / cold.name).read_bytes()
    candidate = zstandard.ZstdDecompressor().stream_reader(written).read()  # stored as its source is
    assert candidate.startswith(original.splitlines(keepends=True)[0]) and len(candidate) < len(original)
    assert report["output"]["sha256"] == hashlib.sha256(candidate).hexdigest()
    beside = _long(23).write(tmp_path / "in" / plain.name)  # the plain sibling is what Codex reads
    assert [f.path for f in discover([tmp_path / "in"])] == [beside]


def test_without_zstandard_a_cold_rollout_is_unreadable_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = _cold(_long(24).write(tmp_path / "rollout-2026-03-01T12-00-00-x.jsonl"))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # the optional extra not installed
    report = as_json(compress_session(cold, cold.name, compress_options(tmp_path / "out", min_tokens=0)))
    assert report["status"] == "unreadable"
    (finding,) = report["findings"]
    assert finding["code"] == "unreadable" and finding["ids"] == ["zstandard-not-installed"]
    assert not (tmp_path / "out").exists()
