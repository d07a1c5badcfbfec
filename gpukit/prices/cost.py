"""Cost per TFLOP: to buy, to own (with power) and to rent, per GPU and precision.

Every function is a pure function of documented inputs whose units are in their names. A
missing price is an explicit ``None`` with a note saying which price is missing, never NaN
arithmetic. Peak rates are the catalogue's dense datasheet figures (TFLOPS; TOPS for int8).
"""

from __future__ import annotations

import statistics

import pandas as pd

from .. import precision as prec
from .. import specs
from ..errors import ParameterError
from ..specs.matmul_rates import sustained_tflops
from . import checks as price_checks
from .book import CLOUD_KEYS, CLOUD_KINDS, PRICE_KINDS, Prices, latest

HOURS_PER_YEAR = 8766  # 365.25 days
HOURS_PER_MONTH = HOURS_PER_YEAR / 12

#: Defaults of the cost model (every one is a parameter).
DEFAULTS = {"electricity_usd_per_kwh": 0.15, "years": 3.0, "utilization": 0.5, "pue": 1.0}
PRICE_CHOICES = PRICE_KINDS + ("cloud", "any")
#: Which purchase price "any" takes where no street or used price still holds: the newest market
#: price of these kinds in this order, then the launch price. Where one does hold, "any" takes the
#: cheaper of the card's street and used prices that hold: what a buyer would pay today.
ANY_ORDER = ("street", "used", "msrp")


def usd_per_tflop(price_usd: float | None, peak_tflops: float | None) -> float | None:
    """Purchase dollars per peak TFLOPS (``None`` without a price or a peak)."""
    if price_usd is None or not peak_tflops or peak_tflops != peak_tflops:
        return None
    return price_usd / peak_tflops


def energy_usd(
    tdp_w: float, years: float, utilization: float, electricity_usd_per_kwh: float, pue: float = 1.0
) -> float:
    """Electricity over ``years`` at TDP for the ``utilization`` share of the hours, times PUE."""
    return tdp_w / 1000 * HOURS_PER_YEAR * years * utilization * electricity_usd_per_kwh * pue


def tco_usd(
    price_usd: float | None,
    tdp_w: float,
    years: float,
    utilization: float,
    electricity_usd_per_kwh: float,
    pue: float = 1.0,
) -> float | None:
    """Purchase plus electricity over ``years`` (``None`` without a price)."""
    if price_usd is None:
        return None
    return price_usd + energy_usd(tdp_w, years, utilization, electricity_usd_per_kwh, pue)


def break_even_months(
    price_usd: float | None,
    cloud_usd_per_hour: float | None,
    tdp_w: float,
    utilization: float,
    electricity_usd_per_kwh: float,
    pue: float = 1.0,
) -> float | None:
    """Months after which buying costs less than renting the same GPU-hours.

    Owning costs the price once plus power for each hour used; renting costs the hourly price
    for each hour used. ``None`` without both prices, or when renting an hour costs no more
    than powering one (buying never pays off).
    """
    if price_usd is None or cloud_usd_per_hour is None:
        return None
    power_usd_per_hour = tdp_w / 1000 * electricity_usd_per_kwh * pue
    saving_per_month = (cloud_usd_per_hour - power_usd_per_hour) * HOURS_PER_MONTH * utilization
    if saving_per_month <= 0:
        return None
    return price_usd / saving_per_month


def usd_per_million_items(usd_per_hour: float | None, items_per_s: float | None) -> float | None:
    """Dollars per million units of work (images, tokens) at ``items_per_s``."""
    if usd_per_hour is None or not items_per_s:
        return None
    return usd_per_hour / (items_per_s * 3600) * 1e6


