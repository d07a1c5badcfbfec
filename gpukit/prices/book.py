"""Dated, sourced prices: buying a GPU (``data/prices.csv``) and renting one (``data/cloud_prices.csv``).

Purchase rows: ``gpu, kind (msrp|street|used), usd, date, source_url, note``. Cloud rows:
``gpu, provider, offering, kind (on-demand|spot|serverless), gpus_per_offering, usd_per_hour
(per GPU), date, source_url, note`` (a file without ``kind`` is read as on-demand prices).
Every row names its source and the date the price held; GPU names are resolved against the
catalogue (so ``A40`` or ``NVIDIA RTX A5000`` work). Several dated rows of one price make a
history: the price that holds on a day is the newest row on or before it (:meth:`Prices.as_of`).
A user's own file of either shape (recognised by its header) replaces the shipped rows of the
same GPU and kind (or provider, offering and kind) and adds the rest. Prices older than
``max_age_days`` (counted from the day asked about) are marked ``stale`` and every view shows it
(a launch MSRP is a dated fact, shown with its date, never stale).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

from .. import cache, specs
from .._csv import Field, parse_rows, read_rows, to_frame
from ..errors import DataError, Problem, UnknownGPUError
from ..resources import DATA_DIR, refreshed_path
from . import checks as price_checks

PURCHASE_PATH = DATA_DIR / "prices.csv"
CLOUD_PATH = DATA_DIR / "cloud_prices.csv"
GAPS_PATH = DATA_DIR / "price_gaps.csv"
PRICE_KINDS = ("msrp", "street", "used")
#: Kinds of cloud price, never mixed: an on-demand instance or pod, a spot/interruptible one,
#: a per-second serverless worker (converted to an hour).
CLOUD_KINDS = ("on-demand", "spot", "serverless")
DEFAULT_MAX_AGE_DAYS = 365

PURCHASE_SCHEMA: tuple[Field, ...] = (
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("kind", "choice", choices=PRICE_KINDS),
    Field("usd", "float", low=1, high=10_000_000),
    Field("date", "date", help="when the price was seen, YYYY-MM-DD"),
    Field("source_url", "url"),
    Field("note", "text", required=False),
)
CLOUD_SCHEMA: tuple[Field, ...] = (
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("provider", "text"),
    Field("offering", "text", help="instance or plan name"),
    Field("kind", "choice", choices=CLOUD_KINDS, default="on-demand"),
    Field("gpus_per_offering", "int", low=1, high=1024),
    Field("usd_per_hour", "float", low=0.001, high=10_000, help="per GPU"),
    Field("date", "date", help="when the price was seen, YYYY-MM-DD"),
    Field("source_url", "url"),
    Field("note", "text", required=False),
    Field(
        "region", "text", required=False, default="", help="the provider's region or zone, where it gives one"
    ),
)
#: Why a GPU has no price of a kind: what was searched, and when.
GAPS_SCHEMA: tuple[Field, ...] = (
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("what", "choice", choices=("purchase",) + CLOUD_KINDS),
    Field("reason", "text"),
    Field("checked", "date", help="when the sources were last searched, YYYY-MM-DD"),
)
#: What one price is: a user's row replaces the shipped rows of the same price.
_KEYS = {"purchase": ("gpu", "kind"), "cloud": ("gpu", "provider", "offering", "kind", "region")}
#: What one cloud offer is: its history has a row per date.
CLOUD_KEYS = _KEYS["cloud"]
#: What one row is: a price on a day (a history has several days).


@dataclass
class Prices:
    """Purchase and cloud prices as frames (canonical GPU names, ``stale`` and ``origin`` columns)."""

    purchase: pd.DataFrame
    cloud: pd.DataFrame
    max_age_days: int = DEFAULT_MAX_AGE_DAYS
    today: date | None = None
    gaps: dict[tuple[str, str], str] | None = None  # (gpu, purchase|cloud kind) -> why no price

    @functools.cached_property
    def _purchase_by_gpu(self) -> dict[str, pd.DataFrame]:
        return dict(tuple(self.purchase.groupby("gpu", sort=False))) if len(self.purchase) else {}

    @functools.cached_property
    def _cloud_by_gpu(self) -> dict[tuple[str, str], pd.DataFrame]:
        return dict(tuple(self.cloud.groupby(["gpu", "kind"], sort=False))) if len(self.cloud) else {}

    def purchase_of(self, gpu: str) -> pd.DataFrame:
        """Every purchase price row of ``gpu`` (grouped once: a ranking asks for each GPU's)."""
        return self._purchase_by_gpu.get(gpu, self.purchase.iloc[0:0])

    @functools.cached_property
    def _held_purchases(self) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
        """The purchase price that holds of each GPU and kind (the newest of its history), as
        records by GPU: of every row, and of the rows the checks did not flag."""
        if self.purchase.empty:
            return {}, {}
        checked = self.purchase
        if "flag" in checked:  # a book read by load_prices; one made by hand has no checks
            checked = checked[checked["flag"].fillna("") == ""]

        def by_gpu(frame: pd.DataFrame) -> dict[str, list[dict]]:
            out: dict[str, list[dict]] = {}
            for row in latest(frame, ("gpu", "kind")).to_dict("records"):
                out.setdefault(row["gpu"], []).append(row)
            return out

        return by_gpu(self.purchase), by_gpu(checked)

    def held_purchases(self, gpu: str, unflagged: bool = True) -> list[dict]:
        """The purchase prices that hold for ``gpu``, one per kind, oldest first; only those the
        checks did not flag unless ``unflagged`` is False."""
        return self._held_purchases[1 if unflagged else 0].get(gpu, [])

    def cloud_of(self, gpu: str, kind: str) -> pd.DataFrame:
        """Every cloud price row of ``gpu`` of ``kind`` (on-demand or spot)."""
        return self._cloud_by_gpu.get((gpu, kind), self.cloud.iloc[0:0])

    def gap(self, gpu: str, what: str) -> str | None:
        """Why ``gpu`` has no price of kind ``what`` (``purchase`` or a cloud kind), if known."""
        return (self.gaps or {}).get((gpu, what))

    def as_of(self, day: date | str) -> Prices:
        """The prices that held on ``day``: rows dated after it dropped, ages and staleness counted
        from it. Within a history the newest row on or before ``day`` is the one that holds."""
        if isinstance(day, str):
            try:
                day = date.fromisoformat(day)
            except ValueError:
                from ..errors import ParameterError

                raise ParameterError(
                    f"as-of date {day!r} is not a date; write YYYY-MM-DD such as 2024-06-01"
                ) from None
        return Prices(
            _aged(
                self.purchase[pd.to_datetime(self.purchase["date"]) <= pd.Timestamp(day)],
                day,
                self.max_age_days,
                purchase=True,
            ),
            _aged(
                self.cloud[pd.to_datetime(self.cloud["date"]) <= pd.Timestamp(day)], day, self.max_age_days
            ),
            self.max_age_days,
            day,
            self.gaps,
        )

    def current(self) -> Prices:
        """Only the price that holds now of each history (the newest row per price)."""
        return Prices(
            latest(self.purchase, _KEYS["purchase"]),
            latest(self.cloud, _KEYS["cloud"]),
            self.max_age_days,
            self.today,
            self.gaps,
        )

    def stale(self) -> pd.DataFrame:
        """Every stale row of either table, for a report's warning list."""
        cols = ["gpu", "what", "usd", "date", "source_url"]
        p = (
            self.purchase[self.purchase["stale"]].assign(what=lambda d: d["kind"])[cols]
            if len(self.purchase)
            else None
        )
        c = (
            self.cloud[self.cloud["stale"]].assign(
                what=lambda d: d["provider"] + " " + d["offering"], usd=lambda d: d["usd_per_hour"]
            )[cols]
            if len(self.cloud)
            else None
        )
        parts = [x for x in (p, c) if x is not None and len(x)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def load_gaps(catalogue=None, today: date | None = None, path: str | os.PathLike = GAPS_PATH) -> dict:
    """``data/price_gaps.csv`` as ``{(gpu, what): "reason (searched DATE)"}``."""
    # the file is read now: its search dates are checked against today, not an as-of date
    records, problems = parse_rows(
        Path(path), GAPS_SCHEMA, max(today or date.today(), date.today()), what="price gap"
    )
    cat = specs.load_catalogue() if catalogue is None else catalogue
    out = {}
    for line, row in records:
        try:
            gpu = specs.resolve(row["gpu"], cat).gpu
        except UnknownGPUError as exc:
            problems.append(Problem(Path(path), line, "gpu", str(exc), row["gpu"]))
            continue
        out[(gpu, row["what"])] = f"{row['reason']} (searched {row['checked']})"
    if problems:
        raise DataError(problems)
    return out


def file_kind(path: Path) -> str:
    """``purchase`` or ``cloud``, from a price file's header."""
    header, _ = read_rows(path)
    if "usd_per_hour" in header:
        return "cloud"
    if "usd" in header and "kind" in header:
        return "purchase"
    raise DataError(
        [
            Problem(
                path,
                1,
                None,
                (
                    "is neither a purchase price file (gpu,kind,usd,date,source_url,note) nor a cloud price file "
                    "(gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note); fix its header"
                ),
            )
        ]
    )


def read_price_file(
    path: str | os.PathLike, kind: str | None = None, catalogue=None, today: date | None = None
) -> pd.DataFrame:
    """One validated price file with canonical GPU names; :class:`DataError` names line, column, fix."""
    path = Path(path)
    kind = kind or file_kind(path)
    schema = PURCHASE_SCHEMA if kind == "purchase" else CLOUD_SCHEMA
    cat = specs.load_catalogue() if catalogue is None else catalogue
    rows, problems = parse_rows(path, schema, today or date.today(), what="price")
    lines = {id(row): line for line, row in rows}
    keys = _KEYS[kind] + ("date",)
    kept = specs.resolve_rows(
        path, rows, cat, lambda r: tuple(r[k] for k in keys), problems, f"same {', '.join(keys)}"
    )
    if problems:
        raise DataError(sorted(problems, key=lambda p: p.line or 0))
    frame = to_frame(kept, schema)
    frame["line"] = [lines[id(row)] for row in kept]  # where a finding about the row points
    if kind == "cloud":  # a file without regions: one offer per provider and offering
        frame["region"] = frame["region"].fillna("")
    frame["origin"] = str(path)
    return frame


def _merge(shipped: pd.DataFrame, user: pd.DataFrame, kind: str) -> pd.DataFrame:
    keys = list(_KEYS[kind])
    if user is None or user.empty:
        return shipped
    mask = shipped.set_index(keys).index.isin(user.set_index(keys).index)
    return pd.concat([shipped[~mask], user], ignore_index=True)


def load_prices(
    user_files=None,
    max_age_days: int = DEFAULT_MAX_AGE_DAYS,
    today: date | None = None,
    catalogue=None,
    as_of: date | str | None = None,
) -> Prices:
    """The shipped prices, overridden and extended by the refreshed cloud offers (``gpukit prices
    refresh``: :func:`gpukit.resources.refreshed_path`, where there are any) and then by the
    user's own price files; with ``as_of``
    (a date or YYYY-MM-DD), the prices that held on that day (:meth:`Prices.as_of`)."""
    if max_age_days is None or max_age_days < 1:
        from ..errors import ParameterError

        raise ParameterError(f"max age {max_age_days!r} days must be at least 1")
    today = today or date.today()
    if isinstance(user_files, (str, os.PathLike)):
        user_files = [user_files]
    files = [Path(f) for f in user_files or [] if f]
    if catalogue is None:  # the shipped catalogue: kept between runs while the code and files are the same
        book = cache.cached(
            "prices",
            [PURCHASE_PATH, CLOUD_PATH, GAPS_PATH, *cache.data_files(), *files],
            lambda: _load(files, max_age_days, today, specs.load_catalogue()),
            also=f"{today.isoformat()} {max_age_days} {[str(f.resolve()) for f in files]}",
        )
    else:
        book = _load(files, max_age_days, today, catalogue)
    return book.as_of(as_of) if as_of else book


def _load(files: list[Path], max_age_days: int, today: date, cat: pd.DataFrame) -> Prices:
    """:func:`load_prices`'s book, read and checked."""
    purchase = read_price_file(PURCHASE_PATH, "purchase", cat, today)
    cloud = read_price_file(CLOUD_PATH, "cloud", cat, today)
    refreshed = refreshed_path()
    if refreshed.is_file():  # `gpukit prices refresh`'s offers, over the shipped ones
        cloud = _merge(cloud, read_price_file(refreshed, "cloud", cat, today), "cloud")
    for f in files:
        kind = file_kind(f)
        frame = read_price_file(f, kind, cat, today)
        if kind == "purchase":
            purchase = _merge(purchase, frame, kind)
        else:
            cloud = _merge(cloud, frame, kind)
    # the sanity checks: a row that fails keeps its place, with the reason, and is never used silently
    purchase = purchase.assign(
        flag=price_checks.flag_purchase(purchase.reset_index(drop=True), cat).to_numpy()
    )
    cloud = cloud.assign(
        flag=price_checks.flag_cloud(cloud.reset_index(drop=True), purchase.reset_index(drop=True)).to_numpy()
    )
    return Prices(
        _aged(purchase, today, max_age_days, purchase=True),
        _aged(cloud, today, max_age_days),
        max_age_days,
        today,
        load_gaps(cat, today),
    )


def _aged(frame: pd.DataFrame, today: date, max_age_days: int, purchase: bool = False) -> pd.DataFrame:
    """``frame`` with ``age_days`` and ``stale`` counted from ``today``."""
    frame = frame.reset_index(drop=True).copy()
    frame["age_days"] = (pd.Timestamp(today) - pd.to_datetime(frame["date"])).dt.days
    frame["stale"] = frame["age_days"] > max_age_days
    if purchase:  # a launch price is a dated fact, not a quote that goes out of date
        frame.loc[frame["kind"] == "msrp", "stale"] = False
    return frame


def latest(frame: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """The newest row of each price (``keys``): what holds on the day the frame was cut at."""
    if frame.empty:
        return frame
    present = [k for k in keys if k in frame]  # a frame built before regions were recorded has none
    return frame.sort_values("date").groupby(present, sort=False, dropna=False).tail(1)
