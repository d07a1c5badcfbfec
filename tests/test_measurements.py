"""Memory measured for real on this machine: one step of a model in a fresh process, its
allocator peak against the estimate (a small slice of benchmarks/memory_accuracy.py's grid), the
``fit --measure`` command, an out-of-memory, and the benchmark decoder with its KV cache.

They live in one file so that ``make test`` (pytest-xdist, ``--dist loadfile``) runs them on one
worker, one after another: a measurement beside another is a busier machine than the estimate
was graded on (``docs/accuracy/rnn-runahead.md`` shows what load does to a recurrent loop).
"""

from __future__ import annotations

import csv
import io

import pytest

from gpukit import cli, llm, memory
from gpukit.bench import workloads as wl
from gpukit.models import registry as models
from gpukit.models import zoo

pytestmark = pytest.mark.tensorflow


#: Token-level models whose loss sometimes cannot write the logits' gradient into the logits' buffer
#: (the estimate's common case): such a run holds one more logits-sized buffer (keras-bert's at batch 8:
#: the float32 logits of 8 x 128 tokens x 8000 words). docs/accuracy/memory.md shows both modes in the
#: ranges of their runs at batch 8 (keras-bert with momentum against SGD); a run in the other mode is
#: judged with the buffer added.
LOGITS_MAY_BE_HELD_TWICE = frozenset({"keras-bert", "keras-decoder"})


@pytest.mark.parametrize(
    "model, shape, batch, optimizer, mode, precision",
    [
        ("ResNet50", (96, 96, 3), 8, "sgd", "train", "fp32"),
        ("MobileNetV2", (96, 96, 3), 8, "momentum", "train", "fp32"),
        ("EfficientNetB0", (96, 96, 3), 8, "none", "infer", "fp32"),
        ("keras-encoder", None, 8, "adam", "train", "fp32"),
        ("keras-decoder", None, 8, "sgd", "train", "fp32"),
        ("keras-bert", None, 8, "adam", "train", "bf16"),
        ("keras-bigru", None, 8, "adam", "train", "fp32"),
        # with one inter-op thread, or with two under oneDNN's CPU kernels in some runs, its backward loop
        # runs ahead far above the estimate (docs/accuracy/rnn-runahead.md): measure_env gives it Eigen's.
        # Even then a loaded machine lets it hold a kernel or two ahead; at batch 2 that is up to a
        # fifth of the step's memory, at batch 32 a twentieth, so the case measures the estimate
        ("keras-lstm", None, 32, "adam", "train", "fp32"),
        ("keras-vit", None, 32, "none", "infer", "fp32"),
        # with TensorFlow's Eigen CPU kernels this case peaks far above the estimate (docs/accuracy/memory.md
        # compares the kernels): measure_env sets oneDNN's
        ("keras-vit", None, 2, "adam", "train", "fp32"),
        ("keras-textcnn", None, 8, "none", "infer", "fp16"),
    ],
)
def test_estimate_within_15_percent_of_the_measured_peak(model, shape, batch, optimizer, mode, precision):
    """A slice of benchmarks/memory_accuracy.py: one real step measured in a fresh process."""
    opt = optimizer if mode == "train" else "sgd"
    estimator = memory.Estimator(model, shape)
    predicted = estimator.estimate(batch, precision, opt, mode).tensor_bytes
    measured = memory.measure_in_subprocess(model, batch, precision, opt, mode, shape)
    assert measured["status"] == "ok", measured
    assert measured["device"] in ("CPU:0", "GPU:0")
    assert measured["inter_op_threads"] >= memory.MEASURE_INTER_OP_THREADS
    # None: a TensorFlow that cannot say
    assert measured["onednn"] in (not memory.has_fused_recurrent_layers(model), None)
    peak = measured["measured_peak_bytes"]
    error = predicted / peak - 1
    if abs(error) > 0.15 and model in LOGITS_MAY_BE_HELD_TWICE and mode == "train":
        # the other mode: the logits' gradient beside the logits, one float32 buffer more
        error = (predicted + memory.logits_bytes(estimator.graph, batch)) / peak - 1
    assert abs(error) <= 0.15, f"{model} b{batch} {optimizer} {mode}: {error:+.1%}"


def test_measurement_reports_oom_as_a_status():
    result = memory.measure_in_subprocess("MobileNetV2", 2**20, "fp32", "sgd", "infer", (96, 96, 3))
    assert result["status"] == "oom", result


