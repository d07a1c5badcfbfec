"""Units every module shares: the binary byte units that memory arithmetic uses, and how a figure
reads in a sentence.

A datasheet's memory capacity is binary (a "16 GB" card holds 16 GiB), while bandwidths and FLOP
rates are decimal; memory-fit arithmetic works in bytes and shows GiB or MiB.
"""

from __future__ import annotations

import math

#: Bytes in a mebibyte and a gibibyte.
MIB = 2**20
GIB = 2**30


def figure(value: float) -> str:
    """A number as a sentence shows it: three significant figures, thousands separated, never an
    exponent (93,100; 1.99; 0.18; 0.0000735)."""
    if not value or value != value:
        return "0" if value == 0 else str(value)
    digits = 2 - math.floor(math.log10(abs(value)))
    text = f"{round(value, digits):,.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
