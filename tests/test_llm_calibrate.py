"""Engine profiles and their calibration: which profile a published run belongs to, the fit of a
profile's constants to its own sources' pairs, and the hold-out of a GPU family."""

from __future__ import annotations

import dataclasses

import pytest

from gpukit import grading, llm
from gpukit.errors import ParameterError
from gpukit.llm import calibrate


def test_a_published_run_belongs_to_the_profile_of_its_build():
    assert llm.engine_of_run("llama.cpp build 2824 (commit 0000000)") == "llama.cpp-2024"
    assert llm.engine_of_run(f"llama.cpp build {llm.LLAMA_CPP_2025_BUILD} (x)") == "llama.cpp"
    assert llm.engine_of_run("llama.cpp build 6413 (x), flash attention on") == "llama.cpp"
    assert llm.engine_of_run("TensorRT-LLM 0.17") == "trt-llm"
    assert llm.engine_of_run("vLLM 0.22.1") == "vllm"
    for name, e in llm.ENGINES.items():
        assert e.name == name and e.versions and e.dates and e.sources and name in e.label
    assert llm.resolve_engine("llama.cpp", flash_attention=False).label.endswith("flash attention off)")
    assert llm.resolve_engine("llama.cpp") is llm.ENGINES["llama.cpp"]
    with pytest.raises(
        ParameterError,
        match="engine 'sglang': use one of llama.cpp, llama.cpp-2024, llama.cpp-metal, llama.cpp-rocm, "
        "llama.cpp-vulkan, vllm, trt-llm",
    ):
        llm.resolve_engine("sglang")


@pytest.fixture(scope="module")
def few_rows():
    """Current llama.cpp's decode of one model on four GPUs of three families."""
    rows = calibrate.runs(llm.ENGINES["llama.cpp"], "tg")
    gpus = ["L4", "A10", "T4", "L40S"]
    mine = rows[(rows["model"] == rows["model"].iloc[0]) & rows["gpu"].isin(gpus)].reset_index(drop=True)
    assert set(mine["gpu"]) == set(gpus)
    return mine


def test_a_fit_keeps_the_grid_point_with_the_most_pairs_within_tolerance(few_rows):
    e = llm.ENGINES["llama.cpp"]
    grid = {"launch_s": (0.0, 4e-6, 2e-5), "gemv_bytes_per_sm_cycle": (None, 7.0)}
    fitted = calibrate.fit(e, "tg", grid, few_rows)
    scores = {}
    for launch in grid["launch_s"]:
        for per_sm in grid["gemv_bytes_per_sm_cycle"]:
            candidate = dataclasses.replace(e, launch_s=launch, gemv_bytes_per_sm_cycle=per_sm)
            s = grading.summarize(calibrate.grade(few_rows, candidate, "tg"))
            scores[(launch, per_sm)] = (
                -s["within_tolerance"],
                -s["winners_right"],
                s["median_abs_error_pct"],
            )
    best = min(scores, key=scores.get)
    assert (fitted.values["launch_s"], fitted.values["gemv_bytes_per_sm_cycle"]) == best
    assert fitted.engine.launch_s == best[0] and fitted.summary["pairs"] == len(
        calibrate.grade(few_rows, e, "tg")
    )
    # the grading is at decode's tolerance: ±20 %, winners past 15 %
    assert calibrate.TOLERANCES["tg"].speedup == 0.20 and calibrate.TOLERANCES["pp"].speedup == 0.25


def test_a_held_out_family_is_fitted_without_and_graded_on_its_pairs(few_rows):
    e = llm.ENGINES["llama.cpp"]
    grid = {"launch_s": (0.0, 4e-6, 2e-5)}
    held = calibrate.hold_out(e, "tg", grid, "Turing", few_rows)
    without = few_rows[few_rows["gpu"] != "T4"].reset_index(drop=True)
    assert held["values"] == calibrate.fit(e, "tg", grid, without).values
    refit = dataclasses.replace(e, **held["values"])
    table = calibrate.grade(few_rows, refit, "tg")
    mine = table[(table["gpu_a"] == "T4") | (table["gpu_b"] == "T4")]
    assert 0 < held["pairs"] == len(mine) < len(table)
    assert held["within_tolerance"] == grading.summarize(mine)["within_tolerance"]


@pytest.mark.slow
def test_the_shipped_current_llama_cpp_constants_are_the_fit():
    """LLAMA_CPP_2025 is what the fit of SpareCores' runs gives, decode and prefill."""
    e = llm.ENGINES["llama.cpp"]
    for test, grid in calibrate.GRIDS["llama.cpp"].items():
        fitted = calibrate.fit(e, test, grid)
        assert fitted.values == {k: llm.LLAMA_CPP_2025[k] for k in grid}, test
