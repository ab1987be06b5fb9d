"""Logs: one format for every line, ours and the libraries', so JSON logs stay machine-readable."""

from __future__ import annotations

import json
import logging

import pytest
import structlog

from pipeline.cli.console import configure_logging
from pipeline.vocabulary import LogFormat


def test_json_logs_carry_library_warnings_as_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(LogFormat.JSON, quiet=True)
    logging.getLogger("asyncio").warning("Unknown child process pid %d, will report returncode 255", 42)
    structlog.get_logger("pipeline").error("session_internal_error", session="a.jsonl")
    logging.getLogger("asyncio").info("dropped: quiet keeps warnings and errors only")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["level"], line["event"]) for line in lines] == [
        ("warning", "Unknown child process pid 42, will report returncode 255"),
        ("error", "session_internal_error"),
    ]
    assert all("timestamp" in line for line in lines)
