"""Model-summary options from the frozen settings: the one place that reads their config sections.

Every value comes from `config/default.toml` (sections [model_summary], [limits], [anthropic],
[openai], [claude_code], [prices], [model_windows] and [summary]) after the usual overrides, or
from the two window flags; nothing here has a default of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.settings import AnthropicSettings, ClaudeCodeSettings, OpenAISettings, Settings
from pipeline.summarize.model.calls import RetryPolicy
from pipeline.summarize.model.engine import AppendixOptions, ModelSummaryOptions, RequestBudget
from pipeline.summarize.model.limiter import RateLimits
from pipeline.summarize.model.pack import PackOptions
from pipeline.summarize.model.prices import BilledPrices, ModelPrice, PriceTable
from pipeline.summarize.model.providers import ProviderName, ProviderSettings

__all__ = [
    "CONFIGURED_WINDOW",
    "PROVIDER_SECTIONS",
    "ModelWindow",
    "model_summary_options",
    "price_table",
    "provider_settings",
    "rate_limits",
]

PROVIDER_SECTIONS = {
    ProviderName.ANTHROPIC: "anthropic",
    ProviderName.OPENAI: "openai",
    ProviderName.CLAUDE_CODE: "claude_code",
}
"""The config section of each provider."""


def _provider(
    settings: Settings, name: ProviderName
) -> AnthropicSettings | OpenAISettings | ClaudeCodeSettings:
    section: AnthropicSettings | OpenAISettings | ClaudeCodeSettings = getattr(
        settings, PROVIDER_SECTIONS[name]
    )
    return section


def provider_settings(
    settings: Settings, name: ProviderName, model: str | None = None, base_url: str | None = None
) -> ProviderSettings:
    """A provider's knobs; `--model` and `--base-url` replace the configured ones when given."""
    section = _provider(settings, name)
    return ProviderSettings(
        name=name,
        model=model or section.model,
        base_url=base_url or section.base_url,
        api_key_env=section.api_key_env,
        anthropic_version=section.api_version if isinstance(section, AnthropicSettings) else "",
        stream=section.stream if not isinstance(section, ClaudeCodeSettings) else False,
        executable=section.executable if isinstance(section, ClaudeCodeSettings) else "",
        home=section.home if isinstance(section, ClaudeCodeSettings) else "",
    )


@dataclass(frozen=True, slots=True)
class ModelWindow:
    """`--model-context-window` and `--model-max-output` as given (None: the configured default)."""

    context_window: int | None
    max_output: int | None


CONFIGURED_WINDOW: Final = ModelWindow(None, None)  # no flag given: the configured window and bound


def model_summary_options(
    settings: Settings, name: ProviderName, model: str = "", given: ModelWindow = CONFIGURED_WINDOW
) -> ModelSummaryOptions:
    """Budget, pack, retry and appendix bounds for summaries written by `model` of provider `name`.

    The window and output bound are the flags', else `[model_windows]`'s for the model, else the
    provider section's. The context window used is at most the tokens a limiter window allows: a
    request weighing more could never be granted, so it is never planned.
    """
    shared, summary = settings.model_summary, settings.summary
    provider = _provider(settings, name)
    known = settings.model_windows.get(model, (provider.context_window_tokens, provider.max_output_tokens))
    window = min(given.context_window or known[0], settings.limits.tokens_per_minute)
    return ModelSummaryOptions(
        budget=RequestBudget(
            window, given.max_output or known[1], shared.provider_reserve_tokens, shared.safety_margin
        ),
        pack=PackOptions(
            shared.pack_char_budget, shared.pack_token_budget, shared.max_optional_evidence_chars
        ),
        retry=RetryPolicy(
            shared.max_attempts,
            shared.backoff_initial_seconds,
            shared.backoff_max_seconds,
            shared.call_timeout_seconds,
        ),
        appendix=AppendixOptions(
            summary.max_file_operations,
            summary.max_validation_records,
            summary.max_active_work_records,
            summary.max_quote_chars,
        ),
        planned_output_tokens=shared.planned_output_tokens,
        prices=BilledPrices(
            price_table(settings), shared.cache_read_price_share, shared.cache_write_price_share
        ),
    )


def rate_limits(settings: Settings) -> RateLimits:
    """The run's one limiter's bounds."""
    limits = settings.limits
    return RateLimits(
        limits.requests_per_minute, limits.tokens_per_minute, limits.max_in_flight, limits.window_seconds
    )


def price_table(settings: Settings) -> PriceTable:
    """The configured prices, per model."""
    return PriceTable(
        tuple(ModelPrice(model, float(pair[0]), float(pair[1])) for model, pair in settings.prices.items())
    )
