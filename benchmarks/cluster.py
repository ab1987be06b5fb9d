"""Benchmark `compaction validate` on a Dask `LocalCluster` of 2 workers against the local runner.

Both run the CLI as users do over the same generated fleet: the local runner with `--jobs 2`,
the cluster as `--cluster local:2` (start-up included) and as `--cluster tcp://...` against a
cluster started beforehand (steady state, as a long-lived cluster is used). Target: cluster
throughput at least 0.85 of the local runner's. Scheduling overhead per session is the extra
wall time per session over the local run, batched (the default) and with one session per task.

    python benchmarks/cluster.py               # a 512 MB fleet
    python benchmarks/cluster.py --fleet-mb 128
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, MB, emit, fleet, run_cli, session_files, total_mb

from pipeline.execute.dask_cluster import loopback_cluster

TARGET = 0.85


def _best(args: list[str], report_dir: Path, repeats: int, env: dict[str, str] | None = None) -> float:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        return min(run_cli(args, report_dir).seconds for _ in range(repeats))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleet-mb", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    import dask  # noqa: PLC0415 - the cluster extra

    root = fleet(options.fleet_mb * MB)
    files = session_files(root)
    out = CACHE / "cluster-reports"
    common = ["validate", str(root), "--report-dir", str(out)]
    no_resume = {"COMPACTION_SWEEP_RESUME": "false"}  # every repeat does the work again
    single = {**no_resume, "COMPACTION_CLUSTER_BATCH_SESSIONS": "1"}
    times: dict[str, list[float]] = {"local": [], "started": [], "steady": [], "unbatched": []}
    profile_off = {"distributed.worker.profile.enabled": False}  # as `--cluster local:N` sets it
    with (
        dask.config.set(profile_off),
        loopback_cluster(2, quiet_below=logging.ERROR) as cluster,
    ):
        address = cluster.scheduler_address
        for _ in range(options.repeats):  # interleaved, so a noisy neighbour slows every variant alike
            times["local"].append(_best([*common, "--jobs", "2"], out, 1))
            times["started"].append(
                _best([*common, "--jobs", "2", "--cluster", "local:2"], out, 1, no_resume)
            )
            times["steady"].append(_best([*common, "--jobs", "2", "--cluster", address], out, 1, no_resume))
            times["unbatched"].append(_best([*common, "--jobs", "2", "--cluster", address], out, 1, single))
    local, started, steady, unbatched = (
        min(times[name]) for name in ("local", "started", "steady", "unbatched")
    )
    sessions = len(files)
    emit(
        "cluster",
        {
            "fleet_mb": round(total_mb(files), 1),
            "sessions": sessions,
            "median_session_kb": round(statistics.median(p.stat().st_size for p in files) / 1024, 1),
            "local_jobs2_s": round(local, 2),
            "cluster_local2_with_startup_s": round(started, 2),
            "cluster_tcp2_steady_s": round(steady, 2),
            "cluster_tcp2_one_session_per_task_s": round(unbatched, 2),
            "ratio_with_startup": round(local / started, 3),
            "ratio_steady": round(local / steady, 3),
            "target": TARGET,
            "overhead_ms_per_session_batched": round((steady - local) * 1000 / sessions, 2),
            "overhead_ms_per_session_unbatched": round((unbatched - local) * 1000 / sessions, 2),
            "all_seconds": {name: [round(t, 2) for t in values] for name, values in times.items()},
        },
    )


if __name__ == "__main__":
    main()