def test_fit_measure_prints_measured_next_to_predicted(capsys):
    # a Keras-layer model measures in about a third of the time of a keras.applications CNN
    code = cli.main(
        [
            "fit",
            "--model",
            "keras-encoder",
            "--batch",
            "8",
            "--optimizer",
            "adamw",
            "--gpu",
            "T4",
            "--measure",
            "--repeats",
            "3",
            "--format",
            "csv",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    row = next(csv.DictReader(io.StringIO(out)))
    measured, predicted = int(row["measured_peak_bytes"]), int(row["tensor_bytes"])
    assert row["measured_status"] == "ok" and row["measured_device"] in ("CPU:0", "GPU:0")
    low, high = int(row["measured_low_bytes"]), int(row["measured_high_bytes"])
    assert row["measured_runs"] == "3" and low <= measured <= high
    assert float(row["estimate_error"]) == pytest.approx(predicted / measured - 1)
    # docs/accuracy/memory.md's runs of this case lie -0.3% to +3.0% from the estimate on a quiet machine;
    # beside the other test worker one run's peak moves with the CPU executor's order (single runs here:
    # -8.5% to +9.6%), so the median of three is held to 8%
    assert abs(predicted / measured - 1) <= 0.08
    if row["measured_device"] == "CPU:0":
        assert "bisection on a GPU only" in err and row["measured_largest_batch"] == ""


def test_the_decoder_runs_with_its_cache_and_its_memory_matches_the_estimate():
    """The benchmark decoder, measured for real here: one prefill and one decode step; the
    allocator's peak against gpukit.llm's estimate of the same shape (weights, KV cache, the
    prompt's activations and attention scores)."""
    params = dict(wl.sizes("cpu", True)["decoder"])
    got = llm.measure_decoder_memory(params, "fp32")
    assert got["status"] == "ok", got
    shape = llm.decoder_llm(params)
    assert got["estimated_weights_bytes"] == shape.params() * 4
    assert got["estimated_kv_cache_bytes"] == params["batch"] * params["context"] * shape.kv_bytes_per_token(
        "f32"
    )
    # the measured peak holds the weights and the cache, and the estimate is within 10 % of it
    assert got["measured_peak_bytes"] > got["estimated_weights_bytes"] + got["estimated_kv_cache_bytes"]
    assert abs(got["estimate_error"]) <= 0.10, got


def test_momentums_waiting_temporaries_are_the_weights_bytes_at_the_peak():
    """Under TensorFlow's profiler, a step with momentum holds one ``m * momentum`` per weight at its
    peak, made as the step starts (memory.PENDING_UPDATE_TEMPORARIES): the optimizer's tensors then are
    the trainable weights' bytes, as the estimate counts them."""
    got = memory.measure_in_subprocess("keras-vit", 8, "fp32", "momentum", "train", profile_top=3)
    assert got["status"] == "ok", got
    profile = got["peak_profile"]
    trainable = memory.Estimator("keras-vit").graph.trainable_params * 4
    assert profile["peak_bytes"] == got["measured_peak_bytes"]
    assert profile["phases"]["optimizer"] == pytest.approx(
        trainable * memory.PENDING_UPDATE_TEMPORARIES["momentum"], rel=0.01
    )
    assert profile["phases"]["backward"] > 0 and len(profile["largest"]) == 3


def test_a_file_saved_in_float32_is_measured_in_the_precision_asked_for(tmp_path):
    """A ``.keras`` file saved in float32 pins its layers to float32; asked for in bfloat16, the measured
    step computes in bfloat16, as the estimate counts it (models.load_in_global_policy). Loaded as saved,
    it would peak as the float32 step does, far outside the threshold (docs/accuracy/memory.md measures
    keras-encoder's float32 and bfloat16 Adam steps at batch 8)."""
    path = tmp_path / "encoder.keras"
    with models.keras_policy("float32"):
        zoo.build("keras-encoder").save(path)
    predicted = memory.Estimator(str(path)).estimate(8, "bf16", "adam", "train").tensor_bytes
    measured = memory.measure_in_subprocess(str(path), 8, "bf16", "adam", "train")
    assert measured["status"] == "ok", measured
    error = predicted / measured["measured_peak_bytes"] - 1
    assert abs(error) <= 0.15, f"{error:+.1%}"
