"""Notebook tables: what a cell shows, how the page weighs, and when a table scrolls."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from gpukit.present import labels, tables


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
    assert "1,235" in html and "—" in html
    assert '<a href="https://example.com/docs/sheet.pdf">example.com/…/<wbr>sheet.pdf</a>' in html


def test_headers_are_labels_and_truth_values_read_yes_or_no():
    frame = pd.DataFrame(
        {
            "gpu": ["A40", "T4", "L4"],
            "memory_gb": [48.0, 16.0, 24.0],
            "fits": [True, False, True],
            "winner_right": pd.Series([np.bool_(True), None, np.bool_(False)], dtype=object),
            "tf32_default": ["True", "False", "n/a"],  # truth values a frame made text
        }
    )
    html = tables.show(frame).to_html()
    head = html.split("<thead>")[1].split("</thead>")[0]
    assert [h for h in re.findall(r"<th [^>]*>([^<]*)</th>", head)] == [
        "GPU",
        "memory (GB)",
        "fits",
        "winner right",
        "TF32 default",
    ]
    body = html.split("<tbody>")[1]
    cells = re.findall(r"<td [^>]*>([^<]*)</td>", body)
    assert cells == [
        "A40",
        "48",
        "yes",
        "yes",
        "yes",
        "T4",
        "16",
        "no",
        "—",
        "no",
        "L4",
        "24",
        "yes",
        "no",
        "n/a",
    ]
    assert list(frame.columns) == ["gpu", "memory_gb", "fits", "winner_right", "tf32_default"]  # names kept


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
    assert "max-height" not in short and "top: 0" not in short
    assert "max-height" in long and "position: sticky;\n  top: 0" in long
    assert "max-width: 100%" in short and "overflow: auto" in short  # wide ones scroll sideways, any length
    assert long.count("<tr>") == tables.SCROLL_ROWS + 2  # the header and every row


def test_caption_is_escaped_and_an_empty_frame_renders():
    html = tables.show(pd.DataFrame({"a": []}), caption="<i>c</i>").to_html()
    assert "&lt;i&gt;c&lt;/i&gt;" in html and "<i>c</i>" not in html


def test_each_segment_of_the_catalogue_shows_without_scrolling():
    """The specs page shows a table per segment: each fits in the page without its own scroll box."""
    from gpukit import specs

    sizes = specs.load_catalogue()["segment"].value_counts()
    assert set(sizes.index) == set(specs.SEGMENTS) and (sizes <= tables.SCROLL_ROWS).all()


def _column_rules(html: str, cell: str = "td") -> dict[str, str]:
    """Every CSS rule of each column's cells (or headers), by column number."""
    rules: dict[str, str] = {}
    for col, props in re.findall(rf"#T_\w+ {cell}\.col(\d+)\s*\{{([^}}]*)\}}", html):
        rules[col] = rules.get(col, "") + " ".join(props.split()) + " "
    return rules


def test_sentences_keep_a_readable_width_and_short_text_wraps_on_two_lines_at_most():
    sentence = "within ±15% in 132 of 152 published same-source speedups, median error 5.3%"
    frame = pd.DataFrame(
        {
            "gpu": ["A40", "V100 PCIe 16GB"],
            "error": [sentence, "short"],
            "x": [1.5, 2.0],
            "source": ["https://example.com/a/very/long/path/to/a/datasheet-file.pdf"] * 2,
            "precision": ["fp16", "float32"],
            "model": ["llama-3-8b", "gemma-2-27b-instruct-long"],
        }
    )
    rules = _column_rules(tables.show(frame).to_html())
    assert "min-width: 15em" in rules["1"]  # the sentence column, at the narrowest width for prose
    for col in ("2", "4"):  # a number, a short word
        assert "white-space: nowrap" in rules[col] and "min-width" not in rules[col]
    # 14 characters: two lines of about half of them (0.4 em a character)
    assert "min-width: 5.6em" in rules["0"]
    # the link shows as example.com/…/datasheet-file.pdf (32 characters), its file name whole
    assert "min-width: 12.8em" in rules["3"]
    # a longest word of 25 characters whole (0.6 em each), not broken at its hyphens
    assert "min-width: 15.0em" in rules["5"]


def test_numbers_sit_under_right_aligned_headers_and_the_naming_column_stays_in_view():
    frame = pd.DataFrame({"gpu": ["A40", "T4"], "memory_gb": [48, 16], "fits": [True, False]})
    html = tables.show(frame).to_html()
    heads, cells = _column_rules(html, "th"), _column_rules(html)
    assert "text-align: right" in heads["1"] and "right" not in heads.get("2", "") + heads["0"]
    assert "position: sticky; left: 0" in cells["0"] and "position: sticky; left: 0" in heads["0"]
    assert "sticky" not in cells["1"] + cells["2"]
    # a first column of numbers, or of prose, names no row: it scrolls with the rest
    numbers_first = tables.show(frame[["memory_gb", "gpu"]]).to_html()
    assert "left: 0" not in numbers_first
    prose_first = tables.show(pd.DataFrame({"note": ["word " * 13], "x": [1]})).to_html()
    assert "left: 0" not in prose_first


