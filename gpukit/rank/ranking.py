"""Ranking every catalogue GPU for one job: the jobs and prices asked about, the fit, speed and
price joined for each GPU, and the order they are ranked in (see :mod:`gpukit.rank`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import pandas as pd

from .. import llm, memory, perfmodel, specs
from .. import precision as prec
from ..errors import ParameterError
from ..models.registry import check_mode
from ..prices import book as prices
from ..prices import cost
from ..units import figure, missing

#: The default batch is the largest that fits, or the smallest power of two below it whose
#: throughput is within this share of the throughput there: where a larger batch stops adding
#: throughput, its memory buys nothing.
PLATEAU = 0.02
#: Purchase kinds and the cloud, as ``--price-kind`` takes them; ``any`` is each card's cheaper of its
#: street and used prices that still hold, and every row says which kind it took.
PRICE_KINDS = (*prices.PRICE_KINDS, "any", "cloud")
CLOUD_KINDS = ("on-demand", "spot")
#: What each row of a ranking is, in this order: ranked (runs, fits and has a price), then the
#: GPUs without a price of the kind asked for, then those the job does not fit, then those that
#: cannot run its precision; "over budget" is the cheapest GPU, shown when a budget is below
#: every price.
STANDINGS = ("ranked", "no price", "does not fit", "cannot run", "over budget")

COLUMNS = (
    "rank",
    "gpu",
    "standing",
    "fits",
    "largest_batch",
    "batch_size",
    "throughput",
    "throughput_unit",
    "gpus",
    "price_kind",
    "price_usd",
    "cloud_usd_per_hour",
    "cloud_provider",
    "price_date",
    "price_source_url",
    "throughput_per_1k_usd",
    "usd_per_million_items",
    "error_pct",
    "graded",
    "within_error_of",
    "note",
    "price_note",
)


@dataclass(frozen=True)
class Job:
    """A model to train or run on each GPU: a workload ``gpukit predict`` knows whose memory
    ``gpukit fit`` can estimate (a ``keras.applications`` name, a built-in transformer)."""

    workload: str
    precision: str = "fp16"
    mode: str = "train"
    seq_len: int | None = None
    batch: int | None = None  # None: the largest that fits, capped at the plateau
    gpus: int = 1
    optimizer: str = "adam"

    def describe(self) -> str:
        what = "training" if self.mode == "train" else "inference"
        optimizer = f", {self.optimizer}" if self.mode == "train" else ""
        many = f", {self.gpus} GPUs data-parallel" if self.gpus > 1 else ""
        return f"{self.workload} {what} ({self.precision}{optimizer}{many})"


@dataclass(frozen=True)
class Price:
    """Which price a ranking divides by: a purchase kind, or the cloud of one kind."""

    kind: str = "street"  # msrp, street, used or cloud
    cloud_kind: str = "on-demand"
    cloud: str = cost.DEFAULT_CLOUD  # median (of fresh offers), cheapest or a provider's name
    budget_usd: float | None = None  # purchase: for all the GPUs; cloud: per hour for all of them

    def __post_init__(self) -> None:
        if self.kind not in PRICE_KINDS:
            raise ParameterError(f"price kind {self.kind!r}: use one of {', '.join(PRICE_KINDS)}")
        if self.cloud_kind not in CLOUD_KINDS:
            raise ParameterError(f"cloud kind {self.cloud_kind!r}: use one of {', '.join(CLOUD_KINDS)}")
        if self.budget_usd is not None and not self.budget_usd > 0:
            raise ParameterError(f"budget {self.budget_usd!r} must be a positive number of US dollars")

    @property
    def renting(self) -> bool:
        return self.kind == "cloud"

    def describe(self) -> str:
        if self.renting:
            return f"{self.cloud_kind} cloud rate ({self.cloud})"
        if self.kind == "any":
            return "purchase price (the cheaper of street and used)"
        return f"{self.kind} purchase price"


def _check_job(job: Job) -> None:
    prec.trainable(job.precision)  # one vocabulary: refuses what it does not know
    check_mode(job.mode)
    for name, value in (("--gpus", job.gpus), ("batch size", job.batch), ("sequence length", job.seq_len)):
        if value is not None and value < 1:
            raise ParameterError(f"{name} {value} must be at least 1")
    if job.gpus > 1 and job.mode != "train":
        raise ParameterError("--gpus ranks data-parallel training; leave out --mode infer")


def _largest_batches(job: Job, estimator, catalogue: pd.DataFrame, reserve: int) -> dict[str, int]:
    """Each GPU's largest batch per GPU by the memory estimate (0 where not even one fits)."""
    return {
        g["gpu"]: estimator.largest_batch(
            specs.gpu_memory_bytes(g), job.precision, job.optimizer, job.mode, reserve
        )
        for _, g in catalogue.iterrows()
    }


