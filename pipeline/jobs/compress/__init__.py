"""`compress`: plan, summarize, compose, check, prove and publish a compacted candidate per session."""

from __future__ import annotations

from pipeline.jobs.compress.job import compress_session
from pipeline.jobs.compress.options import ENGINE_VERSION, CompressOptions, candidate_path

__all__ = ["ENGINE_VERSION", "CompressOptions", "candidate_path", "compress_session"]
