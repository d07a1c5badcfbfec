"""Measured memory bandwidth: the shipped runs, their validation, and the share the models stream at."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from documents import first_row, problems_text, write_csv

from gpukit import llm
from gpukit import perfmodel as pm
from gpukit.errors import DataError
from gpukit.specs import bandwidth_rates as br


@pytest.fixture(scope="module")
def table(catalogue):
    return br.rates(catalogue=catalogue)


def test_every_shipped_run_is_sourced_and_a_gpus_rate_is_the_median_of_its_runs(catalogue, table):
    runs = br.load(catalogue=catalogue)
    assert runs["source_url"].str.startswith("https://").all()
    assert runs["retrieved"].notna().all() and set(runs["kernel"]) <= set(br.KERNELS)
    # the RTX 4090: a PyTorch copy (912), a float4 copy kernel (921.85), cudaMemcpy device to
    # device (918.813) and a one-read-one-write kernel (842.718); its rate is the middle of the four
    rtx = table.set_index("gpu").loc["GeForce RTX 4090"]
    assert (rtx["runs"], rtx["sources"]) == (4, 3)
    assert (rtx["low"], rtx["gbs"], rtx["high"]) == (842.718, pytest.approx((912 + 918.813) / 2), 921.85)
    assert rtx["share"] == pytest.approx((912 + 918.813) / 2 / 1008)
    for gpu, group in runs.groupby("gpu"):
        assert table.set_index("gpu").at[gpu, "gbs"] == pytest.approx(statistics.median(group["gbs"]))
    assert table["share"].between(*br.SHARE_RANGE).all()


T4_RUNS = (239.6, 240, 234.426, 235.48, 234.688, 234.692, 284.44, 234.132)


def test_gddr6_inference_cards_stream_less_of_their_datasheet_than_hbm_and_gddr6x_cards(table):
    share = table.set_index("gpu")["share"]
    # the T4 (bandwidthTest, a PyTorch copy and six cloud machines' nvbandwidth), the L4 and A10
    # against the V100s, the A100 SXM4 40GB and the RTX 4090
    assert share["T4"] == pytest.approx(statistics.median(T4_RUNS) / 320)
    assert max(share["T4"], share["L4"]) < 0.8 and share["A10"] < 0.85
    assert min(share["V100 PCIe 16GB"], share["A100 SXM4 40GB"], share["GeForce RTX 4090"]) > 0.88


def test_a_load_only_and_a_store_only_kernel_each_count_the_bytes_they_move(table):
    """mt4g's main-memory kernels on the H100 NVL: one loads, one stores, each over a quarter of
    its 94 GB; the figures are GiB/s (2853.07 and 3334.19), the rows GB/s."""
    nvl = table.set_index("gpu").loc["H100 NVL"]
    read, write = 2853.0717133773824 * 2**30 / 1e9, 3334.1914340057683 * 2**30 / 1e9
    assert (nvl["low"], nvl["high"]) == (pytest.approx(read, abs=0.05), pytest.approx(write, abs=0.05))
    assert nvl["share"] == pytest.approx((read + write) / 2 / 3900, abs=1e-4)
    # level with the other PCIe Hopper card's share (within a point), below the SXM5's
    share = table.set_index("gpu")["share"]
    assert abs(nvl["share"] - share["H100 PCIe"]) < 0.01 and nvl["share"] < share["H100 SXM5"]


def test_ecc_costs_a_gddr6_card_bandwidth_and_the_runs_say_which_they_had(catalogue):
    """The same harness (nvbandwidth) on cloud machines of one provider each: an L40S or a T4 with
    ECC on streams 15-20 % less than one with it off (GDDR6 keeps its check bits in the data)."""
    runs = br.load(catalogue=catalogue)
    cloud = runs[runs["source"] == "sparecores-nvbandwidth"]
    ecc_on = cloud["note"].str.contains("ECC enabled")
    assert (ecc_on | cloud["note"].str.contains("ECC disabled")).all()
    for gpu in ("L40S", "T4"):
        on = cloud[(cloud["gpu"] == gpu) & ecc_on]["gbs"].median()
        off = cloud[(cloud["gpu"] == gpu) & ~ecc_on]["gbs"].median()
        assert 0.8 < on / off < 0.87, (gpu, on, off)


def test_bandwidth_share_is_measured_where_a_run_names_the_gpu_and_typical_elsewhere(gpu, table):
    share, measured = br.bandwidth_share(gpu("T4").row)
    assert measured and share == pytest.approx(statistics.median(T4_RUNS) / 320)
    # no published run names the RTX A4000: it is taken at the median share of the measured GPUs
    share, measured = br.bandwidth_share(gpu("RTX A4000").row)
    assert not measured and share == pytest.approx(statistics.median(table["share"]))
    assert share == br.typical_share(table) == br.shipped_typical_share()
    # the share goes with the GPU: a catalogue row changed by hand keeps it
    what_if = {**gpu("T4").row.to_dict(), "memory_bandwidth_gbs": 640.0}
    assert br.streaming_gbs(what_if) == pytest.approx(640 * statistics.median(T4_RUNS) / 320)
    assert br.streaming_gbs(what_if, measured=False) == pytest.approx(640 * br.typical_share(table))


def test_the_models_move_bytes_at_the_measured_rate(gpu):
    # a copy is memory-bound: the RTX 4090 over the T4 is the ratio of their measured streaming
    # rates (915.4 over 235.1 GB/s), not of their datasheets (1008 over 320)
    prof = pm.profile("bandwidth", elements=2**28)
    eff = pm.Efficiency(launch_s=0.0)
    rtx, t4 = (pm.predict(prof, gpu(name).row, eff) for name in ("GeForce RTX 4090", "T4"))
    assert rtx.bound == t4.bound == "memory"
    assert rtx.throughput / t4.throughput == pytest.approx((912 + 918.813) / 2 / statistics.median(T4_RUNS))
    off = replace(eff, measured_bandwidth=False)
    rtx, t4 = (pm.predict(prof, gpu(name).row, off) for name in ("GeForce RTX 4090", "T4"))
    assert rtx.throughput / t4.throughput == pytest.approx(1008 / 320)
    # an LLM's decode at batch 1 on a GDDR card reads its weights at the measured GPUs' median share of
    # the datasheet (a copy's rate is not a read's: llm.default_efficiency), or at each GPU's own
    model = llm.resolve_model("llama-3-8b")
    engine = llm.ENGINES["llama.cpp"]
    fixed = model.layers * engine.kernels_per_layer * engine.launch_s

    def slowdown(efficiency=None):
        fast, slow = (
            llm.speeds(model, name, "f16", context=64, efficiency=efficiency)["decode_step_s"]
            for name in ("A10", "T4")
        )
        return (slow - fixed) / (fast - fixed)

    assert slowdown() == pytest.approx(600 / 320, rel=1e-6)
    a10 = statistics.median(
        [469, 484.458, 484.526, 484.65, 484.678, 484.732, 484.746]
    )  # one copy, six machines
    own = replace(llm.default_efficiency(), measured_bandwidth=True)
    assert slowdown(own) == pytest.approx(a10 / statistics.median(T4_RUNS), rel=1e-6)


def _write(tmp_path: Path, header: list[str], rows: list[dict]) -> Path:
    return write_csv(tmp_path / "bandwidth.csv", header, rows)


def test_bad_rows_name_file_line_column_and_the_fix(tmp_path, catalogue):
    header, good = first_row(br.PATH)
    assert (good["gpu"], good["gbs"]) == ("A10", "484.526")
    cached = {**good, "gbs": "900"}  # 150 % of the A10's 600 GB/s: another card's, or a cache
    unnamed = {**good, "kernel": "stream"}  # a harness, not what the kernel does
    unknown = {**good, "gpu": "RTX Z9000"}
    undated = {**good, "retrieved": ""}
    with pytest.raises(DataError) as info:
        br.load(_write(tmp_path, header, [cached, unnamed, unknown, undated]), catalogue)
    text = problems_text(info.value)
    assert "bandwidth.csv, line 2 (A10), column gbs: 900 is 150% of A10's datasheet 600" in text
    assert "cache" in text
    assert "line 3" in text and "column kernel" in text and "'stream'" in text
    assert "line 4" in text and "column gpu" in text and "Z9000" in text
    assert "line 5" in text and "column retrieved" in text
    # the same source, GPU and address may hold several kernels (one table row), not one twice
    triad = {**good, "kernel": "triad"}
    assert len(br.load(_write(tmp_path, header, [good, triad]), catalogue)) == 2
    with pytest.raises(DataError, match="repeats line 2"):
        br.load(_write(tmp_path, header, [good, good]), catalogue)
