"""`compaction schema [NAME]`: the JSON Schemas of the documents the tool writes, as shipped.

Without NAME, one line per schema (its name, its `$id` and what writes it); with NAME (or a
whole `$id`), that schema's file, byte for byte. Exit 0, or 2 for a name no schema has.
"""

from __future__ import annotations

import argparse
import sys

from pipeline.jobs.report_schemas import DOCUMENTS, UnknownSchema, document, shipped
from pipeline.vocabulary import ExitCode

__all__ = ["schema_command"]


def schema_command(args: argparse.Namespace) -> int:
    """Print the list of schemas, or the one named."""
    if args.name is None:
        name, ids = (max(len(doc.name) for doc in DOCUMENTS), max(len(doc.id) for doc in DOCUMENTS))
        for doc in DOCUMENTS:
            print(f"{doc.name:<{name}}  {doc.id:<{ids}}  {doc.description}")
        return ExitCode.OK
    try:
        found = document(args.name)
    except UnknownSchema as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    sys.stdout.buffer.write(shipped(found))
    sys.stdout.flush()
    return ExitCode.OK
