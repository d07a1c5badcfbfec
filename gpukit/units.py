"""Units every module shares: the binary byte units that memory arithmetic uses.

A datasheet's memory capacity is binary (a "16 GB" card holds 16 GiB), while bandwidths and FLOP
rates are decimal; memory-fit arithmetic works in bytes and shows GiB or MiB.
"""

from __future__ import annotations

#: Bytes in a mebibyte and a gibibyte.
MIB = 2**20
GIB = 2**30
