"""What a model call cost: its tokens times the model's prices (issue 26).

The prices are the bundled, dated table (`prices.yaml` beside this module), overridden model by
model by the user's `$LEMMATA_HOME/prices.yaml` (same format; `as_of` optional). A model in
neither has an unknown cost (None): said so wherever costs are shown, never guessed. The
embedded model and a replay cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lemmata.errors import UserError
from lemmata.home_layout import PRICES

#: Backends whose calls cost no money.
FREE_BACKENDS = frozenset({"embedded", "replay"})
#: Backends that count a call's input tokens without the ones read from or written to the cache
#: (Anthropic's usage); the OpenAI-compatible ones count the cached tokens inside `prompt_tokens`.
INPUT_EXCLUDES_CACHE = frozenset({"vendora"})
PER_TOKEN = 1e-6  # prices are per million tokens


class ModelPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)
    source: str = ""


class PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    as_of: date | None = None
    models: dict[str, ModelPrice] = Field(default_factory=dict)


@dataclass(frozen=True)
class PriceTable:
    as_of: date | None
    models: dict[str, ModelPrice]

    def cost(
        self,
        backend: str,
        model: str,
        tokens_in: int | None,
        tokens_out: int | None,
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> float | None:
        """USD, rounded to a millionth of a dollar; None when the model's price or the call's
        token counts are not known."""
        if backend in FREE_BACKENDS:
            return 0.0
        price = self.models.get(model)
        if price is None or tokens_in is None or tokens_out is None:
            return None
        read, written = cache_read or 0, cache_write or 0
        if (read and price.cache_read is None) or (written and price.cache_write is None):
            return None
        fresh = tokens_in if backend in INPUT_EXCLUDES_CACHE else max(0, tokens_in - read - written)
        total = (
            fresh * price.input
            + tokens_out * price.output
            + read * (price.cache_read or 0.0)
            + written * (price.cache_write or 0.0)
        )
        return round(total * PER_TOKEN, 6)


def usd(amount: float) -> str:
    """Dollars to the cent from one dollar up, to a hundredth of a cent below."""
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"


@lru_cache(maxsize=1)
def bundled_prices() -> PriceFile:
    """The package's own table, read once per process: every model job reads the prices (2.4 ms a
    parse, 18 times a run); only the user's file can change while a run goes on."""
    return _parse(yaml.safe_load((files("lemmata.llm") / "prices.yaml").read_text(encoding="utf-8")), "bundled")


def load_prices(home: Path) -> PriceTable:
    """The bundled table with the user's prices (`home`/prices.yaml) over it; UserError naming the
    file and the field when that file is not a price table."""
    bundled = bundled_prices()
    models = dict(bundled.models)
    path = Path(home) / PRICES
    if path.is_file():
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            raise UserError(f"{path}: not readable as YAML ({_one_line(error)}); fix it or remove it") from None
        models.update(_parse(raw, str(path)).models)
    return PriceTable(bundled.as_of, models)


def _parse(raw: Any, where: str) -> PriceFile:
    try:
        return PriceFile.model_validate(raw if raw is not None else {})
    except ValidationError as error:
        problem = error.errors()[0]
        field = ".".join(str(part) for part in problem["loc"]) or "the file"
        raise UserError(
            f"{where}: {field}: {problem['msg']} (a price table: `models: {{NAME: {{input: USD, output: USD, "
            f"cache_read: USD, cache_write: USD}}}}`, per million tokens); fix it or remove it"
        ) from None


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