def _predictions(job: Job, batch: int, catalogue: pd.DataFrame) -> pd.DataFrame:
    """``perfmodel.predict_table`` at ``batch`` for every GPU of ``catalogue``, indexed by GPU."""
    extra = {"seq_len": job.seq_len} if job.seq_len is not None else {}
    frame = perfmodel.predict_table(
        job.workload, job.precision, batch, job.mode, None, catalogue=catalogue, count=job.gpus, **extra
    )
    return frame.set_index("gpu")


def _row(frame: pd.DataFrame, gpu: str, batch: int) -> dict:
    return {
        "batch_size": batch,
        **{k: frame.at[gpu, k] for k in ("throughput", "throughput_unit", "graded", "note")},
    }


def _speeds(job: Job, largest: dict[str, int], catalogue: pd.DataFrame) -> pd.DataFrame:
    """Per GPU the batch used and the prediction there: ``job.batch``, or else the smallest power
    of two whose throughput is within :data:`PLATEAU` of the throughput at the largest batch that
    fits (that batch itself where no power of two below it gets there). Predictions of one batch
    are made for all the GPUs that ask for it at once; a GPU stops being asked once it is settled."""
    gpus = list(catalogue["gpu"])
    if job.batch is not None:
        frame = _predictions(job, job.batch, catalogue)
        return pd.DataFrame({g: _row(frame, g, job.batch) for g in gpus}).T
    top = {g: max(largest[g], 1) for g in gpus}  # a GPU nothing fits on is shown at batch 1
    rows, best = {}, {}
    for batch in sorted(set(top.values())):
        asking = [g for g in gpus if top[g] == batch]
        frame = _predictions(job, batch, catalogue[catalogue["gpu"].isin(asking)])
        for g in asking:
            rows[g], best[g] = _row(frame, g, batch), frame.at[g, "throughput"]
    batch, open_ = 1, [g for g in gpus if top[g] > 1 and best[g] == best[g]]
    while open_:
        frame = _predictions(job, batch, catalogue[catalogue["gpu"].isin(open_)])
        for g in list(open_):
            throughput = frame.at[g, "throughput"]
            if throughput >= (1 - PLATEAU) * best[g]:
                rows[g] = _row(frame, g, batch)
            if throughput >= (1 - PLATEAU) * best[g] or batch * 2 >= top[g]:
                open_.remove(g)
        batch *= 2
    return pd.DataFrame(rows).T.loc[gpus]


def _price_rows(
    price: Price,
    book: prices.Prices,
    precision: str | None,
    catalogue: pd.DataFrame,
    years: float = cost.DEFAULTS["years"],
    utilization: float = cost.DEFAULTS["utilization"],
) -> pd.DataFrame:
    """Each GPU's price of the one kind asked for (:func:`gpukit.prices.cost.price_of`, its cost of
    ownership over ``years`` at ``utilization``), indexed by GPU."""
    rows = [
        cost.price_of(
            book,
            g,
            price.kind,
            price.cloud,
            price.cloud_kind,
            precision,
            years=years,
            utilization=utilization,
        )
        for _, g in catalogue.iterrows()
    ]
    return pd.DataFrame(rows).drop_duplicates("gpu").set_index("gpu")


