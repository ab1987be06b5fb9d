"""Publishing: the only place that writes files.

`files` holds the atomic writes every job uses (candidates, reports). Live replacement of a
session file (`compress --in-place`, `restore`, `backups`, `repair-read-pages`) is its own
package, `publish.live`, imported only by the commands that change session files, so a sweep
that only writes reports loads neither SQLite nor the transaction.
"""

from __future__ import annotations

from pipeline.publish.files import fsync_directory, write_bytes_atomic, write_report, write_report_now

__all__ = ["fsync_directory", "write_bytes_atomic", "write_report", "write_report_now"]
