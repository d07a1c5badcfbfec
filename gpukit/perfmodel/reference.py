"""The published runs the performance model is graded against: ``data/reference_benchmarks.csv``.

Its schema and loader (every row sourced, dated and naming a catalogue GPU), what each run really
processed per second (a SQuAD run's harness loop can count steps it never took), the workload
family a run is graded in, and which workloads and GPUs the published runs grade. No prediction
takes a figure from this file (a prediction table only says whether its GPU was graded);
:mod:`.grading` and :mod:`.fitting` grade and fit against it.
"""

from __future__ import annotations

import functools
import math
import os
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from .. import precision as prec
from .. import specs
from .._csv import Field
from ..errors import Problem
from ..models.registry import MODES, transformer_task
from ..resources import DATA_DIR
from .profiles import UPDATES

REFERENCE_PATH = DATA_DIR / "reference_benchmarks.csv"
REFERENCE_SCHEMA: tuple[Field, ...] = (
    Field("source", "text", help="a short id; ratios are only taken within one source"),
    Field("gpu", "text", help="a GPU name the catalogue knows"),
    Field("source_gpu_name", "text", help="the GPU as the source names it"),
    Field("workload", "choice", choices=("resnet50", "transformer", "bert-base-squad", "bert-large-squad")),
    Field("precision", "choice", choices=prec.KERAS_PRECISIONS),
    Field("mode", "choice", choices=MODES),
    Field("gpus", "int", low=1, high=1024, default="1", help="how many GPUs ran it (data parallel)"),
    Field("batch_size", "int", low=1, high=1_000_000, help="per GPU"),
    Field(
        "seq_len",
        "int",
        required=False,
        low=1,
        high=1_000_000,
        default="",
        help="tokens per sequence of a transformer workload",
    ),
    Field("throughput", "float", low=1e-6, high=1e12),
    Field("throughput_unit", "choice", choices=("images/s", "tokens/s", "sequences/s")),
    Field("framework", "text"),
    Field("source_url", "url"),
    Field("measured", "date", required=False, help="when the source ran it, YYYY-MM-DD, if it says"),
    Field("retrieved", "date", help="when gpukit read the source, YYYY-MM-DD"),
    Field(
        "link",
        "text",
        required=False,
        default="",
        help="what the source says of how several GPUs were connected",
    ),
    Field(
        "update",
        "choice",
        choices=UPDATES,
        default="per-tensor",
        help="how the source's script runs the optimizer's update (gpukit.perfmodel.profiles.UPDATES)",
    ),
    Field(
        "counted_steps",
        "int",
        required=False,
        low=1,
        high=1e9,
        default="",
        help="steps the source's throughput figure counts (run_squad.py: --max_steps), from its log",
    ),
    Field(
        "epochs",
        "float",
        required=False,
        low=1e-3,
        high=1e6,
        default="",
        help="the training loop's epoch limit (run_squad.py: --num_train_epochs), from its log",
    ),
    Field(
        "train_examples",
        "int",
        required=False,
        low=1,
        high=1e12,
        default="",
        help="examples one epoch draws from (run_squad.py logs training_features)",
    ),
    Field(
        "timed_from",
        "int",
        required=False,
        low=0,
        high=1e9,
        default="",
        help="a step the run's log timestamps (run_squad.py: its DLL 'Training Iteration' lines)",
    ),
    Field("timed_to", "int", required=False, low=1, high=1e9, default="", help="a later step it timestamps"),
    Field(
        "timed_seconds",
        "float",
        required=False,
        low=1e-6,
        high=1e9,
        default="",
        help="seconds between those two timestamps (the mean over the runs a row averages)",
    ),
    Field("note", "text", required=False),
)
#: The columns that say how long a run_squad.py run really was: all three or none.
HARNESS_LOOP = ("counted_steps", "epochs", "train_examples")
#: Two timestamped steps of the run's log: all three or none, and only with :data:`HARNESS_LOOP`.
TIMED = ("timed_from", "timed_to", "timed_seconds")


