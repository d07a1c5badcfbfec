"""The GPU catalogue: load and validate ``data/gpus.csv``, look GPUs up by natural names.

Units live in the column names. Memory capacity (``memory_gb``) is binary as datasheets
mean it (a "16 GB" card holds 16 GiB, see :func:`memory_bytes`); bandwidth (GB/s) and
FLOP rates (TFLOPS, TOPS) are decimal. Tensor-core figures are **dense** (never the 2:4
sparse headline) and, for FP16/BF16, with **FP32 accumulate**. A mode the architecture
lacks is empty (``NaN`` in the frame), never zero.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ._csv import Field, parse_rows, to_frame
from .errors import DataError, GpukitError, ParameterError, Problem, UnknownGPUError
from .resources import DATA_DIR
from .units import GIB

CATALOGUE_PATH = DATA_DIR / "gpus.csv"


SCHEMA: tuple[Field, ...] = (
    Field("gpu", "text", help="canonical name, e.g. 'V100 SXM2 32GB'"),
    Field("vendor", "choice", choices=("NVIDIA", "AMD", "Intel")),
    Field("architecture", "text", help="e.g. Ampere"),
    Field("segment", "choice", choices=("datacenter", "workstation", "consumer")),
    Field("compute_capability", "cc", help="CUDA compute capability, e.g. 8.6"),
    Field("launch", "month", help="vendor announcement, YYYY-MM"),
    Field("form_factor", "choice", choices=("PCIe", "SXM2", "SXM4", "SXM5", "SXM6")),
    Field("cuda_cores", "int", low=1, high=100_000),
    Field("tensor_cores", "int", required=False, low=0, high=10_000),
    Field("boost_clock_mhz", "float", low=100, high=5_000),
    Field("memory_gb", "float", low=1, high=1_024, help="capacity in GiB as datasheets mean 'GB'"),
    Field("memory_type", "text", help="e.g. GDDR6, HBM2e"),
    Field("memory_bus_bits", "int", low=32, high=16_384),
    Field(
        "memory_data_rate_gbps", "float", required=False, low=0.5, high=50, help="per-pin data rate, Gbit/s"
    ),
    Field("memory_bandwidth_gbs", "float", low=10, high=20_000),
    Field(
        "l2_cache_mib",
        "float",
        required=False,
        low=0.25,
        high=1_024,
        default="",
        help="L2 cache in MiB, as the driver reports it (cudaDeviceProp.l2CacheSize / 2**20)",
    ),
    Field("fp64_tflops", "float", low=0.01, high=1_000),
    Field("fp32_tflops", "float", low=0.1, high=1_000),
    Field("tf32_tensor_tflops", "float", required=False, low=0.1, high=10_000),
    Field("fp16_tensor_tflops", "float", required=False, low=0.1, high=10_000),
    Field("bf16_tensor_tflops", "float", required=False, low=0.1, high=10_000),
    Field("int8_tensor_tops", "float", required=False, low=0.1, high=20_000),
    Field("tdp_w", "float", low=5, high=2_000),
    Field("nvlink_gbs", "float", low=0, high=10_000, help="0 where there is none"),
    Field("pcie_gen", "int", low=1, high=7),
    Field("msrp_usd", "float", required=False, low=1, high=1_000_000),
    Field("msrp_source_url", "url", required=False),
    Field("source_url", "url"),
    Field("whitepaper_url", "url", required=False),
    Field("l2_source_url", "url", required=False, default=""),
    Field("retrieved", "date", help="when the figures were checked against the source, YYYY-MM-DD"),
    Field("notes", "text", required=False),
)
COLUMNS: tuple[str, ...] = tuple(f.name for f in SCHEMA)

#: Numeric columns a ranking or a plot can use, with their units.
NUMERIC_COLUMNS: tuple[str, ...] = tuple(f.name for f in SCHEMA if f.kind in ("int", "float"))

# Dense FP16 tensor-core FMAs per clock per tensor core, with FP32 accumulate, by compute
# capability (Volta, Turing, GA100, GA10x and Ada whitepapers; Hopper whitepaper).
# GeForce cards run FP32 accumulate at half this rate.
_TENSOR_FMA_PER_CLOCK = {"7.0": 64, "7.5": 64, "8.0": 256, "8.6": 128, "8.9": 128, "9.0": 512}
# Architectures without TF32 or BF16 tensor modes (Volta, Turing).
_NO_TF32_BF16 = {"7.0", "7.5"}

# Tolerances of the cross-checks, as a relative difference.
FP32_TOLERANCE = 0.03
BANDWIDTH_TOLERANCE = 0.03


def memory_bytes(memory_gb: float) -> int:
    """Capacity in bytes of a card whose datasheet says ``memory_gb`` GB (binary, GiB)."""
    return int(round(memory_gb * GIB))


# --------------------------------------------------------------------------- loading


def _cross_check(row: dict) -> list[tuple[str, str]]:
    """Consistency checks between the figures of one parsed row: (column, message) pairs."""
    return _rate_checks(row) + _tensor_checks(row) + _source_checks(row)


def _rate_checks(row: dict) -> list[tuple[str, str]]:
    """FP32 TFLOPS against the CUDA cores and clock; bandwidth against the bus and data rate."""
    out: list[tuple[str, str]] = []
    expected = 2 * row["cuda_cores"] * row["boost_clock_mhz"] * 1e6 / 1e12
    if abs(row["fp32_tflops"] - expected) > FP32_TOLERANCE * expected:
        out.append(
            (
                "fp32_tflops",
                (
                    f"{row['fp32_tflops']:g} disagrees with 2 x cuda_cores x boost_clock_mhz = {expected:.1f} "
                    f"by more than {FP32_TOLERANCE:.0%}; check all three against the datasheet"
                ),
            )
        )
    rate = row["memory_data_rate_gbps"]
    if rate is not None:
        expected = row["memory_bus_bits"] / 8 * rate
        if abs(row["memory_bandwidth_gbs"] - expected) > BANDWIDTH_TOLERANCE * expected:
            out.append(
                (
                    "memory_bandwidth_gbs",
                    (
                        f"{row['memory_bandwidth_gbs']:g} disagrees with memory_bus_bits / 8 x memory_data_rate_gbps "
                        f"= {expected:.0f} by more than {BANDWIDTH_TOLERANCE:.0%}; check the three figures"
                    ),
                )
            )
    return out


def _tensor_checks(row: dict) -> list[tuple[str, str]]:
    """Tensor-core figures: no TF32 or BF16 where the architecture has none, a dense FP16 figure
    (:func:`_fp16_check`), and TF32 at half of FP16."""
    out: list[tuple[str, str]] = []
    cc = row["compute_capability"]
    if cc in _NO_TF32_BF16:
        for col in ("tf32_tensor_tflops", "bf16_tensor_tflops"):
            if row[col] is not None:
                out.append(
                    (
                        col,
                        (
                            f"is set, but compute capability {cc} ({row['architecture']}) has no "
                            f"{col.split('_')[0].upper()} tensor mode; leave it empty"
                        ),
                    )
                )
    out += _fp16_check(row)
    tf32, fp16 = row["tf32_tensor_tflops"], row["fp16_tensor_tflops"]
    if tf32 and fp16 and abs(tf32 / fp16 - 0.5) > 0.05:
        out.append(
            (
                "tf32_tensor_tflops",
                (
                    f"{tf32:g} is not half the dense FP16 figure {fp16:g} as on every architecture with TF32; "
                    f"is one of them a sparse figure?"
                ),
            )
        )
    return out


def _fp16_check(row: dict) -> list[tuple[str, str]]:
    """The FP16 tensor figure against the dense rate of the card's tensor cores at its clock: far
    above it is the 2:4-sparse or FP16-accumulate headline, far below a wrong count or figure."""
    fma = _TENSOR_FMA_PER_CLOCK.get(row["compute_capability"])
    fp16 = row["fp16_tensor_tflops"]
    if not (fma and fp16 and row["tensor_cores"]):
        return []
    if row["segment"] == "consumer" and row["compute_capability"] not in ("7.0",):
        fma //= 2
    dense = row["tensor_cores"] * fma * 2 * row["boost_clock_mhz"] * 1e6 / 1e12
    ratio = fp16 / dense
    if ratio > 1.5:
        return [
            (
                "fp16_tensor_tflops",
                (
                    f"{fp16:g} is {ratio:.1f}x the dense rate of {row['tensor_cores']} tensor cores at "
                    f"{row['boost_clock_mhz']:g} MHz ({dense:.1f}); it looks like the 2:4-sparse or "
                    f"FP16-accumulate figure: write the dense FP16 figure with FP32 accumulate"
                ),
            )
        ]
    if ratio < 0.75:
        return [
            (
                "fp16_tensor_tflops",
                (
                    f"{fp16:g} is only {ratio:.2f}x the dense rate of {row['tensor_cores']} tensor cores at "
                    f"{row['boost_clock_mhz']:g} MHz ({dense:.1f}); check tensor_cores and the figure"
                ),
            )
        ]
    return []


def _source_checks(row: dict) -> list[tuple[str, str]]:
    """A cited source for the L2 size and the price, and a launch no later than the check."""
    out: list[tuple[str, str]] = []
    if row["l2_cache_mib"] is not None and row["l2_source_url"] is None:
        out.append(
            (
                "l2_source_url",
                "is empty, but l2_cache_mib is set; cite the device report or vendor document that gives it",
            )
        )
    if row["msrp_usd"] is not None and row["msrp_source_url"] is None:
        out.append(("msrp_source_url", "is empty, but msrp_usd is set; cite where the price was published"))
    if row["launch"] > row["retrieved"][:7]:
        out.append(("launch", f"{row['launch']} is after the retrieved date {row['retrieved']}"))
    return out


def validate_catalogue(path: str | os.PathLike, today: date | None = None) -> pd.DataFrame:
    """Load and validate a catalogue CSV; raise :class:`DataError` naming each bad cell.

    Checks the header (every column of :data:`SCHEMA`, no unknown or repeated ones), each
    cell's type and range, unique GPU names, and cross-checks between figures.
    """
    path = Path(path)
    records, problems = parse_rows(path, SCHEMA, today or date.today(), what="GPU")
    names: dict[str, int] = {}
    kept = []
    for line, row in records:
        key = row["gpu"].casefold()
        if key in names:
            problems.append(
                Problem(
                    path,
                    line,
                    "gpu",
                    f"{row['gpu']!r} repeats line {names[key]}; names must be unique",
                    row["gpu"],
                )
            )
            continue
        names[key] = line
        for col, msg in _cross_check(row):
            problems.append(Problem(path, line, col, msg, row["gpu"]))
        kept.append(row)
    if problems:
        raise DataError(sorted(problems, key=lambda p: p.line or 0))
    records = kept
    frame = to_frame(records, SCHEMA)
    frame.attrs["source_path"] = str(path)
    return frame


@lru_cache(maxsize=8)
def _cached(path: str, mtime_ns: int, size: int) -> pd.DataFrame:
    return validate_catalogue(path)


def load_catalogue(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The validated catalogue as a DataFrame with :data:`COLUMNS` (cached per file version).

    ``path`` defaults to ``data/gpus.csv``. Empty cells are ``NaN`` (numbers) or ``None``.
    """
    p = Path(path) if path else CATALOGUE_PATH
    try:
        st = p.stat()
    except OSError:
        return validate_catalogue(p)  # raises the file-not-found DataError
    return _cached(str(p), st.st_mtime_ns, st.st_size).copy()


