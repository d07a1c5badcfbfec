"""The catalogue: its values, its validation errors, and look-up by natural names."""

from __future__ import annotations

import math
from datetime import date

import pytest

from gpukit import specs
from gpukit.errors import DataError, GpukitError, UnknownGPUError

REQUIRED = [
    "RTX A4000",
    "RTX A5000",
    "RTX A6000",
    "A40",
    "V100 PCIe 16GB",
    "V100 SXM2 16GB",
    "V100 SXM2 32GB",
    "A100 PCIe 40GB",
    "A100 SXM4 40GB",
    "A100 PCIe 80GB",
    "A100 SXM4 80GB",
    "GeForce RTX 4090",
    "H100 PCIe",
    "H100 SXM5",
    "H200 SXM",
    "L40S",
    "L4",
    "T4",
    "A10",
    "GeForce RTX 3090",
    "GeForce RTX 5090",
    "RTX PRO 6000 Blackwell Workstation Edition",
    "H100 NVL",
    "RTX 6000 Ada Generation",
    "A30",
    "B200",
    "RTX 5000 Ada Generation",
    "GeForce RTX 3080",
    # the cards a buyer compares in 2026 (GeForce 30/40/50, workstation Ampere to Blackwell), the used
    # favourites for memory on a budget, and the newest data-centre parts people rent
    "GeForce RTX 3060 12GB",
    "GeForce RTX 3060 Ti",
    "GeForce RTX 3070",
    "GeForce RTX 3080 Ti",
    "GeForce RTX 4060 Ti 16GB",
    "GeForce RTX 4070",
    "GeForce RTX 4070 Super",
    "GeForce RTX 4070 Ti",
    "GeForce RTX 4070 Ti Super",
    "GeForce RTX 4080",
    "GeForce RTX 4080 Super",
    "GeForce RTX 5060 Ti 16GB",
    "GeForce RTX 5070",
    "GeForce RTX 5070 Ti",
    "GeForce RTX 5080",
    "RTX A4500",
    "RTX 4000 Ada Generation",
    "RTX 4500 Ada Generation",
    "RTX PRO 4000 Blackwell",
    "RTX PRO 4500 Blackwell",
    "RTX PRO 5000 Blackwell",
    "RTX PRO 6000 Blackwell Server Edition",
    "L40",
    "Tesla P40",
    "Tesla P100 PCIe 16GB",
    "GeForce RTX 2080 Ti",
    "TITAN RTX",
    "B300",
    "GB200 (per GPU)",
    "GB300 (per GPU)",
    "Instinct MI300X",
    "Instinct MI325X",
    "Instinct MI355X",
    "Radeon RX 7900 XTX",
    "Radeon PRO W7900",
    "Radeon RX 9070 XT",
    "Apple M1 Max",
    "Apple M3 Max",
    "Apple M2 Ultra",
    "Apple M3 Ultra",
    "Apple M4 Max",
    "DGX Spark",
    "Ryzen AI Max+ 395",
]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("5090", "GeForce RTX 5090"),
        ("NVIDIA GeForce RTX 5090", "GeForce RTX 5090"),
        ("RTX PRO 6000", "RTX PRO 6000 Blackwell Workstation Edition"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Blackwell Workstation Edition"),
        ("6000 Ada", "RTX 6000 Ada Generation"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada Generation"),
        ("RTX A6000", "RTX A6000"),
        ("H100 NVL", "H100 NVL"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("H100", "H100 PCIe"),
        ("A30", "A30"),
        ("B200", "B200"),
        ("NVIDIA B200", "B200"),
        ("RTX 5070 Ti", "GeForce RTX 5070 Ti"),
        ("4060 Ti 16GB", "GeForce RTX 4060 Ti 16GB"),
        ("RTX 4080 Super", "GeForce RTX 4080 Super"),
        ("NVIDIA GeForce RTX 4080 SUPER", "GeForce RTX 4080 Super"),
        ("RTX 4070", "GeForce RTX 4070"),
        ("RTX PRO 6000 Server Edition", "RTX PRO 6000 Blackwell Server Edition"),
        ("RTX PRO 4000", "RTX PRO 4000 Blackwell"),
        ("4000 Ada", "RTX 4000 Ada Generation"),
        ("L40", "L40"),
        ("L40S", "L40S"),
        ("P40", "Tesla P40"),
        ("Tesla P100", "Tesla P100 PCIe 16GB"),
        ("2080 Ti", "GeForce RTX 2080 Ti"),
        ("TITAN RTX", "TITAN RTX"),
        ("GB200", "GB200 (per GPU)"),
        ("B300", "B300"),
    ],
)
def test_the_newer_gpus_are_found_by_their_natural_names(catalogue, name, expected):
    assert specs.resolve(name, catalogue).gpu == expected


def row(cat, gpu):
    return cat.loc[cat["gpu"] == gpu].iloc[0]


# --------------------------------------------------------------------------- values


def test_catalogue_has_every_required_gpu_once(catalogue):
    assert sorted(catalogue["gpu"]) == sorted(REQUIRED)
    assert list(catalogue.columns) == list(specs.COLUMNS)


# The ONLY place the tests pin catalogue figures to the datasheets (the source_url of each row in
# data/gpus.csv). Every other test reads its figures from the catalogue through the `gpu` fixture
# (tests/conftest.py), so correcting a figure in data/gpus.csv fails here, and here only, until this
# table is corrected with it.
DATASHEET = {
    # The articles' pair A4000 vs A5000 (datasheets): 448 GB/s, not the 512 an article claims.
    ("RTX A4000", "memory_bandwidth_gbs"): 448,
    ("RTX A4000", "fp32_tflops"): 19.2,
    ("RTX A4000", "tensor_cores"): 192,
    ("RTX A4000", "tdp_w"): 140,
    ("RTX A4000", "nvlink_gbs"): 0,
    ("RTX A5000", "memory_bandwidth_gbs"): 768,
    ("RTX A5000", "fp32_tflops"): 27.8,
    ("RTX A5000", "nvlink_gbs"): 112.5,
    ("RTX A5000", "memory_gb"): 24,
    # Dense FP16, half the datasheets' sparse 153.4 and 222.2.
    ("RTX A4000", "fp16_tensor_tflops"): 76.7,
    ("RTX A5000", "fp16_tensor_tflops"): 111.1,
    # A40 vs V100: the A40's FP32 is 37.4 (19.2 is the A4000's).
    ("A40", "fp32_tflops"): 37.4,
    ("A40", "memory_bandwidth_gbs"): 696,
    ("A40", "memory_gb"): 48,
    ("A40", "fp16_tensor_tflops"): 149.7,
    ("V100 PCIe 16GB", "fp32_tflops"): 14,
    ("V100 SXM2 32GB", "fp32_tflops"): 15.7,
    ("V100 SXM2 16GB", "fp16_tensor_tflops"): 125,
    ("V100 PCIe 16GB", "tensor_cores"): 640,
    ("V100 SXM2 16GB", "memory_bandwidth_gbs"): 900,
    # The RTX 4090 has 512 tensor cores (128 is its RT-core count); FP32-accumulate FP16 at 165.2.
    ("GeForce RTX 4090", "tensor_cores"): 512,
    ("GeForce RTX 4090", "fp16_tensor_tflops"): 165.2,
    ("GeForce RTX 3090", "fp16_tensor_tflops"): 71,
    ("A100 SXM4 80GB", "fp16_tensor_tflops"): 312,
    ("A100 SXM4 80GB", "memory_bandwidth_gbs"): 2039,
    ("A100 PCIe 40GB", "tf32_tensor_tflops"): 156,
    ("H100 SXM5", "fp16_tensor_tflops"): 989.5,
    ("H200 SXM", "memory_gb"): 141,
    ("T4", "fp16_tensor_tflops"): 65,
    ("L4", "tdp_w"): 72,
    # The RTX 3080 from its own device query (68 SMs, 1710 MHz, 320-bit at 19 Gbps): source_kind says so.
    ("GeForce RTX 3080", "cuda_cores"): 8704,
    ("GeForce RTX 3080", "memory_bandwidth_gbs"): 760,
    ("GeForce RTX 3080", "l2_cache_mib"): 5,
    # Dense FP8 and FP4, half the datasheets' sparse figures; FP8 with FP32 accumulate on GeForce.
    ("H100 SXM5", "fp8_tensor_tflops"): 1979,
    ("L40S", "fp8_tensor_tflops"): 733,
    ("GeForce RTX 4090", "fp8_tensor_tflops"): 330.3,
    ("B200", "fp4_tensor_tflops"): 9000,
    ("GeForce RTX 5090", "fp4_tensor_tflops"): 1676,
    # The 2026 cards. The vendor's AI TOPS headline and the dense figure its rule gives (1406 / 16).
    ("GeForce RTX 5070 Ti", "ai_tops"): 1406,
    ("GeForce RTX 5070 Ti", "fp16_tensor_tflops"): 87.88,
    ("GeForce RTX 4080", "fp16_tensor_tflops"): 97.5,
    ("GeForce RTX 4060 Ti 16GB", "memory_bandwidth_gbs"): 288,
    ("GeForce RTX 3060 12GB", "cuda_cores"): 3584,
    # The L40 runs FP32 accumulate at half rate (datasheet 181.05 | 362.1), the L40S at full rate.
    ("L40", "fp16_tensor_tflops"): 181.05,
    ("L40S", "fp16_tensor_tflops"): 362.05,
    # TITAN RTX at full rate, the 2080 Ti (reference board, 1545 MHz) at half.
    ("TITAN RTX", "fp16_tensor_tflops"): 130.5,
    ("GeForce RTX 2080 Ti", "fp16_tensor_tflops"): 53.8,
    ("Tesla P40", "fp32_tflops"): 12,
    ("Tesla P100 PCIe 16GB", "memory_bandwidth_gbs"): 732,
    ("RTX PRO 6000 Blackwell Server Edition", "memory_bandwidth_gbs"): 1597,
    ("B300", "fp4_tensor_tflops"): 14000,
    ("GB200 (per GPU)", "fp16_tensor_tflops"): 2500,
}


@pytest.mark.parametrize("name", ["4070", "4080", "3080"])
def test_a_bare_number_several_cards_carry_lists_them_and_asks(catalogue, name):
    with pytest.raises(UnknownGPUError) as info:
        specs.resolve(name, catalogue)
    msg = one_line(info.value)
    family = sorted(g for g in catalogue["gpu"] if f" {name}" in g)
    assert msg.startswith(f"'{name}' fits {len(family)} GPUs: GeForce RTX {name}, ") and "say which" in msg
    assert all(g in msg for g in family) and len(family) >= 2
    assert specs.resolve(f"RTX {name}", catalogue).gpu == f"GeForce RTX {name}"


def test_every_row_says_what_kind_of_source_it_is_and_which_figures_are_secondary(catalogue):
    kinds = catalogue.set_index("gpu")["source_kind"]
    assert set(kinds) <= set(specs.catalogue.SOURCE_KINDS) and kinds.notna().all()
    assert kinds["GeForce RTX 3080"] == "device-query"
    assert kinds["RTX A4000"] == "datasheet" and kinds["GeForce RTX 4090"] == "whitepaper"
    # a vendor row that a secondary source completes names those columns and cites the source
    completed = catalogue[catalogue["secondary_fields"].notna()]
    assert len(completed) >= 20
    assert completed["secondary_source_url"].str.startswith("https://").all()
    l40 = row(catalogue, "L40")
    assert "boost_clock_mhz" in specs.catalogue.secondary_fields(l40) and l40["source_kind"] == "datasheet"
    # most rows are the vendor's figures; the secondary ones are few and say so
    vendor = kinds.isin(["datasheet", "whitepaper", "vendor-page", "vendor-page-copy", "device-query"])
    assert vendor.mean() > 0.8


@pytest.mark.parametrize("gpu_name, column, value", [(g, c, v) for (g, c), v in DATASHEET.items()])
def test_datasheet_values(catalogue, gpu_name, column, value):
    """The data matches the datasheets: the one test that pins catalogue figures."""
    assert row(catalogue, gpu_name)[column] == pytest.approx(value)


@pytest.mark.parametrize("gpu", ["V100 PCIe 16GB", "V100 SXM2 32GB", "T4"])
def test_modes_an_architecture_lacks_are_empty_not_zero(catalogue, gpu):
    r = row(catalogue, gpu)
    assert math.isnan(r["tf32_tensor_tflops"]) and math.isnan(r["bf16_tensor_tflops"])


def test_every_row_is_sourced_and_dated(catalogue):
    for _, r in catalogue.iterrows():
        assert r["source_url"].startswith("https://"), r["gpu"]
        assert date.fromisoformat(r["retrieved"]) <= date.today()
        if not math.isnan(r["msrp_usd"]):
            assert r["msrp_source_url"].startswith("https://")


def test_l2_sizes_cite_a_device_report_at_a_commit_and_line(catalogue):
    """Every L2 size points at the line of a published device report, pinned to a commit; a GPU
    without one has no size (the cache term then leaves it out), and the sizes are whole, half or quarter
    MiB, or quarters, as drivers report them (the B200's 132644864 bytes: 126.5 MiB; GB200's 129.25)."""
    import re

    sized = catalogue.dropna(subset=["l2_cache_mib"])
    assert len(sized) >= 20
    secondary = sized.apply(
        lambda r: r["source_kind"] == "secondary" or "l2_cache_mib" in specs.catalogue.secondary_fields(r),
        axis=1,
    )
    # an L2 size that no device report gives comes from a secondary source, marked as such
    assert sized.loc[secondary, "l2_source_url"].str.startswith("https://").all()
    for _, r in sized[~secondary].iterrows():
        assert re.match(r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/.+#L\d+$", r["l2_source_url"]), r[
            "gpu"
        ]
        assert (r["l2_cache_mib"] * 4) == int(r["l2_cache_mib"] * 4), r["gpu"]
    assert catalogue.loc[catalogue["l2_cache_mib"].isna(), "l2_source_url"].isna().all()


def test_a_catalogue_written_before_the_l2_columns_still_loads(catalogue_copy):
    """A user's own catalogue in the layout before ``l2_cache_mib`` and ``l2_source_url`` loads as it
    is, every GPU without an L2 size (the cache term then leaves them out)."""
    frame = specs.validate_catalogue(catalogue_copy(drop_columns=["l2_cache_mib", "l2_source_url"]))
    assert (
        len(frame) == len(REQUIRED)
        and frame["l2_cache_mib"].isna().all()
        and frame["l2_source_url"].isna().all()
    )


def test_a_catalogue_written_before_the_fp8_and_source_kind_columns_still_loads(catalogue_copy):
    """The columns added with FP8 and FP4 (and ``source_kind``) are optional in a user's catalogue."""
    new = ["fp8_tensor_tflops", "fp4_tensor_tflops", "low_precision_source_url", "source_kind"]
    frame = specs.validate_catalogue(catalogue_copy(drop_columns=new))
    assert len(frame) == len(REQUIRED) and frame["fp8_tensor_tflops"].isna().all()


def test_fp32_matches_cores_times_clock_for_every_row(catalogue):
    """2 x lanes x clock, twice that where the lanes dual-issue (RDNA 3 and 4) or pack two FP32
    operations (CDNA 3 and 4), as AMD's vector FP32 figures count them."""
    issue = catalogue["architecture"].map(specs.catalogue.FP32_ISSUE_FACTOR).fillna(1)
    expected = 2 * issue * catalogue["cuda_cores"] * catalogue["boost_clock_mhz"] * 1e6 / 1e12
    assert ((catalogue["fp32_tflops"] - expected).abs() / expected).max() < specs.FP32_TOLERANCE


def test_tensor_figures_are_dense(catalogue):
    """Dense FP16 is 2-16x FP32 on every architecture here but data-centre Blackwell (30x: the B200's
    2.25 PFLOPS against 75 TFLOPS); the sparse headline would be 2x that."""
    ratio = catalogue["fp16_tensor_tflops"] / catalogue["fp32_tflops"]
    blackwell_dc = catalogue["architecture"].eq("Blackwell") & catalogue["form_factor"].str.startswith(
        ("SXM", "Super")
    )
    top = blackwell_dc.map({True: 31.5, False: 16.1})
    ok = ratio.between(1.9, top) | ratio.isna()
    assert ok.all(), catalogue.loc[~ok, "gpu"].tolist()
    assert ratio[top == 31.5].between(29.5, 31.5).all()  # dense, not the 4.5 PFLOPS sparse headline
    # no tensor cores (Pascal), or no dense figure the vendor states (Apple, the shared-memory machines)
    stated_none = catalogue.apply(specs.states_no_tensor_peak, axis=1)
    assert (catalogue.loc[ratio.isna(), "architecture"].eq("Pascal") | stated_none[ratio.isna()]).all()
    has_tf32 = catalogue.dropna(subset=["tf32_tensor_tflops"])
    assert list(has_tf32["tf32_tensor_tflops"] * 2) == pytest.approx(
        list(has_tf32["fp16_tensor_tflops"]), rel=0.02
    )


def test_memory_capacity_is_binary():
    assert specs.memory_bytes(16) == 16 * 2**30 == 17_179_869_184


# --------------------------------------------------------------------------- validation


def one_line(exc: Exception) -> str:
    msg = str(exc)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


@pytest.mark.parametrize(
    "changes, expected",
    [
        (
            {("RTX A4000", "fp32_tflops"): "fast"},
            [
                "gpus.csv",
                "line 2 (RTX A4000)",
                "column fp32_tflops",
                "'fast' is not a number",
                "plain number",
            ],
        ),
        ({("A40", "memory_gb"): "-48"}, ["line 5 (A40)", "column memory_gb", "out of range", "1 to 1024"]),
        ({("A40", "source_url"): ""}, ["column source_url", "is empty", "required"]),
        ({("A40", "source_url"): "datasheet.pdf"}, ["column source_url", "not a web address", "https://"]),
        ({("A40", "retrieved"): "29/11/2026"}, ["column retrieved", "YYYY-MM-DD"]),
        ({("A40", "retrieved"): "2999-01-01"}, ["column retrieved", "in the future"]),
        ({("A40", "launch"): "2020-13"}, ["column launch", "YYYY-MM"]),
        ({("A40", "form_factor"): "MXM"}, ["column form_factor", "not one of PCIe, SXM2, SXM4, SXM5"]),
        ({("A40", "compute_capability"): "8"}, ["column compute_capability", "major.minor"]),
        ({("A40", "cuda_cores"): "10752.5"}, ["column cuda_cores", "not a whole number"]),
        ({("A40", "gpu"): "RTX A4000"}, ["line 5 (RTX A4000)", "column gpu", "repeats line 2", "unique"]),
        ({("A40", "bf16_tensor_tflops"): "0"}, ["column bf16_tensor_tflops", "is 0; leave it empty"]),
        # Cross-checks: another card's FP32 figure, a wrong bandwidth, a sparse tensor figure, a TF32
        # figure next to FP16 (figures read from the catalogue: `gpu` -> (changes, expected)).
        (
            lambda gpu: {("A40", "fp32_tflops"): f"{gpu('RTX A4000').fp32_tflops:g}"},
            lambda gpu: [
                "column fp32_tflops",
                "2 x cuda_cores x boost_clock_mhz = "
                f"{2 * gpu('A40').cuda_cores * gpu('A40').boost_clock_mhz * 1e6 / 1e12:.1f}",
            ],
        ),
        (
            {("RTX A4000", "memory_bandwidth_gbs"): "512"},
            lambda gpu: [
                "column memory_bandwidth_gbs",
                "memory_bus_bits / 8 x memory_data_rate_gbps = "
                f"{gpu('RTX A4000').memory_bus_bits / 8 * gpu('RTX A4000').memory_data_rate_gbps:.0f}",
            ],
        ),
        (
            lambda gpu: {
                ("RTX A4000", "fp16_tensor_tflops"): f"{2 * gpu('RTX A4000').fp16_tensor_tflops:g}",
                ("RTX A4000", "tf32_tensor_tflops"): f"{gpu('RTX A4000').fp16_tensor_tflops:g}",
            },
            [
                "column fp16_tensor_tflops",
                "2.0x the dense rate",
                "2:4-sparse",
                "dense FP16 figure with FP32 accumulate",
            ],
        ),
        (
            lambda gpu: {("A40", "tf32_tensor_tflops"): f"{gpu('A40').fp16_tensor_tflops - 0.1:g}"},
            ["column tf32_tensor_tflops", "not half the dense FP16"],
        ),
        (
            {("V100 PCIe 16GB", "tf32_tensor_tflops"): "56"},
            ["column tf32_tensor_tflops", "has no TF32 tensor mode"],
        ),
        ({("A40", "msrp_usd"): "4500"}, ["column msrp_source_url", "cite where the price was published"]),
        (
            {("A40", "l2_cache_mib"): "6", ("A40", "l2_source_url"): ""},
            ["column l2_source_url", "l2_cache_mib is set", "cite the device report"],
        ),
    ],
)
def test_bad_cells_are_named_with_line_column_and_fix(catalogue_copy, gpu, changes, expected):
    changes = changes(gpu) if callable(changes) else changes
    expected = expected(gpu) if callable(expected) else expected
    path = catalogue_copy(changes)
    with pytest.raises(DataError) as info:
        specs.validate_catalogue(path)
    msg = one_line(info.value)
    for part in expected:
        assert part in msg, (part, msg)


def test_several_problems_are_all_collected(catalogue_copy):
    path = catalogue_copy({("A40", "fp32_tflops"): "x", ("T4", "tdp_w"): "y"})
    with pytest.raises(DataError) as info:
        specs.validate_catalogue(path)
    assert len(info.value.problems) == 2
    assert one_line(info.value).endswith("(and 1 more problem)")
    assert [p.column for p in info.value.problems] == ["fp32_tflops", "tdp_w"]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"drop_columns": ["tdp_w"]}, "header lacks column(s) tdp_w; add them"),
        (
            {"rename": {"tdp_w": "tdp_watts"}},
            "column tdp_watts: is not a column of this file; did you mean tdp_w?",
        ),
        (
            {"extra_lines": ["Z1,NVIDIA,Ampere"]},
            "has 3 fields, the header has 41; quote any value that contains a comma",
        ),
    ],
)
def test_bad_shape(catalogue_copy, kwargs, expected):
    with pytest.raises(DataError) as info:
        specs.validate_catalogue(catalogue_copy(**kwargs))
    assert expected in one_line(info.value)