def _work_per_dollar(row: dict, price: Price, count: int, years: float, utilization: float) -> dict:
    """Throughput per $1k of purchase price and dollars per million items, for ``count`` GPUs."""
    rate = row["throughput"]
    if price.renting:
        hourly = row["cloud_usd_per_hour"]
        return {
            "throughput_per_1k_usd": None,
            "usd_per_million_items": cost.usd_per_million_items(
                None if hourly is None else hourly * count, rate
            ),
        }
    total = None if row["price_usd"] is None else row["price_usd"] * count
    owned = cost.owned_usd_per_hour(
        None if row["tco_usd"] is None else row["tco_usd"] * count, years, utilization
    )
    return {
        "throughput_per_1k_usd": rate / total * 1000 if total and rate == rate else None,
        "usd_per_million_items": cost.usd_per_million_items(owned, rate),
    }


def _standing(row: dict, price: Price) -> str:
    if row["throughput"] != row["throughput"]:
        return "cannot run"
    if not row["fits"]:
        return "does not fit"
    priced = row["cloud_usd_per_hour"] if price.renting else row["price_usd"]
    return "ranked" if priced is not None else "no price"


def _order(frame: pd.DataFrame, price: Price) -> pd.DataFrame:
    """Ranked rows first, best work per dollar first; then the rest, fastest first."""
    key = "usd_per_million_items" if price.renting else "throughput_per_1k_usd"
    ranked = frame[frame["standing"] == "ranked"].sort_values(key, ascending=price.renting)
    rest = frame[frame["standing"] != "ranked"].copy()
    rest["_order"] = rest["standing"].map(STANDINGS.index)
    rest = rest.sort_values(["_order", "throughput"], ascending=[True, False]).drop(columns="_order")
    out = pd.concat([ranked, rest], ignore_index=True)
    out.insert(0, "rank", [i + 1 if s == "ranked" else None for i, s in enumerate(out["standing"])])
    out["rank"] = out["rank"].astype("Int64")
    return out


def _apply_budget(frame: pd.DataFrame, price: Price) -> tuple[pd.DataFrame, str]:
    """Drop what costs more than the budget and say how many; where every price is above it,
    keep only the cheapest GPU that runs the job, marked "over budget", and say so."""
    if price.budget_usd is None:
        return frame, ""
    column = "cloud_usd_per_hour" if price.renting else "price_usd"
    spend = pd.to_numeric(frame[column], errors="coerce") * frame["gpus"]
    over = spend > price.budget_usd
    unit = "/hour" if price.renting else ""
    within = ~over & spend.notna() & (frame["standing"] == "ranked")
    if within.any():
        kept = frame[~over]
        note = f"{int(over.sum())} GPU(s) cost more than ${figure(price.budget_usd)}{unit} and are left out"
        return kept, note if over.any() else ""
    runs = spend.where(frame["standing"] == "ranked")
    if runs.isna().all():
        return frame.iloc[0:0], f"no GPU that runs this has a {price.describe()}"
    cheapest = frame.loc[[runs.idxmin()]].assign(standing="over budget")
    return cheapest, (
        f"the budget ${figure(price.budget_usd)}{unit} is below every {price.describe()} of a GPU that "
        f"runs this; the cheapest is {cheapest['gpu'].iloc[0]} at ${figure(runs.min())}{unit}"
    )


def job_speeds(
    job: Job, catalogue: pd.DataFrame, runtime_reserve_bytes: int = memory.DEFAULT_RUNTIME_RESERVE_BYTES
) -> pd.DataFrame:
    """Each GPU of ``catalogue`` for ``job``, indexed by GPU: the largest batch that fits
    (``largest_batch``), the batch used (``batch_size``: ``job.batch``, or the largest that fits
    capped at :data:`PLATEAU`), whether it ``fits``, and the prediction there (``throughput``,
    ``throughput_unit``, ``graded``, ``note``). ``attrs["input_label"]`` says what one example is."""
    _check_job(job)
    estimator = memory.Estimator(job.workload, None, job.seq_len)
    largest = _largest_batches(job, estimator, catalogue, runtime_reserve_bytes)
    speeds = _speeds(job, largest, catalogue)
    speeds["largest_batch"] = pd.Series(largest)
    speeds["fits"] = (speeds["largest_batch"] >= speeds["batch_size"]) & (speeds["largest_batch"] > 0)
    speeds.attrs["input_label"] = estimator.input_label
    return speeds


