"""Beyond NVIDIA: AMD Instinct and Radeon rows in the one catalogue, their names, the figures the
loader checks (packed and dual-issue FP32, no CUDA compute capability), the engines whose profiles
describe them, and the one-line errors where none does."""

from __future__ import annotations

import pytest

from gpukit import cli, llm, specs
from gpukit import precision as prec
from gpukit.errors import DataError, ParameterError
from gpukit.prices import checks


@pytest.mark.parametrize(
    "name, expected",
    [
        ("MI300X", "Instinct MI300X"),
        ("AMD Instinct MI355X", "Instinct MI355X"),
        ("7900 XTX", "Radeon RX 7900 XTX"),
        ("AMD Radeon RX 7900 XTX", "Radeon RX 7900 XTX"),
        ("W7900", "Radeon PRO W7900"),
        ("Radeon PRO W7900", "Radeon PRO W7900"),
        ("RX 9070 XT", "Radeon RX 9070 XT"),
    ],
)
def test_amd_devices_are_found_by_their_names(name, expected):
    assert specs.resolve(name).gpu == expected


def test_amd_rows_carry_their_own_figures():
    cat = specs.load_catalogue().set_index("gpu", drop=False)
    mi300x = cat.loc["Instinct MI300X"]
    assert (mi300x["vendor"], mi300x["arch_target"], mi300x["form_factor"]) == ("AMD", "gfx942", "OAM")
    assert mi300x["memory_gb"] == 192 and mi300x["fp16_tensor_tflops"] == pytest.approx(1307.4)
    assert mi300x["tf32_tensor_tflops"] == pytest.approx(mi300x["fp16_tensor_tflops"] / 2, rel=0.01)
    assert specs.sm_count(mi300x) == 304  # compute units: 19,456 stream processors / 64
    assert (
        cat.loc["Instinct MI355X", "fp4_tensor_tflops"] > 0
        and not cat.loc["Instinct MI300X", "fp4_tensor_tflops"] > 0
    )
    # AMD's vector FP32 counts packed (CDNA 3) and dual-issued (RDNA 3) operations: twice 2 x lanes x clock
    xtx = cat.loc["Radeon RX 7900 XTX"]
    assert xtx["fp32_tflops"] == pytest.approx(
        2 * 2 * xtx["cuda_cores"] * xtx["boost_clock_mhz"] / 1e6, rel=0.01
    )


def test_the_loader_checks_amd_figures_and_names(catalogue_copy):
    with pytest.raises(DataError, match=r"2 x 2 \(CDNA 3\) x cuda_cores x boost_clock_mhz"):
        specs.validate_catalogue(catalogue_copy({("Instinct MI300X", "fp32_tflops"): "81.7"}))
    with pytest.raises(DataError, match="arch_target.*name the compiler target"):
        specs.validate_catalogue(catalogue_copy({("Instinct MI300X", "arch_target"): ""}))
    with pytest.raises(
        DataError, match="compute_capability.*an NVIDIA GPU names its CUDA compute capability"
    ):
        specs.validate_catalogue(catalogue_copy({("A40", "compute_capability"): ""}))