def squad_steps(
    train_examples: int, gpus: int, batch: int, epochs: float, counted_steps: int
) -> tuple[int, float]:
    """The steps a run of NVIDIA's BERT ``run_squad.py`` (the harness Lambda's SQuAD figures come
    from) really took, and the sequences it processed over those its throughput figure counts.

    The script reports ``train_batch_size x max_steps x world_size / e2e_train_time``. Its loop
    breaks once ``global_step > max_steps`` (so ``max_steps + 1`` steps), or earlier when the epochs
    run out: each of ``int(num_train_epochs)`` epochs is one pass over the process's shard of the
    training set (``DistributedSampler`` pads it to ``ceil(examples / world_size)``), in batches of
    ``train_batch_size``, the last one partial. On eight GPUs at large batches the epochs run out
    first, and the figure counts steps the run never took (an H100 SXM5 run at 320 a GPU: 70 steps
    counted as 100)."""
    per_epoch = math.ceil(math.ceil(train_examples / gpus) / batch)
    steps = min(int(counted_steps) + 1, int(epochs) * per_epoch)
    return steps, squad_sequences(train_examples, gpus, batch, 0, steps) / (batch * counted_steps)


def squad_sequences(train_examples: int, gpus: int, batch: int, first: int, last: int) -> int:
    """Sequences one process of a ``run_squad.py`` run takes in global steps ``first + 1`` to ``last``:
    ``batch`` a step, but the last step of each epoch takes what is left of the process's shard."""
    shard = math.ceil(train_examples / gpus)
    per_epoch = math.ceil(shard / batch)
    last_batch = shard - (per_epoch - 1) * batch
    ends = last // per_epoch - first // per_epoch  # epoch ends among the steps
    return (last - first) * batch - ends * (batch - last_batch)


def load_reference(
    path: str | os.PathLike | None = None, catalogue: pd.DataFrame | None = None, today: date | None = None
) -> pd.DataFrame:
    """Published measurements, validated: every row sourced, dated and naming a catalogue GPU."""
    frame = specs.load_measurements(
        Path(path) if path else REFERENCE_PATH,
        REFERENCE_SCHEMA,
        lambda r: (r["source"], r["gpu"], r["workload"], r["precision"], r["mode"], r["gpus"]),
        "same source, GPU, workload, precision, mode and GPU count",
        catalogue,
        today,
        checks=(_harness_problems,),
    )
    return with_processed_throughput(frame)


def _harness_problems(p: Path, parsed: list[tuple[int, dict]]) -> list[Problem]:
    """The harness loop's steps given all or none, and the timed steps only with them, in order."""
    problems: list[Problem] = []
    for line, r in parsed:
        given = [c for c in HARNESS_LOOP if r[c] is not None]
        if given and len(given) < len(HARNESS_LOOP):
            missing = next(c for c in HARNESS_LOOP if r[c] is None)
            problems.append(
                Problem(
                    p,
                    line,
                    missing,
                    f"is empty while {', '.join(given)} is given; fill all of "
                    f"{', '.join(HARNESS_LOOP)} from the run's log, or none",
                    r["source"],
                )
            )
        timed = [c for c in TIMED if r[c] is not None]
        if timed and (len(timed) < len(TIMED) or len(given) < len(HARNESS_LOOP)):
            problems.append(
                Problem(
                    p,
                    line,
                    timed[0],
                    f"needs all of {', '.join(TIMED + HARNESS_LOOP)}: the steps "
                    "between two timestamps are counted from the harness loop; fill them or none",
                    r["source"],
                )
            )
        elif timed and r["timed_to"] <= r["timed_from"]:
            problems.append(
                Problem(
                    p,
                    line,
                    "timed_to",
                    f"{r['timed_to']} is not after timed_from {r['timed_from']}; write the later step",
                    r["source"],
                )
            )
    return problems


