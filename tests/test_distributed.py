"""Several devices: MirroredStrategy on logical CPU devices, MultiWorkerMirroredStrategy on loopback.

Without GPUs these run the very code path multi-GPU training takes; the records say that the
devices are logical (or CPU workers), so nobody reads their scaling as a GPU's.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from gpukit.bench import distributed, results
from gpukit.bench import harness as bench
from gpukit.errors import ParameterError

pytestmark = pytest.mark.tensorflow

FAST = bench.Settings(warmup_steps=1, warmup_min_s=0.0, min_time_s=0.3, min_samples=3)


def test_mirrored_strategy_on_two_logical_cpu_devices():
    doc = distributed.run_scaling(2, "mirrored", ["transformer"], "fp32", quick=True, settings=FAST)
    (rec,) = doc.records
    assert rec.status == "ok", rec.error
    assert rec.replicas == 2 and rec.devices == ["/cpu:0", "/cpu:1"] and rec.logical_devices
    assert rec.global_batch == 2 * rec.per_replica_batch
    assert rec.throughput > 0 and rec.baseline_throughput > 0
    assert rec.speedup == pytest.approx(rec.throughput / rec.baseline_throughput)
    assert rec.scaling_efficiency == pytest.approx(rec.speedup / 2)
    assert "logical devices split from one CPU" in rec.note
    assert (
        results.Results.from_dict(json.loads(json.dumps(doc.to_dict()))).records == doc.records
    )  # round trip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_multiworker_strategy_with_two_workers_on_loopback(tmp_path):
    cluster = {"worker": [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"]}
    procs = []
    for i in range(2):
        env = {
            **os.environ,
            "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}),
        }
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gpukit",
                    "bench",
                    "--strategy",
                    "multiworker",
                    "--workloads",
                    "transformer",
                    "--quick",
                    "--out",
                    str(tmp_path / f"w{i}.json"),
                    "--format",
                    "csv",
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    assert (tmp_path / "w0.json").exists() and not (tmp_path / "w1.json").exists()  # the chief writes
    assert "worker 1 is not the chief" in outs[1][1]
    doc = results.load(tmp_path / "w0.json")
    (rec,) = doc.records
    assert (
        doc.kind == "scaling" and doc.extra["strategy"] == "multiworker" and doc.extra["task"]["index"] == 0
    )
    # a failure says why: the record's error and the end of each worker's stderr
    assert rec.status == "ok", (
        f"{rec.error}\nworker 0 stderr:\n{outs[0][1][-3000:]}\nworker 1 stderr:\n{outs[1][1][-3000:]}"
    )
    assert rec.replicas == 2 and rec.global_batch == 2 * rec.per_replica_batch
    assert "worker processes on CPUs" in rec.note


@pytest.mark.parametrize(
    "devices, strategy, workloads, message",
    [
        (0, "mirrored", None, "at least 1"),
        (2, "ring", None, "use mirrored or multiworker"),
        (2, "mirrored", ["matmul"], "does not train"),
    ],
)
def test_bad_requests_fail_before_tensorflow_starts(devices, strategy, workloads, message):
    with pytest.raises(ParameterError, match=message):
        distributed.check(devices, strategy, workloads)


def test_multiworker_needs_a_valid_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ParameterError, match="needs TF_CONFIG"):
        distributed.check(1, "multiworker", None)
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ParameterError, match="not JSON with cluster.worker"):
        distributed.check(1, "multiworker", None)
