"""Whether the compiled line index was built, asked without loading it (the CLI's process asks).

`pip install` builds the Rust core (`rust/`, through setuptools-rust) where a Rust toolchain
works; elsewhere the package installs without it and the pure-Python reference indexes every
line. A run says so in one line (`NOTICE`).
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Final

__all__ = ["CORE_MODULE", "NOTICE", "scanner_built"]

CORE_MODULE: Final = "pipeline.formats.claude_code._core"
NOTICE: Final = (
    "the compiled line index is not built (no Rust toolchain when the package was installed): "
    "indexing with the pure-Python reference, several times slower"
)


def scanner_built() -> bool:
    """Whether the compiled index (the Rust core) is installed beside this module."""
    return find_spec(CORE_MODULE) is not None
