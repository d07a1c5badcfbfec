"""One precision vocabulary: each spelling means one thing, and every command agrees on it."""

from __future__ import annotations

import json

import pytest

from gpukit import cli, perfmodel, specs
from gpukit import precision as prec
from gpukit.bench.workloads import DeviceInfo
from gpukit.errors import ParameterError

#: Every accepted spelling of the precisions a model runs in, with its canonical one.
SPELLINGS = {
    "float32": "float32",
    "FLOAT32": "float32",
    "fp32": "fp32",
    "float": "fp32",
    "single": "fp32",
    "tf32": "tf32",
    "TensorFloat32": "tf32",
    "fp16": "fp16",
    "mixed_float16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "mixed-float16": "fp16",
    "bf16": "bf16",
    "mixed_bfloat16": "bf16",
    "bfloat16": "bf16",
}


@pytest.fixture(scope="module")
def cat():
    return specs.load_catalogue()


@pytest.mark.parametrize("spelling, canonical", sorted(SPELLINGS.items()))
def test_every_spelling_has_one_meaning(spelling, canonical):
    assert prec.normalize(spelling) == canonical
    assert prec.trainable(spelling) == canonical


def test_what_each_precision_means():
    assert (
        prec.get("float32").tf32 is True and prec.get("fp32").tf32 is False and prec.get("tf32").tf32 is True
    )
    assert {prec.keras_policy(p) for p in ("float32", "fp32", "tf32")} == {"float32"}
    assert prec.keras_policy("fp16") == "mixed_float16" and prec.keras_policy("bf16") == "mixed_bfloat16"
    assert [prec.itemsize(p) for p in ("fp64", "float32", "fp32", "tf32", "fp16", "bf16", "int8")] == [
        8,
        4,
        4,
        4,
        2,
        2,
        1,
    ]


def test_bad_spellings_fail_in_one_line_with_a_suggestion():
    with pytest.raises(ParameterError, match=r"unknown precision 'fp6'"):
        prec.normalize("fp6")
    with pytest.raises(ParameterError, match="did you mean"):
        prec.normalize("mixed_flot16")
    with pytest.raises(ParameterError, match="catalogue figure"):
        prec.trainable("int8")


@pytest.mark.parametrize(
    "gpu, precision, matmul, math",
    [
        ("A100 SXM4 80GB", "float32", True, "TF32"),  # TensorFlow's default on Ampere
        ("A100 SXM4 80GB", "fp32", True, "FP32"),  # TF32 turned off
        ("A100 SXM4 80GB", "tf32", True, "TF32"),
        ("V100 SXM2 32GB", "float32", True, "FP32"),  # Volta has no TF32
        ("V100 SXM2 32GB", "fp16", True, "FP16"),
        ("GeForce RTX 3090", "fp16", True, "FP16"),  # the catalogue keeps GeForce's FP32-accumulate rate
        ("RTX A5000", "bf16", True, "BF16"),
        ("A40", "fp16", False, "FP32"),  # elementwise work: CUDA cores
    ],
)
def test_the_unit_rules(cat, gpu, precision, matmul, math):
    row = specs.lookup(gpu, cat)
    label, peak = prec.math_unit(row, precision, matmul)
    assert label == prec.MATH_LABEL[math]
    assert peak == row[prec.MATH_PEAK_COLUMN[math]]


@pytest.mark.parametrize(
    "gpu, precision", [("V100", "bf16"), ("T4", "bf16"), ("V100", "tf32"), ("T4", "tf32")]
)
def test_volta_and_turing_have_no_tf32_or_bf16(cat, gpu, precision):
    with pytest.raises(prec.Unsupported, match=f"no {precision.upper()}"):
        prec.math_unit(specs.lookup(gpu, cat), precision)
    assert prec.peak_tflops(specs.lookup(gpu, cat), precision) is None


@pytest.mark.parametrize(
    "kind, cc, expected",
    [
        ("cpu", None, {"float32": "FP32", "fp32": "FP32", "tf32": None, "fp16": "FP16", "bf16": "BF16"}),
        ("gpu", "7.0", {"float32": "FP32", "fp32": "FP32", "tf32": None, "fp16": "FP16", "bf16": None}),
        ("gpu", "8.0", {"float32": "TF32", "fp32": "FP32", "tf32": "TF32", "fp16": "FP16", "bf16": "BF16"}),
    ],
)
def test_what_runs_on_the_attached_device(kind, cc, expected):
    for p, math in expected.items():
        if math is None:
            with pytest.raises(prec.Unsupported):
                prec.device_math(p, kind, cc)
        else:
            assert prec.device_math(p, kind, cc) == math


# --------------------------------------------------------------------------- every command agrees


