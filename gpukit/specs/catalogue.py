"""The catalogue file: its schema (units in the column names), loading it and validating every
row, the datasheet figures checked against each other, and a card's memory in bytes."""

from __future__ import annotations

import os
from datetime import date
from functools import lru_cache
from pathlib import Path

import pandas as pd

from .._csv import Field, parse_rows, to_frame
from ..errors import DataError, Problem
from ..precision import half_rate_fp32_accumulate
from ..resources import DATA_DIR
from ..units import GIB, missing
from . import tensor_rules

CATALOGUE_PATH = DATA_DIR / "gpus.csv"


#: What a row's ``source_url`` is (``source_kind``): the vendor's own datasheet, whitepaper or
#: product page first; a copy of the vendor's page preserved in a public repository, or a dump of
#: the card's own device query, where none of those was in reach; a secondary source (TechPowerUp's
#: database) only where no vendor figure could be found. A row from a vendor document whose figures
#: a secondary source completes names those columns in ``secondary_fields``.
SOURCE_KINDS = ("datasheet", "whitepaper", "vendor-page", "vendor-page-copy", "device-query", "secondary")

#: Board forms: a PCIe card, an SXM module, or a GPU of a Grace superchip (GB200, GB300).
FORM_FACTORS = ("PCIe", "SXM2", "SXM4", "SXM5", "SXM6", "Superchip", "OAM", "SoC", "System")
#: Vendors whose devices the catalogue holds.
VENDORS = ("NVIDIA", "AMD", "Intel", "Apple")
#: Vendors that state no GPU clock or FP32 peak for some of their devices (Apple's M2 and later).
#: A shared-memory machine of any vendor may leave them empty too where its vendor states none
#: (AMD gives no FP32 figure for the Ryzen AI Max's Radeon 8060S).
VENDORS_WITHOUT_PEAKS = ("Apple",)

SCHEMA: tuple[Field, ...] = (
    Field("gpu", "text", help="canonical name, e.g. 'V100 SXM2 32GB'"),
    Field("vendor", "choice", choices=VENDORS),
    Field("architecture", "text", help="e.g. Ampere"),
    Field("segment", "choice", choices=("datacenter", "workstation", "consumer")),
    Field(
        "compute_capability",
        "cc",
        required=False,
        help="CUDA compute capability, e.g. 8.6 (NVIDIA; empty for other vendors, who name arch_target)",
    ),
    Field("launch", "month", help="vendor announcement, YYYY-MM"),
    Field("form_factor", "choice", choices=FORM_FACTORS),
    Field("cuda_cores", "int", low=1, high=100_000),
    Field("tensor_cores", "int", required=False, low=0, high=10_000),
    Field(
        "boost_clock_mhz",
        "float",
        required=False,
        low=100,
        high=5_000,
        help="empty only where the vendor states no clock (Apple)",
    ),
    Field("memory_gb", "float", low=1, high=1_024, help="capacity in GiB as datasheets mean 'GB'"),
    Field("memory_type", "text", help="e.g. GDDR6, HBM2e"),
    Field(
        "memory_bus_bits",
        "int",
        required=False,
        low=32,
        high=16_384,
        help="memory interface width; empty where no source gives it (some HBM3e parts)",
    ),
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
    Field(
        "fp64_tflops",
        "float",
        required=False,
        low=0.01,
        high=1_000,
        help="empty where the vendor states none",
    ),
    Field(
        "fp32_tflops",
        "float",
        required=False,
        low=0.1,
        high=1_000,
        help="empty only where the vendor states no FP32 peak (Apple's M2 and later): no compute-bound answer then",
    ),
    Field("tf32_tensor_tflops", "float", required=False, low=0.1, high=10_000),
    Field("fp16_tensor_tflops", "float", required=False, low=0.1, high=10_000),
    Field("bf16_tensor_tflops", "float", required=False, low=0.1, high=10_000),
    Field("int8_tensor_tops", "float", required=False, low=0.1, high=20_000),
    Field(
        "fp8_tensor_tflops",
        "float",
        required=False,
        low=0.1,
        high=40_000,
        default="",
        help="dense FP8 tensor TFLOPS with FP32 accumulate (Ada, Hopper, Blackwell); empty where there is none",
    ),
    Field(
        "fp4_tensor_tflops",
        "float",
        required=False,
        low=0.1,
        high=80_000,
        default="",
        help="dense FP4 (NVFP4/MXFP4) tensor TFLOPS (Blackwell); empty where there is none",
    ),
    Field(
        "low_precision_source_url",
        "url",
        required=False,
        default="",
        help="the datasheet or whitepaper the FP8 and FP4 figures come from",
    ),
    Field(
        "tdp_w",
        "float",
        required=False,
        low=5,
        high=2_000,
        help="empty only where the vendor states none (Apple)",
    ),
    Field("nvlink_gbs", "float", low=0, high=10_000, help="0 where there is none"),
    Field("pcie_gen", "int", required=False, low=1, high=7, help="empty for a device not on PCIe"),
    Field("msrp_usd", "float", required=False, low=1, high=1_000_000),
    Field("msrp_source_url", "url", required=False),
    Field("source_url", "url"),
    Field("whitepaper_url", "url", required=False),
    Field("l2_source_url", "url", required=False, default=""),
    Field("retrieved", "date", help="when the figures were checked against the source, YYYY-MM-DD"),
    Field("notes", "text", required=False),
    Field(
        "source_kind",
        "choice",
        required=False,
        choices=SOURCE_KINDS,
        default="",
        help="what source_url is: datasheet, whitepaper or vendor-page (the vendor's own), vendor-page-copy "
        "(the vendor's page preserved in a public repository), device-query (a dump of the card's own "
        "device query) or secondary (a database such as TechPowerUp's, where no vendor figure was found); "
        "empty in a catalogue written before the column",
    ),
    Field(
        "ai_tops",
        "float",
        required=False,
        low=1,
        high=100_000,
        default="",
        help="the vendor's 'AI TOPS' headline as printed (sparse FP8 on Ada, sparse FP4 on Blackwell), where "
        "the dense tensor figures are derived from it by the rule of gpukit.specs.tensor_rules",
    ),
    Field(
        "secondary_fields",
        "text",
        required=False,
        default="",
        help="the columns no vendor document gives, taken from secondary_source_url (semicolon-separated)",
    ),
    Field(
        "secondary_source_url",
        "url",
        required=False,
        default="",
        help="the secondary source (e.g. TechPowerUp's GPU database) of the secondary_fields",
    ),
    Field(
        "arch_target",
        "text",
        required=False,
        default="",
        help="the compiler's target where there is no CUDA compute capability: gfx942 (MI300X), gfx1100 (RX 7900 XTX)",
    ),
    Field(
        "shared_memory",
        "choice",
        required=False,
        choices=("true", "false"),
        default="false",
        help="true where the GPU shares the system's memory (unified-memory machines); memory_gb is the "
        "machine's, of which the GPU may use its vendor's share (SHARED_GPU_SHARE)",
    ),
)
COLUMNS: tuple[str, ...] = tuple(f.name for f in SCHEMA)

