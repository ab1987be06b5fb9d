"""The public surface of pipeline.summarize: every exported name exists and the list has no repeats."""

from __future__ import annotations

from pipeline import summarize
from pipeline.summarize.checkpoint import appendix, assembly, bullets, deterministic, document, fitting
from pipeline.summarize.evidence import items, shell, shell_lex, work_state


def test_every_exported_name_resolves_once() -> None:
    assert len(summarize.__all__) == len(set(summarize.__all__))
    assert all(hasattr(summarize, name) for name in summarize.__all__)


def test_submodules_export_what_they_define() -> None:
    for module in (
        appendix,
        assembly,
        bullets,
        deterministic,
        document,
        fitting,
        items,
        shell,
        shell_lex,
        work_state,
    ):
        assert all(hasattr(module, name) for name in module.__all__), module.__name__
        assert summarize.write_summary is deterministic.write_summary