def test_missing_empty_and_binary_files(tmp_path):
    cases = {
        tmp_path / "nope.csv": "file not found",
        tmp_path: "is a folder",
    }
    (tmp_path / "empty.csv").write_text("")
    cases[tmp_path / "empty.csv"] = "is empty; it needs a header row: gpu,vendor"
    (tmp_path / "header.csv").write_text(",".join(specs.COLUMNS) + "\n")
    cases[tmp_path / "header.csv"] = "has a header but no GPU rows"
    (tmp_path / "latin1.csv").write_bytes("gpu,caf\xe9\n".encode("latin-1"))
    cases[tmp_path / "latin1.csv"] = "is not UTF-8 text"
    for path, expected in cases.items():
        with pytest.raises(DataError) as info:
            specs.load_catalogue(path)
        msg = one_line(info.value)
        assert str(path) in msg and expected in msg, msg


def test_load_catalogue_reloads_an_edited_file(shipped_copy):
    first = specs.load_catalogue(shipped_copy)
    text = shipped_copy.read_text().replace("RTX A4000,", "RTX A4000 Edited,", 1)
    shipped_copy.write_text(text)
    assert "RTX A4000 Edited" in set(specs.load_catalogue(shipped_copy)["gpu"])
    assert "RTX A4000 Edited" not in set(first["gpu"])