# --------------------------------------------------------------------------- look-up

#: Words a name may carry or leave out: brand and product-line words, and the generation and
#: edition words of the newer workstation names ("RTX 6000 Ada Generation", "RTX PRO 6000
#: Blackwell Workstation Edition"), so "6000 Ada" and "RTX PRO 6000" find them.
_NOISE = {
    "nvidia",
    "tesla",
    "geforce",
    "quadro",
    "rtx",
    "gpu",
    "tensor",
    "core",
    "card",
    "generation",
    "edition",
    "workstation",
    "blackwell",
}
_MEMORY_TYPES = {"hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6", "gddr6x", "gddr7"}
_FORMS = ("pcie", "sxm", "sxm2", "sxm4", "sxm5")


@dataclass(frozen=True)
class _Key:
    model: str
    form: str | None
    memory_gb: int | None
    memory_type: str | None = None


@lru_cache(maxsize=1024)
def _key(name: str) -> _Key:
    text = name.casefold().replace("-", " ").replace("_", " ").replace("/", " ")
    text = re.sub(r"(\d+)\s*gb\b", r"\1gb", text)
    model, form, memory, mtype = [], None, None, None
    for tok in text.split():
        if tok in _NOISE:
            continue
        if tok in _MEMORY_TYPES:
            mtype = tok
            continue
        m = re.fullmatch(r"(\d+)gb", tok)
        if m:
            memory = int(m.group(1))
        elif tok in _FORMS:
            form = tok
        else:
            model.append(re.sub(r"^(rtx|gtx)(?=\w)", "", tok))
    return _Key("".join(model), form, memory, mtype)


