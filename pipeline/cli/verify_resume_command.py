"""`compaction verify-resume ORIGINAL COMPACTED`: one pair resumed in its own agent's client and
compared (`pipeline.jobs.verify_resume`); its own exit codes (`ResumeExit`, see --help)."""

from __future__ import annotations

import argparse
import sys

from pipeline.errors import ConfigError
from pipeline.formats.line_guard import LineLimits
from pipeline.settings import load_settings
from pipeline.vocabulary import ExitCode

__all__ = ["verify_resume_command"]


def verify_resume_command(args: argparse.Namespace) -> int:
    """Load the settings (a bad one exits 2), then prove the pair."""
    try:
        settings = load_settings(args.config, flags={"judges": dict(args.judge)})
    except ConfigError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    from pipeline.jobs import verify_resume  # noqa: PLC0415 - the judges' proofs on use only

    return verify_resume.run(args, settings.verify, LineLimits.of(settings.sweep), settings.judges)
