"""The harness: statistics, timing rules, FLOP/byte counts, failures as results (documents: test_results.py)."""

from __future__ import annotations

import math
import threading

import pytest

from gpukit import graph
from gpukit.bench import harness as bench
from gpukit.bench import workloads
from gpukit.bench.results import Record
from gpukit.bench.workloads import Config, DeviceInfo
from gpukit.errors import ParameterError

CPU = DeviceInfo("cpu")
FAST = bench.Settings(warmup_steps=1, warmup_min_s=0.0, min_sample_s=0.005, min_time_s=0.05, min_samples=3)


# --------------------------------------------------------------------------- statistics


def test_summarize_known_values():
    s = bench.summarize([5.0, 1.0, 4.0, 2.0, 3.0])
    assert s["median_s"] == 3.0
    assert s["iqr_s"] == 2.0  # inclusive quartiles 2 and 4
    assert s["mad_s"] == 1.0
    assert s["cv"] == pytest.approx(math.sqrt(2.5) / 3.0)
    assert s["noisy"] is True


def test_summarize_quiet_and_single_values():
    s = bench.summarize([1.00, 1.01, 0.99, 1.00, 1.02])
    assert s["median_s"] == 1.00 and s["noisy"] is False and s["iqr_s"] == pytest.approx(0.01)
    one = bench.summarize([0.5])
    assert one == {"median_s": 0.5, "iqr_s": 0.0, "mad_s": 0.0, "cv": 0.0, "noisy": False}
    with pytest.raises(ValueError):
        bench.summarize([])


class FakeDevice:
    """A step that takes ``first`` seconds once (tracing) and ``dt`` afterwards, on a fake clock,
    and records the order of steps, syncs and clock reads."""

    def __init__(self, first=2.0, dt=0.001):
        self.now, self.first, self.dt, self.calls, self.events = 0.0, first, dt, 0, []

    def clock(self):
        self.events.append("clock")
        return self.now

    def step(self):
        self.now += self.first if self.calls == 0 else self.dt
        self.calls += 1
        self.events.append("step")
        return self.calls

    def sync(self, value):
        self.events.append("sync")


def test_measure_keeps_warmup_apart_calibrates_loops_and_syncs_before_each_clock_read():
    dt = 2.0**-10  # binary fractions keep the fake clock exact
    dev = FakeDevice(first=2.0, dt=dt)
    s = bench.Settings(warmup_steps=2, warmup_min_s=0.0, min_sample_s=8 * dt, min_time_s=0.05, min_samples=5)
    t = bench.measure(dev.step, s, synchronize=dev.sync, clock=dev.clock)
    assert t.warmup_s == [2.0, dt]
    assert t.loops == 8  # one sample lasts min_sample_s
    assert t.times_s == [dt] * len(t.times_s)
    assert len(t.times_s) == 5 or sum(t.times_s) * t.loops >= 0.05
    # Every clock read that ends a sample follows a sync: no asynchronous work escapes the timer.
    events = [e for e in dev.events if e != "step"]
    assert events[0] == "clock"
    for i, e in enumerate(events[1:], 1):
        if e == "clock" and events[i - 1] == "clock":
            continue  # start of the next sample
        if e == "clock":
            assert events[i - 1] == "sync"


def test_measure_stops_at_max_time():
    dev = FakeDevice(first=0.1, dt=1.0)
    s = bench.Settings(
        warmup_steps=1, warmup_min_s=0.0, min_sample_s=0.0, min_time_s=100, min_samples=1000, max_time_s=5.0
    )
    t = bench.measure(dev.step, s, synchronize=dev.sync, clock=dev.clock)
    assert len(t.times_s) == 5


class Lockstep:
    """What two workers of a multi-worker strategy share: ``agree`` returns the largest of the
    values both pass (a barrier stands in for the collective all-reduce)."""

    def __init__(self, n=2):
        self.barrier, self.values, self.n = threading.Barrier(n, timeout=5), {}, n

    def agree(self, worker, value):
        self.values[worker] = value
        self.barrier.wait()
        out = max(self.values.values())
        self.barrier.wait()  # nobody overwrites a value before all have read
        return out