# --------------------------------------------------------------------------- look-up


@pytest.mark.parametrize(
    "query, gpu, defaulted",
    [
        ("A4000", "RTX A4000", False),
        ("nvidia rtx a5000", "RTX A5000", False),
        ("RTXA6000", "RTX A6000", False),
        ("a40", "A40", False),
        ("A10", "A10", False),
        ("Tesla T4", "T4", False),
        ("L4", "L4", False),
        ("l40s", "L40S", False),
        ("rtx 4090", "GeForce RTX 4090", False),
        ("NVIDIA GeForce RTX 3090", "GeForce RTX 3090", False),
        ("V100", "V100 PCIe 16GB", True),
        ("v100 sxm2", "V100 SXM2 32GB", True),
        ("V100 SXM2 16GB", "V100 SXM2 16GB", False),
        ("Tesla V100-SXM2-32GB", "V100 SXM2 32GB", False),
        ("V100 32 GB", "V100 SXM2 32GB", False),
        ("A100", "A100 PCIe 80GB", True),
        ("A100 SXM", "A100 SXM4 80GB", True),
        ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", False),
        ("a100 sxm4 40gb", "A100 SXM4 40GB", False),
        ("H100", "H100 PCIe", True),
        ("H100 SXM5", "H100 SXM5", False),
        ("NVIDIA H100 80GB HBM3", "H100 SXM5", False),
        ("h200", "H200 SXM", False),
    ],
)
def test_resolve_natural_names(catalogue, query, gpu, defaulted):
    res = specs.resolve(query, catalogue)
    assert (res.gpu, res.defaulted) == (gpu, defaulted)
    assert specs.lookup(query, catalogue)["gpu"] == gpu


