"""A forking driver of real `compaction compress --in-place` runs, for the crash test.

Each request forks a child that runs the command line's own `main` with the given arguments (and
environment variables, for knobs that have no flag), so a test can kill a real in-place run at
any moment without paying an interpreter's start-up per run:

    python -m tests.support.inplace_driver --serve
    run {"argv": ["compress", ROOT, "--in-place", ...], "env": {"COMPACTION_...": "..."}}
    -> pid N
    wait
    -> exit N CODE | killed N SIGNAL

The child is reaped only when asked, so until then its pid stays reserved (a zombie keeps it): a
caller that kills by pid can never hit another process that reused the number.
"""

from __future__ import annotations

import json
import os
import sys

__all__ = ["main", "serve"]


def _child(request: str) -> None:
    """Run the command line once in this (forked) process, then leave without the parent's cleanup."""
    code = 1
    try:
        asked = json.loads(request)
        os.environ.update(asked.get("env", {}))
        from pipeline.cli.main import main as cli

        code = cli(asked["argv"])
    finally:
        os._exit(code)


def serve() -> int:
    """Fork a run per `run REQUEST-JSON` line, print `pid N`; `wait` reaps it."""
    # Loaded once, before forking, so every child starts warm.
    from pipeline.cli import compress_in_place_command, damage_repair_command, main  # noqa: F401

    child = 0
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "wait":
            _, status = os.waitpid(child, 0)
            word, code = (
                ("killed", os.WTERMSIG(status))
                if os.WIFSIGNALED(status)
                else ("exit", os.WEXITSTATUS(status))
            )
            print(f"{word} {child} {code}", flush=True)
            continue
        child = os.fork()
        if child == 0:
            _child(rest)
        print(f"pid {child}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`--serve`: the forking loop above."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments != ["--serve"]:
        print("usage: python -m tests.support.inplace_driver --serve", file=sys.stderr)
        return 2
    return serve()


if __name__ == "__main__":
    raise SystemExit(main())
