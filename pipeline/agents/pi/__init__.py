"""pi and OpenClaw sessions through the seam: the reader (`formats/pi`), its evidence, its report
part and the real pi as judge (`proof/pi`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from pipeline.agents.pi.pi_judge import PiJudge
from pipeline.agents.pi.pi_session import PiContextSession
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.pi.session_analysis import analyze_session
from pipeline.formats.pi.signature import is_openclaw_archive
from pipeline.vocabulary import SourceFormat

__all__ = ["PI", "PiFormat"]


@dataclass(frozen=True, slots=True)
class PiFormat:
    """pi's sessions: an estimate of a sent message's JSON bytes / 4 (pi estimates characters / 4)."""

    format: SourceFormat = SourceFormat.PI
    estimator: str = "pi-approx"  # pi's own estimate: characters / 4, here over the message as sent
    tokenizer: str | None = None  # pi runs every provider's models: no one tokenizer is theirs
    compressed_sessions: bool = False  # pi and OpenClaw keep sessions as plain JSONL
    judge: PiJudge = field(default_factory=PiJudge)

    def read(self, data: bytes, path: PurePath | None, limits: LineLimits) -> PiContextSession:
        archived = path is not None and is_openclaw_archive(path.name)
        return PiContextSession(analyze_session(data, limits), archived=archived)


PI = PiFormat()