def test_default_variant_is_described(catalogue):
    text = specs.resolve("V100", catalogue).describe()
    assert text == "'V100' -> V100 PCIe 16GB (default variant; others: V100 SXM2 16GB, V100 SXM2 32GB)"


@pytest.mark.parametrize(
    "query, expected",
    [
        ("A4600", "unknown GPU 'A4600'; did you mean RTX A6000, RTX A4500, RTX A4000"),
        (
            "V100 80GB",
            "no V100 variant matches 'V100 80GB'; it comes as: V100 PCIe 16GB, V100 SXM2 16GB, V100 SXM2 32GB",
        ),
        ("H100 SXM2", "no H100 variant matches"),
        ("", "empty GPU name"),
    ],
)
def test_unknown_names_fail_with_suggestions(catalogue, query, expected):
    with pytest.raises(UnknownGPUError) as info:
        specs.resolve(query, catalogue)
    assert expected in one_line(info.value)


def test_select_keeps_order_and_drops_duplicates(catalogue):
    sel = specs.select(catalogue, ["V100", "A40", "v100 pcie", "A4000"])
    assert list(sel["gpu"]) == ["V100 PCIe 16GB", "A40", "RTX A4000"]
    assert len(specs.select(catalogue, [])) == len(catalogue)


def test_ranking_sorts_largest_first_with_missing_last(catalogue):
    ranked = specs.ranking(catalogue, "bf16_tensor_tflops")
    assert list(ranked["rank"]) == list(range(1, len(catalogue) + 1))
    values = ranked["bf16_tensor_tflops"]
    assert values.iloc[0] == pytest.approx(catalogue["bf16_tensor_tflops"].max())
    assert values.dropna().is_monotonic_decreasing
    # Pascal, Volta and Turing have no BF16; AMD states none for its Radeon cards, Apple for its chips,
    # and the shared-memory machines no dense tensor figure at all
    no_bf16 = set(
        catalogue.loc[
            catalogue["architecture"].isin(["Pascal", "Volta", "Turing"])
            | catalogue["gpu"].str.startswith("Radeon")
            | catalogue.apply(specs.states_no_tensor_peak, axis=1),
            "gpu",
        ]
    )
    assert {"V100 PCIe 16GB", "T4", "Tesla P40", "TITAN RTX"} <= no_bf16
    assert set(catalogue.loc[catalogue["bf16_tensor_tflops"].isna(), "gpu"]) == no_bf16
    assert values.isna().sum() == len(no_bf16)
    assert values.iloc[-len(no_bf16) :].isna().all()