def _family(name: str) -> str:
    """The family a canonical name belongs to, e.g. 'V100' for 'V100 SXM2 32GB'."""
    words = [w for w in name.split() if w.casefold() not in _FORMS and not re.fullmatch(r"\d+GB", w, re.I)]
    return " ".join(words)


def _pick_default(variants: list[tuple]) -> tuple:
    """The documented default among variants ``(gpu, form factor, memory GB, memory type)``, in
    catalogue order: a PCIe card first, then the most memory, then the first listed."""

    def rank(item):
        order, (_, form, memory, _) = item
        return form != "PCIe", -float(memory) if memory == memory else math.inf, order

    return min(enumerate(variants), key=rank)[1]


@dataclass(frozen=True)
class Resolution:
    """How a name was resolved: the canonical ``gpu`` and whether a default variant was chosen."""

    query: str
    gpu: str
    defaulted: bool
    variants: tuple[str, ...]  # every variant of the family
    matches: tuple[str, ...] = ()  # the variants the name fits (all of them for a bare family name)

    def describe(self) -> str:
        if not self.defaulted:
            return f"{self.query!r} -> {self.gpu}"
        others = ", ".join(v for v in self.variants if v != self.gpu)
        return f"{self.query!r} -> {self.gpu} (default variant; others: {others})"


