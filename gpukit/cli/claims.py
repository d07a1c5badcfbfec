"""``gpukit claims``: fact-check the articles' spec claims against the sourced catalogue."""

from __future__ import annotations

import argparse

from ..compare import claims
from .formatting import emit, format_table
from .options import add_format_option

#: Columns of the human-readable table (``--format csv``/``json`` carry every column).
TABLE_COLUMNS = ("source", "gpu", "field", "claimed_value", "catalogue_value", "verdict", "note")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "claims",
        help="fact-check the articles' spec claims against the catalogue",
        description="Check every claim of data/claims.csv (or your own file of that shape) "
        "against the sourced catalogue: confirmed, wrong, or unclear (true for some variants only).",
    )
    p.add_argument("--claims", metavar="FILE", help="a claims CSV (default: data/claims.csv)")
    p.add_argument("--verdict", choices=("confirmed", "wrong", "unclear"), help="show only this verdict")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    table = claims.check(claims.load_claims(args.claims) if args.claims else None)
    if args.verdict:
        table = table[table["verdict"] == args.verdict]
    if not emit(table, args.format):
        cols = list(TABLE_COLUMNS)
        print(format_table(table[cols].to_dict(orient="records"), cols))
        counts = table["verdict"].value_counts()
        print("\n" + ", ".join(f"{counts.get(v, 0)} {v}" for v in claims.VERDICTS))
    return 0