def test_derived_per_watt_metric(catalogue, gpu):
    ranked = specs.ranking(catalogue, "fp32_tflops_per_w")
    a4000 = ranked.loc[ranked["gpu"] == "RTX A4000", "fp32_tflops_per_w"].item()
    assert a4000 == pytest.approx(gpu("RTX A4000").fp32_tflops / gpu("RTX A4000").tdp_w)
    flop_per_byte = specs.with_derived(catalogue).set_index("gpu")["fp16_tensor_flop_per_byte"]
    a40 = gpu("A40")
    assert flop_per_byte["A40"] == pytest.approx(
        a40.fp16_tensor_tflops * 1e12 / (a40.memory_bandwidth_gbs * 1e9)
    )


def test_ranking_by_unknown_metric_suggests(catalogue):
    with pytest.raises(GpukitError, match=r"cannot rank by 'fp16_tflops'; did you mean .*fp16_tensor_tflops"):
        specs.ranking(catalogue, "fp16_tflops")


def test_records_use_none_for_empty_cells(catalogue, gpu):
    rec = {r["gpu"]: r for r in specs.records(catalogue)}
    assert rec["T4"]["tf32_tensor_tflops"] is None
    assert rec["T4"]["cuda_cores"] == gpu("T4").cuda_cores and isinstance(rec["T4"]["cuda_cores"], int)


