"""`compaction backups [ROOT...]`: the recorded backups and every backup file beside the sessions
or in the backup directory, listed without taking the state lock."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.cli.live_tables import present_backups
from pipeline.formats.registry import looked_for_roots
from pipeline.publish.live.backup_restore import list_backups
from pipeline.publish.live.configured import state_options
from pipeline.publish.live.reporting import backup_entry
from pipeline.publish.live.state_db import read_state
from pipeline.report.render import json_bytes
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode

__all__ = ["backups_command"]


def backups_command(args: argparse.Namespace, settings: Settings) -> int:
    """List the backups (recorded, beside the sessions under the roots, in the backup directory)."""
    roots = [root for root in (list(args.paths) or looked_for_roots()) if root.is_dir()]
    configured = settings.in_place.backup_dir
    directories = [*roots, *([Path(configured).expanduser()] if configured else [])]
    with read_state(state_options(settings.state)) as state:
        listing = list_backups(state, [d for d in directories if d.is_dir()])
    if args.json:
        sys.stdout.buffer.write(json_bytes([backup_entry(entry) for entry in listing]))
    else:
        present_backups(listing)
    return ExitCode.OK
