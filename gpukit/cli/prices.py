"""``gpukit prices``: bring the cloud prices up to date from gpuhunt's live catalogue
(``refresh``), or say where the refreshed prices are and how many (``where``)."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

from .. import resources
from ..present import terminal
from ..prices import book as prices
from ..prices import refresh as price_refresh


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "prices",
        help="bring cloud prices up to date from a live catalogue",
        description="Cloud prices from gpuhunt's live multi-provider catalogue, written to a user-level file "
        "that every command merges over the shipped data/cloud_prices.csv (which is never rewritten).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    refresh = actions.add_parser(
        "refresh",
        help="fetch today's offers (needs a network)",
        description="Fetch every NVIDIA GPU offer gpuhunt lists (provider, region, on-demand or spot, GPU count, "
        "hourly price), keep those of catalogue GPUs at their per-GPU rate, dated today, and write them to the "
        "user-level prices file. Offline, it says so and changes nothing.",
    )
    refresh.add_argument("--out", type=Path, metavar="FILE", help="write here instead of the user-level file")
    refresh.set_defaults(func=run_refresh)
    where = actions.add_parser("where", help="where the refreshed prices are, and how many")
    where.set_defaults(func=run_where)
    check = actions.add_parser(
        "check",
        help="the prices the sanity checks flag, with file, line and reason",
        description="Every price the checks flag as it loads (gpukit.prices.checks): a price many times its "
        "variant siblings' of the same kind and year, used above new, a kind that does not fit its source, an "
        "hourly rate above what a new card costs over a few hundred hours. Flagged rows are kept and never "
        "used silently: cheapest and median leave them out and say so.",
    )
    check.add_argument(
        "--prices", action="append", metavar="FILE", help="your own price file(s), checked too"
    )
    check.set_defaults(func=run_check)


def run_refresh(args: argparse.Namespace) -> int:
    def fetch():
        with terminal.waiting("fetching gpuhunt's catalogue of cloud offers"):
            return price_refresh.fetch_offers()

    try:
        done = price_refresh.refresh(fetch=fetch, path=args.out)
    except price_refresh.NoNetwork as exc:
        print(f"gpukit: no network: {exc}; the shipped prices stay in use.", file=sys.stderr)
        return 1
    left = sum(done["skipped"].values())
    print(
        f"Refreshed {done['rows']} cloud offers of {done['gpus']} catalogue GPUs from {done['providers']} providers, "
        f"dated {date.today().isoformat()}: {done['path']}"
        + ("" if args.out else " (merged over the shipped prices; delete it to go back to them)")
        + (
            f". Left out {left} offers: "
            + "; ".join(f"{n} {why}" for why, n in done["skipped"].most_common(5))
            if left
            else ""
        )
        + "."
    )
    return 0


def run_where(args: argparse.Namespace) -> int:
    path = resources.refreshed_path()
    if not path.is_file():
        print(
            f"No refreshed prices ({path} does not exist): the shipped prices are in use; gpukit prices refresh."
        )
        return 0
    frame = prices.read_price_file(path, "cloud")
    print(
        f"{path}: {len(frame)} offers of {frame['gpu'].nunique()} GPUs from {frame['provider'].nunique()} providers, "
        f"dated {frame['date'].min()} to {frame['date'].max()}, merged over the shipped cloud prices."
    )
    return 0


def run_check(args: argparse.Namespace) -> int:
    book = prices.load_prices(args.prices)
    found = [
        (str(r["origin"]), int(r["line"]), r["gpu"], label, r["flag"])
        for frame, label in ((book.purchase, "purchase"), (book.cloud, "cloud"))
        for _, r in frame[frame["flag"].fillna("") != ""].iterrows()
    ]
    if not found:
        print("No price is flagged.")
        return 0
    print(f"{len(found)} prices flagged; each is kept and left out of every answer, which says so:")
    for origin, line, gpu, label, why in sorted(found):
        print(f"{_short(origin)}, line {line} ({gpu}, {label}): {why}")
    return 0


def _short(path: str) -> str:
    """A shipped file by its place in the project (data/prices.csv), any other as given."""
    p = Path(path)
    return f"data/{p.name}" if p.parent == prices.DATA_DIR else str(p)
