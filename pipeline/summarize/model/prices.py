"""What model tokens cost: the configured price table, and what billed tokens came to.

Pure and apart from the planner (`cost.py`), so the engine can price a summary's calls without
importing the planner that imports it. Prices are US dollars per million tokens (`[prices]`);
prompt-cache reads and writes are billed as shares of the input price (`[model_summary]`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BilledPrices", "ModelPrice", "PriceTable"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million input and output tokens of one model."""

    model: str
    input_usd_per_mtok: float
    output_usd_per_mtok: float


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The configured prices; a model not in it has no cost estimate."""

    prices: tuple[ModelPrice, ...]

    def price_of(self, model: str) -> ModelPrice | None:
        """The model's price, or None when it is not priced."""
        return next((price for price in self.prices if price.model == model), None)

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Estimated dollars, or None for an unpriced model."""
        price = self.price_of(model)
        if price is None:
            return None
        return (input_tokens * price.input_usd_per_mtok + output_tokens * price.output_usd_per_mtok) / 1e6


@dataclass(frozen=True, slots=True)
class BilledPrices:
    """What billed tokens cost: the price table, and cache reads and writes as input-price shares."""

    table: PriceTable
    cache_read_share: float
    cache_write_share: float

    def cost(
        self, model: str, input_tokens: int, output_tokens: int, read: int, written: int
    ) -> float | None:
        """Dollars for `input_tokens` (the `read` and `written` cache tokens among them) and the
        output, or None for an unpriced model."""
        price = self.table.price_of(model)
        if price is None:
            return None
        fresh = input_tokens - read - written
        inputs = fresh + read * self.cache_read_share + written * self.cache_write_share
        return (inputs * price.input_usd_per_mtok + output_tokens * price.output_usd_per_mtok) / 1e6
