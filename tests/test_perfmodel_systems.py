"""Whole systems graded against each other (gpukit.perfmodel.system_validation): which systems a
source's runs pair up, their speedup per GPU, and the grading with each GPU left out of the fit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpukit import perfmodel as pm
from gpukit.perfmodel.reference import family, single_gpu


@pytest.fixture(scope="module")
def ref(catalogue):
    return pm.load_reference(catalogue=catalogue)


def _systems(ref, source, workload="resnet50", precision="fp16"):
    rows = ref[(ref["source"] == source) & (ref["workload"] == workload) & (ref["precision"] == precision)]
    return rows[rows["gpus"] > 1]


def test_systems_of_no_common_count_compare_their_largest_per_gpu(ref, catalogue):
    # Fujitsu ran 4 H100 SXM5 and 8 L40S: per GPU 29568.8 / 4 against 14863.9 / 8
    systems = _systems(ref, "fujitsu-mlperf-v4.0").sort_values("gpu")  # H100 SXM5, L40S
    table = pm.system_validation(systems, catalogue=catalogue, predicted=[8000.0, 4000.0])
    assert len(table) == 1
    r = table.iloc[0]
    assert (r["gpu_a"], r["gpus_a"], r["gpu_b"], r["gpus_b"]) == ("H100 SXM5", 4, "L40S", 8)
    assert r["published_speedup"] == pytest.approx((29568.8 / 4) / (14863.9 / 8))
    assert r["predicted_speedup"] == pytest.approx((8000 / 4) / (4000 / 8))
    assert r["error_pct"] == pytest.approx(100 * (4.0 / r["published_speedup"] - 1))
    assert bool(r["winner_right"]) and r["family"] == "CNN"


def test_systems_pair_at_each_common_count_and_never_with_their_own_gpu(ref, catalogue):
    # lambda-2024 ran the H100 SXM5 on 2, 4 and 8 GPUs and the H200 on 8 only: one pair, at 8
    systems = _systems(ref, "lambda-2024", "bert-large-squad")
    assert sorted(systems.loc[systems["gpu"] == "H100 SXM5", "gpus"]) == [2, 4, 8]
    table = pm.system_validation(systems, catalogue=catalogue, predicted=np.ones(len(systems)))
    assert list(zip(table["gpu_a"], table["gpus_a"], table["gpu_b"], table["gpus_b"])) == [
        ("H200 SXM", 8, "H100 SXM5", 8)
    ]
    rate = systems.set_index(["gpu", "gpus"])["processed_throughput"]
    assert table.at[0, "published_speedup"] == pytest.approx(rate["H200 SXM", 8] / rate["H100 SXM5", 8])


def test_single_gpu_runs_and_a_source_of_one_gpu_give_no_system_pair(ref, catalogue):
    assert pm.system_validation(single_gpu(ref), catalogue=catalogue).empty
    alone = _systems(ref, "lambda-2025")  # the B200 alone, on 8 GPUs
    assert set(alone["gpu"]) == {"B200"}
    assert pm.system_validation(alone, catalogue=catalogue).empty


def test_each_system_is_predicted_at_its_own_count_and_link(ref, catalogue):
    systems = _systems(ref, "lambda-2024", "bert-large-squad").reset_index(drop=True)
    got = pm.system_throughputs(systems, catalogue=catalogue)
    for i, r in systems.iterrows():
        prof = pm.profile(
            r["workload"],
            int(r["batch_size"]),
            r["precision"],
            "train",
            update=r["update"],
            seq_len=int(r["seq_len"]),
        )
        gpu = catalogue.set_index("gpu", drop=False).loc[r["gpu"]]
        assert got[i] == pytest.approx(pm.predict_scaling(prof, gpu, int(r["gpus"]))["throughput"])
    # per GPU, the 8-GPU H100 system is predicted slower than its 2-GPU one (a larger all-reduce)
    per_gpu = dict(zip(zip(systems["gpu"], systems["gpus"]), got / systems["gpus"]))
    assert per_gpu["H100 SXM5", 8] < per_gpu["H100 SXM5", 2]


@pytest.mark.slow  # a second or more: the full tier's
def test_held_out_systems_refit_without_the_gpu(ref, catalogue):
    bert = ref[(ref["source"] == "lambda-2024") & ref["workload"].str.startswith("bert")]
    systems = pm.system_validation(bert, catalogue=catalogue)
    held = pm.held_out_systems(systems, ref, catalogue).set_index("held_out")
    assert set(held.index) == {"H100 SXM5", "H200 SXM"} and set(held["family"]) == {"transformer"}
    # by hand: fit the family's single-GPU pairs without the H200, then grade its system pairs
    rest = single_gpu(ref[[family(w) == "transformer" for w in ref["workload"]]])
    eff = pm.fit_efficiency(rest[rest["gpu"] != "H200 SXM"], catalogue)
    again = pm.system_validation(bert, eff, catalogue)
    assert held.at["H200 SXM", "pairs"] == len(again) == len(systems)
    assert held.at["H200 SXM", "median_abs_error_pct"] == pytest.approx(again["error_pct"].abs().median())
    assert held.at["H200 SXM", "fitted"].startswith(f"tensor {eff.tensor:g},")


@pytest.mark.tensorflow
def test_the_mlperf_pairs_need_the_fused_stacks_elementwise_rate(ref, catalogue):
    # what docs/accuracy/perfmodel.md says of MLPerf's ResNet-50 systems: the eager-script defaults
    # rate the L40S too high against the H100 and H200; at twice the elementwise rate all land
    mlperf = ref[ref["source"].str.contains("mlperf")]
    default = pm.system_validation(mlperf, catalogue=catalogue)
    assert len(default) == 7
    l40s = default[default["gpu_b"] == "L40S"]
    assert len(l40s) == 4 and (l40s["error_pct"] < -20).all()
    h200 = default[(default["gpu_a"] == "H200 SXM") & (default["gpu_b"] == "H100 SXM5")]
    assert abs(h200["error_pct"].iloc[0]) < 5
    fused = pm.system_validation(mlperf, replace(pm.DEFAULT_EFFICIENCY, elementwise=0.04), catalogue)
    assert (fused["error_pct"].abs() < 20).all()


@pytest.mark.parametrize(
    "gpu_name, link",
    [
        ("H100 SXM5", "nvlink"),
        ("GB200 (per GPU)", "nvlink"),  # a Grace superchip's GPUs talk over NVLink, as SXM boards do
        ("A100 PCIe 80GB", "pcie"),  # an NVLink bridge is an accessory
        ("GeForce RTX 4090", "host"),  # no peer-to-peer between GeForce cards
    ],
)
def test_the_default_link_follows_the_board(catalogue, gpu_name, link):
    from gpukit.perfmodel import scaling

    assert scaling.default_link(catalogue.set_index("gpu").loc[gpu_name]) == link