def test_workers_in_lockstep_run_the_same_number_of_steps_whatever_their_clocks():
    # Two workers whose clocks disagree (one sees its steps 3x slower) would calibrate different
    # loops and stop after different sample counts; then one waits in a collective for the other.
    s = bench.Settings(warmup_steps=2, warmup_min_s=0.01, min_sample_s=0.02, min_time_s=0.2, min_samples=3)
    devs = [FakeDevice(first=1.0, dt=2.0**-10), FakeDevice(first=0.5, dt=3 * 2.0**-10)]
    solo = [
        bench.measure(d.step, s, synchronize=d.sync, clock=d.clock)
        for d in (FakeDevice(first=1.0, dt=2.0**-10), FakeDevice(first=0.5, dt=3 * 2.0**-10))
    ]
    assert solo[0].loops != solo[1].loops  # alone, they would not agree

    shared, timings = Lockstep(), [None, None]

    def worker(i):
        d = devs[i]
        timings[i] = bench.measure(
            d.step, s, synchronize=d.sync, clock=d.clock, agree=lambda v: shared.agree(i, v)
        )

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert devs[0].calls == devs[1].calls > 0
    a, b = timings
    assert a.loops == b.loops == solo[1].loops  # calibrated on the slower worker's step
    assert len(a.warmup_s) == len(b.warmup_s) and len(a.times_s) == len(b.times_s)


def test_settings_for_a_time_budget():
    s = bench.Settings.for_run(quick=True, time_budget_s=10, n_configs=10)
    assert s.min_time_s == pytest.approx(0.5)
    assert bench.Settings.for_run(quick=False).min_time_s == 3.0


def test_brief_measuring_compiles_warms_once_then_takes_three_samples():
    for quick in (True, False):
        brief = bench.Settings.for_run(quick=quick, brief=True)
        assert brief == bench.BRIEF and brief.measuring == "brief"
        assert (brief.warmup_steps, brief.warmup_min_s, brief.min_samples) == (2, 0.0, 3)
    assert bench.Settings.for_run(quick=True).measuring == "full"
    budget = bench.Settings.for_run(quick=True, time_budget_s=1.0, n_configs=10, brief=True)
    assert budget.min_time_s == bench.BRIEF.min_time_s  # a budget only ever shortens
    clock = FakeDevice(first=2.0, dt=0.2)  # a step as long as a CPU's ResNet-50 training step
    t = bench.measure(clock.step, bench.BRIEF, synchronize=clock.sync, clock=clock.clock)
    assert len(t.warmup_s) == 2 and t.warmup_s[0] == 2.0 and len(t.times_s) == 3


def _stub_run(monkeypatch, device: DeviceInfo) -> list:
    """run_benchmarks on a stand-in ``device``: nothing built or timed, each configuration's settings kept."""
    import gpukit.bench.device

    seen = []
    monkeypatch.setattr(bench, "attached_device", lambda: (device, {"kind": device.kind, "name": "stand-in"}))
    monkeypatch.setattr(gpukit.bench.device, "bench_environment", lambda xla=False: {})
    monkeypatch.setattr(
        bench,
        "run_config",
        lambda config, dev, settings, peak=None: (
            seen.append(settings) or Record("matmul", "fp32", {}, "skipped")
        ),
    )
    return seen


@pytest.mark.parametrize(
    "device, measuring, expected",
    [
        (CPU, "auto", "brief"),
        (DeviceInfo("gpu", "8.0"), "auto", "full"),
        (CPU, "full", "full"),
        (DeviceInfo("gpu", "8.0"), "brief", "brief"),
    ],
)
def test_auto_measures_briefly_where_no_gpu_is_attached(monkeypatch, device, measuring, expected):
    seen = _stub_run(monkeypatch, device)
    doc = bench.run_benchmarks(configs=[small_matmul()], measuring=measuring, isolation="process")
    assert [s.measuring for s in seen] == [expected] and doc.settings["measuring"] == expected
    note = bench.measuring_note(doc)
    assert note.startswith("Measured briefly" if expected == "brief" else "Measured at full length")
    if expected == "brief":
        assert "-p measuring full" in note and "3 or more timed samples" in note


