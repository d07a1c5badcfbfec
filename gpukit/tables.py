"""Tables for notebooks: one look, HTML-escaped text, clickable source links, units kept in headers."""
from __future__ import annotations

import html
import re
from urllib.parse import urlparse

import pandas as pd
from pandas.io.formats.style import Styler


def _number(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "—"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 10 else f"{value:,.1f}".rstrip("0").rstrip(".")
    return f"{value:,}" if isinstance(value, int) else str(value)


def _text(value) -> str:
    """Escaped text; a bare http(s) URL becomes a link labelled with its host and file name."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "—"
    text = str(value)
    if re.fullmatch(r"https?://\S+", text):
        parsed = urlparse(text)
        tail = parsed.path.rstrip("/").rsplit("/", 1)[-1]
        label = parsed.netloc + (f"/…/{tail}" if tail else "")
        return f'<a href="{html.escape(text, quote=True)}">{html.escape(label)}</a>'
    return html.escape(text)


def show(frame: pd.DataFrame, caption: str | None = None) -> Styler:
    """A styled, index-free view of ``frame``: numbers compact, empty cells as '—', any text
    HTML-escaped (catalogue and parameters may hold untrusted text), URLs as links."""
    numeric = frame.select_dtypes("number").columns
    styler = (frame.style.hide(axis="index")
              .format(_number, subset=list(numeric))
              .format(_text, subset=[c for c in frame.columns if c not in numeric]))
    text_cols = [c for c in frame.columns if c not in numeric]
    if text_cols:
        styler = styler.set_properties(subset=text_cols, **{"text-align": "left !important"})
    if len(numeric):
        styler = styler.set_properties(subset=list(numeric), **{"text-align": "right !important"})
    if caption:
        styler = styler.set_caption(html.escape(caption))
    return styler.set_table_styles([
        {"selector": "caption", "props": "caption-side: top; font-weight: bold; text-align: left;"},
        {"selector": "td", "props": "padding: 2px 8px;"},
        {"selector": "th", "props": "text-align: left; padding: 2px 8px;"},
    ])


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
    """A dict of headline figures as a two-column table (names with underscores become words)."""
    frame = pd.DataFrame({"figure": [k.replace("_", " ") for k in values],
                          "value": [_number(v) for v in values.values()]})
    return show(frame, caption)


class Heading(Note):
    """A heading for a notebook, escaped like :class:`Note`."""

    def _repr_html_(self) -> str:
        return f"<h2>{html.escape(self.text)}</h2>"


def heading(text: str) -> Heading:
    return Heading(text)
