"""Fidelity: what a resumed agent still knows, measured by deterministic probes of the summarized span.

`extract_probes` reads the facts of a span from format-neutral evidence (human instructions,
files modified and read, commands with their outcome, errors and their resolution, identifiers,
the last state of the work); `resumed_context` reads what a candidate gives a resumed agent (its
summary texts and kept records); `score_probes` looks every probe up by its class's rule
(`match`) and gives each class's recall and the lost probes by anchor. Pure: values in, values out.
"""

from __future__ import annotations

from pipeline.fidelity.extract import extract_probes
from pipeline.fidelity.match import carried
from pipeline.fidelity.passages import KeptCall, ResumedContext, resumed_context, summary_passages
from pipeline.fidelity.probe_value import ANCHOR_HEX, Probe, ProbeClass, Resolution
from pipeline.fidelity.score import FIDELITY_DIGITS, ClassScore, FidelityScore, LostProbe, score_probes

__all__ = [
    "ANCHOR_HEX",
    "FIDELITY_DIGITS",
    "ClassScore",
    "FidelityScore",
    "KeptCall",
    "LostProbe",
    "Probe",
    "ProbeClass",
    "Resolution",
    "ResumedContext",
    "carried",
    "extract_probes",
    "resumed_context",
    "score_probes",
    "summary_passages",
]
