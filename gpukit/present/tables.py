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
    value (or the text True or False) reads yes or no, a number as :func:`labels.cell` writes it."""
    if not isinstance(value, str) or value in _TRUTHS:
        return html.escape(labels.cell(_TRUTHS.get(value, value)))
    if _URL.fullmatch(value):
        # a long link may break after its host rather than push the table wider
        shown = html.escape(_link_label(value)).replace("…/", "…/<wbr>")
        return f'<a href="{html.escape(value, quote=True)}">{shown}</a>'
    return html.escape(value)


_URL = re.compile(r"https?://\S+")

#: Truth values a frame carries as text (a column of mixed values made strings with ``str``):
#: a reader sees yes or no all the same.
_TRUTHS = {"True": True, "False": False}


def _link_label(url: str) -> str:
    """What a link shows: its host and its file name."""
    parsed = urlparse(url)
    tail = parsed.path.rstrip("/").rsplit("/", 1)[-1]
    return parsed.netloc + (f"/…/{tail}" if tail else "")


#: Tables longer than this scroll inside a box of about that many rows, their header kept in
#: view, so a page of several long tables stays readable and every row is still on the page
#: (each segment of the catalogue, one row a GPU, still shows without scrolling).
SCROLL_ROWS = 30


def show(frame: pd.DataFrame, caption: str | None = None) -> Styler:
    """A styled, index-free view of ``frame`` under headers a reader takes in (``memory_gb`` as
    "memory (GB)", :func:`labels.label`; the frame keeps its names): numbers to three significant
    figures, yes or no, empty cells as '—', any text HTML-escaped (catalogue and parameters may
    hold untrusted text), URLs as links.

    Styles are set once per column, not per cell, so a table of thousands of rows stays a
    fraction of the page's weight. A table is never wider than the page: its text wraps at a
    readable width, and a table that still cannot fit scrolls sideways in its own box, the
    column that names its rows kept in view; beyond :data:`SCROLL_ROWS` rows it scrolls down as
    well, its header kept in view. Columns with
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
    styler = styler.set_table_styles(_table_styles(long=len(frame) > SCROLL_ROWS))
    columns = _column_styles(frame, numeric)
    return styler.set_table_styles(columns, overwrite=False) if columns else styler


def _table_styles(long: bool) -> list[dict]:
    """The table's box: no wider than the page, scrolling sideways inside itself when its columns
    cannot fit; a long table also scrolls down, its header kept in view."""
    box = "display: block; max-width: 100%; overflow: auto;"
    styles = [
        {"selector": "caption", "props": "caption-side: top; font-weight: bold; text-align: left;"},
        {"selector": "td", "props": "padding: 2px 6px;"},
        {"selector": "th", "props": "text-align: left; vertical-align: bottom; padding: 2px 6px;"},
    ]
    if not long:
        return [*styles, {"selector": "", "props": box}]
    return [
        *styles,
        {"selector": "", "props": f"{box} max-height: {1.6 * SCROLL_ROWS:g}em;"},
        {"selector": "thead th", "props": f"position: sticky; top: 0; background: {BACKGROUND}; z-index: 2;"},
    ]


#: The page behind a cell kept in view (a sticky header or first column), in JupyterLab's theme.
BACKGROUND = "var(--jp-layout-color0, white)"


def _column_styles(frame: pd.DataFrame, numeric: list) -> dict:
    """One rule per column, not per cell. Numbers stay on one line, right-aligned under a
    right-aligned header. A browser fits a wide table to the page by wrapping its text down to
    the longest word, which turns a column of sentences into a tower of one word a line: text
    keeps a readable width instead (:func:`_wrapping`), and where the columns cannot fit at
    those widths the table scrolls sideways, its first column kept in view if it names the row."""
    styles = {}
    for i, c in enumerate(frame.columns):
        if c in numeric:
            rules = [
                {"selector": "td", "props": "text-align: right !important; white-space: nowrap;"},
                {"selector": "th", "props": "text-align: right;"},
            ]
        else:
            rules = [{"selector": "td", "props": f"text-align: left !important; {_wrapping(frame[c])}"}]
            if i == 0 and _longest(frame[c]) <= STICKY_CHARS:
                rules += [
                    {
                        "selector": "td",
                        "props": "position: sticky; left: 0; z-index: 1; background: inherit;",
                    },
                    {
                        "selector": "th",
                        "props": f"position: sticky; left: 0; z-index: 3; background: {BACKGROUND};",
                    },
                ]
        styles[c] = rules
    return styles