#: Numeric columns a ranking or a plot can use, with their units.
NUMERIC_COLUMNS: tuple[str, ...] = tuple(f.name for f in SCHEMA if f.kind in ("int", "float"))

# Dense FP16 tensor-core FMAs per clock per tensor core, with FP32 accumulate, by compute
# capability (Volta, Turing, GA100, GA10x and Ada whitepapers; Hopper whitepaper).
# GeForce cards run FP32 accumulate at half this rate.
# RTX Blackwell (12.0) as GA10x and Ada: the RTX Blackwell and RTX PRO Blackwell whitepapers' tables.
_TENSOR_FMA_PER_CLOCK = {"7.0": 64, "7.5": 64, "8.0": 256, "8.6": 128, "8.9": 128, "9.0": 512, "12.0": 128}
# Architectures without TF32 or BF16 tensor modes (Volta, Turing).
_NO_TF32_BF16 = {"7.0", "7.5"}

#: FP32 operations an FP32 lane issues per clock beyond the one fused multiply-add, by architecture:
#: RDNA 3 and 4 dual-issue (AMD's Radeon figures count it: 6144 lanes at 2.5 GHz, 61.4 TFLOPS), and
#: CDNA 3 and 4 run packed FP32 (MI300X: 19456 lanes at 2.1 GHz, 163.4 TFLOPS vector FP32).
FP32_ISSUE_FACTOR = {"RDNA 3": 2, "RDNA 3.5": 2, "RDNA 4": 2, "CDNA 3": 2, "CDNA 4": 2}

# Tolerances of the cross-checks, as a relative difference.
FP32_TOLERANCE = 0.03
BANDWIDTH_TOLERANCE = 0.03


def memory_bytes(memory_gb: float) -> int:
    """Capacity in bytes of a card whose datasheet says ``memory_gb`` GB (binary, GiB)."""
    return int(round(memory_gb * GIB))


#: Share of a unified-memory Apple machine's memory its GPU may use by default: macOS's recommended
#: working set, as llama.cpp's Metal start-up prints it (``recommendedMaxWorkingSetSize``: 51539.61 MB
#: of a 64 GB M1 Max and M3 Max, 154618.82 MB of a 192 GB M2 Ultra, in XiongjieDai's notebooks at
#: commit aa72e0ec).
APPLE_GPU_WORKING_SET = 0.75
#: Share of a shared-memory machine's memory its GPU may use, by vendor: macOS's working set on
#: Apple silicon; on a Ryzen AI Max the Variable Graphics Memory AMD states ("The AMD Ryzen AI Max+
#: 395 (128GB) processor with 96GB of Variable Graphics Memory", amd.com FAQ of 2025-07-29). A
#: vendor not named here (NVIDIA's DGX Spark) lets its GPU address the whole of it.
SHARED_GPU_SHARE = {"Apple": APPLE_GPU_WORKING_SET, "AMD": 96 / 128}


