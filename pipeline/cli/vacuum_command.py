"""`compaction vacuum`: rewrite session files as small as what their client loads from them, the
client sending the same context (Gemini CLI's chats today; other formats are reported skipped).

Three modes, as `repair`: without `--in-place` or `--out` it only reports what it would drop;
`--out DIR` writes each vacuumed file as a candidate under DIR; `--in-place` replaces each session
through the same pass as `compress --in-place` (verified backups, `restore`). The pass is
`rewrite_pass.py`'s.
"""

from __future__ import annotations

from pipeline.cli.in_place_pass import LiveRun
from pipeline.cli.rewrite_pass import rewrite_pass
from pipeline.formats.rewrites import RewriteKind

__all__ = ["vacuum_command"]


def vacuum_command(live: LiveRun) -> int:
    """`vacuum` in the mode its flags name; the exit code (see --help)."""
    return rewrite_pass(live, RewriteKind.VACUUM)