#: Text no longer than this many characters (a short name, a date, a precision) stays on one line.
SHORT_CHARS = 12

#: A text column whose longest cell is longer than this many characters is prose: it wraps, at
#: a width within :data:`PROSE_WIDTH_EM` that grows with its longest cell (a paragraph-long source
#: note gets a few lines, not a dozen). Text between short and prose wraps onto two lines at most.
PROSE_CHARS = 40
PROSE_WIDTH_EM = (15, 32)

#: A first text column no longer than this many characters names its row (a GPU, a model, a
#: source): it stays in view while a wide table scrolls sideways.
STICKY_CHARS = 60


def _wrapping(column: pd.Series) -> str:
    """How a text column wraps: not at all when short; on two lines at most when a little longer
    (about half its characters a line, at some 0.6 em a character, its longest word whole: a
    browser breaks "llama-3-8b" at its hyphens otherwise); prose at :func:`_prose_width`."""
    longest = _longest(column)
    if longest <= SHORT_CHARS:
        return "white-space: nowrap;"
    if longest > PROSE_CHARS:
        return f"min-width: {_prose_width(longest)}em;"
    words = (w for v in column if isinstance(v, str) for w in re.split(r"\s|…/", _shown_text(v)))
    word = max(map(len, words), default=0)
    return f"min-width: {max(min(0.4 * longest, PROSE_WIDTH_EM[0]), 0.6 * word):.1f}em;"


def _prose_width(longest: int) -> int:
    """Width in em of a prose column whose longest cell has ``longest`` characters: about six
    lines for it, within :data:`PROSE_WIDTH_EM`."""
    low, high = PROSE_WIDTH_EM
    return max(low, min(high, longest // 10))


def _shown(column: pd.Series) -> bool:
    """Whether a column has something to show: not only empty strings, not lists or mappings."""
    if column.empty or pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return True
    values = [v for v in column if v is not None and v is not pd.NA and not (isinstance(v, float) and v != v)]
    if values and all(isinstance(v, (list, tuple, dict)) for v in values):
        return False
    return not (values and all(isinstance(v, str) and not v.strip() for v in values))


def _longest(column: pd.Series) -> int:
    """Characters of the longest text cell as shown (a URL as its link's label)."""
    return max((len(_shown_text(v)) for v in column if isinstance(v, str)), default=0)


def _shown_text(value: str) -> str:
    return _link_label(value) if _URL.fullmatch(value) else value


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


class Answer:
    """A bottom line and what it rests on, then its table: how a page opens with an answer."""

    def __init__(self, headline: str, basis: str, table: Styler | None = None):
        self.headline, self.basis, self.table = headline, basis, table

    def _repr_html_(self) -> str:
        table = self.table.to_html() if self.table is not None else ""
        return (
            f"<p><b>{html.escape(self.headline)}</b></p>"
            f"<p style='color:#5b6570'>{html.escape(self.basis)}</p>{table}"
        )

    def __repr__(self) -> str:
        return f"{self.headline}\n{self.basis}"


class Answers(list):
    """Several :class:`Answer` one after another."""

    def _repr_html_(self) -> str:
        return "".join(a._repr_html_() for a in self)


class Tables(list):
    """Several tables one after another, each under its caption (one cell's output)."""

    def _repr_html_(self) -> str:
        return "".join(t.to_html() for t in self)


def grouped(frame: pd.DataFrame, by: str, caption: str, columns=None) -> Tables:
    """A table of ``columns`` (default: all but ``by``) per value of ``by`` in the order met (a
    catalogue's segments), each captioned ``caption`` formatted with ``group`` (the value) and
    ``count`` (its rows)."""
    shown = list(columns) if columns is not None else [c for c in frame.columns if c != by]
    return Tables(
        show(rows[shown].reset_index(drop=True), caption.format(group=value, count=len(rows)))
        for value, rows in frame.groupby(by, sort=False)
    )