def test_an_engine_whose_profile_does_not_describe_the_device_is_one_line(capsys):
    with pytest.raises(
        ParameterError,
        match=r"the trt-llm profile does not describe Instinct MI300X \(AMD\).*"
        r"use --engine llama.cpp-rocm or llama.cpp-vulkan or vllm",
    ):
        llm.llm_table("qwen3-8b", "bf16", engine="trt-llm", gpus=["MI300X"])
    with pytest.raises(
        ParameterError, match=r"MI300X \(CDNA 3\) has no FP4 tensor cores \(NVIDIA Blackwell and AMD CDNA 4"
    ):
        llm.llm_table("qwen3-8b", "fp4", engine="vllm", gpus=["MI300X"])
    assert cli.main(["llm", "--engine", "trt-llm", "--weights", "bf16", "--gpu", "MI300X"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    # beside an NVIDIA card, the AMD row takes llama.cpp's ROCm profile and says so; vLLM's covers both
    mixed = llm.llm_table("qwen3-8b", "q4_k_m", gpus=["MI300X", "H200 SXM"]).set_index("gpu")
    assert "with llama.cpp-rocm" in mixed.loc["Instinct MI300X", "note"]
    assert (
        mixed.loc["Instinct MI300X", "decode_tokens_per_s"] > 0 and not mixed.loc["Instinct MI300X", "graded"]
    )
    assert mixed.loc["H200 SXM", "decode_tokens_per_s"] > 0
    served = llm.llm_table("qwen3-8b", "bf16", engine="vllm", gpus=["MI300X", "MI355X"]).set_index("gpu")
    assert (served["decode_tokens_per_s"] > 0).all() and not served["graded"].any()


def test_the_price_check_compares_a_card_with_its_own_vendor_only():
    cat = specs.load_catalogue()
    better = checks._better_newer(cat)
    vendor = dict(zip(cat["gpu"], cat["vendor"]))
    assert all(vendor[b] == vendor[g] for g, rivals in better.items() for b in rivals)
    assert "Radeon RX 7900 XTX" not in better["RTX A5000"]


def test_tf32_and_bf16_errors_name_every_vendor_that_has_them():
    cat = specs.load_catalogue().set_index("gpu", drop=False)
    with pytest.raises(prec.Unsupported, match="AMD CDNA 2 and later have one"):
        prec.math_unit(cat.loc["Radeon RX 7900 XTX"], "bf16")


@pytest.mark.parametrize(
    "name, memory_mib, expected",
    [
        ("AMD Instinct MI300X", None, "Instinct MI300X"),
        ("AMD Radeon RX 7900 XTX", None, "Radeon RX 7900 XTX"),
        ("gfx942", 192 * 1024, "Instinct MI300X"),
        ("gfx942:sramecc+:xnack-", 256 * 1024, "Instinct MI325X"),
        ("gfx942", None, None),  # two catalogue rows share the target: the memory would decide
        ("METAL", None, None),
    ],
)
def test_the_benchmark_names_an_amd_or_apple_gpu_as_tensorflow_reports_it(name, memory_mib, expected):
    from gpukit.bench import device

    gpu, note = device.match_catalogue(name, memory_mib)
    assert gpu == expected
    if name == "METAL":
        assert "names an Apple GPU only METAL" in note


def test_apple_rows_state_no_compute_peak_and_give_their_gpu_three_quarters():
    cat = specs.load_catalogue().set_index("gpu", drop=False)
    ultra = cat.loc["Apple M2 Ultra"]
    assert ultra["shared_memory"] == "true" and ultra["memory_bandwidth_gbs"] == 800
    assert ultra["fp32_tflops"] != ultra["fp32_tflops"]  # Apple states none: empty, not guessed
    assert specs.gpu_memory_bytes(ultra) == int(
        specs.memory_bytes(192) * specs.catalogue.APPLE_GPU_WORKING_SET
    )
    assert specs.sm_count(ultra) == 76  # GPU cores: 9,728 ALUs / 128
    assert specs.resolve("M2 Ultra").gpu == "Apple M2 Ultra"


def test_only_a_vendor_that_states_no_peak_may_leave_it_empty(catalogue_copy):
    with pytest.raises(
        DataError, match="fp32_tflops.*only a shared-memory machine or a vendor that states none"
    ):
        specs.validate_catalogue(catalogue_copy({("A40", "fp32_tflops"): ""}))
    with pytest.raises(DataError, match="Radeon RX 7900 XTX.*fp32_tflops.*only a shared-memory machine"):
        specs.validate_catalogue(catalogue_copy({("Radeon RX 7900 XTX", "fp32_tflops"): ""}))
    assert len(specs.validate_catalogue(catalogue_copy({("Apple M1 Max", "fp32_tflops"): ""}))) > 0
    # a shared-memory machine of another vendor may leave it empty where its vendor states none
    assert len(specs.validate_catalogue(catalogue_copy({("DGX Spark", "fp32_tflops"): ""}))) > 0


def test_llama_cpp_on_apple_silicon_takes_its_metal_profile():
    """The usual llama.cpp answer on an Apple chip comes from the Metal profile: decode from
    bandwidth and cores, fitted on published runs; no prompt speed, as Apple states no peak."""
    table = llm.llm_table("llama-3-8b", "q4_k_m", gpus=["M2 Ultra", "M4 Max", "RTX 4090"]).set_index("gpu")
    ultra, m4 = table.loc["Apple M2 Ultra"], table.loc["Apple M4 Max"]
    assert ultra["decode_tokens_per_s"] > 0 and ultra["prefill_tokens_per_s"] != ultra["prefill_tokens_per_s"]
    assert "with llama.cpp-metal" in ultra["note"] and "no prompt speed" in ultra["note"]
    assert bool(ultra["graded"]) and not bool(m4["graded"])
    assert table.loc["GeForce RTX 4090", "prefill_tokens_per_s"] > 0
    # asked for by name, the CUDA profile refuses the chip and names the one that describes it
    with pytest.raises(ParameterError, match="use --engine llama.cpp-metal"):
        llm.llm_table("llama-3-8b", "q4_k_m", engine="llama.cpp", gpus=["M2 Ultra"])


@pytest.mark.slow  # 72 grid points fitted four times: the full tier's
def test_the_metal_profile_ships_its_fit():
    from gpukit.llm import calibrate

    fitted = calibrate.fit_bandwidth_profile(llm.ENGINES["llama.cpp-metal"])
    assert fitted.values == llm.LLAMA_CPP_METAL
    held = calibrate.held_out_bandwidth_profile(llm.ENGINES["llama.cpp-metal"])
    # each chip held out lands nearer than the bare datasheet bandwidth does
    assert (held["within_20_pct"] > held["bare_bandwidth_within_20_pct"]).all()


def test_unified_memory_machines_give_their_gpu_what_the_vendor_states():
    cat = specs.load_catalogue().set_index("gpu", drop=False)
    spark, strix = cat.loc["DGX Spark"], cat.loc["Ryzen AI Max+ 395"]
    assert (spark["form_factor"], spark["shared_memory"], spark["memory_bandwidth_gbs"]) == (
        "System",
        "true",
        273,
    )
    assert (strix["form_factor"], strix["arch_target"], strix["memory_bandwidth_gbs"]) == (
        "SoC",
        "gfx1151",
        256,
    )
    # the GPU of a DGX Spark addresses all of it; a Ryzen AI Max's the 96 GB AMD allows
    assert specs.gpu_memory_bytes(spark) == specs.memory_bytes(128)
    assert specs.gpu_memory_bytes(strix) == pytest.approx(specs.memory_bytes(96), rel=1e-9)
    assert specs.gpu_memory_bytes(cat.loc["Instinct MI300X"]) == specs.memory_bytes(192)
    # only a sparse FP4 headline for GB10, nothing for the 8060S: no dense tensor peak is entered
    assert specs.states_no_tensor_peak(spark) and specs.states_no_tensor_peak(strix)
    assert not specs.states_no_tensor_peak(cat.loc["Radeon RX 7900 XTX"])
    assert strix["fp32_tflops"] != strix["fp32_tflops"]
    assert (
        specs.resolve("Spark").gpu == "DGX Spark"
        and specs.resolve("AMD Ryzen AI Max+ 395").gpu == strix["gpu"]
    )


def test_a_machine_without_a_dense_peak_gets_decode_and_no_prompt_speed():
    s = llm.speeds(llm.resolve_model("qwen3-8b"), "DGX Spark", "q4_k_m", engine="llama.cpp")
    assert s["decode_tokens_per_s"] > 0 and s["prefill_tokens_per_s"] != s["prefill_tokens_per_s"]
    # decode is bound by the 273 GB/s: below what the whole bandwidth would stream the weights at
    weights = llm.resolve_model("qwen3-8b").weight_bytes(llm.weights_format("q4_k_m").bits_per_weight)
    assert s["decode_tokens_per_s"] < 273e9 / weights
    row = llm.llm_table("qwen3-8b", "q4_k_m", gpus=["DGX Spark"]).iloc[0]
    assert "no prompt speed: the vendor states no dense compute peak" in row["note"]


def test_llama_cpp_on_amd_takes_its_rocm_profile_and_reproduces_its_runs():
    from gpukit.llm import calibrate

    e = llm.ENGINES["llama.cpp-rocm"]
    assert llm.engine_of_run("llama.cpp build 9187 (commit 0253fb21f) (ROCm) -fa 1") == "llama.cpp-rocm"
    cat = specs.load_catalogue().set_index("gpu", drop=False)
    assert llm.for_device(llm.ENGINES["llama.cpp"], cat.loc["Radeon RX 7900 XTX"]) is e
    assert llm.for_device(llm.ENGINES["llama.cpp"], cat.loc["Apple M4 Max"]).name == "llama.cpp-metal"
    assert (e.stream_share, e.core_ops_per_s) == (
        llm.LLAMA_CPP_ROCM["stream_share"],
        llm.LLAMA_CPP_ROCM["core_ops_per_s"],
    )
    runs = calibrate.runs(e, "tg")
    assert set(runs["gpu"]) == {"Ryzen AI Max+ 395"} and len(runs) == 3
    # the shipped constants put every published run within 20% of its speed
    assert (calibrate._absolute(runs, e, None).abs() <= 0.20).all()
    row = llm.llm_table("qwen3-8b", "q4_k_m", gpus=["RX 7900 XTX"]).iloc[0]
    assert "with llama.cpp-rocm" in row["note"] and "predicts decode only" in row["note"]
    assert not row["graded"]
    with pytest.raises(ParameterError, match="held out by 'chip'"):
        calibrate.held_out_bandwidth_profile(e, by="chip")
    # the Vulkan build has its own profile, asked for by name
    assert llm.engine_of_run("llama.cpp build 9187 (commit 0253fb21f) (Vulkan) -fa 1") == "llama.cpp-vulkan"
    vulkan = llm.llm_table("qwen3-8b", "q4_k_m", engine="llama.cpp-vulkan", gpus=["Strix Halo"]).iloc[0]
    assert vulkan["decode_tokens_per_s"] > 0 and vulkan["graded"]
    with pytest.raises(
        ParameterError, match="llama.cpp-vulkan profile does not describe Apple M4 Max.*llama.cpp-metal"
    ):
        llm.llm_table("qwen3-8b", "q4_k_m", engine="llama.cpp-vulkan", gpus=["M4 Max"])


@pytest.mark.slow  # the grid fitted on each profile's runs
@pytest.mark.parametrize(
    "name, shipped", [("llama.cpp-rocm", "LLAMA_CPP_ROCM"), ("llama.cpp-vulkan", "LLAMA_CPP_VULKAN")]
)
def test_the_amd_llama_cpp_profiles_ship_their_fit(name, shipped):
    from gpukit.llm import calibrate

    assert calibrate.fit_bandwidth_profile(llm.ENGINES[name]).values == getattr(llm, shipped)


def test_rocm_serving_is_graded_same_engine_against_same_engine():
    from gpukit.llm import serving_reference as sr

    ref = sr.shipped_rocm_serving_reference()
    assert set(ref["gpu"]) == {"Instinct MI300X", "H200 SXM"} and set(ref["engine_name"]) == {
        "vllm",
        "sglang",
    }
    table = sr.serving_validation(ref)
    # every pair is one engine on both GPUs at one concurrency and length
    assert len(table) == len(ref) // 2 == 18
    s = sr.rocm_serving_summary()
    assert s["pairs"] == 18 and s["within_tolerance"] >= 12
    # a run with more requests in flight than the KV cache holds is predicted at what it holds
    pred = sr.predict_serving(ref)
    assert (pred["batch"] <= ref["concurrency"]).all() and pred["predicted_tokens_per_s"].notna().all()


def test_instinct_boards_join_their_gpus_over_infinity_fabric():
    from gpukit.perfmodel import scaling

    cat = specs.load_catalogue().set_index("gpu", drop=False)
    assert scaling.default_link(cat.loc["Instinct MI300X"]) == "nvlink"
    assert scaling.interconnect(cat.loc["Instinct MI300X"], 8) == ("Infinity Fabric", 448.0)
    assert scaling.interconnect(cat.loc["H200 SXM"], 8)[0] == "NVLink"
    assert scaling.default_link(cat.loc["Radeon PRO W7900"]) == "pcie"


def test_rank_gives_another_profile_s_answers_the_widest_band():
    from gpukit import rank

    job = rank.LLMJob("qwen3-8b", "q4_k_m")
    error = rank.ranking._llm_error(job, specs.load_catalogue())
    decode = llm.decode_summary()
    assert error["GeForce RTX 4090"] == pytest.approx(decode["median_abs_error_pct"])
    assert error["Radeon RX 7900 XTX"] == error["Apple M4 Max"] == pytest.approx(decode["max_abs_error_pct"])
    served = rank.ranking._llm_error(rank.LLMJob("qwen3-8b", "bf16", engine="vllm"), specs.load_catalogue())
    assert served["Instinct MI300X"] == pytest.approx(decode["median_abs_error_pct"])


@pytest.mark.slow  # a page refits its profiles with each chip or model held out
@pytest.mark.parametrize(
    "script, page", [("metal_accuracy", "llm-metal.md"), ("rocm_accuracy", "llm-rocm.md")]
)
def test_the_vendor_pages_are_what_their_scripts_write(monkeypatch, script, page):
    import importlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "accuracy" / page).read_text()
    assert text == importlib.import_module(f"benchmarks.{script}").markdown(), (
        f"stale: run benchmarks/{script}.py --write docs/accuracy/{page}"
    )
