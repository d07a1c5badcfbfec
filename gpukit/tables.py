"""Tables for notebooks: one look, headers with units, HTML-escaped text, clickable source links."""

from __future__ import annotations

import html
import re
from urllib.parse import urlparse

import pandas as pd
from pandas.io.formats.style import Styler

from . import labels


def _text(value) -> str:
    """Escaped text; a bare http(s) URL becomes a link labelled with its host and file name; a truth
    value reads yes or no, a number as :func:`labels.cell` writes it."""
    if not isinstance(value, str):
        return html.escape(labels.cell(value))
    if re.fullmatch(r"https?://\S+", value):
        parsed = urlparse(value)
        tail = parsed.path.rstrip("/").rsplit("/", 1)[-1]
        label = parsed.netloc + (f"/…/{tail}" if tail else "")
        return f'<a href="{html.escape(value, quote=True)}">{html.escape(label)}</a>'
    return html.escape(value)


#: Tables longer than this scroll inside a box of about that many rows, their header kept in
#: view, so a page of several long tables stays readable and every row is still on the page
#: (the whole catalogue, one row a GPU, still shows without scrolling).
SCROLL_ROWS = 30


def show(frame: pd.DataFrame, caption: str | None = None) -> Styler:
    """A styled, index-free view of ``frame`` under headers a reader takes in (``memory_gb`` as
    "memory (GB)", :func:`labels.label`; the frame keeps its names): numbers to three significant
    figures, yes or no, empty cells as '—', any text HTML-escaped (catalogue and parameters may
    hold untrusted text), URLs as links.

    Styles are set once per column, not per cell, so a table of thousands of rows stays a
    fraction of the page's weight; a table wider than the page scrolls sideways in its own box,
    and beyond :data:`SCROLL_ROWS` rows down as well, its header kept in view. Columns with
    nothing to show are left out: those that hold only empty text, and those of lists or
    mappings, which a frame carries for code (its CSV and JSON forms keep them) and which have
    no form a reader can take in as a cell.
    """
    frame = frame.drop(columns=[c for c in frame.columns if not _shown(frame[c])])
    numeric = [c for c in frame.select_dtypes("number").columns]
    text_cols = [c for c in frame.columns if c not in numeric]
    styler = (
        Styler(frame, cell_ids=False)
        .hide(axis="index")
        .format(labels.cell, subset=numeric)
        .format(_text, subset=text_cols)
        .format_index(lambda name: html.escape(labels.label(name)), axis="columns")
    )
    if caption:
        styler = styler.set_caption(html.escape(caption))
    # a table wider than the page scrolls sideways in its own box instead of running off the page
    box = "display: block; max-width: 100%; overflow: auto;"
    styles = [
        {"selector": "caption", "props": "caption-side: top; font-weight: bold; text-align: left;"},
        {"selector": "td", "props": "padding: 2px 8px;"},
        {"selector": "th", "props": "text-align: left; padding: 2px 8px;"},
    ]
    if len(frame) > SCROLL_ROWS:
        styles += [
            {"selector": "", "props": f"{box} max-height: {1.6 * SCROLL_ROWS:g}em;"},
            {"selector": "thead th", "props": "position: sticky; top: 0; background: white; z-index: 1;"},
        ]
    else:
        styles.append({"selector": "", "props": box})
    styler = styler.set_table_styles(styles)
    # a browser fits a table to the page by wrapping its text columns down to their longest word,
    # which turns a column of sentences into a tower of one word a line: sentences keep a readable
    # width (the table scrolls sideways instead), short labels and numbers stay on one line
    longest = {c: _longest(frame[c]) for c in text_cols}
    align = {
        c: [
            {
                "selector": "td",
                "props": f"text-align: {'right' if c in numeric else 'left'} !important; "
                + (
                    f"min-width: {_prose_width(longest[c])}em;"
                    if longest.get(c, 0) > PROSE_CHARS
                    else "white-space: nowrap;"
                ),
            }
        ]
        for c in frame.columns
    }
    return styler.set_table_styles(align, overwrite=False) if align else styler


#: A text column whose longest cell is longer than this many characters is prose: it wraps, at
#: a width within :data:`PROSE_WIDTH_EM` that grows with its longest cell (a paragraph-long source
#: note gets a few lines, not a dozen); shorter text and numbers do not wrap.
PROSE_CHARS = 40
PROSE_WIDTH_EM = (20, 40)


def _prose_width(longest: int) -> int:
    """Width in em of a prose column whose longest cell has ``longest`` characters: about eight
    lines for it, within :data:`PROSE_WIDTH_EM`."""
    low, high = PROSE_WIDTH_EM
    return max(low, min(high, longest // 8))


def _shown(column: pd.Series) -> bool:
    """Whether a column has something to show: not only empty strings, not lists or mappings."""
    if column.empty or pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return True
    values = [v for v in column if v is not None and v is not pd.NA and not (isinstance(v, float) and v != v)]
    if values and all(isinstance(v, (list, tuple, dict)) for v in values):
        return False
    return not (values and all(isinstance(v, str) and not v.strip() for v in values))


def _longest(column: pd.Series) -> int:
    """Characters of the longest cell as shown (a URL shows as a short link label)."""
    shown = [str(v) for v in column if isinstance(v, str) and not re.fullmatch(r"https?://\S+", v)]
    return max(map(len, shown), default=0)


class Note:
    """A sentence for a notebook, shown as escaped HTML (it may carry names from data files)."""

    def __init__(self, text: str):
        self.text = str(text)

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(self.text)}</p>"

    def __repr__(self) -> str:
        return self.text


def note(text: str) -> Note:
    return Note(text)


def summary(values: dict, caption: str | None = None) -> Styler:
    """A dict of headline figures as a two-column table (names read as headers do)."""
    frame = pd.DataFrame(
        {"figure": [labels.label(k) for k in values], "value": [labels.cell(v) for v in values.values()]}
    )
    return show(frame, caption)


class Heading(Note):
    """A heading for a notebook, escaped like :class:`Note`."""

    def _repr_html_(self) -> str:
        return f"<h2>{html.escape(self.text)}</h2>"


def heading(text: str) -> Heading:
    return Heading(text)