def with_processed_throughput(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``steps_run`` and ``processed_throughput``: what each run processed per second.
    That is the published ``throughput`` unless the row gives its harness loop (:data:`HARNESS_LOOP`),
    whose steps :func:`squad_steps` works out. Where the row also gives two timestamped steps
    (:data:`TIMED`), ``steady_throughput`` is the rate between them, without the first steps' warm-up
    (autotuning, allocation) that the published time includes (docs/accuracy/perfmodel.md says how
    much); NaN elsewhere."""
    steps, rate, steady = [], [], []
    for _, r in frame.iterrows():
        loop = [r.get(c) for c in HARNESS_LOOP]
        if any(v is None or pd.isna(v) for v in loop):
            steps.append(pd.NA)
            rate.append(r["throughput"])
            steady.append(math.nan)
            continue
        counted, epochs, examples = loop
        gpus, batch = int(r["gpus"]), int(r["batch_size"])
        n, share = squad_steps(int(examples), gpus, batch, float(epochs), int(counted))
        steps.append(n)
        rate.append(r["throughput"] * share)
        timed = [r.get(c) for c in TIMED]
        steady.append(
            math.nan
            if any(v is None or pd.isna(v) for v in timed)
            else gpus * squad_sequences(int(examples), gpus, batch, int(timed[0]), int(timed[1])) / timed[2]
        )
    return frame.assign(
        steps_run=pd.array(steps, dtype="Int64"),
        processed_throughput=np.array(rate, float),
        steady_throughput=np.array(steady, float),
    )


def processed_rate(reference: pd.DataFrame) -> pd.Series:
    """What each measured run processed per second: ``processed_throughput``, worked out here for a
    frame that does not come from :func:`load_reference`."""
    if "processed_throughput" not in reference:
        reference = with_processed_throughput(reference)
    return reference["processed_throughput"]


#: The benchmark's single-kernel workloads: no publication measures them the same way.
SYNTHETIC = ("matmul", "conv", "bandwidth")


def family(workload: str) -> str:
    """The workload family a prediction is graded in: ``CNN``, ``transformer``, or ``synthetic``
    for a single kernel (never graded)."""
    key = str(workload).strip().lower()
    if key in SYNTHETIC:
        return "synthetic"
    return "transformer" if key == "transformer" or transformer_task(key) else "CNN"


def graded_workloads(path: str | os.PathLike | None = None) -> set[str]:
    """Workloads with published single-GPU measurements to grade predictions against."""
    ref = cached_reference(str(Path(path) if path else REFERENCE_PATH))
    return {str(w).lower() for w in ref.loc[ref["gpus"].fillna(1).astype(int) == 1, "workload"]}


#: What makes a column of single-GPU measurements: pairs are taken within one of these.
PAIR_KEYS = ["source", "workload", "precision", "mode"]


def paired(single: pd.DataFrame) -> pd.Series:
    """Which single-GPU measurements have a pair: another GPU in their source, workload, precision
    and mode (one measured alone grades nothing)."""
    return single.groupby(PAIR_KEYS)["gpu"].transform("nunique") >= 2


def graded_gpus(family_name: str, path: str | os.PathLike | None = None) -> set[str]:
    """Catalogue GPUs with a published measurement in a family: ``CNN`` and ``transformer`` on
    one GPU, with another GPU measured by the same source alike (pairs are what is graded: a GPU
    a source measured alone is not graded), ``scaling`` on several (with the same source's
    single-GPU figure to compare)."""
    ref = cached_reference(str(Path(path) if path else REFERENCE_PATH))
    gpus = ref["gpus"].fillna(1).astype(int)
    if family_name == "scaling":
        multi = ref[gpus > 1]
        single = set(zip(ref.loc[gpus == 1, "source"], ref.loc[gpus == 1, "gpu"]))
        return {g for s, g in zip(multi["source"], multi["gpu"]) if (s, g) in single}
    single = ref[gpus == 1]
    single = single[[family(w) == family_name for w in single["workload"]]]
    return set(single.loc[paired(single), "gpu"])


@functools.lru_cache(maxsize=4)
def cached_reference(path: str) -> pd.DataFrame:
    """:func:`load_reference` of ``path``, read once per process (treat as read-only)."""
    return load_reference(path)


def single_gpu(reference: pd.DataFrame) -> pd.DataFrame:
    """The rows measured on one GPU."""
    if "gpus" not in reference:
        return reference.reset_index(drop=True)
    return reference[reference["gpus"].fillna(1).astype(int) == 1].reset_index(drop=True)


def source_link(text) -> str | None:
    """The link a source's multi-GPU run really used, where its text says so: ``host`` when the
    harness disabled NCCL's peer-to-peer transport (``NCCL_P2P_DISABLE=1``: NCCL then stages
    through host memory even between NVLink-connected GPUs); otherwise None (the GPU's default,
    :func:`gpukit.perfmodel.scaling.default_link`)."""
    t = str(text or "")
    return "host" if "NCCL_P2P_DISABLE=1" in t and "commented out by then" not in t else None
