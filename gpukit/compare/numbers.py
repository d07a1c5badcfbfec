"""Numbers as a comparison reads and writes them: a number or nothing, a ratio or nothing, a
factor ("1.29×") and an amount of dollars."""

from __future__ import annotations

import pandas as pd

from ..units import figure


def num(v) -> float | None:
    """``v`` as a float, or None where it is missing (None, NaN, pandas' NA) or text."""
    if v is None or isinstance(v, str) or v is pd.NA:
        return None
    f = float(v)
    return None if f != f else f


def ratio(x, y) -> float | None:
    x, y = num(x), num(y)
    if x is None or y is None or y == 0:
        return None
    return x / y


def times(r: float) -> str:
    return f"{r:.2f}×"


def money(usd: float) -> str:
    """Dollars to three significant figures, without an exponent: 0.263, 298, 4,150, 25,250."""
    return f"{usd:,.0f}" if abs(usd) >= 100 else figure(usd)
