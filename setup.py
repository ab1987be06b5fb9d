"""Build the compiled line index during `pip install`: the Rust core (pipeline/formats/claude_code/rust,
through setuptools-rust) and the C line scanner (pipeline/formats/claude_code/_scan.c) it replaces.

Both are optional: where no Rust toolchain (or no C compiler) works the package installs without
it, says so in one line, and indexes with the next one or the pure-Python reference
(`pipeline.formats.claude_code.scan.NOTICE` at run time). Cargo builds `--locked` from the
committed Cargo.lock. Everything else about the package is declared in pyproject.toml.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    from setuptools_rust import Binding, RustExtension
    from setuptools_rust.build import build_rust
    from setuptools_rust.rustc_info import get_rust_version
except ImportError:  # a build requirement (pyproject.toml); a bare `python setup.py` may lack it
    build_rust = None

NOTICE = "the compiled line scanner was not built ({}); the pure-Python reference will index instead"
RUST_NOTICE = (
    "the compiled Rust core was not built ({}); the C scanner or the pure-Python reference will index"
)


class OptionalBuildExt(build_ext):
    """`build_ext` whose failure (no compiler, no Python headers) is a notice, not an error."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any build failure leaves the pure-Python path
            self._notice(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # as above, per extension
            self._notice(exc)

    def _notice(self, exc: Exception) -> None:
        if not getattr(self, "_noticed", False):  # one line, however many steps the failure stops
            print("session-compaction: " + NOTICE.format(type(exc).__name__), file=sys.stderr)
            self._noticed = True


def _rust_build() -> tuple[dict[str, list[object]], dict[str, type]]:
    """The Rust core's extension (as setup() arguments) and its one-line-notice build step."""
    if build_rust is None:
        print("session-compaction: " + RUST_NOTICE.format("no setuptools-rust"), file=sys.stderr)
        return {}, {}

    class OptionalBuildRust(build_rust):  # type: ignore[misc,valid-type]
        """`build_rust` whose failure (no cargo, a failed compile) is one line, not an error."""

        def run(self) -> None:
            if get_rust_version(None) is None:
                print("session-compaction: " + RUST_NOTICE.format("no Rust toolchain"), file=sys.stderr)
                return
            super().run()

        def run_for_extension(self, ext: RustExtension) -> None:
            try:
                super().run_for_extension(ext)
            except Exception as exc:  # any build failure leaves the C or pure-Python path
                print("session-compaction: " + RUST_NOTICE.format(type(exc).__name__), file=sys.stderr)

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

setup(
    **RUST_EXTENSIONS,
    ext_modules=[
        Extension(
            "pipeline.formats.claude_code._scan",
            ["pipeline/formats/claude_code/_scan.c"],
            extra_compile_args=["-O2"],
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt, **RUST_COMMANDS},
)
