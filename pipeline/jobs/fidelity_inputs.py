"""Fidelity of Claude Code candidates: the summarized span and the resumed context, read from files.

The probes are format-neutral (`pipeline.fidelity`); this module gives them Claude Code's pieces:
the evidence of the original's summarized span and of the chain after it, and the evidence of
the candidate's resumed context (what Claude Code resumes: the chain after its last compact
boundary, the summary first). `compress` knows its span from its plan; `compaction probe`
rebuilds it from the two files alone: from our boundary's stamp (the source's digest, the leaf
and policy, the summarized lines' digest, the first kept record; read back through the chain
format, `ChainFormat.compaction_stamp`), or, for a compaction that is not ours (Claude Code's own
`/compact`), as the original's chain up to the first record the resumed context holds.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from pipeline.agents.protocol import SourceStamp, SpanStamp
from pipeline.core.compose import ComposedTranscript
from pipeline.core.index import LineIndex, build_index
from pipeline.core.partition import line_digest
from pipeline.core.topology.select import AUTO
from pipeline.fidelity import FidelityScore, extract_probes, resumed_context, score_probes
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.front import Analysis, open_session, topology_options
from pipeline.settings import SweepSettings
from pipeline.summarize import EvidenceKind
from pipeline.vocabulary import LeafPolicy

__all__ = [
    "Measured",
    "ProbeFailure",
    "SpanSource",
    "candidate_fidelity",
    "masked_middle",
    "measure",
    "probe_files",
]


class SpanSource(StrEnum):
    """How the summarized span was known."""

    PLAN = "plan"  # compress: the plan that cut it
    STAMP = "stamp"  # our boundary's metadata, its digest checked against the original
    UUID_DIFFERENCE = "uuid-difference"  # another tool's compaction: the chain up to the kept records
    MASK_STAMP = "mask-stamp"  # a masked candidate's pointer: the masked middle of the whole chain


class ProbeFailure(StrEnum):
    """Why two files cannot be probed (a usage error: the pair is not a source and its compaction)."""

    ORIGINAL_UNREADABLE = "the original is not a Claude Code transcript that can be read"
    COMPACTED_UNREADABLE = "the compacted file is not a Claude Code transcript that can be read"
    NO_COMPACTION = "the compacted file's active chain holds no compact boundary"
    OTHER_SOURCE = "the compacted file was not made from this original (its source digest differs)"
    SPAN_MISMATCH = "the original's summarized lines do not match the digest the compaction recorded"
    UNRELATED = "the compacted file does not continue the original's active chain"
    NOTHING_SUMMARIZED = "no record of the original's active chain was summarized"


@dataclass(frozen=True, slots=True)
class Measured:
    """A fidelity score, how the span was known, and how many lines it held."""

    score: FidelityScore
    span: SpanSource
    summarized_lines: int


def measure(
    original: Analysis, summary: Collection[int], data: bytes, index: LineIndex, resumed: Sequence[int]
) -> FidelityScore:
    """Probe the original's `summary` lines in the resumed lines of a compacted file's bytes.

    What follows the span, for the resolution of its errors and the work still open, is what the
    resumed context holds after its summary: the kept tail as written (or, after a compaction that
    keeps no tail, the records written since).
    """
    evidence = original.chain_format.evidence  # the candidate is the original's format
    span = evidence(original.source.data, original.index, summary)
    resumed_items = evidence(data, index, resumed)
    later = [item for item in resumed_items if item.kind is not EvidenceKind.PRIOR_SUMMARY]
    context = resumed_context(resumed_items, original.chain_format.cleared_marker)
    return score_probes(extract_probes(span, later), context)


def candidate_fidelity(
    analysis: Analysis,
    summary: Collection[int],
    raw: Sequence[int],
    composed: ComposedTranscript,
    limits: LineLimits,
) -> Measured:
    """The fidelity of a composed candidate: its summary record and kept records, as written."""
    index = build_index(composed.data, analysis.format, limits)
    kept = set(raw)
    resumed = [
        number
        for number, origin in enumerate(composed.source_lines, 1)
        if (origin is None and (record := index.record(number)) is not None and record.compact_summary)
        or origin in kept
    ]
    score = measure(analysis, summary, composed.data, index, resumed)
    return Measured(score, SpanSource.PLAN, len(summary))


def _resumed(compacted: Analysis) -> tuple[int, tuple[int, ...]] | None:
    """The compacted chain's last boundary line and the lines Claude Code resumes after it."""
    chain = compacted.topology.chain
    for position in range(len(chain) - 1, -1, -1):
        record = compacted.index.record(chain[position])
        if record is not None and record.compact_boundary:
            return chain[position], tuple(chain[position + 1 :])
    return None


def _stamped_span(
    original: Analysis, stamp: SpanStamp, kept: Sequence[str | None]
) -> tuple[int, ...] | ProbeFailure:
    """The summarized lines: the original's chain before the first kept record (the boundary's
    head, else the first resumed record of the original that the compaction did not carry), less
    the lines it carried as state."""
    if original.source.sha256 != stamp.source_sha256:
        return ProbeFailure.OTHER_SOURCE
    chain = original.topology.chain
    position = {original.index.entry(line).uuid: at for at, line in enumerate(chain)}
    heads = (stamp.head_uuid, *kept)
    head = next((uid for uid in heads if uid in position and uid not in stamp.carried_uuids), None)
    if head is None:
        return ProbeFailure.SPAN_MISMATCH
    projected = set(stamp.projected_lines)
    span = tuple(line for line in chain[: position[head]] if line not in projected)
    if len(span) != stamp.summary_lines or line_digest(span) != stamp.summary_digest:
        return ProbeFailure.SPAN_MISMATCH
    return span


