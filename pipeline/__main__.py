"""`python -m pipeline` runs the `compaction` command; `run` is the console script's entry.

The command line is imported when a run starts, never when this module is: each worker process
re-runs the parent's main script (anyio loads it as `__mp_main__`, as multiprocessing does), and
importing the whole CLI there cost every worker about 0.2 s of start-up it never used.
"""

import sys

__all__ = ["run"]


def run() -> int:
    """The `compaction` command (`pipeline.cli.main.main`), imported now."""
    from pipeline.cli.main import main  # noqa: PLC0415 - a worker re-running this file imports none of it

    return main()


# Worker processes re-run the main script; only a real run may start the command.
if __name__ == "__main__":
    sys.exit(run())
