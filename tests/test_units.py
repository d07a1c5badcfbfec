"""How a figure reads in a sentence: three significant figures, thousands separated, no exponent."""

import pytest

from gpukit.units import GIB, MIB, figure


@pytest.mark.parametrize(
    "value, text",
    [
        (93094.1, "93,100"),
        (1.994, "1.99"),
        (0.18, "0.18"),
        (7.35e-05, "0.0000735"),
        (1900, "1,900"),
        (0, "0"),
        (-2.5, "-2.5"),
        (1234567, "1,230,000"),
    ],
)
def test_figure(value, text):
    assert figure(value) == text


def test_binary_units():
    assert MIB == 1024**2 and GIB == 1024**3


def test_missing_and_nan_read_as_what_they_mean():
    import numpy as np
    import pandas as pd

    from gpukit.units import is_nan, missing

    assert is_nan(float("nan")) and is_nan(np.float32("nan")) and is_nan(np.float64("nan"))
    assert not any(is_nan(v) for v in (None, 0, 1.5, "nan", np.int64(3), True))
    assert all(missing(v) for v in (None, float("nan"), pd.NA, np.nan))
    assert not any(missing(v) for v in (0, 0.0, "", "text", False))
