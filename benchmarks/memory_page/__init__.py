"""The sections of docs/accuracy/memory.md, each a function that returns its Markdown lines, and the
bands files beside it.

``benchmarks/memory_accuracy.py`` measures the grid (or reads saved runs), estimates every case again
and joins these in the page's order; a section that needs the update terms refitted (:mod:`.refit`)
refits them itself.
"""

from .bands import BAND_KEYS, bands, bands_csv
from .cases import case_key, case_table
from .comparisons import kernels_section, other_cpu_section
from .coverage import counted_lines, unseen_lines
from .outside import outside_section
from .refit import update_terms_lines
from .summary import family_lines, summary_lines

__all__ = [
    "BAND_KEYS",
    "bands",
    "bands_csv",
    "case_key",
    "case_table",
    "counted_lines",
    "family_lines",
    "kernels_section",
    "other_cpu_section",
    "outside_section",
    "summary_lines",
    "unseen_lines",
    "update_terms_lines",
]
