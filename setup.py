"""Build the compiled line index (the Rust core, pipeline/formats/claude_code/rust) during `pip install`.

It is optional: where no Rust toolchain works (or setuptools-rust is missing) the package installs
without it, says so in one line, and indexes with the pure-Python reference
(`pipeline.formats.claude_code.compiled.NOTICE` at run time). Cargo builds `--locked` from the
committed Cargo.lock. Everything else about the package is declared in pyproject.toml.
"""

from __future__ import annotations

import sys

from setuptools import setup

try:
    from setuptools_rust import Binding, RustExtension
    from setuptools_rust.build import build_rust
    from setuptools_rust.rustc_info import get_rust_version
except ImportError:  # a build requirement (pyproject.toml); a bare `python setup.py` may lack it
    build_rust = None

NOTICE = "the compiled line index was not built ({}); the pure-Python reference will index instead"


def _notice(reason: str) -> None:
    print("session-compaction: " + NOTICE.format(reason), file=sys.stderr)


def _rust_build() -> tuple[dict[str, list[object]], dict[str, type]]:
    """The Rust core's extension (as setup() arguments) and its one-line-notice build step."""
    if build_rust is None:
        _notice("no setuptools-rust")
        return {}, {}

    class OptionalBuildRust(build_rust):  # type: ignore[misc,valid-type]
        """`build_rust` whose failure (no cargo, a failed compile) is one line, not an error."""

        def run(self) -> None:
            if get_rust_version(None) is None:
                _notice("no Rust toolchain")
                return
            super().run()

        def run_for_extension(self, ext: RustExtension) -> None:
            try:
                super().run_for_extension(ext)
            except Exception as exc:  # any build failure leaves the pure-Python path
                _notice(type(exc).__name__)

    core = RustExtension(
        "pipeline.formats.claude_code._core",
        path="pipeline/formats/claude_code/rust/Cargo.toml",
        binding=Binding.PyO3,
        cargo_manifest_args=["--locked"],  # the committed Cargo.lock, never a newer crate
        optional=True,
        debug=False,  # optimized in an editable install too (setuptools-rust builds those unoptimized)
    )
    return {"rust_extensions": [core]}, {"build_rust": OptionalBuildRust}


RUST_EXTENSIONS, RUST_COMMANDS = _rust_build()

setup(**RUST_EXTENSIONS, cmdclass=RUST_COMMANDS)
