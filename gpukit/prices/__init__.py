"""Prices: buying a GPU and renting one, and what a TFLOP costs.

``book`` loads the dated, sourced prices (``data/prices.csv``, ``data/cloud_prices.csv``, a user's
own files and the refreshed cloud offers) and ``checks`` flags the rows that cannot be what they
say; ``refresh`` fetches today's cloud offers (``gpukit prices refresh``); ``cost`` turns prices
into dollars per TFLOP and per unit of work, to buy, own and rent.

The package re-exports ``book``'s names (``gpukit.prices.load_prices``), as the module
``gpukit.prices`` had them before it became this package.
"""

from __future__ import annotations

from .book import (
    CLOUD_KEYS,
    CLOUD_KINDS,
    CLOUD_PATH,
    CLOUD_SCHEMA,
    DEFAULT_MAX_AGE_DAYS,
    GAPS_PATH,
    GAPS_SCHEMA,
    PRICE_KINDS,
    PURCHASE_PATH,
    PURCHASE_SCHEMA,
    Prices,
    file_kind,
    latest,
    load_gaps,
    load_prices,
    read_price_file,
)

__all__ = [
    "CLOUD_KEYS",
    "CLOUD_KINDS",
    "CLOUD_PATH",
    "CLOUD_SCHEMA",
    "DEFAULT_MAX_AGE_DAYS",
    "GAPS_PATH",
    "GAPS_SCHEMA",
    "PRICE_KINDS",
    "PURCHASE_PATH",
    "PURCHASE_SCHEMA",
    "Prices",
    "file_kind",
    "latest",
    "load_gaps",
    "load_prices",
    "read_price_file",
]