def resolve(name: str, catalogue: pd.DataFrame | None = None) -> Resolution:
    """Resolve a natural GPU name to a catalogue row.

    Case-insensitive; "NVIDIA", "Tesla", "GeForce", "RTX" are optional; a form factor
    (``PCIe``, ``SXM``, ``SXM2``…), memory size (``32GB``) or memory type (``HBM3``, as
    nvidia-smi names an H100 SXM5) picks a variant. A bare family
    name that has several variants resolves to the default one: a PCIe card if there is one,
    then the one with the most memory. Unknown names raise :class:`UnknownGPUError` with
    suggestions.
    """
    cat = load_catalogue() if catalogue is None else catalogue
    if not isinstance(name, str) or not name.strip():
        raise UnknownGPUError("empty GPU name; give a name such as 'A40' or 'V100 SXM2 32GB'")
    q = _key(name)
    rows = list(zip(cat["gpu"], cat["form_factor"], cat["memory_gb"], cat["memory_type"]))
    keys = [_key(g) for g in cat["gpu"]]
    family = [r for r, k in zip(rows, keys) if k.model == q.model]
    if not family:
        models = sorted({_family(g) for g in cat["gpu"]})
        by_model = {k.model: _family(g) for k, g in zip(keys, cat["gpu"])}
        close = difflib.get_close_matches(q.model, list(by_model), n=3, cutoff=0.5)
        close_names = [by_model[c] for c in close] or difflib.get_close_matches(name, models, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(close_names)}? " if close_names else ""
        raise UnknownGPUError(f"unknown GPU {name!r}; {hint}`gpukit specs` lists all {len(cat)} GPUs")
    variants = tuple(r[0] for r in family)
    matches = [
        r
        for r in family
        if (q.form is None or r[1].casefold().startswith(q.form))
        and (q.memory_gb is None or float(r[2]) == q.memory_gb)
        and (q.memory_type is None or r[3].casefold() == q.memory_type)
    ]
    if not matches:
        raise UnknownGPUError(
            f"no {_family(variants[0])} variant matches {name!r}; it comes as: {', '.join(variants)}"
        )
    return Resolution(
        name,
        _pick_default(matches)[0],
        defaulted=len(matches) > 1,
        variants=variants,
        matches=tuple(r[0] for r in matches),
    )


@dataclass(frozen=True, eq=False)
class GPU:
    """A catalogue GPU, resolved once where its name came in (a command's argument, a notebook's
    parameter, a library call), so that the layers below take the record instead of resolving the
    name again: the canonical :attr:`name`, its catalogue :attr:`row`, and how the name given was
    read (:attr:`resolution`), so that an answer can say which variant a plain name picked. It
    reads like its row (``gpu["memory_gb"]``, ``gpu.get("l2_cache_mib")``)."""

    row: pd.Series
    resolution: Resolution

    @property
    def name(self) -> str:
        return self.resolution.gpu

    def __getitem__(self, column: str):
        return self.row[column]

    def get(self, column: str, default=None):
        return self.row.get(column, default)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"GPU({self.name!r})"

    @property
    def variant_note(self) -> str | None:
        """Where a plain name picked one variant of several, a sentence that says so ("'V100' is
        the V100 PCIe 16GB; also V100 SXM2 16GB, V100 SXM2 32GB"); else None."""
        r = self.resolution
        if not r.defaulted:
            return None
        others = ", ".join(v for v in r.matches if v != r.gpu)
        return f"{r.query!r} is the {r.gpu}; also {others}"


