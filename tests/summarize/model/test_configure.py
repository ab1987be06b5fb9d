"""Options from config/default.toml: every knob the engine needs is there, overrides reach it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import ConfigError
from pipeline.settings import load_settings
from pipeline.summarize.model.configure import (
    CONFIGURED_WINDOW,
    ModelWindow,
    model_summary_options,
    price_table,
    provider_settings,
    rate_limits,
)
from pipeline.summarize.model.providers import ProviderName


@pytest.mark.parametrize("name", list(ProviderName))
def test_the_defaults_build_every_providers_options(name: ProviderName) -> None:
    settings = load_settings(environ={})
    options = model_summary_options(settings, name)
    assert options.budget.context_window_tokens > options.budget.max_output_tokens > 0
    assert 0 < options.budget.safety_margin < 1 and options.retry.max_attempts >= 1
    assert provider_settings(settings, name, "my-model").model == "my-model"


def test_limits_prices_and_environment_overrides() -> None:
    settings = load_settings(
        environ={"COMPACTION_LIMITS_REQUESTS_PER_MINUTE": "7", "COMPACTION_OPENAI_STREAM": "true"}
    )
    limits = rate_limits(settings)
    assert (limits.requests_per_window, limits.window_seconds) == (7, 60.0)
    assert provider_settings(settings, ProviderName.OPENAI).stream is True
    prices = price_table(settings)
    assert prices.cost("claude-sonnet-4-5", 1_000_000, 0) == pytest.approx(3.0)
    assert prices.cost("no-such-model", 1, 1) is None


def test_the_window_used_never_outweighs_the_token_limit() -> None:
    settings = load_settings(environ={"COMPACTION_LIMITS_TOKENS_PER_MINUTE": "30000"})
    budget = model_summary_options(settings, ProviderName.ANTHROPIC).budget
    assert budget.context_window_tokens == 30_000 < settings.anthropic.context_window_tokens


def test_a_price_table_row_for_another_model_can_be_added(tmp_path: Path) -> None:
    config = tmp_path / "prices.toml"
    config.write_text('[prices]\n"my-local-model" = [0.0, 0.0]\nclaude-sonnet-4-5 = [2.0, 10.0]\n')
    prices = price_table(load_settings(config, environ={}))
    assert prices.cost("my-local-model", 10**6, 10**6) == 0.0
    assert prices.cost("claude-sonnet-4-5", 10**6, 0) == pytest.approx(2.0)
    config.write_text('[prices]\n"broken" = "free"\n')
    with pytest.raises(ConfigError, match="prices"):
        load_settings(config, environ={})


def test_a_models_window_comes_from_the_flags_else_its_row_else_the_provider_section(tmp_path: Path) -> None:
    config = tmp_path / "windows.toml"
    config.write_text("[model_windows]\nmy-model = [32000, 2000]\n[limits]\ntokens_per_minute = 1000000\n")
    settings = load_settings(config, environ={})

    def bounds(model: str, given: ModelWindow = CONFIGURED_WINDOW) -> tuple[int, int]:
        budget = model_summary_options(settings, ProviderName.OPENAI, model, given).budget
        return budget.context_window_tokens, budget.max_output_tokens

    assert bounds("my-model") == (32000, 2000)  # a row the user added
    assert bounds("gpt-5") == (400000, 16000)  # a row of the defaults
    assert bounds("unknown-model") == (128000, 16000)  # the [openai] section's
    assert bounds("my-model", ModelWindow(8000, None)) == (8000, 2000)
    assert bounds("unknown-model", ModelWindow(None, 500)) == (128000, 500)
    capped = load_settings(config, environ={"COMPACTION_LIMITS_TOKENS_PER_MINUTE": "10000"})
    assert model_summary_options(capped, ProviderName.OPENAI, "gpt-5").budget.context_window_tokens == 10000


def test_a_model_window_row_must_hold_two_positive_token_counts(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[model_windows]\nmy-model = [0, 2000]\n")
    with pytest.raises(ConfigError, match=r"model_windows.my-model must be two token counts"):
        load_settings(config, environ={})
    config.write_text('[model_windows]\nmy-model = ["big", 2000]\n')
    with pytest.raises(ConfigError, match=r"\[model_windows\]"):
        load_settings(config, environ={})