def test_measuring_is_checked_before_anything_runs(monkeypatch):
    _stub_run(monkeypatch, CPU)
    with pytest.raises(ParameterError, match="measuring 'short': use auto, brief, full"):
        bench.run_benchmarks(configs=[small_matmul()], measuring="short")
    assert "recorded" in bench.measuring_note(bench.Results("bench", "", {}, None, ()))


# --------------------------------------------------------------------------- counts


def test_matmul_and_bandwidth_counts():
    assert workloads.matmul_counts(2, 3, 4, 4) == (48.0, (8 + 12 + 6) * 4.0)
    assert workloads.bandwidth_counts("scale", 1000, 4) == (1000.0, 8000.0)
    assert workloads.bandwidth_counts("add", 1000, 4) == (1000.0, 12000.0)
    with pytest.raises(ParameterError):
        workloads.bandwidth_counts("copy", 10, 4)


def test_conv_counts():
    assert workloads.conv2d_counts(1, 4, 4, 1, 1, 3, 1, 4) == (2.0 * 16 * 9, (16 + 9 + 16) * 4.0)
    flops, bytes_ = workloads.conv2d_counts(2, 5, 5, 3, 8, 3, 2, 2)  # SAME, stride 2: 3x3 output
    assert flops == 2.0 * 2 * 3 * 3 * 8 * 9 * 3
    assert bytes_ == (2 * 25 * 3 + 9 * 3 * 8 + 2 * 9 * 8) * 2.0


def test_transformer_counts_by_hand():
    # 1 layer, batch 1, seq 2, hidden 4, ffn 8, vocab 10: per token 8*16 + 4*2*4 + 4*4*8 = 288
    flops, _ = workloads.transformer_counts(1, 2, 4, 2, 8, 1, 10, 4, training=False)
    assert flops == 2 * 288 + 2 * 2 * 4 * 10
    train, _ = workloads.transformer_counts(1, 2, 4, 2, 8, 1, 10, 4, training=True)
    assert train == 3 * flops


@pytest.mark.tensorflow
def test_keras_flops_of_a_small_model_and_resnet50():
    import keras

    from gpukit.quiet import quiet_tensorflow

    quiet_tensorflow()
    inputs = keras.Input((8, 8, 3))
    x = keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = keras.layers.Flatten()(x)
    model = keras.Model(inputs, keras.layers.Dense(5)(x))
    assert graph.forward_flops(model) == 2 * (8 * 8 * 4 * 27) + 2 * (256 * 5)
    resnet = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3))
    gflops = graph.forward_flops(resnet) / 1e9
    assert 7.6 < gflops < 8.4  # ResNet-50: about 4 G multiply-adds per 224x224 image


def test_default_configs_by_device_and_names():
    cpu = workloads.default_configs(CPU, quick=True)
    assert {c.workload for c in cpu} == set(workloads.WORKLOADS)
    assert {c.precision for c in cpu} == {"fp32"}
    ampere = workloads.default_configs(DeviceInfo("gpu", "8.6"), quick=False, workloads=["matmul"])
    assert {c.precision for c in ampere} == {"fp32", "tf32", "fp16", "bf16"}
    volta = workloads.default_configs(DeviceInfo("gpu", "7.0"), quick=False, workloads=["matmul"])
    assert {c.precision for c in volta} == {"fp32", "fp16"}
    mixed = workloads.default_configs(CPU, workloads=["resnet50"], precisions=["mixed_bfloat16", "float32"])
    assert [(c.precision, c.params["mode"]) for c in mixed] == [
        ("bf16", "train"),
        ("bf16", "infer"),
        ("float32", "train"),
        ("float32", "infer"),
    ]
    with pytest.raises(ParameterError, match="unknown workload 'gemm'"):
        workloads.default_configs(CPU, workloads=["gemm"])
    with pytest.raises(ParameterError, match="unknown precision 'fp6'"):
        workloads.default_configs(CPU, precisions=["fp6"])


# --------------------------------------------------------------------------- running


def small_matmul(n=128, precision="fp32"):
    return Config("matmul", precision, {"shape": "square", "m": n, "n": n, "k": n})


