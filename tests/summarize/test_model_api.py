"""The model-summary modules: every exported name exists, once."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "pipeline.summarize.calls",
    "pipeline.summarize.configure",
    "pipeline.summarize.grounding",
    "pipeline.summarize.limiter",
    "pipeline.summarize.model",
    "pipeline.summarize.outcomes",
    "pipeline.summarize.pack",
    "pipeline.summarize.plan",
    "pipeline.summarize.prompts",
    "pipeline.summarize.redaction",
    "pipeline.summarize.reduction",
    "pipeline.summarize.providers",
    "pipeline.summarize.providers.anthropic",
    "pipeline.summarize.providers.base",
    "pipeline.summarize.providers.claude_code",
    "pipeline.summarize.providers.http",
    "pipeline.summarize.providers.openai",
    "pipeline.testing.provider_server",
]


@pytest.mark.parametrize("name", MODULES)
def test_model_modules_export_each_name_once(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert all(hasattr(module, item) for item in exported)
    assert len(exported) == len(set(exported))
    assert module.__doc__
