"""The full-transcript structural check of bytes about to be published (or just published).

The live-replacement transaction runs it on the immutable candidate before anything is written
and again on the bytes it reads back from the live path. It is the shared validator: uuids,
parents, pointers, compact pairs and tool pairing on the active chain, as `validate` reports
them, reduced to the codes of error findings. Pure: bytes in, codes out.
"""

from __future__ import annotations

from collections import Counter

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.topology.select import TopologyOptions, resolve_topology
from pipeline.core.validate.checks import validate
from pipeline.formats.detect import detect_format
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import Severity, SourceFormat

__all__ = ["NOT_CLAUDE_CODE", "error_codes", "new_error_codes", "structural_failures"]

NOT_CLAUDE_CODE = "not-claude-code"


def error_codes(data: bytes, options: TopologyOptions, limits: LineLimits) -> Counter[str]:
    """How often each error-level finding code occurs in a transcript (topology refusals included)."""
    fmt = detect_format(data)
    if fmt not in (SourceFormat.CLAUDE_CODE, SourceFormat.EMPTY):
        return Counter({NOT_CLAUDE_CODE: 1})
    index = build_index(data, fmt, limits)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, options)
    codes: Counter[str] = Counter()
    if topology.refused:
        codes[f"topology-{topology.refusal or 'empty'}"] += 1
    validation = validate(index, graph, topology.chain, data)
    codes.update(f.code.value for f in validation.findings if f.severity is Severity.ERROR)
    return codes


def structural_failures(data: bytes, options: TopologyOptions, limits: LineLimits) -> tuple[str, ...]:
    """The sorted distinct error codes of a transcript; empty when it is structurally sound."""
    return tuple(sorted(error_codes(data, options, limits)))


def new_error_codes(
    before: Counter[str], data: bytes, options: TopologyOptions, limits: LineLimits
) -> tuple[str, ...]:
    """Error codes `data` has more often than `before` did: what a byte-level repair introduced."""
    return tuple(sorted((error_codes(data, options, limits) - before).keys()))