@pytest.mark.tensorflow
def test_run_config_measures_and_computes_peak_fraction():
    rec = bench.run_config(
        small_matmul(), CPU, FAST, peak_row={"fp32_tflops": 10.0, "memory_bandwidth_gbs": 100}
    )
    assert isinstance(rec, Record) and rec.status == "ok" and rec.error is None
    assert rec.math_mode == "FP32"
    assert rec.flops_per_step == 2.0 * 128**3 and rec.bytes_per_step == 3 * 128 * 128 * 4.0
    assert rec.throughput_unit == "TFLOP/s"
    assert rec.throughput == pytest.approx(rec.flops_per_step / rec.median_s / 1e12)
    assert rec.peak == 10.0 and rec.peak_fraction == pytest.approx(rec.throughput / 10.0)
    assert len(rec.warmup_s) >= 1 and len(rec.times_s) >= 3 and rec.loops >= 1


@pytest.mark.tensorflow
def test_a_tiny_transformer_trains_and_counts_tokens():
    params = {"hidden": 32, "heads": 2, "ffn": 64, "layers": 1, "seq_len": 16, "vocab": 100, "batch": 2}
    rec = bench.run_config(Config("transformer", "float32", params), CPU, FAST)
    assert rec.status == "ok", rec.error
    assert rec.throughput_unit == "tokens/s"
    assert rec.throughput == pytest.approx(32 / rec.median_s)
    assert rec.flops_per_step == workloads.transformer_counts(2, 16, 32, 2, 64, 1, 100, 4)[0]
    assert rec.math_mode == "FP32"  # float32 on a CPU: no TF32 there


@pytest.mark.tensorflow
@pytest.mark.parametrize("policy", ["float32", "mixed_float16"])
def test_a_training_step_is_traced_once_with_its_optimizer_built_first(policy):
    import keras

    from gpukit.models.registry import train_step
    from gpukit.quiet import quiet_tensorflow

    tf = quiet_tensorflow()
    keras.mixed_precision.set_global_policy(policy)
    try:
        model = keras.Sequential(
            [keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1, dtype="float32")]
        )
        opt = keras.optimizers.Adam()
        if policy == "mixed_float16":
            opt = keras.mixed_precision.LossScaleOptimizer(opt)
        x, y = tf.random.normal((4, 8)), tf.random.normal((4, 1))
        step = train_step(tf, model, keras.losses.MeanSquaredError(), opt, x, y, xla=False)
        assert opt.built  # slots made before the step was traced
        # a dynamic loss scale (mixed_float16) skips a step whose scaled gradients overflow, halving the scale
        # from 2**15: the first steps may leave the weights as they were (two of three did once), so run ten
        losses = [float(step()) for _ in range(10)]
        assert step.experimental_get_tracing_count() == 1
        assert int(opt.iterations) >= 5  # most steps applied their update
        assert losses[-1] < losses[0]  # it trains
        lazy = train_step(
            tf,
            model,
            keras.losses.MeanSquaredError(),
            keras.optimizers.Adam(),
            x,
            y,
            xla=False,
            build_first=False,
        )
        lazy(), lazy()
        assert (
            lazy.experimental_get_tracing_count() == 2
        )  # Keras makes the slots while tracing, then traces again
        unbuilt = keras.Sequential(
            [keras.layers.Dense(1)]
        )  # no variables until called: the lazy build, no error
        later = train_step(
            tf, unbuilt, keras.losses.MeanSquaredError(), keras.optimizers.SGD(), x, y, xla=False
        )
        assert math.isfinite(float(later()))
    finally:
        keras.mixed_precision.set_global_policy("float32")


@pytest.mark.tensorflow
def test_out_of_memory_is_a_result():
    huge = Config("matmul", "fp32", {"shape": "square", "m": 2**19, "n": 2**19, "k": 2**19})  # 1 TiB operands
    rec = bench.run_config(huge, CPU, FAST)
    assert rec.status == "oom"
    assert "ResourceExhaustedError" in rec.error and "\n" not in rec.error
    assert rec.times_s == [] and rec.throughput is None