def test_a_link_may_break_after_its_host():
    html = tables.show(pd.DataFrame({"source_url": ["https://example.com/a/b/sheet.pdf"]})).to_html()
    assert '<a href="https://example.com/a/b/sheet.pdf">example.com/…/<wbr>sheet.pdf</a>' in html
    assert ">source link<" in html


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
    assert "workload" in html and "empty but numeric" in html
    assert ">note<" not in html and ">rows<" not in html and "{&#x27;a" not in html and "{'a" not in html
    assert list(frame.columns) == ["workload", "note", "rows", "empty_but_numeric"]  # the caller's frame kept
    assert ">note<" in tables.show(frame.assign(note=["", "a note"])).to_html()


def test_a_paragraph_column_is_wider_than_a_sentence_column_within_bounds():
    assert [tables._prose_width(n) for n in (41, 160, 240, 5000)] == [15, 16, 24, 32]
    html = tables.show(pd.DataFrame({"note": ["word " * 48]})).to_html()  # 240 characters
    assert "min-width: 24em" in html


# --------------------------------------------------------------------------- headers and cells


@pytest.mark.parametrize(
    "name, header",
    [
        # a unit read off the name's last word
        ("memory_gb", "memory (GB)"),
        ("memory_bandwidth_gbs", "memory bandwidth (GB/s)"),
        ("fp32_tflops", "FP32 (TFLOPS)"),
        ("int8_tensor_tops", "INT8 tensor (TOPS)"),
        ("tdp_w", "board power (W)"),
        ("step_time_s", "step time (s)"),
        ("median_ms", "median (ms)"),
        ("error_pct", "error (%)"),
        ("max_abs_error_pct", "max absolute error (%)"),
        ("total_gib", "total (GiB)"),
        ("l2_cache_mib", "L2 cache (MiB)"),
        ("memory_data_rate_gbps", "memory data rate (Gbit/s)"),
        ("break_even_months", "break-even (months)"),
        ("params_b", "parameters (billions)"),
        ("throughput_tokens_s", "throughput (tokens/s)"),
        # rates: per second or hour after a slash, per anything else in words
        ("usd_per_hour", "USD/hour"),
        ("cloud_usd_per_hour", "cloud (USD/hour)"),
        ("decode_tokens_per_s", "decode (tokens/s)"),
        ("usd_per_million_items", "USD per million items"),
        ("cloud_usd_per_sustained_tflop_hour", "cloud (USD per sustained TFLOP-hour)"),
        ("throughput_per_1k_usd", "throughput per 1,000 USD"),
        ("kv_cache_mib_per_1k_tokens", "KV cache (MiB per 1,000 tokens)"),
        ("tflops_per_watt", "TFLOPS per watt"),
        ("per_1k_usd_a", "per 1,000 USD, GPU A"),
        # words, qualifiers and the names no rule reads
        ("gpu", "GPU"),
        ("gpus_needed", "GPUs needed"),
        ("seq_len", "sequence length"),
        ("price_source_url", "price source link"),
        ("whitepaper_url", "whitepaper link"),
        ("throughput_a", "throughput, GPU A"),
        ("basis_b", "basis, GPU B"),
        ("largest_batch_low", "largest batch, low end"),
        ("largest_batch_high", "largest batch, high end"),
        ("usd_per_million_tokens_owned", "USD per million tokens, owned"),
        ("efficiency_1_gpus", "efficiency, 1 GPU"),
        ("throughput_8_gpus", "throughput, 8 GPUs"),
        ("pp16384", "16,384-token prompt"),
        ("gpu_a", "GPU A"),
        ("a_over_b", "a / b"),
        ("estimate_error", "estimate's error"),
        ("throughput_unit", "unit"),
        # not a name of the kit's: as it is
        ("already words", "already words"),
        ("Throughput", "Throughput"),
        (3, "3"),
    ],
)
def test_a_header_spells_the_words_and_puts_the_unit_in_parentheses(name, header):
    assert labels.label(name) == header


@pytest.mark.parametrize(
    "value, text",
    [
        (True, "yes"),
        (False, "no"),
        (np.bool_(True), "yes"),
        (np.bool_(False), "no"),
        (8192, "8,192"),
        (np.int64(-3), "-3"),
        (37.4321, "37.4"),
        (0.00267123, "0.00267"),
        (2.5, "2.5"),
        (48.0, "48"),
        (989.5, "990"),
        (1234.5678, "1,235"),  # three figures, but no digit before the point rounded away
        (np.float32(0.125), "0.125"),
        (3.2e6, "3,200,000"),
        (-0.04567, "-0.0457"),
        (0.0, "0"),
        (1.234e-6, "1.23e-06"),
        (float("inf"), "∞"),
        ("True", "True"),  # text as it is
        ("q4_k_m", "q4_k_m"),
    ],
)
def test_a_cell_reads_yes_no_and_numbers_to_three_figures(value, text):
    assert labels.cell(value) == text


@pytest.mark.parametrize("value", [None, np.nan, pd.NA, pd.NaT, np.float32("nan")])
def test_a_missing_cell_is_a_dash_or_what_the_caller_asks(value):
    assert labels.cell(value) == "—" and labels.cell(value, empty="") == ""
