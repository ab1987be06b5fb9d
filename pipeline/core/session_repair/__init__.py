"""`compaction repair`: the smallest line edits that make a damaged session's active chain valid."""

from __future__ import annotations

from pipeline.core.session_repair.defects import Unrepaired
from pipeline.core.session_repair.edits import RepairAction, RepairEdit
from pipeline.core.session_repair.planner import (
    SessionRepairOptions,
    SessionRepairPlan,
    plan_session_repair,
    repair_failures,
)

__all__ = [
    "RepairAction",
    "RepairEdit",
    "SessionRepairOptions",
    "SessionRepairPlan",
    "Unrepaired",
    "plan_session_repair",
    "repair_failures",
]
