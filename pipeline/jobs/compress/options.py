"""What a compression run needs, as typed values a worker process receives, and where it writes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from pipeline.agents.registry import CHAIN_FORMATS
from pipeline.core.plan import CutOptions
from pipeline.core.session_repair import SessionRepairOptions
from pipeline.core.topology.select import TopologyOptions
from pipeline.jobs.compress.writers import DeterministicWriter, SummaryWriter
from pipeline.jobs.front import topology_options
from pipeline.settings import CompressSettings, SummarySettings, SweepSettings, VerifySettings
from pipeline.summarize import SummaryOptions
from pipeline.vocabulary import SourceFormat

__all__ = ["ENGINE_VERSION", "CompressOptions", "candidate_path"]

ENGINE_VERSION = "v1"  # the compaction engine's version, recorded in every compact pair we write


@dataclass(frozen=True, slots=True)
class CompressOptions:
    """The settings sections a compression reads, and what the command line decided per run."""

    sweep: SweepSettings
    compress: CompressSettings
    summary: SummarySettings
    verify: VerifySettings
    resume_leaf: str | None
    out_dir: str
    root_label: str
    anchors: tuple[str, ...]  # texts that must survive (restated verbatim in the summary)
    drop_history: bool  # write the archival form where a format has one (`[compress] history`)
    # The client the resume gate runs for each format (absent: not found, or the gate is off).
    judges: dict[SourceFormat, str] = field(default_factory=dict)
    writer: SummaryWriter | None = None  # a model's; None: the embedded summarizer
    damage_repair: SessionRepairOptions | None = None  # `--repair`: a damaged chain repaired first

    def summary_writer(self) -> SummaryWriter:
        """Who writes this run's summaries."""
        return self.writer or DeterministicWriter(self.summary_options())

    def topology(self) -> TopologyOptions:
        """The leaf-choosing options; a chain only a proof can clear is selected when the gate has a
        judge for the chain formats (only they have a topology to choose)."""
        provable = not CHAIN_FORMATS.isdisjoint(self.judges)
        return replace(topology_options(self.sweep, self.resume_leaf), provable=provable)

    def cut(self) -> CutOptions:
        compress = self.compress
        return CutOptions(
            compress.target_ratio,
            compress.target_estimated_tokens or None,
            compress.context_window,
            compress.max_window_share,
            compress.min_recent_records,
        )

    def summary_options(self) -> SummaryOptions:
        return SummaryOptions(
            char_budget=self.compress.summary_char_budget,
            preserve_prior_verbatim=self.compress.preserve_prior_summaries_verbatim,
            **asdict(self.summary),
        )


def candidate_path(out_dir: Path, root_label: str, label: str) -> Path:
    """Where a session's candidate goes: the input layout mirrored under the output directory."""
    return out_dir / root_label / label
