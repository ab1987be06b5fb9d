"""The model-summary modules: every exported name exists, once."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "pipeline.summarize.model.calls",
    "pipeline.summarize.model.configure",
    "pipeline.summarize.model.grounding",
    "pipeline.summarize.model.limiter",
    "pipeline.summarize.model.engine",
    "pipeline.summarize.model.outcomes",
    "pipeline.summarize.model.pack",
    "pipeline.summarize.model.cost",
    "pipeline.summarize.model.prompts",
    "pipeline.summarize.model.redaction",
    "pipeline.summarize.model.reduction",
    "pipeline.summarize.model.providers",
    "pipeline.summarize.model.providers.anthropic",
    "pipeline.summarize.model.providers.base",
    "pipeline.summarize.model.providers.claude_code",
    "pipeline.summarize.model.providers.http",
    "pipeline.summarize.model.providers.openai",
    "pipeline.testing.provider_server",
]


@pytest.mark.parametrize("name", MODULES)
def test_model_modules_export_each_name_once(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert all(hasattr(module, item) for item in exported)
    assert len(exported) == len(set(exported))
    assert module.__doc__
