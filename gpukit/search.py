"""The one search for "the largest n that still works": largest batch, largest context, largest
batch that really runs on a GPU.

Each of those asks a yes/no question that holds up to some n and fails beyond it (more memory
for a larger batch or context). :func:`largest_passing` finds that n in about 2 log2(n) checks,
which matters when a check is a fresh process on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable


def largest_passing(check: Callable[[int], bool], start: int = 1, limit: int = 1 << 20) -> int:
    """The largest ``n`` in ``[start, limit]`` for which ``check(n)`` holds; 0 if it fails at ``start``.

    ``check`` must hold up to some ``n`` and fail beyond it. The search doubles from ``start``
    until a check fails or the next step would pass ``limit`` (then ``limit`` itself is checked),
    and bisects between the last pass and the first failure.
    """
    if start < 1 or limit < start:
        raise ValueError(f"search range [{start}, {limit}] is empty; start at 1 or more, at most limit")
    if not check(start):
        return 0
    low, high = start, start * 2
    while high <= limit and check(high):
        low, high = high, high * 2
    if high > limit:
        if low == limit or check(limit):
            return limit
        high = limit
    while high - low > 1:  # check(low) holds, check(high) fails
        mid = (low + high) // 2
        low, high = (mid, high) if check(mid) else (low, mid)
    return low