def _difference_span(
    original: Analysis, compacted: Analysis, boundary: int, resumed: Sequence[int]
) -> tuple[int, ...] | ProbeFailure:
    chain = original.topology.chain
    uuids = [original.index.entry(line).uuid for line in chain]
    logical = compacted.index.entry(boundary).logical_parent
    if logical is None or logical not in uuids:
        return ProbeFailure.UNRELATED
    held = {compacted.index.entry(line).uuid for line in resumed}
    cut = next((position for position, uid in enumerate(uuids) if uid in held), len(chain))
    return tuple(chain[:cut])


def probe_files(original_path: Path, compacted_path: Path, sweep: SweepSettings) -> Measured | ProbeFailure:
    """Rebuild the summarized span from an original and its compaction, and probe it."""
    limits = LineLimits.of(sweep)
    compacted = open_session(compacted_path, "compacted", AUTO, command="probe", per_code=1, limits=limits)
    if not isinstance(compacted, Analysis):
        return ProbeFailure.COMPACTED_UNREADABLE
    masked = compacted.chain_format.mask_stamp(compacted.source.data)
    if masked is not None:
        return _probe_masked(original_path, compacted, masked, sweep)
    return _probe_summarized(original_path, compacted, sweep)


def _probe_summarized(
    original_path: Path, compacted: Analysis, sweep: SweepSettings
) -> Measured | ProbeFailure:
    """A compaction with a summary: ours (its boundary's stamp), or another tool's."""
    limits = LineLimits.of(sweep)
    found = _resumed(compacted)
    if found is None:
        return ProbeFailure.NO_COMPACTION
    boundary, resumed = found
    stamp = compacted.chain_format.compaction_stamp(compacted.index.raw_line(compacted.source.data, boundary))
    options = topology_options(sweep, None)
    if stamp is not None and stamp.leaf_policy in set(LeafPolicy):
        options = replace(options, policy=LeafPolicy(stamp.leaf_policy))
    original = open_session(original_path, "original", options, command="probe", per_code=1, limits=limits)
    if not isinstance(original, Analysis):
        return ProbeFailure.ORIGINAL_UNREADABLE
    if stamp is not None:
        kept = [compacted.index.entry(line).uuid for line in resumed]
        span, source = _stamped_span(original, stamp, kept), SpanSource.STAMP
    else:
        span, source = _difference_span(original, compacted, boundary, resumed), SpanSource.UUID_DIFFERENCE
    if isinstance(span, ProbeFailure):
        return span
    if not span:
        return ProbeFailure.NOTHING_SUMMARIZED
    span = tuple(sorted({*span, *_masked_in(original, compacted, resumed)}))
    score = measure(original, span, compacted.source.data, compacted.index, resumed)
    return Measured(score, source, len(span))


def _probe_masked(
    original_path: Path, compacted: Analysis, stamp: SourceStamp, sweep: SweepSettings
) -> Measured | ProbeFailure:
    """A masked candidate (`--strategy mask`, no compact pair of ours): its pointer's stamp names
    the source and leaf policy; the span is the masked middle, the resumed context its chain
    (after Claude Code's own last boundary, when it kept one)."""
    limits = LineLimits.of(sweep)
    options = topology_options(sweep, None)
    if stamp.leaf_policy in set(LeafPolicy):
        options = replace(options, policy=LeafPolicy(stamp.leaf_policy))
    original = open_session(original_path, "original", options, command="probe", per_code=1, limits=limits)
    if not isinstance(original, Analysis):
        return ProbeFailure.ORIGINAL_UNREADABLE
    if original.source.sha256 != stamp.source_sha256:
        return ProbeFailure.OTHER_SOURCE
    found = _resumed(compacted)
    resumed = found[1] if found is not None else compacted.topology.chain
    span = _masked_in(original, compacted, resumed)
    if not span:
        return ProbeFailure.NOTHING_SUMMARIZED
    score = measure(original, span, compacted.source.data, compacted.index, resumed)
    return Measured(score, SpanSource.MASK_STAMP, len(span))


def masked_middle(kept: Sequence[int], cleared: Collection[int]) -> tuple[int, ...]:
    """The masked middle of a kept part (lines in chain order): from the line before its first
    `cleared` one (the call that made that output) through its last; every record between was
    compacted with them, cleared or not. Nothing when no output was cleared."""
    wanted = set(cleared)
    positions = [position for position, line in enumerate(kept) if line in wanted]
    return tuple(kept[max(0, positions[0] - 1) : positions[-1] + 1]) if positions else ()


def _masked_in(original: Analysis, compacted: Analysis, resumed: Sequence[int]) -> tuple[int, ...]:
    """The original's lines of the masked middle: its kept records whose tool results the compacted
    file declares cleared (`hybrid`, `mask`), found by uuid."""
    data, own = compacted.source.data, compacted.chain_format
    cleared = own.cleared_tools(data)
    if not cleared:
        return ()
    marker = own.cleared_marker.encode()
    uuids = {
        compacted.index.entry(line).uuid
        for line in resumed
        if marker in (raw := compacted.index.raw_line(data, line))
        and any(tool.encode() in raw for tool in cleared)
    }
    chain = original.topology.chain
    return masked_middle(chain, [line for line in chain if original.index.entry(line).uuid in uuids])