def test_issue_rate_is_the_fp32_peak_where_an_sm_has_64_fp32_lanes_and_half_where_it_has_128(catalogue):
    """SMs x 128 thread-instructions per clock x boost clock, by hand: a V100 SXM2 (80 SMs at
    1530 MHz) and an A100 (108 at 1410) issue their FP32 peak; an A40 (84 SMs at 1740 MHz) half
    its 37.4 TFLOPS, its second FP32 datapath adding lanes but no issue slots."""
    rows = catalogue.set_index("gpu", drop=False)
    v100, a100 = rows.loc["V100 SXM2 16GB"], rows.loc["A100 PCIe 80GB"]
    assert specs.issue_tflops(v100) == pytest.approx(80 * 128 * 1530e6 / 1e12)
    assert specs.issue_tflops(v100) == pytest.approx(v100["fp32_tflops"], rel=0.01)
    assert specs.issue_tflops(a100) == pytest.approx(108 * 128 * 1410e6 / 1e12)
    a40 = rows.loc["A40"]
    assert specs.sm_count(a40) == 84 and a40["boost_clock_mhz"] == 1740
    assert specs.issue_tflops(a40) == pytest.approx(84 * 128 * 1740e6 / 1e12)
    assert specs.issue_tflops(a40) == pytest.approx(a40["fp32_tflops"] / 2, rel=0.01)


