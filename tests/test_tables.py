"""Notebook tables: what a cell shows, how the page weighs, and when a table scrolls."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from gpukit import tables


def _frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "gpu": [f"GPU {i}" for i in range(rows)],
            "tflops": np.linspace(1, 99, rows),
            "count": np.arange(rows),
            "url": ["https://example.com/a/sheet.pdf"] * rows,
        }
    )


def test_cells_are_compact_escaped_and_linked():
    frame = pd.DataFrame(
        {
            "name": ["<b>x</b>", None],
            "value": [1234.5678, np.nan],
            "n": [3, 4],
            "source": ["https://example.com/docs/sheet.pdf", "plain"],
        }
    )
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


def test_sentences_keep_a_readable_width_and_labels_stay_on_one_line():
    sentence = "within ±15% in 132 of 152 published same-source speedups, median error 5.3%"
    frame = pd.DataFrame(
        {
            "gpu": ["A40", "V100 PCIe 16GB"],
            "error": [sentence, "short"],
            "x": [1.5, 2.0],
            "source": ["https://example.com/a/very/long/path/to/a/datasheet-file.pdf"] * 2,
        }
    )
    html = tables.show(frame).to_html()
    rules = dict(re.findall(r"#T_\w+ td\.col(\d)\s*\{([^}]*)\}", html))
    assert "min-width: 20em" in rules["1"]  # the sentence column, at the narrowest width for prose
    for col in ("0", "2", "3"):  # a name, a number, a link (shown as its short label)
        assert "white-space: nowrap" in rules[col] and "min-width" not in rules[col]


def test_columns_with_nothing_to_show_are_left_out():
    frame = pd.DataFrame(
        {
            "workload": ["resnet50", "bert"],
            "note": ["", " "],
            "rows": [[{"a": 1}], []],
            "empty_but_numeric": [np.nan, np.nan],
        }
    )
    html = tables.show(frame).to_html()
    assert "workload" in html and "empty_but_numeric" in html
    assert ">note<" not in html and ">rows<" not in html and "{&#x27;a" not in html and "{'a" not in html
    assert list(frame.columns) == ["workload", "note", "rows", "empty_but_numeric"]  # the caller's frame kept
    assert ">note<" in tables.show(frame.assign(note=["", "a note"])).to_html()


def test_a_paragraph_column_is_wider_than_a_sentence_column_within_bounds():
    assert [tables._prose_width(n) for n in (41, 160, 240, 5000)] == [20, 20, 30, 40]
    html = tables.show(pd.DataFrame({"note": ["word " * 48]})).to_html()  # 240 characters
    assert "min-width: 30em" in html
