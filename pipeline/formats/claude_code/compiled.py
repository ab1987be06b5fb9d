"""Whether the compiled line scanner was built, asked without loading it (the CLI's process asks).

`pip install` compiles `_scan.c` where a C compiler works; elsewhere the package installs
without it and the pure-Python reference indexes every line. A run says so in one line (`NOTICE`).
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Final

__all__ = ["CORE_MODULE", "NOTICE", "SCANNER_MODULE", "scanner_built"]

CORE_MODULE: Final = "pipeline.formats.claude_code._core"
SCANNER_MODULE: Final = "pipeline.formats.claude_code._scan"
NOTICE: Final = (
    "the compiled line scanner is not built (no C compiler when the package was installed): "
    "indexing with the pure-Python reference, several times slower"
)


def scanner_built() -> bool:
    """Whether a compiled index (the Rust core, or the C scanner) is installed beside this module."""
    return any(find_spec(name) is not None for name in (CORE_MODULE, SCANNER_MODULE))
