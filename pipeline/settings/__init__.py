"""Settings: `config/default.toml`, then a user file, then `COMPACTION_*` variables, then flags.

`loading` reads and merges the layers and converts them once into the frozen `Settings`;
`typed_sections` declares each section's knobs (type, never a default: the defaults file is the
only place defaults are written).
"""

from __future__ import annotations

from pipeline.settings import loading, typed_sections
from pipeline.settings.loading import *  # noqa: F403 - the package is its two modules' names
from pipeline.settings.typed_sections import *  # noqa: F403

__all__ = []
__all__ += loading.__all__
__all__ += typed_sections.__all__