def _join(
    speeds: pd.DataFrame,
    price: Price,
    book: prices.Prices,
    precision: str | None,
    catalogue: pd.DataFrame,
    count: int,
    error: dict[str, float | None],
    years: float,
    utilization: float,
) -> tuple[pd.DataFrame, str]:
    """Each GPU's fit and speed (``speeds``, indexed by GPU: fits, largest_batch, batch_size,
    throughput, throughput_unit, graded, note) joined with its price of the one kind asked for,
    work per dollar, standing and note; ordered, and cut to the budget (with what the cut says).
    ``error`` maps each GPU to its prediction's error band (%, None where not graded)."""
    priced = _price_rows(price, book, precision, catalogue, years, utilization)
    rows = []
    machines = set(catalogue.loc[catalogue.apply(specs.shared_memory, axis=1), "gpu"])
    for gpu in catalogue["gpu"]:
        s, p = speeds.loc[gpu], priced.loc[gpu]
        row = {
            "gpu": gpu,
            "fits": bool(s["fits"]),
            "largest_batch": int(s["largest_batch"]),
            "batch_size": int(s["batch_size"]),
            "throughput": _num(s["throughput"]) if _num(s["throughput"]) is not None else math.nan,
            "throughput_unit": s["throughput_unit"],
            "gpus": count,
            "price_kind": price.kind if price.renting else p["price_kind"],
            "price_usd": None if price.renting else _num(p["price_usd"]),
            "tco_usd": _num(p["tco_usd"]),
            "cloud_usd_per_hour": _num(p["cloud_usd_per_hour"]) if price.renting else None,
            "cloud_provider": p["cloud_provider"] if price.renting else None,
            "price_date": p["cloud_date"] if price.renting else p["price_date"],
            "price_source_url": p["cloud_source_url"] if price.renting else p["price_source_url"],
            "error_pct": error.get(gpu),
            "graded": bool(s["graded"]),
        }
        row.update(_work_per_dollar(row, price, count, years, utilization))
        row["standing"] = _standing(row, price)
        row["price_note"] = p["cloud_note"] if price.renting else p["purchase_note"]
        row["note"] = _note(row, s["note"], row["price_note"], gpu in machines)
        rows.append(row)
    frame, budget_note = _apply_budget(pd.DataFrame(rows), price)
    return _within_error(_order(frame, price), price)[list(COLUMNS)], budget_note


def _within_error(frame: pd.DataFrame, price: Price) -> pd.DataFrame:
    """``frame`` with ``within_error_of``: for each ranked GPU whose work per dollar lies within
    the error bands of the GPU ranked above it (:func:`gpukit.perfmodel.within_error`), that GPU;
    the bands cannot settle their order. Empty elsewhere."""
    key = "usd_per_million_items" if price.renting else "throughput_per_1k_usd"
    marks = [""] * len(frame)
    ranked = [i for i in range(len(frame)) if frame.at[i, "standing"] == "ranked"]
    for above, below in zip(ranked, ranked[1:], strict=False):
        value = [float(frame.at[i, key]) for i in (above, below)]
        error = [_num(frame.at[i, "error_pct"]) for i in (above, below)]
        if perfmodel.within_error(*value, *error):
            marks[below] = frame.at[above, "gpu"]
    return frame.assign(within_error_of=marks)