def gpu(name: str | GPU, catalogue: pd.DataFrame | None = None) -> GPU:
    """The :class:`GPU` a natural name means (:func:`resolve`); a :class:`GPU` is returned as it is."""
    if isinstance(name, GPU):
        return name
    cat = load_catalogue() if catalogue is None else catalogue
    res = resolve(name, cat)
    return GPU(row(cat, res.gpu), res)


def gpus(catalogue: pd.DataFrame | None = None, names: Iterable[str | GPU] | str | None = None) -> list[GPU]:
    """The :class:`GPU` records of ``names`` in the order given (duplicates dropped), or of every
    catalogue GPU when ``names`` is empty."""
    cat = load_catalogue() if catalogue is None else catalogue
    if names is None or (not isinstance(names, str | GPU) and len(list(names)) == 0):
        return [
            GPU(r, Resolution(r["gpu"], r["gpu"], False, (r["gpu"],), (r["gpu"],))) for _, r in cat.iterrows()
        ]
    out: list[GPU] = []
    for n in [names] if isinstance(names, str | GPU) else names:
        g = gpu(n, cat)
        if all(o.name != g.name for o in out):
            out.append(g)
    return out


def row(catalogue: pd.DataFrame, name: str) -> pd.Series:
    """The catalogue row of a canonical GPU name (as ``data/gpus.csv`` spells it)."""
    found = catalogue.loc[catalogue["gpu"] == name]
    if found.empty:
        raise UnknownGPUError(f"{name!r} is not a GPU of this catalogue; `gpukit specs` lists them")
    return found.iloc[0]


def lookup(name: str | GPU, catalogue: pd.DataFrame | None = None) -> pd.Series:
    """The catalogue row (a Series) for a natural GPU name; see :func:`resolve`."""
    return gpu(name, catalogue).row


def select(catalogue: pd.DataFrame, names: Iterable[str | GPU] | str | GPU | None = None) -> pd.DataFrame:
    """Rows for ``names`` (natural names or :class:`GPU` records, which are not resolved again) in
    the order given (duplicates dropped); all rows when empty."""
    if names is None or (not isinstance(names, str | GPU) and len(list(names)) == 0):
        return catalogue.reset_index(drop=True)
    if isinstance(names, str | GPU):
        names = [names]
    chosen: list[str] = []
    for n in names:
        g = n.name if isinstance(n, GPU) else resolve(n, catalogue).gpu
        if g not in chosen:
            chosen.append(g)
    order = {g: i for i, g in enumerate(chosen)}
    out = catalogue[catalogue["gpu"].isin(chosen)].copy()
    out["_order"] = out["gpu"].map(order)
    return out.sort_values("_order").drop(columns="_order").reset_index(drop=True)


# --------------------------------------------------------------------------- derived views

#: Derived metrics: name -> (numerator column, denominator column, description).
DERIVED: dict[str, tuple[str, str, str]] = {
    "fp32_tflops_per_w": ("fp32_tflops", "tdp_w", "FP32 TFLOPS per watt of TDP"),
    "fp16_tensor_tflops_per_w": ("fp16_tensor_tflops", "tdp_w", "dense FP16 tensor TFLOPS per watt of TDP"),
    "memory_bandwidth_gbs_per_w": ("memory_bandwidth_gbs", "tdp_w", "memory bandwidth GB/s per watt of TDP"),
    "fp16_tensor_flop_per_byte": (
        "fp16_tensor_tflops",
        "memory_bandwidth_gbs",
        "FLOP per byte of memory traffic at which dense FP16 turns compute-bound",
    ),
}
_DERIVED_SCALE = {"fp16_tensor_flop_per_byte": 1e12 / 1e9}


def with_derived(catalogue: pd.DataFrame) -> pd.DataFrame:
    """The catalogue plus the :data:`DERIVED` ratio columns (NaN where an input is empty)."""
    out = catalogue.copy()
    for name, (num, den, _) in DERIVED.items():
        out[name] = out[num] / out[den] * _DERIVED_SCALE.get(name, 1.0)
    return out


def rankable_metrics() -> tuple[str, ...]:
    """Every metric :func:`ranking` accepts."""
    return NUMERIC_COLUMNS + tuple(DERIVED)