@pytest.mark.tensorflow
def test_failures_do_not_stop_the_run(monkeypatch):
    real_build = workloads.build

    def build(config, math_mode):
        if config.params.get("m") == 64:
            raise RuntimeError("kernel launch failed\nsecond line")
        return real_build(config, math_mode)

    monkeypatch.setattr(workloads, "build", build)
    seen = []
    results = bench.run_benchmarks(
        configs=[small_matmul(64), Config("matmul", "tf32", small_matmul().params), small_matmul(128)],
        settings=FAST,
        progress=lambda i, n, r: seen.append((i, n, r.status)),
    )
    statuses = [(r.status, r.error) for r in results.records]
    assert statuses[0] == ("error", "RuntimeError: kernel launch failed")
    assert statuses[1][0] == "skipped" and "no TF32 tensor cores" in statuses[1][1]
    assert statuses[2] == ("ok", None)
    assert seen == [(1, 3, "error"), (2, 3, "skipped"), (3, 3, "ok")]
    assert results.isolation == "process" and results.device.kind == "cpu"


@pytest.mark.tensorflow
def test_precision_scope_restores_policy_and_tf32():
    import keras

    from gpukit.quiet import quiet_tensorflow

    tf = quiet_tensorflow()
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    with workloads.precision_scope(Config("resnet50", "fp16", {}), CPU) as mode:
        assert mode == "FP16"
        assert keras.mixed_precision.global_policy().name == "mixed_float16"
    assert keras.mixed_precision.global_policy().name == "float32"
    assert tf.config.experimental.tensor_float_32_execution_enabled() == before


@pytest.mark.tensorflow
def test_subprocess_isolation_ok_oom_and_timeout():
    ok = bench.run_config_subprocess(small_matmul(), CPU, FAST)
    assert ok.status == "ok" and ok.throughput > 0
    huge = Config("matmul", "fp32", {"shape": "square", "m": 2**19, "n": 2**19, "k": 2**19})
    assert bench.run_config_subprocess(huge, CPU, FAST).status == "oom"
    slow = bench.run_config_subprocess(small_matmul(), CPU, FAST, timeout_s=0.5)
    assert slow.status == "error" and slow.error == "timed out after 0.5 s"


# --------------------------------------------------------------------------- GPU-only paths


def test_catalogue_match_of_gpu_names():
    from gpukit.bench.device import match_catalogue

    assert match_catalogue("NVIDIA A100-SXM4-80GB")[0] == "A100 SXM4 80GB"
    assert match_catalogue("Tesla V100-PCIE-16GB")[0] == "V100 PCIe 16GB"
    assert match_catalogue("NVIDIA H100 80GB HBM3")[0] == "H100 SXM5"
    assert match_catalogue("NVIDIA GeForce RTX 4090")[0] == "GeForce RTX 4090"
    assert match_catalogue("Tesla V100-SXM2", memory_mib=32510)[0] == "V100 SXM2 32GB"
    assert match_catalogue("NVIDIA RTX 6000 Ada Generation")[0] == "RTX 6000 Ada Generation"
    assert match_catalogue("NVIDIA GeForce RTX 4080 SUPER")[0] == "GeForce RTX 4080 Super"
    gpu, note = match_catalogue("NVIDIA GeForce RTX 4060")  # the 8 GB card the catalogue leaves out
    assert gpu is None and "not in the catalogue: measured" in note


def _gpu():
    from gpukit.bench.device import nvidia_smi

    return nvidia_smi()


gpu_only = pytest.mark.skipif(
    "not _gpu()",
    reason="needs an NVIDIA GPU; this machine has none. "
    "The branch is the same code a CPU run takes, with TF32 and placement on the GPU.",
)


@pytest.mark.gpu
@pytest.mark.tensorflow
@gpu_only
def test_on_a_gpu_fp32_turns_tf32_off_and_tf32_turns_it_on():
    from gpukit.bench.device import describe_attached

    info = describe_attached()
    dev = DeviceInfo("gpu", info["compute_capability"])
    fp32 = bench.run_config(small_matmul(2048), dev, FAST, info.get("catalogue_row"))
    assert fp32.status == "ok" and fp32.math_mode == "FP32"
    tf32 = bench.run_config(small_matmul(2048, "tf32"), dev, FAST, info.get("catalogue_row"))
    if dev.ampere_or_later:
        assert tf32.status == "ok" and tf32.math_mode == "TF32"
    else:
        assert tf32.status == "skipped"
    if info.get("catalogue_row"):
        assert 0 < fp32.peak_fraction < 1.05
