"""What a summary cost: billed tokens, prompt-cache reads and writes, dollars, equal to the server's
own ledger over loopback on both protocols, and the price arithmetic itself."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from pipeline.summarize.model.engine import ModelSummary, write_model_summary
from pipeline.summarize.model.outcomes import SummaryAccount, SummaryFailure
from pipeline.summarize.model.prices import BilledPrices, ModelPrice, PriceTable
from pipeline.testing.provider_server import Answer, Behavior, Bill, ProviderServer
from tests.summarize._support import PRICES, anthropic, client, openai, options, services, session

pytestmark = pytest.mark.anyio

PROVIDERS = {"anthropic": anthropic, "openai": openai}


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as running:
        yield running


async def _summary(
    server: ProviderServer, name: str, turns: int, words: int = 20, **bounds: int
) -> SummaryAccount:
    async with client() as http:
        provider = PROVIDERS[name](server.base_url, http, stream=name == "anthropic")
        result = await write_model_summary(session(turns, words=words), options(**bounds), services(provider))
    assert isinstance(result, ModelSummary | SummaryFailure)
    return result.account


def _billed_cost(bill: Bill, model: str) -> float:
    price = PRICES.table.price_of(model)
    assert price is not None
    read, write = PRICES.cache_read_share, PRICES.cache_write_share
    return bill.cost(price.input_usd_per_mtok, price.output_usd_per_mtok, read, write)


@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_the_repair_call_reads_the_pack_from_the_cache_and_the_cost_is_what_was_billed(
    server: ProviderServer, name: str
) -> None:
    server.script(Answer.of(Behavior.UNSUPPORTED_CLAIMS))  # the repair repeats the marked prefix
    account = await _summary(server, name, 8)
    bill = server.bill()
    assert (account.calls, account.repairs, bill.requests) == (2, 1, 2)
    assert (account.billed_input_tokens, account.billed_output_tokens) == (
        bill.input_tokens,
        bill.output_tokens,
    )
    assert account.cache_read_tokens == bill.cache_read_tokens > 0
    assert account.cache_write_tokens == bill.cache_write_tokens
    assert (bill.cache_write_tokens > 0) is (name == "anthropic")  # OpenAI bills no cache writes
    assert account.cost_usd == pytest.approx(_billed_cost(bill, account.model), rel=1e-12)
    # the cache made it cheaper than the same tokens all billed fresh
    price = PRICES.table.price_of(account.model)
    assert price is not None
    fresh = BilledPrices(PRICES.table, 1.0, 1.0).cost(
        account.model, bill.input_tokens, bill.output_tokens, 0, 0
    )
    assert account.cost_usd is not None and fresh is not None and account.cost_usd < fresh


async def test_reduction_chunks_share_the_cached_instructions(server: ProviderServer) -> None:
    account = await _summary(server, "anthropic", 120, 40, context_window=9_000)
    bill = server.bill()
    assert account.chunks >= 2 and bill.requests == account.calls
    assert account.cache_read_tokens == bill.cache_read_tokens > 0  # every chunk after the first
    assert account.cache_write_tokens == bill.cache_write_tokens > 0
    assert account.cost_usd == pytest.approx(_billed_cost(bill, account.model), rel=1e-12)


async def test_a_failed_summary_still_carries_what_its_calls_cost(server: ProviderServer) -> None:
    server.script(Answer.of(Behavior.UNSUPPORTED_CLAIMS), Answer.of(Behavior.UNSUPPORTED_CLAIMS))
    account = await _summary(server, "anthropic", 4)
    assert account.calls == 2 and account.cost_usd == pytest.approx(
        _billed_cost(server.bill(), account.model)
    )


def test_prices_bill_cache_reads_and_writes_at_their_shares_and_an_unpriced_model_costs_none() -> None:
    prices = BilledPrices(
        PriceTable((ModelPrice("m", 2.0, 10.0),)), cache_read_share=0.1, cache_write_share=1.25
    )
    # 1M input: 600k fresh, 300k read, 100k written; 100k output
    cost = prices.cost("m", 1_000_000, 100_000, 300_000, 100_000)
    assert cost == pytest.approx(0.6 * 2.0 + 0.3 * 0.2 + 0.1 * 2.5 + 0.1 * 10.0)
    assert prices.cost("other", 1_000, 1_000, 0, 0) is None


def test_a_session_summarized_twice_pays_for_both() -> None:
    first = SummaryAccount(
        "anthropic", "m", calls=2, billed_input_tokens=100, cache_read_tokens=40, cost_usd=0.5
    )
    second = SummaryAccount(
        "anthropic", "m", calls=1, billed_input_tokens=60, reduction_depth=1, cost_usd=0.25
    )
    both = second.after(first)
    assert (both.calls, both.billed_input_tokens, both.cache_read_tokens, both.cost_usd) == (3, 160, 40, 0.75)
    assert both.reduction_depth == 1  # what describes the summary kept is the later one's
    assert replace(second, cost_usd=None).after(first).cost_usd is None  # one unpriced: no total
