"""pi's billed truth, in all and by the provider and model each request names, with the cost pi
records: on real sessions, against a plain reading of every assistant message's `usage`."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from pipeline.formats.pi.billed import UNKNOWN_MODEL, billed_usage
from pipeline.formats.pi.session_decode import decode_session
from tests.support.pi_files import CORPUS, FIXTURES, LIMITS, pi_session_files

LARGE = CORPUS / "files" / "badlogic__pi-mono__packages_coding-agent_test_fixtures_large-session.jsonl"


def _plain(path: Path) -> dict[str, tuple[int, int, float]]:
    """Requests, input and cost by `<provider>/<model>`, read line by line with no pi code."""
    found: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for line in path.read_bytes().splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        if (
            record.get("type") != "message"
            or not isinstance(message, dict)
            or message.get("role") != "assistant"
        ):
            continue
        usage = message.get("usage")
        if isinstance(usage, dict):
            totals = found[f"{message['provider']}/{message['model']}"]
            totals[0] += 1
            totals[1] += usage.get("input", 0)
            totals[2] += (usage.get("cost") or {}).get("total", 0)
    return {model: (int(t[0]), int(t[1]), round(t[2], 6)) for model, t in found.items()}


@pytest.mark.parametrize("path", [LARGE, *pi_session_files()[:3]], ids=lambda path: path.name[-40:])
def test_billed_requests_split_by_provider_and_model_add_up_to_the_totals(path: Path) -> None:
    usage = billed_usage(decode_session(path.read_bytes(), LIMITS))
    by_model = {m.model: (m.events, m.input, m.cost) for m in usage.by_model}
    assert by_model == _plain(path)  # these sessions bill assistant messages only
    assert sum(m.events for m in usage.by_model) == usage.events
    assert sum(m.output for m in usage.by_model) == usage.output
    assert round(sum(m.cost for m in usage.by_model), 6) == usage.cost


def test_a_request_that_names_no_model_is_counted_as_unknown() -> None:
    lines = (FIXTURES / "tools.jsonl").read_bytes().splitlines()
    last = orjson.loads(lines[-1])
    warmed = {"type": "usage", "id": "w1", "parentId": last["id"], "usage": {"input": 7, "output": 0}}
    usage = billed_usage(decode_session(b"\n".join([*lines, orjson.dumps(warmed)]) + b"\n", LIMITS))
    unknown = next(m for m in usage.by_model if m.model == UNKNOWN_MODEL)
    assert (unknown.events, unknown.input) == (1, 7)