def rank(
    job: Job,
    price: Price | None = None,
    price_files=None,
    catalogue: pd.DataFrame | None = None,
    runtime_reserve_bytes: int = memory.DEFAULT_RUNTIME_RESERVE_BYTES,
    years: float = cost.DEFAULTS["years"],
    utilization: float = cost.DEFAULTS["utilization"],
) -> pd.DataFrame:
    """Every catalogue GPU for ``job``, ranked by work per dollar at ``price`` (:data:`COLUMNS`).

    ``attrs`` hold what a reader needs beside the rows: the ``job`` and ``price``, the ``unit``
    of throughput, the ``input_label`` of one example, the family's ``accuracy`` sentence and
    ``budget_note``."""
    price = price or Price()
    cat = specs.load_catalogue() if catalogue is None else catalogue
    speeds = job_speeds(job, cat, runtime_reserve_bytes)
    family = perfmodel.family(job.workload)
    bands = perfmodel.error_bands(job.workload, list(cat["gpu"]), cat)  # per GPU, one GPU's family
    error = {gpu: band.error_pct for gpu, band in bands.items()}
    book = prices.load_prices(price_files)
    out, budget_note = _join(speeds, price, book, job.precision, cat, job.gpus, error, years, utilization)
    unit = speeds["throughput_unit"].dropna().iloc[0] if speeds["throughput_unit"].notna().any() else ""
    out.attrs.update(
        job=job,
        price=price,
        unit=unit,
        budget_note=budget_note,
        accuracy=perfmodel.accuracy_text(family),
        input_label=speeds.attrs["input_label"],
    )
    return out


#: Output tokens of a request when ``rank --llm`` prices serving at batch.
SERVED_OUTPUT_TOKENS = 256


