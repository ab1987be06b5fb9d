"""`scripts/fuzz`: the fuzz harness for as long as asked, over seed after seed.

Mutation rounds run `pipeline.testing.fuzzing` (the real command line, every invariant) with a new
seed each round; `--atheris` hands the bytes to a coverage-guided fuzzer that splices them into
a real session as one line and validates and compresses it in process. A case that breaks an
invariant is minimized to the lines that still break it and written under tests/fixtures/fuzz/.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

from pipeline.installed import source_checkout
from pipeline.testing.fuzz import minimize
from pipeline.testing.fuzzing import (
    FuzzCase,
    builder_sources,
    corpus_sources,
    fuzz_cases,
    run_fleet,
    summary,
    violations,
)

REPO = source_checkout() or Path.cwd()  # scripts/fuzz runs in the checkout; elsewhere, the folder it runs in
CORPUS = REPO.parent / "shared" / "corpus" / "files"
FOUND = REPO / "tests" / "fixtures" / "fuzz"


def _fails(case: FuzzCase, data: bytes) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        trial = FuzzCase(case.source, case.mutation, case.seed, data)
        return bool(violations(run_fleet([trial], Path(folder), workers=1)))


def _keep(case: FuzzCase) -> Path:
    """Minimize a failing case (builder sources only: corpus text is never copied here)."""
    small = minimize(case.data, lambda data: _fails(case, data))
    FOUND.mkdir(parents=True, exist_ok=True)
    path = FOUND / f"found-{case.mutation.value}-{case.seed}.jsonl.gz"
    path.write_bytes(gzip.compress(small))
    return path


def _rounds(args: argparse.Namespace) -> int:
    sources = {**builder_sources(), **(corpus_sources(CORPUS) if CORPUS.is_dir() else {})}
    deadline, seed, failures = time.monotonic() + args.seconds, args.seed, 0
    while time.monotonic() < deadline:
        with tempfile.TemporaryDirectory() as folder:
            run = run_fleet(fuzz_cases(sources, seed=seed, count=args.cases), Path(folder))
            broken = violations(run)
            print(json.dumps({"seed": seed, **summary(run), "violations": len(broken)}), flush=True)
            failures += len(broken)
            for line in broken:
                print("  " + line, flush=True)
            named = {line.split(": ", 1)[0] for line in broken}
            for case in (c for c in run.cases if c.name in named and not c.source.startswith("corpus")):
                print(f"  minimized to {_keep(case)}", flush=True)
        seed += 1
    return 1 if failures else 0


def _atheris(args: argparse.Namespace) -> int:  # pragma: no cover - needs the optional atheris
    import atheris  # noqa: PLC0415 - installed by scripts/fuzz --atheris only

    from pipeline.jobs.compress import compress_session  # noqa: PLC0415
    from pipeline.jobs.validate import validate_session  # noqa: PLC0415
    from pipeline.testing.settings import compress_options, validate_options  # noqa: PLC0415

    atheris.instrument_all()  # the pipeline is imported already: coverage needs every module
    base = builder_sources()["after-compaction"].split(b"\n")
    folder = Path(tempfile.mkdtemp())
    path = folder / "case.jsonl"

    def one(data: bytes) -> None:
        at = (data[0] if data else 0) % len(base)
        path.write_bytes(b"\n".join([*base[:at], data[1:], *base[at:]]))
        for outcome in (
            validate_session(path, "case", validate_options()),
            compress_session(path, "case", compress_options(folder / "out", min_tokens=0)),
        ):
            if outcome.status.value == "internal-error":
                raise RuntimeError(outcome.error)

    limits = [f"-max_total_time={int(args.seconds)}", f"-artifact_prefix={folder}/"]
    atheris.Setup([sys.argv[0], *limits, *args.rest], one)
    atheris.Fuzz()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600, help="how long to search (default 600)")
    parser.add_argument("--seed", type=int, default=1, help="first seed of the mutation rounds")
    parser.add_argument("--cases", type=int, default=500, help="cases per mutation round")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided instead of rounds")
    parser.add_argument("rest", nargs="*", help="arguments passed on to libFuzzer (with --atheris)")
    args = parser.parse_args(argv)
    return _atheris(args) if args.atheris else _rounds(args)


if __name__ == "__main__":
    sys.exit(main())
