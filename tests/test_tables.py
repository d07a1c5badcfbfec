"""Notebook tables: what a cell shows, how the page weighs, and when a table scrolls."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from gpukit import tables


def _frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"gpu": [f"GPU {i}" for i in range(rows)], "tflops": np.linspace(1, 99, rows),
                         "count": np.arange(rows), "url": ["https://example.com/a/sheet.pdf"] * rows})


def test_cells_are_compact_escaped_and_linked():
    frame = pd.DataFrame({"name": ["<b>x</b>", None], "value": [1234.5678, np.nan], "n": [3, 4],
                          "source": ["https://example.com/docs/sheet.pdf", "plain"]})
    html = tables.show(frame).to_html()
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert "1,234.6" in html and "—" in html
    assert '<a href="https://example.com/docs/sheet.pdf">example.com/…/sheet.pdf</a>' in html


def test_alignment_is_one_rule_per_column_not_per_cell():
    html = tables.show(_frame(400)).to_html()
    assert len(re.findall(r"text-align: right !important", html)) == 2  # tflops, count
    assert len(re.findall(r"text-align: left !important", html)) == 2  # gpu, url
    assert ' id="T_' not in html.split("<tbody>")[1]  # no per-cell ids
    # a few hundred bytes a row of four columns, not kilobytes
    assert len(html) / 400 < 400


def test_long_tables_scroll_in_their_own_box_and_keep_every_row():
    short = tables.show(_frame(tables.SCROLL_ROWS)).to_html()
    long = tables.show(_frame(tables.SCROLL_ROWS + 1)).to_html()
    assert "max-height" not in short and "position: sticky" not in short
    assert "max-height" in long and "position: sticky" in long
    assert "max-width: 100%" in short and "overflow: auto" in short  # wide ones scroll sideways, any length
    assert long.count("<tr>") == tables.SCROLL_ROWS + 2  # the header and every row


def test_caption_is_escaped_and_an_empty_frame_renders():
    html = tables.show(pd.DataFrame({"a": []}), caption="<i>c</i>").to_html()
    assert "&lt;i&gt;c&lt;/i&gt;" in html and "<i>c</i>" not in html


def test_the_whole_catalogue_shows_without_scrolling():
    from gpukit import specs

    assert len(specs.load_catalogue()) <= tables.SCROLL_ROWS
