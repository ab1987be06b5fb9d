"""The nightly run with a model summarizer, killed with SIGKILL at random points and rerun.

As `test_crash_safety` does for the embedded summarizer: a real `compaction compress --in-place
--summarizer openai` run (forked by `tests.support.inplace_driver`) against the local provider
server is killed after a random delay, the fleet inspected as the kill left it (every session
its original or a valid compaction of it with a backup of the original, no backup lost, no
state row vouching for other bytes), until a run completes; one more run must do nothing, and
`restore --all-since` must then give back every original byte for byte.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.testing.invoke import compaction
from pipeline.testing.provider_server import ProviderServer
from pipeline.testing.synth import generate_fleet
from tests.publish.live.test_crash_safety import (
    VARIANTS,
    Cycle,
    Driver,
    driver,
    finish_cycle,
    kill_cycle,
    sha256,
)

__all__ = ["driver"]  # the forking driver fixture, shared with the embedded summarizer's kill test

KILLS = 25
BUDGET_SECONDS = 240.0  # far above the ~1 minute this takes, so a hang fails loudly


@dataclass
class ModelCycle(Cycle):
    """A fleet copy whose runs have the model write the summaries."""

    base_url: str = ""
    config: Path = field(default_factory=Path)

    def argv(self, reports: Path) -> tuple[list[str], dict[str, str]]:
        argv, env = super().argv(reports)
        argv += ["--summarizer", "openai", "--base-url", self.base_url, "--model", "local-model"]
        return [*argv, "--config", str(self.config)], {**env, "OPENAI_API_KEY": "local-key"}


def _cycle(template: Path, root: Path, variant: tuple[str, str, str], server: ProviderServer) -> ModelCycle:
    shutil.copytree(template, root / "fleet")
    config = root / "model.toml"
    config.write_text("[model_summary]\nbackoff_initial_seconds = 0.01\n")
    cycle = ModelCycle(root, *variant, base_url=server.base_url + "/v1", config=config)
    for path in sorted((root / "fleet").rglob("*.jsonl")):
        cycle.originals[path] = sha256(path.read_bytes())
    return cycle


def _windows(template: Path, root: Path, driver: Driver, server: ProviderServer) -> tuple[float, float]:
    """Median seconds of a complete model run over a fresh copy, and of a run with nothing left to do.

    Medians of three: the driver's first run alone is much slower than the rest, and delays drawn
    over it mostly struck after a run had ended (26 kills took 19 cycles).
    """
    full, idle = [], []
    for attempt in range(3):
        cycle = _cycle(template, root / str(attempt), VARIANTS[0], server)
        for name, times in (("full", full), ("idle", idle)):
            started = time.perf_counter()
            driver.start(cycle.argv(cycle.root / name))
            assert driver.finish() == ("exit", 0)
            times.append(time.perf_counter() - started)
        summary = json.loads((cycle.root / "full" / "summary.json").read_text())["in_place"]
        assert summary["by_disposition"].get("committed", 0) >= 3, summary
    return sorted(full)[1], sorted(idle)[1]


def _restore_all(cycle: ModelCycle, since: str) -> None:
    done = compaction(
        "restore", "--all-since", since, str(cycle.fleet / "projects"),
        "--state-dir", str(cycle.root / "state"), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    now = {path: sha256(path.read_bytes()) for path in cycle.originals}
    assert now == cycle.originals, "a restored session differs from its original"


def test_a_model_nightly_run_killed_at_random_points_loses_nothing_and_restores_exact(
    tmp_path: Path, driver: Driver
) -> None:
    template = tmp_path / "template"
    generate_fleet(template, target_bytes=600_000, seed=3)
    rng = random.Random(20261203)
    since = "2000-01-01T00:00:00+00:00"
    with ProviderServer() as server:
        windows = _windows(template, tmp_path / "measure", driver, server)
        deadline = time.monotonic() + BUDGET_SECONDS
        kills = inside = cycles = 0
        while kills < KILLS:
            cycle = _cycle(template, tmp_path / f"cycle{cycles}", VARIANTS[cycles % len(VARIANTS)], server)
            done, struck = kill_cycle(cycle, driver, rng, windows, deadline)
            kills, inside = kills + done, inside + struck
            finish_cycle(cycle, driver)  # one more run built nothing; some sessions were compacted
            _restore_all(cycle, since)
            cycles += 1
        calls = len(server.requests)
    print(
        f"{kills} SIGKILLs of model runs ({inside} inside a transaction) over {cycles} cycles, "
        f"{calls} model calls; a whole run takes {windows[0] * 1000:.0f} ms"
    )
    assert calls > cycles  # the model wrote the summaries
