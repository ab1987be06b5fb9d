"""Build the compiled line scanner (pipeline/formats/claude_code/_scan.c) during `pip install`.

It is optional: where no C compiler works the package installs without it, says so in one line,
and indexes with the pure-Python reference (`pipeline.formats.claude_code.scan.NOTICE` at run time).
Everything else about the package is declared in pyproject.toml.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NOTICE = "the compiled line scanner was not built ({}); the pure-Python reference will index instead"


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


setup(
    ext_modules=[
        Extension(
            "pipeline.formats.claude_code._scan",
            ["pipeline/formats/claude_code/_scan.c"],
            extra_compile_args=["-O2"],
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