def ranking(catalogue: pd.DataFrame, by: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """GPUs sorted by ``by`` (largest first; GPUs lacking the metric last) with a ``rank`` column."""
    if by not in rankable_metrics():
        close = difflib.get_close_matches(by, rankable_metrics(), n=3)
        hint = (
            f"did you mean {', '.join(close)}?" if close else f"choose one of {', '.join(rankable_metrics())}"
        )
        raise GpukitError(f"cannot rank by {by!r}; {hint}")
    frame = with_derived(catalogue)
    cols = (
        list(columns)
        if columns
        else [
            "gpu",
            "architecture",
            "memory_gb",
            "memory_bandwidth_gbs",
            "fp32_tflops",
            "fp16_tensor_tflops",
            "tdp_w",
        ]
    )
    if by not in cols:
        cols.append(by)
    out = frame.sort_values(by, ascending=False, na_position="last", kind="stable")[cols]
    out.insert(0, "rank", range(1, len(out) + 1))
    return out.reset_index(drop=True)


def records(catalogue: pd.DataFrame) -> list[dict]:
    """Rows as plain dicts with ``None`` for empty cells (for JSON)."""
    out = []
    for rec in catalogue[list(COLUMNS)].to_dict(orient="records"):
        clean = {}
        for k, v in rec.items():
            if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
                clean[k] = None
            elif hasattr(v, "item"):
                clean[k] = v.item()
            else:
                clean[k] = v
        out.append(clean)
    return out


def resolve_rows(
    path: Path, rows: list[tuple[int, dict]], catalogue, key, problems: list[Problem], what: str
) -> list[dict]:
    """Resolve each row's ``gpu`` against the catalogue (canonical names) and drop rows whose
    ``key(row)`` repeats an earlier line; problems are appended, naming line and column."""
    seen: dict[tuple, int] = {}
    names: dict[str, str | UnknownGPUError] = {}  # each spelling resolved once
    kept = []
    for line, row in rows:
        name = row["gpu"]
        if name not in names:
            try:
                names[name] = resolve(name, catalogue).gpu
            except UnknownGPUError as exc:
                names[name] = exc
        if isinstance(names[name], UnknownGPUError):
            problems.append(Problem(path, line, "gpu", str(names[name]), name))
            continue
        row["gpu"] = names[name]
        k = key(row)
        if k in seen:
            problems.append(
                Problem(path, line, None, f"repeats line {seen[k]} ({what}); keep one", row["gpu"])
            )
            continue
        seen[k] = line
        kept.append(row)
    return kept


#: FP32 lanes per streaming multiprocessor by compute capability (CUDA C++ Programming Guide,
#: "Throughput of Native Arithmetic Instructions": 32-bit floating-point add and multiply results
#: per clock cycle per multiprocessor), to count a GPU's SMs from its CUDA cores.
FP32_LANES_PER_SM = {
    "7.0": 64,
    "7.5": 64,
    "8.0": 64,
    "8.6": 128,
    "8.7": 128,
    "8.9": 128,
    "9.0": 128,
    "10.0": 128,
    "12.0": 128,
}


#: Thread-instructions one SM issues per clock cycle: four processing blocks, each with a warp
#: scheduler dispatching one instruction for a warp of 32 threads per clock (the Volta, Turing,
#: GA100, GA10x, Ada and Hopper whitepapers' SM diagrams; the same four-block SM in Blackwell's).
ISSUE_PER_SM_CLOCK = 128


def issue_tflops(row) -> float:
    """The rate of a GPU's kernels that mix integer and floating-point instructions (indexing,
    conversions, reductions and the arithmetic they serve: normalisation, activation, pooling),
    in the units of the FP32 peak: SMs x :data:`ISSUE_PER_SM_CLOCK` x boost clock. It equals the
    FP32 peak where an SM has 64 FP32 lanes (one fused multiply-add, two FLOPs, per lane and
    clock) and is half of it where a second FP32 datapath doubled the lanes (GA10x, Ada, Hopper,
    Blackwell) but not the instructions an SM issues."""
    return sm_count(row) * ISSUE_PER_SM_CLOCK * float(row["boost_clock_mhz"]) * 1e6 / 1e12


def sm_count(row) -> int:
    """Streaming multiprocessors of a catalogue GPU: CUDA cores over FP32 lanes per SM."""
    lanes = FP32_LANES_PER_SM.get(str(row["compute_capability"]))
    if not lanes:
        raise ParameterError(
            f"{row['gpu']}: compute capability {row['compute_capability']} has no FP32 lane "
            "count in gpukit.specs.FP32_LANES_PER_SM; add it"
        )
    return int(round(float(row["cuda_cores"]) / lanes))
