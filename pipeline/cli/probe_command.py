"""`compaction probe ORIGINAL COMPACTED`: what a resumed agent still knows of a compaction's
summarized span (`pipeline.jobs.probe`); its own exit codes (`ProbeExit`, see --help)."""

from __future__ import annotations

import argparse
import sys

from pipeline.errors import ConfigError
from pipeline.settings import load_settings
from pipeline.vocabulary import ExitCode

__all__ = ["probe_command"]


def probe_command(args: argparse.Namespace) -> int:
    """Load the settings (a bad one exits 2), then probe the pair."""
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    from pipeline.jobs import probe  # noqa: PLC0415 - the fidelity probes on use only

    return probe.run(args, settings)
