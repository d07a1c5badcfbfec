"""Units every module shares: the binary byte units that memory arithmetic uses, and how a figure
reads in a sentence.

A datasheet's memory capacity is binary (a "16 GB" card holds 16 GiB), while bandwidths and FLOP
rates are decimal; memory-fit arithmetic works in bytes and shows GiB or MiB.
"""

from __future__ import annotations

import math
import numbers

#: Bytes in a mebibyte and a gibibyte.
MIB = 2**20
GIB = 2**30


def is_nan(value) -> bool:
    """Whether ``value`` is a floating-point NaN (a figure a table left empty); False for None,
    text and every other number."""
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value)


def missing(value) -> bool:
    """Whether ``value`` holds no figure: None, a NaN, or pandas' NA (checked by identity, so this
    module needs no pandas)."""
    return value is None or is_nan(value) or type(value).__name__ == "NAType"


def figure(value: float) -> str:
    """A number as a sentence shows it: three significant figures, thousands separated, never an
    exponent (93,100; 1.99; 0.18; 0.0000735)."""
    if not value or is_nan(value):
        return "0" if value == 0 else str(value)
    digits = 2 - math.floor(math.log10(abs(value)))
    text = f"{round(value, digits):,.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
