"""Measured matmul rates: the shipped runs, their validation, and the share the models run at."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from documents import first_row, problems_text, write_csv

from gpukit import perfmodel as pm
from gpukit.errors import DataError
from gpukit.specs import matmul_rates as mr


@pytest.fixture(scope="module")
def table(catalogue):
    return mr.rates(catalogue=catalogue)


def test_every_shipped_run_is_sourced_and_a_gpus_rate_is_the_median_of_its_runs(catalogue, table):
    runs = mr.load(catalogue=catalogue)
    assert runs["source_url"].str.startswith("https://github.com/").all()
    assert runs["retrieved"].notna().all() and runs["source"].notna().all()
    # the A100 SXM4 80GB: three harnesses, 258.74 (crowd-sourced square matmuls, FP16), 267.9 and
    # 271.2 (two shape searches, BF16); its rate is the middle one, its share that over 312
    a100 = table.set_index("gpu").loc["A100 SXM4 80GB"]
    assert (a100["runs"], a100["sources"]) == (3, 3)
    assert (a100["low"], a100["tflops"], a100["high"]) == (258.74, 267.9, 271.2)
    assert a100["share"] == pytest.approx(267.9 / 312)
    # every GPU's rate is the median of its runs, and within the believable range of its datasheet
    for gpu, group in runs.groupby("gpu"):
        assert table.set_index("gpu").at[gpu, "tflops"] == pytest.approx(statistics.median(group["tflops"]))
    assert table["share"].between(*mr.SHARE_RANGE).all()


def test_power_limited_cards_sustain_less_of_their_datasheet_than_the_same_chip_with_more_power(table):
    share = table.set_index("gpu")["share"]
    # the same GH100 at 350 W (PCIe) and at 700 W (SXM5); the same AD102 at 300 W in 142 SMs
    # (RTX 6000 Ada) and at 450 W in 128 (GeForce RTX 4090, which boosts above its rated clock)
    assert share["H100 PCIe"] < share["H100 SXM5"] - 0.1
    assert share["RTX 6000 Ada Generation"] < share["GeForce RTX 4090"] - 0.1
    assert share["GeForce RTX 4090"] >= 1.0 and share["H100 PCIe"] < 0.7


def test_tensor_share_is_measured_where_a_run_names_the_gpu_and_typical_elsewhere(gpu, table):
    share, measured = mr.tensor_share(gpu("H100 PCIe").row)
    assert measured and share == pytest.approx(statistics.median([458.03, 499.5]) / 756.5)
    # no published run names the A10: it is taken at the median share of the measured GPUs
    share, measured = mr.tensor_share(gpu("A10").row)
    assert not measured and share == pytest.approx(statistics.median(table["share"]))
    assert share == mr.typical_share(table)


def test_the_performance_model_runs_tensor_cores_at_the_measured_rate(gpu):
    # a large FP16 matmul is compute-bound: the H100 SXM5 over the H100 PCIe is the ratio of
    # their measured rates (777.27 over 478.765 TFLOPS), not of their datasheets (989.5 over 756.5)
    prof = pm.profile("matmul", precision="fp16")
    eff = pm.Efficiency(launch_s=0.0)
    sxm, pcie = (pm.predict(prof, gpu(name).row, eff) for name in ("H100 SXM5", "H100 PCIe"))
    assert sxm.bound == pcie.bound == "compute"
    assert sxm.throughput / pcie.throughput == pytest.approx(
        statistics.median([760.04, 758.14, 821.2, 794.5]) / statistics.median([458.03, 499.5])
    )
    # CUDA-core FP32 keeps the datasheet: a Volta FP32 matmul runs at fp32_tflops x cuda efficiency
    v100 = gpu("V100 SXM2 16GB")
    fp32 = pm.predict(pm.profile("matmul", precision="float32"), v100.row, eff)
    assert fp32.throughput == pytest.approx(v100.fp32_tflops * eff.cuda, rel=1e-6)


def _write(tmp_path: Path, header: list[str], rows: list[dict]) -> Path:
    return write_csv(tmp_path / "rates.csv", header, rows)


def test_bad_rows_name_file_line_column_and_the_fix(tmp_path, catalogue):
    header, good = first_row(mr.PATH)
    assert (good["gpu"], good["tflops"]) == ("A100 PCIe 40GB", "241.49")
    volta_bf16 = {**good, "gpu": "V100 SXM2 16GB", "dtype": "bf16", "tflops": "94.0"}
    sparse = {**good, "tflops": "600"}
    unknown = {**good, "gpu": "RTX Z9000"}
    no_url = {**good, "source_url": ""}
    with pytest.raises(DataError) as info:
        mr.load(_write(tmp_path, header, [volta_bf16, sparse, unknown, no_url]), catalogue)
    text = problems_text(info.value)
    assert "rates.csv, line 2 (V100 SXM2 16GB), column dtype" in text and "no BF16 tensor cores" in text
    assert "line 3 (A100 PCIe 40GB), column tflops: 600 is 192% of" in text and "dense" in text
    assert "line 4" in text and "column gpu" in text and "Z9000" in text
    assert "line 5" in text and "column source_url" in text
    with pytest.raises(DataError, match="repeats line 2"):
        mr.load(_write(tmp_path, header, [good, good]), catalogue)


def test_sustained_tflops_per_precision(gpu, table):
    h100 = gpu("H100 PCIe")
    share = statistics.median([458.03, 499.5]) / 756.5
    assert mr.sustained_tflops(h100.row, "fp16") == (
        pytest.approx(h100.fp16_tensor_tflops * share),
        "measured",
    )
    # TF32 shares the tensor cores and their clock; CUDA-core FP32 keeps the datasheet
    assert mr.sustained_tflops(h100.row, "float32") == (
        pytest.approx(h100.tf32_tensor_tflops * share),
        "measured",
    )
    assert mr.sustained_tflops(h100.row, "fp32") == (h100.fp32_tflops, "datasheet (CUDA cores)")
    a10 = gpu("A10")
    assert mr.sustained_tflops(a10.row, "bf16") == (
        pytest.approx(a10.bf16_tensor_tflops * mr.typical_share(table)),
        "median share",
    )
    assert mr.sustained_tflops(gpu("V100 SXM2 16GB").row, "bf16") == (None, None)  # Volta has no BF16
