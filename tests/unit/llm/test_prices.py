"""What a call costs (issue 26): the bundled, dated price table, the user's overrides, and an
unknown price said so, never guessed."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from lemmata.errors import UserError
from lemmata.llm.calllog import CallLog, CallRecord
from lemmata.llm.prices import bundled_prices, load_prices
from lemmata.llm.registry import backend_spec
from lemmata.settings import Settings
from unit.llm.test_calllog import make_record


def test_the_bundled_table_is_dated_and_prices_the_default_models_of_the_anthropic_backends() -> None:
    table = bundled_prices()
    assert table.as_of == date(2026, 11, 26)
    settings = Settings.from_mapping({})
    for name in ("vendora", "router"):
        for model in backend_spec(name).default_models(settings):
            assert model in table.models, (name, model)
            assert table.models[model].source.startswith("https://")


def test_anthropic_usage_counts_cache_reads_and_writes_apart_from_the_input() -> None:
    # claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write, per million tokens
    cost = load_prices(Path("/nonexistent")).cost("vendora", "claude-sonnet-4-5", 1000, 500, 4000, 2000)
    assert cost == pytest.approx((1000 * 3 + 500 * 15 + 4000 * 0.30 + 2000 * 3.75) / 1e6)


def test_openai_compatible_usage_counts_the_cached_tokens_inside_the_prompt_tokens() -> None:
    cost = load_prices(Path("/nonexistent")).cost("router", "anthropic/claude-haiku-4.5", 5000, 100, 4000)
    assert cost == pytest.approx((1000 * 1.0 + 100 * 5.0 + 4000 * 0.10) / 1e6)


@pytest.mark.parametrize(
    ("backend", "model", "tokens", "expected"),
    [
        ("embedded", "qwen2.5-coder", (900, 100), 0.0),
        ("replay", "claude-sonnet-4-5", (900, 100), 0.0),
        ("vendorx", "deepseek/deepseek-v3.1", (900, 100), None),  # no checked price: unknown
        ("local", "local-model", (900, 100), None),
        ("vendora", "claude-sonnet-4-5", (None, None), None),  # the provider reported no usage
    ],
)
def test_free_backends_cost_nothing_and_an_unknown_price_is_unknown(
    backend: str, model: str, tokens: tuple[int | None, int | None], expected: float | None
) -> None:
    assert load_prices(Path("/nonexistent")).cost(backend, model, *tokens) == expected


def test_the_users_table_adds_models_and_overrides_bundled_prices(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text(
        "models:\n  local-model: {input: 0.5, output: 1.5}\n  claude-haiku-4-5: {input: 2, output: 10}\n"
    )
    table = load_prices(tmp_path)
    assert table.cost("local", "local-model", 2_000_000, 1_000_000) == pytest.approx(2.5)
    assert table.cost("vendora", "claude-haiku-4-5", 1_000_000, 0) == pytest.approx(2.0)
    assert table.cost("local", "local-model", 1000, 10, cache_read=500) is None  # no cache price given


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("models:\n  m: {input: -1, output: 1}\n", "models.m.input"),
        ("models:\n  m: {input: 1}\n", "models.m.output"),
        ("models:\n  m: {input: 1, output: 1, per: token}\n", "models.m.per"),
        ("models: [1, 2]\n", "models"),
        ("models: {m: {input: 1, output: 1}\n", "not readable as YAML"),
    ],
)
def test_a_broken_users_table_is_refused_naming_the_file_and_the_field(tmp_path: Path, text: str, named: str) -> None:
    (tmp_path / "prices.yaml").write_text(text)
    with pytest.raises(UserError) as refused:
        load_prices(tmp_path)
    assert str(refused.value).startswith(f"{tmp_path / 'prices.yaml'}: ") and named in str(refused.value)


def record(**fields: object) -> CallRecord:
    """The call log tests' record, as a call to claude-haiku-4-5 of 1,000 tokens in and 200 out."""
    base = make_record(0, "prove_lemma", 1)
    haiku = {"backend": "vendora", "model": "claude-haiku-4-5", "tokens_in": 1000, "tokens_out": 200}
    return replace(base, **{**haiku, **fields})


def test_each_logged_call_carries_its_cost(tmp_path: Path) -> None:
    log = CallLog(tmp_path / "llm_calls.jsonl", prices=load_prices(tmp_path))
    log.append(record())
    log.append(record(model="some-unpriced-model"))
    log.append(record(response=None, tokens_in=None, tokens_out=None, error="HTTP 529: overloaded"))
    costs = [json.loads(line)["cost_usd"] for line in (tmp_path / "llm_calls.jsonl").read_text().splitlines()]
    assert costs == [pytest.approx((1000 * 1.0 + 200 * 5.0) / 1e6), None, None]
