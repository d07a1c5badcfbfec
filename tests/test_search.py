"""The one largest-n search: exact against a scan, and thrifty with its checks."""

from __future__ import annotations

import math

import pytest

from gpukit.search import largest_passing


@pytest.mark.parametrize("start", [1, 3, 8])
@pytest.mark.parametrize("limit", [8, 100, 4096])
@pytest.mark.slow  # a second or more: the full tier's
def test_finds_the_same_n_as_a_scan_for_every_threshold(start, limit):
    if limit < start:
        pytest.skip("empty range")
    for threshold in [0, *range(start - 1, limit + 3)]:
        expected = max((n for n in range(start, limit + 1) if n <= threshold), default=0)
        assert largest_passing(lambda n, t=threshold: n <= t, start, limit) == expected, threshold


def test_checks_about_twice_log2_n_times():
    seen: list[int] = []

    def check(n: int) -> bool:
        seen.append(n)
        return n <= 1000

    assert largest_passing(check, 1, 1 << 20) == 1000
    assert len(seen) <= 2 * math.ceil(math.log2(1000)) + 2
    assert len(seen) == len(set(seen)), "no n is checked twice"


def test_an_empty_range_is_refused():
    with pytest.raises(ValueError, match="empty"):
        largest_passing(lambda n: True, 5, 4)
