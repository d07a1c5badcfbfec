"""The ``gpukit`` command: thin subcommands over the library.

A :class:`~gpukit.errors.GpukitError` becomes one line on stderr and exit status 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections.abc import Sequence

from .. import __version__, specs, zoo
from ..errors import GpukitError, ParameterError
from ..models import check_optimizer
from .formatting import emit, format_card, format_table, format_value, rounded
from .options import PRECISION_HELP, add_price_options, parse_date, parse_shape, split_list

#: Columns of the human-readable table (``--format csv``/``json`` carry every column).
TABLE_COLUMNS = (
    "gpu",
    "architecture",
    "memory_gb",
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "tf32_tensor_tflops",
    "fp16_tensor_tflops",
    "int8_tensor_tops",
    "tdp_w",
    "nvlink_gbs",
)


def cmd_specs(args: argparse.Namespace) -> int:
    cat = specs.load_catalogue(args.catalogue)
    if args.gpu:
        for name in args.gpu:
            res = specs.resolve(name, cat)
            if res.defaulted:
                print(f"gpukit: {res.describe()}", file=sys.stderr)
    rows = specs.records(specs.select(cat, args.gpu))
    if args.format == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(specs.COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: format_value(v) for k, v in r.items()} for r in rows)
        sys.stdout.write(buf.getvalue())
    elif args.format == "json":
        print(json.dumps(rows, indent=2))
    elif len(rows) == 1:
        print(format_card(rows[0]))
    else:
        print(format_table(rows, TABLE_COLUMNS))
        print(
            f"\n{len(rows)} GPU(s); dense tensor figures, FP16 with FP32 accumulate. "
            "All columns and sources: --format csv or json."
        )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ..report import render_report

    cli_params: dict[str, str] = {}
    for name, value in args.parameter or []:
        if name in cli_params:
            raise ParameterError(f"parameter {name} is given twice with -p; give it once")
        cli_params[name] = value
    if args.results:
        from pathlib import Path

        folder = Path(args.results)
        if not folder.is_dir():
            raise ParameterError(
                f"--results {args.results}: not a folder; give a folder of `gpukit bench --out` files"
            )
        if "results_dir" in cli_params:
            raise ParameterError("give the results folder once: --results DIR or -p results_dir DIR")
        cli_params["results_dir"] = str(folder.resolve())
    timeout = {} if args.cell_timeout is None else {"cell_timeout_s": args.cell_timeout}
    try:
        render_report(
            out_dir=args.out,
            cli_parameters=cli_params,
            params_file=args.params_file,
            notebooks_dir=args.notebooks,
            only=args.only,
            kernel_name=args.kernel,
            pairs=args.pair,
            **timeout,
        )
    except KeyboardInterrupt as exc:  # the message says where the partial output was kept
        detail = str(exc)
        print(f"gpukit: interrupted{'; ' + detail if detail else ''}", file=sys.stderr)
        return 130
    return 0


def _progress_printer(stream=None):
    """A progress bar on a terminal; one line per configuration otherwise (logs, CI)."""
    stream = stream or sys.stderr
    tty = stream.isatty()

    def show(i: int, n: int, rec) -> None:
        value = rec.throughput
        result = (
            f"{value:,.3g} {rec.throughput_unit}" if value is not None else f"{rec.status}: {rec.error or ''}"
        )
        bar = "#" * round(20 * i / n)
        line = f"[{bar:<20}] {i}/{n} {rec.label} {rec.precision}: {result}"
        if tty:
            stream.write("\r\033[K" + line[:200] + ("\n" if i == n else ""))
        else:
            stream.write(line + "\n")
        stream.flush()

    return show


def cmd_bench(args: argparse.Namespace) -> int:
    from .. import bench, precision

    if args.devices is not None or args.strategy != "mirrored":
        return _bench_scaling(args)

    workloads = [w for part in args.workloads or [] for w in part.split(",") if w.strip()] or None
    precisions = precision.normalize_all(",".join(args.precision)) if args.precision else None
    if args.dry_run:
        plan = bench.plan(workloads, precisions, quick=args.quick, xla=args.xla)
        if args.format == "json":
            print(json.dumps(plan.to_dict(orient="records"), indent=1))
        elif args.format == "csv":
            sys.stdout.write(plan.to_csv(index=False))
        else:
            print(format_table(plan.to_dict(orient="records"), list(plan.columns)))
        return 0
    results = bench.run_benchmarks(
        workloads=workloads,
        precisions=precisions,
        quick=args.quick,
        xla=args.xla,
        isolation=args.isolation,
        time_budget_s=args.time_budget,
        progress=None if args.no_progress else _progress_printer(),
    )
    if args.out:
        results.save(args.out)
        print(f"gpukit: results written to {args.out}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(results.to_dict(), indent=1))
        return 0
    frame = results.frame()
    if args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
        return 0
    dev = results.device
    print(f"device: {dev.kind.upper()} {dev.name}; {dev.catalogue_note or ''}")
    cols = [
        "configuration",
        "precision",
        "math_mode",
        "status",
        "median_ms",
        "iqr_pct",
        "throughput",
        "unit",
        "achieved_tflops",
        "peak_fraction",
        "note",
    ]
    rows = frame[cols].to_dict(orient="records")
    for r in rows:
        for k in ("median_ms", "iqr_pct", "throughput", "achieved_tflops", "peak_fraction"):
            if isinstance(r[k], float) and r[k] == r[k]:
                r[k] = float(f"{r[k]:.3g}")
        if frame.loc[rows.index(r), "noisy"]:
            r["note"] = ("noisy; " + r["note"]).rstrip("; ")
    print(format_table(rows, cols))
    return 0


def _bench_scaling(args: argparse.Namespace) -> int:
    """``gpukit bench --devices N [--strategy mirrored|multiworker]``."""
    import json as _json
    import os

    from .. import distributed, precision

    workloads = [w for part in args.workloads or [] for w in part.split(",") if w.strip()] or None
    precs = (
        [precision.trainable(p) for p in precision.normalize_all(",".join(args.precision))]
        if args.precision
        else ["fp32"]
    )
    if len(precs) != 1:
        raise ParameterError("--devices runs one precision at a time, such as fp32, fp16 or bf16")
    devices = args.devices if args.devices is not None else 1
    distributed.check(devices, args.strategy, workloads)  # fail before TensorFlow loads
    doc = distributed.run_scaling(devices, args.strategy, workloads, precs[0], args.quick)
    task = (
        (_json.loads(os.environ.get("TF_CONFIG") or "{}").get("task") or {})
        if args.strategy == "multiworker"
        else {}
    )
    chief = int(task.get("index", 0)) == 0
    if args.out and chief:
        doc.save(args.out)
        print(f"gpukit: results written to {args.out}", file=sys.stderr)
    elif args.out:
        print(
            f"gpukit: worker {task.get('index')} is not the chief; worker 0 writes the results",
            file=sys.stderr,
        )
    frame = doc.frame()
    if args.format == "json":
        print(_json.dumps(doc.to_dict(), indent=1))
    elif args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
    else:
        rows = rounded(frame.to_dict(orient="records"))
        print(format_table(rows, list(frame.columns)))
    return 0


def _bisect_on_gpu(memory, name: str, p: str, args: argparse.Namespace, shape):
    """On a GPU, the real largest batch by bisection on out-of-memory; on a CPU, nothing to bisect."""
    from ..device import physical_gpus

    if not physical_gpus():
        print(
            "gpukit: no GPU attached: the real largest batch is found by bisection on a GPU only",
            file=sys.stderr,
        )
        return None
    found = memory.bisect_largest_batch(name, p, args.optimizer, args.mode, shape, seq_len=args.seq_len)
    return found["largest_batch"]


def cmd_fit(args: argparse.Namespace) -> int:
    from .. import memory, precision

    for b in args.batch:
        if b < 1:
            raise ParameterError(f"batch size {b} must be at least 1")
    p = precision.trainable(args.precision)
    check_optimizer(args.optimizer)
    if args.repeats is not None and not args.measure:
        raise ParameterError("--repeats sets how many times --measure measures each batch; add --measure")
    if args.repeats is not None and args.repeats < 1:
        raise ParameterError(f"--repeats {args.repeats} must be at least 1")
    if args.seq_len is not None and args.seq_len < 1:
        raise ParameterError(f"sequence length {args.seq_len} must be at least 1")
    cat = specs.load_catalogue()
    gpus = specs.select(cat, args.gpu)
    reserve = int(args.runtime_reserve_mib * 2**20)
    shape = parse_shape(args.input_shape)
    frames = []
    for name in args.model:
        est = memory.Estimator(name, shape, args.seq_len)
        if args.seq_len and est.transformer is None and not est.spec.sizes:
            print(
                f"gpukit: {est.name} has no sequence length to set; --seq-len applies to the built-in "
                "transformers and the Keras-layer token models",
                file=sys.stderr,
            )
        frame = memory.fit_table(est, args.batch, gpus, p, args.optimizer, args.mode, reserve)
        if args.measure:
            frame = memory.with_measurements(frame, est, shape, args.repeats or 1)
            frame["measured_largest_batch"] = _bisect_on_gpu(memory, name, p, args, shape)
        frames.append(frame)
    import pandas as pd

    frame = pd.concat(frames, ignore_index=True)
    if emit(frame, args.format):
        return 0
    print(memory.format_fit(frame))
    return 0


def cmd_cost(args: argparse.Namespace) -> int:
    from .. import cost, precision, prices

    precs = precision.normalize_all(",".join(args.precision)) if args.precision else ["fp32", "fp16"]
    book = prices.load_prices(args.prices, max_age_days=args.max_age_days)
    if args.as_of:
        book = book.as_of(parse_date(args.as_of, "--as-of"))
    frame = cost.cost_table(
        book,
        args.gpu,
        precs,
        args.price_kind,
        args.electricity_usd_per_kwh,
        args.years,
        args.utilization,
        args.pue,
        args.cloud,
        cloud_kind=args.cloud_kind,
    )
    if not emit(frame, args.format):
        cols = [
            "gpu",
            "precision",
            "peak_tflops",
            "sustained_tflops",
            "price_usd",
            "usd_per_tflop",
            "usd_per_sustained_tflop",
            "tco_usd_per_tflop",
            "cloud_usd_per_hour",
            "cloud_usd_per_tflop_hour",
            "break_even_months",
            "tflops_per_watt",
            "note",
        ]
        rows = rounded(frame[cols].to_dict(orient="records"))
        print(format_table(rows, cols))
        print(
            f"\nTCO over {args.years:g} years at {args.utilization:.0%} use, ${args.electricity_usd_per_kwh:g}/kWh, "
            f"PUE {args.pue:g}; cloud: {args.cloud} {args.cloud_kind}; purchase price: {args.price_kind}"
            + (f"; prices as of {args.as_of}." if args.as_of else ".")
            + "\nsustained_tflops: the tensor-core peak at the share the GPU was measured to sustain in a large "
            "matrix multiply (data/matmul_rates.csv; the median share where none was measured: "
            "sustained_basis in --format csv/json)."
        )
    used = frame.drop_duplicates("gpu")  # the prices this table priced with, one purchase and one cloud a GPU
    stale = int(used["price_stale"].sum() + used["cloud_stale"].sum())
    if stale:
        print(
            f"gpukit: {stale} price(s) in use are older than {book.max_age_days} days and marked stale "
            "(see the note column)",
            file=sys.stderr,
        )
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from .. import perfmodel
    from .. import results as res

    if args.batch is not None and args.batch < 1:
        raise ParameterError(f"batch size {args.batch} must be at least 1")
    if args.gpus < 1:
        raise ParameterError(f"--gpus {args.gpus}: give at least 1")
    if args.gpus > 1 and args.mode != "train":
        raise ParameterError("--gpus predicts data-parallel training; leave out --mode infer")
    results = res.load(args.results) if args.results else None
    extra = {"seq_len": args.seq_len} if args.seq_len is not None else {}
    frame = perfmodel.predict_table(
        args.workload,
        args.precision,
        args.batch,
        args.mode,
        args.gpu,
        results=results,
        count=args.gpus,
        link=args.link,
        **extra,
    )
    if emit(frame, args.format):
        return 0
    cols = [
        "gpu",
        "step_time_s",
        "throughput",
        "throughput_unit",
        "bound",
        "math",
        "tensor_share",
        "bandwidth_share",
        "l2_cache_mib",
        "measured_throughput",
        "graded",
        "note",
    ]
    if args.gpus > 1:
        cols[3:3] = ["scaling_efficiency", "link"]
    rows = rounded(frame[cols].to_dict(orient="records"))
    first = frame.iloc[0]
    many = f" per GPU, {args.gpus} GPUs data-parallel" if args.gpus > 1 else ""
    print(
        f"{first['workload']} {first['mode']}, {first['precision']}, batch {first['batch_size']}{many}; "
        f"efficiency: {first['efficiency_source']}"
    )
    print(perfmodel.grading_statement(str(first["workload"]), args.gpus, frame))
    print(format_table(rows, cols))
    for column, what, path in (
        ("tensor_share", "tensor peak each GPU sustains in a large matrix multiply", "data/matmul_rates.csv"),
        (
            "bandwidth_share",
            "memory bandwidth each GPU streams in a copy or triad kernel",
            "data/bandwidth_rates.csv",
        ),
    ):
        unmeasured = frame.loc[frame[f"{column}_measured"] == False, "gpu"].tolist()  # noqa: E712 -- NaN rows
        print(
            f"{column}: the share of its datasheet {what}, as published runs measured it ({path})"
            + (
                f"; no run measured {', '.join(unmeasured)}: the median share of those measured"
                if unmeasured
                else ""
            )
            + "."
        )
    unsized = frame.loc[frame["l2_cache_mib"].isna() & frame["throughput"].notna(), "gpu"].tolist()
    print(
        "l2_cache_mib: the L2 each GPU's driver reports (data/gpus.csv, with its source); a kernel reads from it "
        "what the kernel before it wrote where that fits"
        + (
            f"; none in the catalogue for {', '.join(unsized)}: the cache term leaves them out"
            if unsized
            else ""
        )
        + "."
    )
    return 0


def cmd_llm(args: argparse.Namespace) -> int:
    from .. import llm

    if args.list:
        models = llm.models_frame()
        cols = [
            "model",
            "family",
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "experts",
            "params_b",
            "active_params_b",
            "published_params_b",
            "max_context",
            "kv_cache_mib_per_1k_tokens",
        ]
        print(format_table(rounded(models[cols].to_dict(orient="records")), cols))
        print()
        weights = llm.weights_frame()
        print(
            format_table(
                rounded(weights[["weights", "bits_per_weight", "basis"]].to_dict(orient="records")),
                ["weights", "bits_per_weight", "basis"],
            )
        )
        return 0
    if args.weights is not None and args.mode != "infer":
        raise ParameterError(
            f"--weights {args.weights} is the format served (--mode infer); {args.mode} fine-tunes "
            f"{llm.FINETUNE_WEIGHTS[args.mode]} weights, so leave --weights out"
        )
    weights = args.weights or "q4_k_m"
    frame = llm.llm_table(
        args.model,
        weights,
        args.context,
        args.batch,
        args.gpu,
        args.mode,
        args.kv_cache,
        args.lora_rank,
        args.lora_targets,
        not args.no_checkpointing,
        args.gpus,
        args.prices,
        args.engine,
    )
    if emit(frame, args.format):
        return 0
    m = llm.resolve_model(args.model)
    what = "inference" if args.mode == "infer" else f"{args.mode} fine-tuning"
    engine = args.engine or llm.default_engine(weights)
    many = f" on {args.gpus} GPUs each (split by {llm.ENGINES[engine]['split']})" if args.gpus > 1 else ""
    what += f" with {engine}" if args.mode == "infer" else ""
    print(
        f"{m.name} ({m.params() / 1e9:.1f} B parameters), {what}, {frame['weights'].iloc[0]}, context "
        f"{args.context}, batch {args.batch}{many}"
    )
    cols = [
        "gpu",
        "fits",
        "total_gib",
        "weights_gib",
        "kv_cache_gib",
        "max_context",
        "gpus_needed",
        "prefill_tokens_per_s",
        "decode_tokens_per_s",
        "usd_per_million_tokens",
        "graded",
        "note",
    ]
    if args.mode == "infer":
        # graded in each setting the rows ran in (a GPU too small for the model runs on several)
        print(llm.grading_statement([args.gpus, *frame.attrs["cards"]], m.name, weights))
        print(llm.engine_scope(engine, weights))
    else:  # a memory answer; speed and cost are for serving
        cols = ["gpu", "fits", "total_gib", "weights_gib", "max_context", "max_batch", "gpus_needed", "note"]
        print(
            "Memory only (where one GPU is too small, gpus_needed shards weights, gradients and optimizer state "
            "over several as ZeRO-3/FSDP); serving speed and cost: --mode infer."
        )
    print(format_table(rounded(frame[cols].to_dict(orient="records")), cols))
    checked = frame.dropna(subset=["published_source"])
    if len(checked):
        cols = ["gpu", *llm.PUBLISHED_COLUMNS]
        print(
            "\nPublished for the same configuration (GPU, cards, model, weights, engine) at the nearest length; "
            "error: predicted against published there, in %:"
        )
        print(format_table(rounded(checked[cols].to_dict(orient="records")), cols))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .. import compare
    from .. import results as res

    if args.batch is not None and args.batch < 1:
        raise ParameterError(f"batch size {args.batch} must be at least 1")
    results = res.load(args.results) if args.results else None
    kwargs = {}
    if args.workloads:
        kwargs["workloads"] = split_list(args.workloads)
    if args.precision:
        kwargs["precisions"] = split_list(args.precision)
    if args.models:
        kwargs["models"] = split_list(args.models)
    result = compare.compare(
        args.a,
        args.b,
        batch_size=args.batch,
        price_files=args.prices,
        price_kind=args.price_kind,
        electricity_usd_per_kwh=args.electricity_usd_per_kwh,
        years=args.years,
        utilization=args.utilization,
        results=results,
        **kwargs,
    )
    if args.format == "csv":
        sys.stdout.write(result.long().to_csv(index=False))
    elif args.format == "json":
        print(result.to_json())
    elif args.format == "md":
        print(result.markdown())
    else:
        print(f"{result.a} vs {result.b}\n")
        for v in result.verdicts:
            print(f"* {v['topic']}: {v['verdict']}\n    {v['reason']} {v['condition']}")
        frame = result.long()
        rows = rounded(frame[frame["section"] != "verdict"].to_dict(orient="records"))
        print()
        print(format_table(rows, ["section", "item", "a", "b", "a_over_b", "note"]))
        print(f"\na = {result.a}, b = {result.b}; efficiency factors: {result.efficiency_source}")
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from .. import claims

    table = claims.check(claims.load_claims(args.claims) if args.claims else None)
    if args.verdict:
        table = table[table["verdict"] == args.verdict]
    if not emit(table, args.format):
        cols = ["source", "gpu", "field", "claimed_value", "catalogue_value", "verdict", "note"]
        print(format_table(table[cols].to_dict(orient="records"), cols))
        counts = table["verdict"].value_counts()
        print("\n" + ", ".join(f"{counts.get(v, 0)} {v}" for v in claims.VERDICTS))
    return 0


def cmd_kernel(args: argparse.Namespace) -> int:
    from ..report import install_kernel

    where = install_kernel(args.name, user=args.user)
    print(f"gpukit: Jupyter kernel {args.name!r} registered in {where}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpukit",
        description="Choose GPUs for deep learning with numbers you can trust.",
        epilog="Run 'gpukit COMMAND --help' for the options of each command.",
    )
    parser.add_argument("--version", action="version", version=f"gpukit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "specs",
        help="print the GPU catalogue or the named GPUs",
        description="Print the sourced GPU catalogue (data/gpus.csv), or the named GPUs. "
        "Names are forgiving: 'v100 sxm2 32gb', 'NVIDIA A100-PCIE-40GB', 'rtx 4090'.",
    )
    p.add_argument(
        "--gpu",
        action="append",
        metavar="NAME",
        help="a GPU to show (repeatable); a bare family name picks its default variant",
    )
    p.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="table (default: key columns), csv or json (every column, with sources)",
    )
    p.add_argument(
        "--catalogue",
        metavar="FILE",
        help="a catalogue CSV of the same shape instead of data/gpus.csv "
        "(validated; errors name line, column and fix)",
    )
    p.set_defaults(func=cmd_specs)

    p = sub.add_parser(
        "report",
        help="render the report (papermill + HTML) into outputs/",
        description="Execute the report notebooks with papermill and write executed .ipynb, "
        "HTML and an index.html into a new run folder; OUT/latest points at the newest good run.",
    )
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        help="set a notebook parameter (repeatable); VALUE is YAML: 3, 0.5, true, '[A40, V100]'",
    )
    p.add_argument(
        "--params-file",
        metavar="FILE",
        help="YAML/JSON mapping of parameters; a notebook name as key scopes a mapping to it",
    )
    p.add_argument("--out", metavar="DIR", help="output folder (default: outputs/ in the checkout)")
    p.add_argument(
        "--results",
        metavar="DIR",
        help="merge every gpukit bench results file in DIR (one per machine) into the benchmark, "
        "performance-model and head-to-head pages; corrupt files are named and skipped, none changed",
    )
    p.add_argument(
        "--pair",
        action="append",
        nargs=2,
        metavar=("GPU_A", "GPU_B"),
        help="render the head-to-head notebook for this pair too (repeatable); "
        "the default report has A40 vs V100 and RTX A4000 vs RTX A5000",
    )
    p.add_argument(
        "--only",
        action="append",
        metavar="NOTEBOOK",
        help="render only this notebook (repeatable): 01_specs, 01 or specs",
    )
    p.add_argument(
        "--notebooks", metavar="DIR", help="folder of NN_name.ipynb notebooks (default: notebooks/)"
    )
    p.add_argument("--kernel", default="gpukit", help="Jupyter kernel to run them with (default: gpukit)")
    p.add_argument(
        "--cell-timeout",
        type=float,
        metavar="SECONDS",
        help="fail the run when one cell runs longer than this (default: 600; 0: no limit)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "bench",
        help="time TensorFlow workloads on the attached device (GPU, else CPU)",
        description="Run short TensorFlow workloads on the attached device with warm-up, "
        "calibrated repeats and device synchronisation; print median, spread and throughput.",
    )
    p.add_argument("--quick", action="store_true", help="the short set (about a minute on a 2-core CPU)")
    p.add_argument(
        "--workloads",
        action="append",
        metavar="LIST",
        help="comma-separated subset of matmul,bandwidth,conv,resnet50,transformer,decoder",
    )
    p.add_argument(
        "--precision", action="append", metavar="LIST", help=f"comma-separated precisions: {PRECISION_HELP}"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list the configurations this device would run and the math each runs at, without running",
    )
    p.add_argument("--xla", action="store_true", help="compile the steps with XLA (jit_compile=True)")
    p.add_argument(
        "--isolation",
        choices=("auto", "process", "subprocess"),
        default="auto",
        help="run each configuration in a child process (default on a GPU) or here (default on a CPU)",
    )
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="spread about this many seconds of measuring over the configurations",
    )
    p.add_argument("--out", metavar="FILE", help="also write the versioned results document (JSON) here")
    p.add_argument(
        "--devices",
        type=int,
        metavar="N",
        help="train resnet50 and transformer under tf.distribute on N devices (N GPUs; without GPUs "
        "the CPU split into N logical devices) and report scaling against one device",
    )
    p.add_argument(
        "--strategy",
        choices=("mirrored", "multiworker"),
        default="mirrored",
        help="MirroredStrategy on this machine, or MultiWorkerMirroredStrategy across the workers "
        "in TF_CONFIG (worker 0 writes --out)",
    )
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "fit",
        help="will this model at this batch size fit on that GPU?",
        description="Estimate the memory one training or inference step needs (weights, gradients, "
        "optimizer state, activations, workspace) and check it against each GPU's memory.",
    )
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="NAME",
        help="a keras.applications name (ResNet50, MobileNetV2...), a .keras file, a built-in "
        "transformer (bert-base, bert-large, gpt2-small, gpt2-medium, llama-7b) or a Keras-layer model "
        f"({', '.join(zoo.ZOO)}) (repeatable)",
    )
    p.add_argument(
        "--batch",
        type=int,
        nargs="+",
        action="extend",
        required=True,
        metavar="B",
        help="batch sizes (--batch 8 64, or repeated: --batch 8 --batch 64)",
    )
    p.add_argument("--precision", default="float32", help=PRECISION_HELP)
    p.add_argument(
        "--optimizer", default="adam", help="sgd, momentum, adam, adamw, rmsprop, ... (train only)"
    )
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument(
        "--seq-len",
        type=int,
        metavar="N",
        help="sequence length of a built-in transformer or of a Keras-layer token model "
        "(keras-encoder, keras-decoder, keras-bert, keras-lstm, ...); image models have none",
    )
    p.add_argument("--input-shape", metavar="H,W,C", help="input shape of a keras.applications model")
    p.add_argument("--gpu", action="append", metavar="NAME", help="GPUs to check (repeatable; default: all)")
    p.add_argument(
        "--runtime-reserve-mib",
        type=float,
        default=1024.0,
        metavar="MIB",
        help="CUDA context and workspaces a GPU process holds besides tensors (default 1024)",
    )
    p.add_argument(
        "--measure",
        action="store_true",
        help="also run one real step per batch on the attached device and show the measured peak",
    )
    p.add_argument(
        "--repeats",
        type=int,
        metavar="N",
        help="with --measure: measure each batch N times, each in a fresh process, and show the median "
        "and the lowest and highest run (the peak moves from run to run; default 1)",
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser(
        "cost",
        help="cost per TFLOP to buy, own and rent each GPU",
        description="Cost per peak TFLOP from dated, sourced prices: purchase, total cost of "
        "ownership with electricity, cloud $/hour, and the break-even between buying and renting.",
    )
    p.add_argument("--gpu", action="append", metavar="NAME", help="GPUs (repeatable; default: all)")
    p.add_argument(
        "--precision",
        action="append",
        metavar="LIST",
        help=f"comma-separated (default fp32,fp16): {PRECISION_HELP}, fp64, int8",
    )
    add_price_options(p)
    p.add_argument(
        "--pue",
        type=float,
        default=1.0,
        help="power usage effectiveness (1.0 at a desk, ~1.4 in a data centre)",
    )
    p.add_argument("--cloud", default="cheapest", help="cheapest, median or a provider's name")
    p.add_argument(
        "--cloud-kind",
        default="on-demand",
        choices=("on-demand", "spot", "serverless"),
        help="which cloud prices (never mixed): on-demand instances, spot, or serverless per-second rates",
    )
    p.add_argument(
        "--as-of", metavar="YYYY-MM-DD", help="price on this day: the prices that held then (default: today)"
    )
    p.add_argument("--max-age-days", type=int, default=365, help="prices older than this are marked stale")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.set_defaults(func=cmd_cost)

    p = sub.add_parser(
        "predict",
        help="predict each catalogue GPU's speed on a workload",
        description="Predict step time and throughput of a workload on catalogue GPUs with the "
        "roofline performance model (per op: compute or memory bound). Predictions are graded "
        "against published measurements in the report; speedups are what they are for.",
    )
    p.add_argument(
        "--workload",
        default="resnet50",
        help="resnet50, transformer, matmul, conv, bandwidth, a built-in transformer (bert-base, "
        "bert-large, gpt2-small, gpt2-medium, llama-7b; with --seq-len), one fine-tuned on SQuAD "
        "(bert-base-squad, bert-large-squad) or a keras.applications name",
    )
    p.add_argument("--precision", default="float32", help=PRECISION_HELP)
    p.add_argument("--batch", type=int, help="batch size (default: the workload's)")
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument(
        "--seq-len",
        type=int,
        metavar="N",
        help="tokens per sequence of a built-in transformer workload (default: 512 or its maximum; "
        "384 for a -squad workload)",
    )
    p.add_argument(
        "--gpus",
        type=int,
        default=1,
        metavar="N",
        help="N GPUs of each kind training data-parallel over their real link (batch per GPU)",
    )
    p.add_argument(
        "--link",
        choices=("nvlink", "pcie", "host"),
        help="with --gpus: the link (default: NVLink on SXM boards, none between GeForce cards, "
        "PCIe peer-to-peer otherwise; nvlink on PCIe cards means a bridge, two cards only)",
    )
    p.add_argument("--gpu", action="append", metavar="NAME", help="GPUs (repeatable; default: all)")
    p.add_argument(
        "--results",
        metavar="FILE",
        help="a gpukit bench results file: calibrates the model when it was measured on a catalogued GPU",
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser(
        "llm",
        help="which LLMs fit on which GPU, how fast they generate, what a million tokens cost",
        description="An open LLM on every catalogue GPU: memory to serve it (weights, KV cache, one "
        "step's activations, runtime reserve) or fine-tune it (full, LoRA, QLoRA), the largest context "
        "and batch, how many GPUs it needs, prefill and decode tokens per second, and dollars per "
        "million generated tokens.",
    )
    p.add_argument(
        "--model",
        default="llama-3-8b",
        help="a model of data/llm_models.csv (gpukit llm --list) or a .json/.yaml file of its shape",
    )
    p.add_argument(
        "--weights",
        help="weights format served (--mode infer; default q4_k_m): f16, bf16, int8, q8_0, "
        "q4_0, q4_k_m, q5_k_m, gptq-4bit, awq-4bit (data/llm_weights.csv)",
    )
    p.add_argument(
        "--context", type=int, default=4096, help="tokens of context (sequence length to fine-tune)"
    )
    p.add_argument("--batch", type=int, default=1, help="sequences served at once (or per fine-tuning step)")
    p.add_argument("--mode", choices=("infer", "lora", "qlora", "full"), default="infer")
    p.add_argument("--kv-cache", choices=("f16", "q8_0"), default="f16", help="KV cache format")
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument(
        "--lora-targets",
        choices=("attention", "all"),
        default="all",
        help="the matrices LoRA adapts: attention only, or all linear maps",
    )
    p.add_argument(
        "--no-checkpointing", action="store_true", help="fine-tune without activation checkpointing"
    )
    p.add_argument(
        "--gpus", type=int, default=1, metavar="N", help="split the model over N GPUs of each kind"
    )
    p.add_argument(
        "--engine",
        choices=("llama.cpp", "vllm"),
        help="serving engine: llama.cpp (FP16-accumulate prompts, layer split) or vllm (FP32 accumulate, "
        "tensor parallel); default llama.cpp for GGUF quantisations, vllm otherwise",
    )
    p.add_argument("--gpu", action="append", metavar="NAME", help="GPUs (repeatable; default: all)")
    p.add_argument("--prices", action="append", metavar="FILE", help="your own price file(s)")
    p.add_argument("--list", action="store_true", help="list the shipped models and weights formats")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.set_defaults(func=cmd_llm)

    p = sub.add_parser(
        "compare",
        help="head-to-head: two GPUs, with verdicts computed from the numbers",
        description="Compare two GPUs: spec ratios, throughput per workload and precision "
        "(measured where a results file has it, predicted otherwise), memory fit, cost, and "
        "verdicts generated from those numbers with their reasons and conditions.",
    )
    p.add_argument("a", help="first GPU, e.g. A40")
    p.add_argument("b", help="second GPU, e.g. V100")
    p.add_argument(
        "--workloads",
        action="append",
        metavar="LIST",
        help="comma-separated (default resnet50,bert-base-squad: the CNN and the transformer "
        "graded against publications)",
    )
    p.add_argument(
        "--precision",
        action="append",
        metavar="LIST",
        help=f"comma-separated (default float32,fp16): {PRECISION_HELP}",
    )
    p.add_argument(
        "--batch", type=int, help="batch size of the throughput comparison (default: the workload's)"
    )
    p.add_argument(
        "--models",
        action="append",
        metavar="LIST",
        help="models for the memory fit (default ResNet50,bert-base,bert-large,gpt2-medium,keras-bert)",
    )
    add_price_options(p)
    p.add_argument("--results", metavar="FILE", help="a gpukit bench results file (measured rows win)")
    p.add_argument("--format", choices=("table", "csv", "json", "md"), default="table")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "claims",
        help="fact-check the articles' spec claims against the catalogue",
        description="Check every claim of data/claims.csv (or your own file of that shape) "
        "against the sourced catalogue: confirmed, wrong, or unclear (true for some variants only).",
    )
    p.add_argument("--claims", metavar="FILE", help="a claims CSV (default: data/claims.csv)")
    p.add_argument("--verdict", choices=("confirmed", "wrong", "unclear"), help="show only this verdict")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser(
        "kernel",
        help="register the gpukit Jupyter kernel (make setup does this)",
        description="Register this environment's Python as a Jupyter kernel for the notebooks "
        "and reports, with TensorFlow's C++ logging turned down.",
    )
    p.add_argument("--name", default="gpukit", help="kernel name (default: gpukit)")
    p.add_argument(
        "--user", action="store_true", help="register for this user instead of inside the environment"
    )
    p.set_defaults(func=cmd_kernel)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except GpukitError as exc:
        print(f"gpukit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpukit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`gpukit llm --list | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