@dataclass(frozen=True)
class LLMJob:
    """An LLM served on each GPU: generating one sequence's tokens (decode at batch 1) with an
    engine, from a context of ``context`` tokens, on ``gpus`` GPUs of each kind."""

    model: str
    weights: str = "q4_k_m"
    engine: str | None = None  # None: the weights' usual engine (llm.default_engine)
    context: int = 4096
    gpus: int = 1

    def serving_lengths(self) -> tuple[int, int]:
        """Prompt and output tokens of a request when the job is served at batch: a sequence fills
        the context, the last :data:`SERVED_OUTPUT_TOKENS` of it generated."""
        output = min(SERVED_OUTPUT_TOKENS, self.context // 2)
        return self.context - output, output

    def describe(self) -> str:
        engine = self.engine or llm.default_engine(self.weights)
        many = f", {self.gpus} GPUs" if self.gpus > 1 else ""
        return f"{self.model} generating one sequence ({self.weights}, {engine}{many})"


def rank_llm(
    job: LLMJob,
    price: Price | None = None,
    price_files=None,
    catalogue: pd.DataFrame | None = None,
    years: float = cost.DEFAULTS["years"],
    utilization: float = cost.DEFAULTS["utilization"],
) -> pd.DataFrame:
    """Every catalogue GPU for an LLM job, ranked by generated tokens per dollar at ``price``
    (:data:`COLUMNS`; throughput is decode at batch 1, ``largest_batch`` the most sequences the
    memory holds at the context). ``error_pct`` is the decode model's median error on published
    same-source speedups (``docs/accuracy/llm.md``)."""
    price = price or Price()
    cat = specs.load_catalogue() if catalogue is None else catalogue
    table = llm.llm_table(
        job.model,
        job.weights,
        job.context,
        1,
        list(cat["gpu"]),
        "infer",
        count=job.gpus,
        engine=job.engine,
        catalogue=cat,
    ).set_index("gpu")
    speeds = pd.DataFrame(
        {
            "fits": table["fits"].astype(bool),
            "largest_batch": table["max_batch"].fillna(0).astype(int),
            "batch_size": 1,
            "throughput": table["decode_tokens_per_s"].where(table["fits"].astype(bool)),
            "throughput_unit": "tokens/s",
            "graded": table["graded"].astype(bool),
            "note": table["note"].fillna(""),
        }
    )
    error = _llm_error(job, cat)
    book = prices.load_prices(price_files)
    out, budget_note = _join(speeds, price, book, None, cat, job.gpus, error, years, utilization)
    served = _served(job, cat, price_files)
    # the same price over the tokens served at batch: the cost falls as the throughput rises
    served_tokens_s = out["gpu"].map(served["serving_tokens_per_s"])
    out["usd_per_million_tokens_served"] = out["usd_per_million_items"] * out["throughput"] / served_tokens_s
    out["served_batch"] = out["gpu"].map(served["batch"]).astype("Int64")
    out.attrs.update(
        job=job,
        price=price,
        unit="tokens/s",
        budget_note=budget_note,
        accuracy=llm.decode_error_text() + "; " + llm.serving_short_error(served.attrs["engine_name"]),
        input_label=f"{job.context} tokens of context",
        serving=(
            f"USD per million tokens served: the same price over the tokens served with {job.serving_lengths()[0]} "
            f"prompt + {job.serving_lengths()[1]} output tokens a request, as many at once as the KV cache holds "
            f"(served batch). " + llm.serving_error_text(served.attrs["engine_name"])
        ),
    )
    return out


def _llm_error(job: LLMJob, cat: pd.DataFrame) -> dict[str, float | None]:
    """Each GPU's decode error band (%): the decode model's median error on published same-source
    speedups where the job's engine profile describes the GPU, and its largest error (the widest
    band) where another profile answers for it (llama.cpp's ROCm or Metal builds), which those
    speedups do not grade."""
    decode = llm.decode_summary()
    if not decode["pairs"]:
        return dict.fromkeys(cat["gpu"])
    engine = llm.resolve_engine(job.engine or llm.default_engine(job.weights))
    return {
        row["gpu"]: decode["median_abs_error_pct"]
        if llm.for_device(engine, row) is engine
        else decode["max_abs_error_pct"]
        for _, row in cat.iterrows()
    }


def _served(job: LLMJob, cat: pd.DataFrame, price_files) -> pd.DataFrame:
    """The job served at batch on every GPU kind (:func:`gpukit.llm.serving_table`), by GPU."""
    prompt, output = job.serving_lengths()
    table = llm.serving_table(
        job.model,
        job.weights,
        job.engine,
        list(cat["gpu"]),
        job.gpus,
        "max",
        prompt,
        output,
        price_files=price_files,
        catalogue=cat,
    )
    frame = table.set_index("gpu")
    frame.attrs.update(table.attrs)
    return frame


def _num(value) -> float | None:
    return None if missing(value) else float(value)


def _note(row: dict, speed_note: str, price_note: str, machine: bool = False) -> str:
    """What a reader needs beside a row, in a few words each: why it is not ranked, a stale or
    missing price (the first clause of the price's note; its whole reason is ``price_note``), a
    whole machine's price (``machine``: a shared-memory one, priced with its CPU and memory), a
    measured throughput, and whether published runs of this GPU graded the model."""
    parts = []
    if machine and row["price_usd"] is not None:
        parts.append("the price of the whole machine")
    if row["standing"] == "does not fit":
        parts.append(
            "does not fit even batch 1"
            if row["largest_batch"] == 0
            else f"batch {row['batch_size']} does not fit (largest {row['largest_batch']})"
        )
    if row["standing"] == "cannot run":
        parts.append(speed_note)
    elif speed_note:
        parts.append(speed_note.split(";")[0])
    if price_note:
        parts.append(price_note.split(":")[0].split(";")[0])
    if not row["graded"]:
        parts.append("not graded on this GPU")
    return "; ".join(parts)


def with_budget(ranking: pd.DataFrame, budget_usd: float | None) -> pd.DataFrame:
    """``ranking`` cut to a budget, ranked again (as :func:`rank` with that budget would give),
    without predicting anything again."""
    price = dataclasses.replace(ranking.attrs["price"], budget_usd=budget_usd)
    frame = ranking.drop(columns="rank")
    frame.loc[frame["standing"] == "over budget", "standing"] = "ranked"
    cut, note = _apply_budget(frame, price)
    ordered = _within_error(_order(cut, price), price)
    out = ordered[list(COLUMNS) + [c for c in cut.columns if c not in COLUMNS]]
    out.attrs.update({**ranking.attrs, "price": price, "budget_note": note})
    return out