def _json(capsys, argv) -> list[dict]:
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def a100_attached(monkeypatch, cat):
    """`gpukit bench` sees an A100 (compute capability 8.0), without TensorFlow."""
    from gpukit.bench import harness as bench

    row = specs.records(specs.select(cat, ["A100 SXM4 80GB"]))[0]
    info = {
        "kind": "gpu",
        "name": "NVIDIA A100-SXM4-80GB",
        "compute_capability": "8.0",
        "catalogue_gpu": "A100 SXM4 80GB",
        "catalogue_note": "test",
        "catalogue_row": row,
    }
    monkeypatch.setattr(bench, "attached_device", lambda: (DeviceInfo("gpu", "8.0"), info))
    return row


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.slow  # a second or more: the full tier's
def test_bench_predict_cost_fit_and_compare_agree_on_each_spelling(capsys, a100_attached, spelling):
    canonical = SPELLINGS[spelling]
    row = a100_attached
    math = prec.gpu_math(row, canonical)
    peak = row[prec.MATH_PEAK_COLUMN[math]]
    # bench: what would run on the A100, and its datasheet peak at that math
    plan = _json(
        capsys,
        [
            "bench",
            "--dry-run",
            "--quick",
            "--workloads",
            "matmul",
            "--precision",
            spelling,
            "--format",
            "json",
        ],
    )
    assert {r["precision"] for r in plan} == {canonical}
    assert {r["math"] for r in plan} == {math} and {r["peak"] for r in plan} == {peak}
    # predict: the same math on the same GPU
    pred = _json(
        capsys,
        [
            "predict",
            "--workload",
            "matmul",
            "--precision",
            spelling,
            "--gpu",
            "A100 SXM4 80GB",
            "--format",
            "json",
        ],
    )
    assert pred[0]["precision"] == canonical and pred[0]["math"] == prec.MATH_LABEL[math]
    # cost: priced at the peak of that math
    cost = _json(capsys, ["cost", "--gpu", "A100 SXM4 80GB", "--precision", spelling, "--format", "json"])
    assert cost[0]["precision"] == canonical and cost[0]["peak_tflops"] == peak
    # fit: one memory footprint per itemsize, whatever the spelling
    fit = _json(
        capsys,
        [
            "fit",
            "--model",
            "bert-base",
            "--batch",
            "8",
            "--precision",
            spelling,
            "--gpu",
            "A100 SXM4 80GB",
            "--format",
            "json",
        ],
    )
    reference = _json(
        capsys,
        [
            "fit",
            "--model",
            "bert-base",
            "--batch",
            "8",
            "--precision",
            "fp16" if prec.itemsize(canonical) == 2 else "float32",
            "--gpu",
            "A100 SXM4 80GB",
            "--format",
            "json",
        ],
    )
    assert fit[0]["precision"] == canonical and fit[0]["tensor_bytes"] == reference[0]["tensor_bytes"]


def test_compare_speaks_the_same_vocabulary(capsys):
    out = _json(
        capsys,
        [
            "compare",
            "A100 SXM4 80GB",
            "V100 SXM2 32GB",
            "--workloads",
            "matmul",
            "--precision",
            "mixed_float16,float32,fp32",
            "--models",
            "bert-base",
            "--format",
            "json",
        ],
    )
    rows = out["throughput"] if isinstance(out, dict) else out
    assert {r["precision"] for r in rows} == {"fp16", "float32", "fp32"}
    table = perfmodel.predict_table("matmul", "float32", gpus=["A100 SXM4 80GB", "V100 SXM2 32GB"])
    maths = dict(zip(table["gpu"], table["math"]))
    assert maths == {"A100 SXM4 80GB": "TF32 tensor", "V100 SXM2 32GB": "FP32 (CUDA cores)"}


def test_a_measured_record_meets_only_a_prediction_of_the_same_math(cat):
    """On an A100, an fp32 (TF32 off) measurement must not stand in for the float32 (TF32)
    prediction; on a V100 both spellings are FP32 and the measurement is used."""
    from documents import record, results

    def doc(gpu: str, cc: str, name: str):
        rec = record(
            "matmul", "fp32", math_mode="FP32", throughput=12.3, params={"m": 8192, "n": 8192, "k": 8192}
        )
        return results([rec], {"kind": "gpu", "name": name, "compute_capability": cc, "catalogue_gpu": gpu})

    a100 = perfmodel.predict_table(
        "matmul",
        "float32",
        gpus=["A100 SXM4 80GB"],
        results=doc("A100 SXM4 80GB", "8.0", "NVIDIA A100-SXM4-80GB"),
        efficiency=perfmodel.DEFAULT_EFFICIENCY,
    )
    assert a100["measured_throughput"].isna().all()
    strict = perfmodel.predict_table(
        "matmul",
        "fp32",
        gpus=["A100 SXM4 80GB"],
        results=doc("A100 SXM4 80GB", "8.0", "NVIDIA A100-SXM4-80GB"),
        efficiency=perfmodel.DEFAULT_EFFICIENCY,
    )
    assert strict["measured_throughput"].iloc[0] == 12.3
    v100 = perfmodel.predict_table(
        "matmul",
        "float32",
        gpus=["V100 SXM2 32GB"],
        results=doc("V100 SXM2 32GB", "7.0", "Tesla V100-SXM2-32GB"),
        efficiency=perfmodel.DEFAULT_EFFICIENCY,
    )
    assert v100["measured_throughput"].iloc[0] == 12.3


@pytest.mark.parametrize(
    "gpu_name, factor",
    [("GeForce RTX 4090", 2), ("L40", 2), ("TITAN RTX", 1), ("L40S", 1), ("RTX 6000 Ada Generation", 1)],
)
def test_fp16_accumulate_doubles_only_where_fp32_accumulate_runs_at_half_rate(gpu_name, factor):
    """GeForce cards and the L40 (datasheet: 181.05 with FP32 accumulate, 362.1 with FP16) run FP32
    accumulate at half rate; TITAN RTX, the L40S and workstation cards at full rate."""

    row = specs.lookup(gpu_name)
    assert prec.fp16_accumulate_tflops(row) == pytest.approx(factor * row["fp16_tensor_tflops"])