@pytest.mark.parametrize(
    "gpu_name, ai_tops",
    [("GeForce RTX 4090", 1321.2), ("RTX 6000 Ada Generation", 1457), ("GeForce RTX 5090", 3352)],
)
def test_each_ai_tops_rule_gives_the_dense_figures_of_the_card_its_whitepaper_lists(
    catalogue, gpu_name, ai_tops
):
    """The rules reproduce the cards whose dense figures the whitepapers print beside the headline."""
    from gpukit.specs import tensor_rules

    r = row(catalogue, gpu_name)
    dense = tensor_rules.rule_for(r).dense(ai_tops)
    for column in ("fp16_tensor_tflops", "tf32_tensor_tflops", "int8_tensor_tops"):
        assert dense[column] == pytest.approx(r[column], rel=0.01), column


def test_the_rows_that_give_ai_tops_match_their_rule_and_a_sparse_figure_is_refused(
    catalogue_copy, catalogue
):
    from gpukit.specs import tensor_rules

    headline = catalogue.dropna(subset=["ai_tops"])
    assert len(headline) >= 15
    for _, r in headline.iterrows():
        rule = tensor_rules.rule_for(r)
        assert r["fp16_tensor_tflops"] == pytest.approx(r["ai_tops"] / rule.fp16_divisor, rel=0.03), r["gpu"]
    # the 5070 Ti's sparse FP16 figure in place of the dense one is named with its rule
    ti = row(catalogue, "GeForce RTX 5070 Ti")
    path = catalogue_copy(
        {("GeForce RTX 5070 Ti", "fp16_tensor_tflops"): f"{2 * ti['fp16_tensor_tflops']:g}"}
    )
    with pytest.raises(DataError) as info:
        specs.validate_catalogue(path)
    messages = [p.message for p in info.value.problems]
    assert any("AI TOPS 1406 / 16" in m and "is one of them sparse?" in m for m in messages), messages
