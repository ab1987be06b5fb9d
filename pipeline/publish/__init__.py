"""Publishing: the only place that writes files.

`files` holds the atomic writes every job uses (candidates, reports); the in-place machinery
(transaction, backups, restore, state database, open-file detection, the `Read.pages` repair)
lives beside it and is re-exported here as the surface the command line calls.
"""

from __future__ import annotations

from pipeline.publish.files import fsync_directory, write_bytes_atomic, write_json_atomic, write_json_report

__all__ = ["fsync_directory", "write_bytes_atomic", "write_json_atomic", "write_json_report"]