def shared_memory(row) -> bool:
    """Whether the GPU of catalogue row ``row`` shares its memory with the CPU (``shared_memory``)."""
    return str(row.get("shared_memory")).strip().lower() == "true"


def states_no_tensor_peak(row) -> bool:
    """Whether catalogue row ``row`` is a shared-memory machine whose vendor states no dense tensor
    figure (DGX Spark: only a sparse FP4 one; Ryzen AI Max, Apple silicon: none): its LLM answers
    predict decode from bandwidth and no prompt speed."""
    return shared_memory(row) and missing(row.get("fp16_tensor_tflops"))


def gpu_memory_bytes(row) -> int:
    """Memory the GPU of catalogue row ``row`` may use: its datasheet memory, or on a shared-memory
    machine its vendor's share of it (:data:`SHARED_GPU_SHARE`)."""
    total = memory_bytes(row["memory_gb"])
    if shared_memory(row):
        return int(total * SHARED_GPU_SHARE.get(str(row.get("vendor")), 1.0))
    return total


def _cross_check(row: dict) -> list[tuple[str, str]]:
    """Consistency checks between the figures of one parsed row: (column, message) pairs."""
    return _rate_checks(row) + _tensor_checks(row) + tensor_rules.check(row) + _source_checks(row)


def _fp32_check(row: dict) -> list[tuple[str, str]]:
    """FP32 TFLOPS against the lanes and clock (twice where the architecture packs or dual-issues)."""
    issue = FP32_ISSUE_FACTOR.get(row["architecture"], 1)
    expected = 2 * issue * row["cuda_cores"] * row["boost_clock_mhz"] * 1e6 / 1e12
    lanes = (
        "2 x cuda_cores x boost_clock_mhz"
        if issue == 1
        else f"2 x {issue} ({row['architecture']}) x cuda_cores x boost_clock_mhz"
    )
    if abs(row["fp32_tflops"] - expected) <= FP32_TOLERANCE * expected:
        return []
    return [
        (
            "fp32_tflops",
            f"{row['fp32_tflops']:g} disagrees with {lanes} = {expected:.1f} by more than {FP32_TOLERANCE:.0%}; "
            "check all three against the datasheet",
        )
    ]


def _rate_checks(row: dict) -> list[tuple[str, str]]:
    """FP32 TFLOPS against the CUDA cores and clock; bandwidth against the bus and data rate."""
    out: list[tuple[str, str]] = []
    for column in ("fp32_tflops", "boost_clock_mhz", "tdp_w"):
        if row[column] is None and row["vendor"] not in VENDORS_WITHOUT_PEAKS and not shared_memory(row):
            out.append(
                (
                    column,
                    f"is empty; only a shared-memory machine or a vendor that states none "
                    f"({', '.join(VENDORS_WITHOUT_PEAKS)}) may leave it",
                )
            )
    if row["fp32_tflops"] is not None and row["boost_clock_mhz"] is not None:
        out += _fp32_check(row)
    if row["vendor"] == "NVIDIA" and row["compute_capability"] is None:
        out.append(("compute_capability", "is empty; an NVIDIA GPU names its CUDA compute capability"))
    if row["vendor"] != "NVIDIA" and row["compute_capability"] is None and not row.get("arch_target"):
        out.append(
            ("arch_target", "is empty; name the compiler target (gfx942, gfx1100) where there is no CUDA one")
        )
    rate = row["memory_data_rate_gbps"]
    if rate is not None and row["memory_bus_bits"] is not None:
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
    if half_rate_fp32_accumulate(row):
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
    out += _secondary_checks(row)
    if row["launch"] > row["retrieved"][:7]:
        out.append(("launch", f"{row['launch']} is after the retrieved date {row['retrieved']}"))
    return out


#: Columns ``secondary_fields`` may name: the figures, not the names, sources or notes.
_FIGURES = frozenset(
    f.name
    for f in SCHEMA
    if f.kind != "url" and f.name not in ("gpu", "notes", "retrieved", "source_kind", "secondary_fields")
)


def _secondary_checks(row: dict) -> list[tuple[str, str]]:
    """``secondary_fields`` names figure columns, and a secondary source is cited where it does."""
    named = secondary_fields(row)
    if not named:
        return []
    out = []
    unknown = [n for n in named if n not in _FIGURES]
    if unknown:
        out.append(
            (
                "secondary_fields",
                f"{', '.join(unknown)} is not a figure column; name columns such as memory_bus_bits;l2_cache_mib",
            )
        )
    if row.get("secondary_source_url") is None:
        out.append(
            ("secondary_source_url", "is empty, but secondary_fields is set; cite the secondary source")
        )
    return out


def secondary_fields(row) -> tuple[str, ...]:
    """The columns of a row that a secondary source gave (``secondary_fields``, split)."""
    text = row.get("secondary_fields")
    if not isinstance(text, str):
        return ()
    return tuple(part.strip() for part in text.split(";") if part.strip())


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
