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
        match=r"the trt-llm profile does not describe Instinct MI300X \(AMD\).*use --engine vllm",
    ):
        llm.llm_table("qwen3-8b", "bf16", engine="trt-llm", gpus=["MI300X"])
    with pytest.raises(
        ParameterError, match=r"MI300X \(CDNA 3\) has no FP4 tensor cores \(NVIDIA Blackwell and AMD CDNA 4"
    ):
        llm.llm_table("qwen3-8b", "fp4", engine="vllm", gpus=["MI300X"])
    assert cli.main(["llm", "--engine", "trt-llm", "--weights", "bf16", "--gpu", "MI300X"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    # beside an NVIDIA card, the AMD row says why it has no speed; vLLM's profile covers both
    mixed = llm.llm_table("qwen3-8b", "q4_k_m", gpus=["MI300X", "H200 SXM"]).set_index("gpu")
    assert "the llama.cpp profile does not describe Instinct MI300X" in mixed.loc["Instinct MI300X", "note"]
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
    with pytest.raises(DataError, match="fp32_tflops.*only a vendor that states none"):
        specs.validate_catalogue(catalogue_copy({("A40", "fp32_tflops"): ""}))
    assert len(specs.validate_catalogue(catalogue_copy({("Apple M1 Max", "fp32_tflops"): ""}))) > 0


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


@pytest.mark.slow  # the page refits the profile with each chip held out
def test_the_metal_page_is_what_its_script_writes(monkeypatch):
    import importlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    monkeypatch.syspath_prepend(str(root / "benchmarks"))
    script = importlib.import_module("metal_accuracy")
    page = (root / "docs" / "accuracy" / "llm-metal.md").read_text()
    assert page == script.markdown(), (
        "stale: run benchmarks/metal_accuracy.py --write docs/accuracy/llm-metal.md"
    )
