"""How answers are presented: ``labels`` (the headers and cells a reader takes in) and ``tables``
(a frame as a readable HTML table in a notebook)."""

from __future__ import annotations
