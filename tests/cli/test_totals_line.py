"""The totals line: figures a person compares at a glance, from the one fold of session figures."""

from __future__ import annotations

import pytest

from pipeline.cli.totals_line import counts, totals_lines
from pipeline.report.run_totals import BackupFigure, SessionFigures, TokenChange, TotalsOf, fold_totals


@pytest.mark.parametrize(
    ("before", "after", "shown"),
    [
        (2_100_000, 410_000, "2.1M -> 0.41M"),  # the after in the before's unit
        (594_000, 110_000, "594k -> 110k"),  # never an exponent
        (999_600, 100, "1000k -> 0.1k"),
        (950, 300, "950 -> 300"),
    ],
)
def test_token_counts_are_shown_in_one_unit(before: int, after: int, shown: str) -> None:
    assert counts(before, after) == shown


def figures(fmt: str, root: str, status: str, *, written: bool) -> SessionFigures:
    change = TokenChange("seed", before=100_000, after=20_000, target=30_000, met=True)
    return SessionFigures(
        format=fmt,
        root=root,
        status=status,
        failed=status == "refused",
        bytes=1_000_000,
        ms=10.0,
        written=(1_000_000, 150_000) if written else None,
        tokens=change if written else None,
        backup=BackupFigure(1_000_000, 250_000, "zstd", reused=False) if written else None,
    )


def test_an_in_place_run_is_folded_per_agent_and_root_and_said_in_two_lines() -> None:
    totals = fold_totals(
        [
            figures("claude-code", "/a", "compressed", written=True),
            figures("claude-code", "/b", "refused", written=False),
            figures("pi-session", "/b", "unsupported-format", written=False),
        ],
        TotalsOf.IN_PLACE,
    )
    every = totals.all
    assert (every.sessions, every.failed, every.written, every.bytes) == (3, 1, 1, 3_000_000)
    assert every.resume_tokens == totals.by_root["/a"].resume_tokens  # only /a wrote anything
    assert totals.by_root["/b"].files.ratio is None and totals.by_root["/b"].resume_tokens == {}  # type: ignore[union-attr]
    assert totals.by_format["pi-session"].by_status == {"unsupported-format": 1}
    assert totals_lines(totals, "compacted in place") == (
        "1 of 3 sessions compacted in place: resume contexts 100k -> 20k seed tokens (0.20, target 0.30); "
        "files 1.0 MB -> 150.0 kB; backups 1.0 MB stored in 250.0 kB (zstd)",
        "by agent: claude-code 1 of 2 (100k -> 20k seed tokens, 1.0 MB -> 150.0 kB); pi-session 0 of 1",
    )