def _check(name: str, value: float, low: float, high: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise ParameterError(f"{name} {value!r} is out of range; expected {low:g} to {high:g}")
    return float(value)


def common_kind(prices: Prices, gpus, order=ANY_ORDER) -> str | None:
    """The first kind of purchase price in ``order`` that every one of ``gpus`` has: what a
    comparison of their prices should use (a used price against a new one compares nothing).
    A market price that still holds for every one of them (street or used, not stale) comes first."""
    held = latest(prices.purchase, ("gpu", "kind"))
    kinds = [held[held["gpu"] == g] for g in gpus]
    fresh = [set(k.loc[_market_now(k), "kind"]) for k in kinds]
    every = [set(k["kind"]) for k in kinds]
    return next((k for have in (fresh, every) for k in order if all(k in h for h in have)), None)


def _market_now(rows: pd.DataFrame) -> pd.Series:
    """Which purchase prices say what a card sells for now: a street or used price that is not
    stale (a launch price is never stale, and never what a card sells for years later)."""
    return ~rows["stale"] & (rows["kind"] != "msrp")


def _unflagged(frame: pd.DataFrame) -> pd.Series:
    """Which rows passed the price checks (:mod:`gpukit.prices.checks`)."""
    return frame["flag"].fillna("") == "" if "flag" in frame else pd.Series(True, index=frame.index)


def _pick_purchase(held: list[dict], kind: str) -> dict | None:
    """Of the prices that hold for one GPU (one per kind: :meth:`Prices.held_purchases`), the one a
    question of ``kind`` takes: for ``any`` the cheaper of the street and used prices that still
    hold, or where none does the first kind of :data:`ANY_ORDER` that has one; else ``kind``'s,
    a market price that still holds before a stale one."""
    market = [r for r in held if not r["stale"] and r["kind"] != "msrp"]
    if kind == "any" and market:
        return dict(min(market, key=lambda r: (r["usd"], r["kind"])))
    order = ANY_ORDER if kind == "any" else (kind,)
    for pool in (market, held):
        for k in order:
            hit = [r for r in pool if r["kind"] == k]
            if hit:
                return dict(hit[0])
    return None


def purchase_left_out(prices: Prices, gpu: str, kind: str) -> str:
    """The purchase price of ``gpu`` the checks flagged that would otherwise have been chosen, and
    why, as a clause ("" where none was)."""
    would = _pick_purchase(prices.held_purchases(gpu, unflagged=False), kind)
    if would is None or not would.get("flag"):
        return ""
    return f"flagged {would['kind']} price left out (${float(would['usd']):,.0f}, {would['date']}: {would['flag']})"


def _purchase(prices: Prices, gpu: str, kind: str) -> dict | None:
    """The purchase price of ``gpu`` that holds (the newest of its history) of ``kind``; for
    ``any`` the cheaper of its street and used prices that still hold (not stale), or where none
    does, the first kind of :data:`ANY_ORDER` that has a price. A price the checks
    flagged (:mod:`gpukit.prices.checks`) is never chosen; :func:`purchase_left_out` says where one
    would have been."""
    return _pick_purchase(prices.held_purchases(gpu), kind)


#: Which cloud rate an answer takes by default: the market's, the median of the fresh offers (one
#: provider's cheapest is not what most renters pay); ``cheapest`` and a provider's name are there too.
DEFAULT_CLOUD = "median"


def _cloud(prices: Prices, gpu: str, choice: str, kind: str = "on-demand") -> dict | None:
    """The cloud price of ``gpu`` of ``kind`` (never another kind): the cheapest, the median or a
    named provider's, each offering at the newest price of its history, among the offerings whose
    price still holds (not stale) where there are any: an offering last priced years ago may be
    gone, and a current one is what can be rented. Only where every price is stale does a stale
    one serve, and its note says so."""
    rows = latest(prices.cloud_of(gpu, kind), CLOUD_KEYS)
    if choice not in ("cheapest", "median"):
        rows = rows[rows["provider"].str.casefold() == choice.casefold()]
    flagged = int((~_unflagged(rows)).sum())
    rows = rows[_unflagged(rows)]
    if rows.empty:
        return None
    if not rows["stale"].all():
        rows = rows[~rows["stale"]]
    if choice == "median" and len(rows) > 1:  # (the median of one offer is that offer)
        med = statistics.median(rows["usd_per_hour"])
        low, high = rows["usd_per_hour"].min(), rows["usd_per_hour"].max()
        providers = rows["provider"].nunique()
        return {
            "provider": f"median of {len(rows)} offers from {providers} provider{'s' if providers > 1 else ''} "
            f"(${low:.2f}-${high:.2f})",
            "offering": "",
            "usd_per_hour": med,
            "date": max(rows["date"]),  # no offer newer than this
            "stale": bool(rows["stale"].any()),
            "source_url": f"{len(rows)} sources",
            "left_out": price_checks.left_out_note(flagged),
        }
    # the cheapest (of a named provider's offerings, or of all); of equal prices the newest
    cheapest = rows.sort_values(["usd_per_hour", "date"], ascending=[True, False]).iloc[0].to_dict()
    return {**cheapest, "left_out": price_checks.left_out_note(flagged)}


def rented_variant(
    prices: Prices, gpu: specs.GPU, kind: str = "on-demand", catalogue: pd.DataFrame | None = None
) -> tuple[specs.GPU, str | None]:
    """The variant a cloud question about ``gpu`` should price: where a plain name picked a default
    variant (``V100`` is the V100 PCIe 16GB), the variant the name fits that clouds offer most of
    ``kind``, and a sentence saying so; otherwise ``gpu`` itself and None."""
    r = gpu.resolution
    if not r.defaulted:
        return gpu, None
    held = latest(prices.cloud[prices.cloud["kind"] == kind], CLOUD_KEYS)
    offers = {v: int((held["gpu"] == v).sum()) for v in r.matches}
    most = max(r.matches, key=lambda v: (offers[v], v == r.gpu))
    if most == gpu.name:
        return gpu, None
    counts = ", ".join(f"{v} {n}" for v, n in offers.items())
    return specs.gpu(most, catalogue), (
        f"{r.query!r} is priced in the cloud as the {most}, the variant clouds rent most "
        f"({kind} offers: {counts})"
    )


def cost_table(
    prices: Prices,
    gpus=None,
    precisions=("fp32", "fp16"),
    price_kind: str = "any",
    electricity_usd_per_kwh: float = DEFAULTS["electricity_usd_per_kwh"],
    years: float = DEFAULTS["years"],
    utilization: float = DEFAULTS["utilization"],
    pue: float = DEFAULTS["pue"],
    cloud: str = DEFAULT_CLOUD,
    throughput_items_per_s=None,
    catalogue=None,
    cloud_kind: str = "on-demand",
) -> pd.DataFrame:
    """One row per GPU x precision: peak, prices, $/TFLOP to buy, own and rent, break-even, TFLOPS/W.

    ``sustained_tflops`` is the tensor-core peak at the share of it the GPU was measured to
    sustain in a large matrix multiply (:func:`gpukit.specs.matmul_rates.sustained_tflops`; ``sustained_basis``
    says measured, or the median share where no run names the GPU; CUDA-core FP32 keeps its
    datasheet figure), and ``usd_per_sustained_tflop``, ``tco_usd_per_sustained_tflop`` and
    ``cloud_usd_per_sustained_tflop_hour`` price it.

    ``price_kind`` is msrp, street, used, cloud (purchase columns empty) or any (street, then
    used, then msrp). ``cloud`` is cheapest, median or a provider's name, among cloud prices of
    ``cloud_kind`` only (on-demand by default; spot and serverless are never mixed in). Where a
    price has a history, the newest row holds (cut ``prices`` with :meth:`Prices.as_of` first to
    price another day).
    ``note`` says what is missing or stale; ``purchase_note`` and ``cloud_note`` hold its parts that
    concern the purchase-based and the cloud columns (a precision the GPU lacks goes with the purchase).
    ``throughput_items_per_s`` maps GPU names to a measured or predicted throughput, which adds
    dollars per million items of work.
    """
    if price_kind not in PRICE_CHOICES:
        raise ParameterError(f"price kind {price_kind!r}: use one of {', '.join(PRICE_CHOICES)}")
    if cloud_kind not in CLOUD_KINDS:
        raise ParameterError(f"cloud price kind {cloud_kind!r}: use one of {', '.join(CLOUD_KINDS)}")
    kwh = _check("electricity price (USD/kWh)", electricity_usd_per_kwh, 0.0, 10.0)
    years = _check("years", years, 0.01, 50.0)
    util = _check("utilization", utilization, 0.0, 1.0)
    pue = _check("PUE", pue, 1.0, 5.0)
    cat = specs.load_catalogue() if catalogue is None else catalogue
    selection = specs.select(cat, gpus)
    precs = prec.normalize_all(precisions)
    work = {specs.resolve(k, cat).gpu: v for k, v in (throughput_items_per_s or {}).items()}
    rows = []
    for _, g in selection.iterrows():
        buy = None if price_kind == "cloud" else _purchase(prices, g["gpu"], price_kind)
        rent = _cloud(prices, g["gpu"], cloud, cloud_kind)
        for p in precs:
            notes = _cost_notes(prices, g, p, buy, rent, price_kind, cloud, cloud_kind)
            rows.append(
                _cost_row(g, p, buy, rent, notes, cloud_kind, years, util, kwh, pue, work.get(g["gpu"]))
            )
    frame = pd.DataFrame(rows)
    frame.attrs.update(
        {
            "electricity_usd_per_kwh": kwh,
            "years": years,
            "utilization": util,
            "pue": pue,
            "price_kind": price_kind,
            "cloud": cloud,
            "cloud_kind": cloud_kind,
        }
    )
    return frame


def price_of(
    prices: Prices,
    gpu,
    price_kind: str = "any",
    cloud: str = DEFAULT_CLOUD,
    cloud_kind: str = "on-demand",
    precision: str | None = "fp16",
    years: float = DEFAULTS["years"],
    utilization: float = DEFAULTS["utilization"],
    electricity_usd_per_kwh: float = DEFAULTS["electricity_usd_per_kwh"],
    pue: float = DEFAULTS["pue"],
) -> dict:
    """One GPU's prices, as :func:`cost_table` reads them, without its peaks and ratios: the purchase
    of ``price_kind`` and its total cost of ownership over ``years`` at ``utilization``, the cloud
    rate of ``cloud``, and the notes on what is missing or stale (``purchase_note``, ``cloud_note``;
    a ``precision`` the GPU lacks goes with the purchase; None: a job that asks for none, an LLM's).
    ``gpu`` is a catalogue row."""
    if price_kind not in PRICE_CHOICES:
        raise ParameterError(f"price kind {price_kind!r}: use one of {', '.join(PRICE_CHOICES)}")
    years = _check("years", years, 0.01, 50.0)
    util = _check("utilization", utilization, 0.0, 1.0)
    kwh = _check("electricity price (USD/kWh)", electricity_usd_per_kwh, 0.0, 10.0)
    pue = _check("PUE", pue, 1.0, 5.0)
    buy = None if price_kind == "cloud" else _purchase(prices, gpu["gpu"], price_kind)
    rent = _cloud(prices, gpu["gpu"], cloud, cloud_kind)
    mode, bought, rented = _cost_notes(prices, gpu, precision, buy, rent, price_kind, cloud, cloud_kind)
    price = float(buy["usd"]) if buy else None
    return {
        "gpu": gpu["gpu"],
        "price_kind": buy["kind"] if buy else None,
        "price_usd": price,
        "price_date": buy["date"] if buy else None,
        "price_source_url": buy["source_url"] if buy else None,
        "tco_usd": tco_usd(price, gpu["tdp_w"], years, util, kwh, pue),
        "cloud_provider": rent["provider"] if rent else None,
        "cloud_usd_per_hour": float(rent["usd_per_hour"]) if rent else None,
        "cloud_date": rent["date"] if rent else None,
        "cloud_source_url": rent["source_url"] if rent else None,
        "purchase_note": "; ".join(mode + bought),
        "cloud_note": "; ".join(rented),
    }


def _stale(price: dict | None) -> bool:
    """Whether a purchase or cloud price (:func:`_purchase`, :func:`_cloud`) is stale."""
    return bool(price and price.get("stale"))


def _cost_notes(
    prices: Prices,
    g,
    p: str | None,
    buy: dict | None,
    rent: dict | None,
    price_kind: str,
    cloud: str,
    cloud_kind: str,
) -> tuple[list[str], list[str], list[str]]:
    """What :func:`cost_table`'s notes say of GPU ``g`` in precision ``p``, by what each concerns:
    the precision, the purchase, the rent."""
    mode, bought, rented = [], [], []
    if p is not None and prec.peak_tflops(g, p) is None:
        mode.append(f"{g['architecture']} has no {p} mode")
    if price_kind != "cloud" and buy is None:
        why = prices.gap(g["gpu"], "purchase")
        bought.append(
            "no "
            + ("purchase" if price_kind == "any" else price_kind)
            + " price"
            + (f": {why}" if why else "")
        )
    if rent is None:
        anywhere = cloud in ("cheapest", "median")
        why = prices.gap(g["gpu"], cloud_kind) if anywhere else None
        rented.append(
            f"no {cloud_kind} cloud price"
            + ("" if anywhere else f" from {cloud}")
            + (f": {why}" if why else "")
        )
    if _stale(buy):
        bought.append(f"purchase price is stale ({buy['date']})")
    if _stale(rent):  # a stale offer may be gone: say how old the newest one is
        rented.append(f"no {cloud_kind} offer newer than {rent['date']}")
    if price_kind != "cloud":
        left = purchase_left_out(prices, g["gpu"], price_kind)
        bought += [left] if left else []
    if rent and rent.get("left_out"):
        rented.append(rent["left_out"])
    return mode, bought, rented


def _cost_row(
    g,
    p: str,
    buy: dict | None,
    rent: dict | None,
    notes: tuple[list[str], list[str], list[str]],
    cloud_kind: str,
    years: float,
    util: float,
    kwh: float,
    pue: float,
    items_per_s: float | None,
) -> dict:
    """:func:`cost_table`'s row of GPU ``g`` in precision ``p``, from its purchase and cloud prices
    and its notes (:func:`_cost_notes`)."""
    peak = prec.peak_tflops(g, p)
    sustained, basis = sustained_tflops(g, p)
    mode, bought, rented = notes
    price_stale, cloud_stale = _stale(buy), _stale(rent)
    price = float(buy["usd"]) if buy else None
    hourly = float(rent["usd_per_hour"]) if rent else None
    tco = tco_usd(price, g["tdp_w"], years, util, kwh, pue)
    return {
        "gpu": g["gpu"],
        "precision": p,
        "peak_tflops": peak,
        "sustained_tflops": sustained,
        "sustained_basis": basis,
        "price_kind": buy["kind"] if buy else None,
        "price_usd": price,
        "price_date": buy["date"] if buy else None,
        "price_source_url": buy["source_url"] if buy else None,
        "usd_per_tflop": usd_per_tflop(price, peak),
        "usd_per_sustained_tflop": usd_per_tflop(price, sustained),
        "energy_usd": energy_usd(g["tdp_w"], years, util, kwh, pue),
        "tco_usd": tco,
        "tco_usd_per_tflop": usd_per_tflop(tco, peak),
        "tco_usd_per_sustained_tflop": usd_per_tflop(tco, sustained),
        "cloud_provider": rent["provider"] if rent else None,
        "cloud_offering": rent["offering"] if rent else None,
        "cloud_kind": cloud_kind,
        "cloud_usd_per_hour": hourly,
        "cloud_date": rent["date"] if rent else None,
        "cloud_source_url": rent["source_url"] if rent else None,
        "cloud_usd_per_tflop_hour": usd_per_tflop(hourly, peak),
        "cloud_usd_per_sustained_tflop_hour": usd_per_tflop(hourly, sustained),
        "break_even_months": break_even_months(price, hourly, g["tdp_w"], util, kwh, pue),
        "tflops_per_watt": peak / g["tdp_w"] if peak else None,
        "usd_per_million_items": usd_per_million_items(hourly, items_per_s),
        "stale": price_stale or cloud_stale,
        "price_stale": price_stale,
        "cloud_stale": cloud_stale,
        "note": "; ".join(mode + bought + rented),
        "purchase_note": "; ".join(mode + bought),
        "cloud_note": "; ".join(rented),
    }


def owned_usd_per_hour(tco: float | None, years: float, utilization: float) -> float | None:
    """The total cost of ownership spread over the hours the GPU works."""
    if tco is None or utilization <= 0:
        return None
    return tco / (HOURS_PER_YEAR * years * utilization)


def work_cost_table(
    prices: Prices,
    throughput: pd.DataFrame,
    price_kind: str = "any",
    electricity_usd_per_kwh: float = DEFAULTS["electricity_usd_per_kwh"],
    years: float = DEFAULTS["years"],
    utilization: float = DEFAULTS["utilization"],
    pue: float = DEFAULTS["pue"],
    cloud: str = DEFAULT_CLOUD,
    catalogue=None,
) -> pd.DataFrame:
    """Dollars per million units of work, renting and owning, for each GPU of ``throughput``.

    ``throughput`` has ``gpu``, ``throughput``, ``throughput_unit`` and optionally
    ``measured_throughput`` (a :func:`gpukit.perfmodel.predict_table` frame): a measurement is
    used where there is one, the prediction otherwise, and ``basis`` says which.
    """
    frame = throughput.dropna(subset=["throughput"])
    rate = {}
    basis = {}
    for _, r in frame.iterrows():
        measured = r.get("measured_throughput")
        use_measured = measured is not None and measured == measured
        rate[r["gpu"]] = float(measured if use_measured else r["throughput"])
        basis[r["gpu"]] = "measured" if use_measured else "predicted"
    costs = cost_table(
        prices,
        list(rate),
        ["fp32"],
        price_kind,
        electricity_usd_per_kwh,
        years,
        utilization,
        pue,
        cloud,
        rate,
        catalogue,
    )
    unit = frame["throughput_unit"].iloc[0] if len(frame) else ""
    rows = []
    for _, c in costs.iterrows():
        owned = owned_usd_per_hour(c["tco_usd"], years, utilization)
        rows.append(
            {
                "gpu": c["gpu"],
                "throughput": rate[c["gpu"]],
                "throughput_unit": unit,
                "basis": basis[c["gpu"]],
                "cloud_usd_per_hour": c["cloud_usd_per_hour"],
                "cloud_usd_per_million_items": c["usd_per_million_items"],
                "owned_usd_per_hour": owned,
                "owned_usd_per_million_items": usd_per_million_items(owned, rate[c["gpu"]]),
                "note": c["note"],
            }
        )
    return pd.DataFrame(rows)


def pareto_front(frame: pd.DataFrame, cost: str, value: str) -> pd.DataFrame:
    """Rows no other row beats on both: lower ``cost`` and higher ``value`` (NaNs dropped)."""
    data = frame.dropna(subset=[cost, value]).sort_values([cost, value], ascending=[True, False])
    best = -float("inf")
    keep = []
    for idx, row in data.iterrows():
        if row[value] > best:
            keep.append(idx)
            best = row[value]
    return data.loc[keep]


def price_history(
    prices: Prices, precision: str = "fp16", gpus=None, kinds=("street", "used", "msrp"), catalogue=None
) -> pd.DataFrame:
    """Every dated purchase price of the GPUs (all with a price by default) as dollars per dense
    peak TFLOPS at ``precision``: one row per GPU, kind and date, oldest first. GPUs that cannot
    run the precision are left out, and so are the prices the checks flagged (their count is the
    frame's ``flagged_left_out`` attribute)."""
    cat = specs.load_catalogue() if catalogue is None else catalogue
    p = prec.normalize(precision)
    rows = prices.purchase[prices.purchase["kind"].isin(kinds)]
    flagged = int((~_unflagged(rows)).sum())
    rows = rows[_unflagged(rows)]
    if gpus:
        rows = rows[rows["gpu"].isin(set(specs.select(cat, gpus)["gpu"]))]
    out = []
    for _, r in rows.iterrows():
        peak = prec.peak_tflops(specs.lookup(r["gpu"], cat), p)
        if peak:
            out.append(
                {
                    "gpu": r["gpu"],
                    "kind": r["kind"],
                    "date": pd.Timestamp(r["date"]),
                    "usd": float(r["usd"]),
                    "peak_tflops": peak,
                    "usd_per_tflop": float(r["usd"]) / peak,
                    "precision": p,
                    "stale": bool(r["stale"]),
                    "source_url": r["source_url"],
                }
            )
    cols = ["gpu", "kind", "date", "usd", "peak_tflops", "usd_per_tflop", "precision", "stale", "source_url"]
    frame = pd.DataFrame(out, columns=cols).sort_values(["gpu", "kind", "date"]).reset_index(drop=True)
    frame.attrs["flagged_left_out"] = flagged
    return frame
