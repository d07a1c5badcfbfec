"""The gpukit command: output formats, one-line errors, exit codes."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import pytest

from gpukit import cli, specs


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def table_headers(text: str, table: int = 0) -> list[str]:
    """The headers of the ``table``-th text table in ``text`` as a reader reads them: a header on
    two lines joined, columns found by the dashes under them."""
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if line.strip() and set(line) <= {"-", " "}]
    i = rules[table]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[i])]
    above = [line for line in lines[max(0, i - 2) : i] if line.strip()]
    if len(above) == 2 and not _header_row(above[0], spans):
        above = above[1:]  # a line of text above a one-line header
    return [" ".join(line[a:b].strip() for line in above if line[a:b].strip()) for a, b in spans]


def _header_row(line: str, spans) -> bool:
    """Whether ``line`` has text only within the columns (a header's top line, not a sentence)."""
    inside = set().union(*(range(a, b) for a, b in spans))
    return all(i in inside for i, char in enumerate(line) if char != " ")


def test_specs_csv_has_exactly_the_catalogue_columns(capsys, catalogue, gpu):
    code, out, err = run(capsys, "specs", "--format", "csv")
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0].keys()) == list(specs.COLUMNS)
    assert [r["gpu"] for r in rows] == list(catalogue["gpu"])
    a40 = next(r for r in rows if r["gpu"] == "A40")
    assert float(a40["fp32_tflops"]) == gpu("A40").fp32_tflops and a40["msrp_usd"] == ""


def test_specs_csv_round_trips_through_validation(capsys, tmp_path, catalogue):
    _, out, _ = run(capsys, "specs", "--format", "csv")
    path = tmp_path / "roundtrip.csv"
    path.write_text(out)
    again = specs.validate_catalogue(path)
    assert specs.records(again) == specs.records(catalogue)


def test_specs_json_for_named_gpus(capsys, gpu):
    code, out, err = run(capsys, "specs", "--gpu", "a4000", "--gpu", "RTX A5000", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [d["gpu"] for d in data] == ["RTX A4000", "RTX A5000"]
    assert data[0]["memory_bandwidth_gbs"] == gpu("RTX A4000").memory_bandwidth_gbs
    assert data[1]["nvlink_gbs"] == gpu("RTX A5000").nvlink_gbs
    assert data[0]["msrp_usd"] is None


def test_specs_default_variant_is_said_on_stderr(capsys):
    code, out, err = run(capsys, "specs", "--gpu", "V100", "--format", "csv")
    assert code == 0
    assert "V100 PCIe 16GB (default variant" in err
    assert out.splitlines()[1].startswith("V100 PCIe 16GB,")


def test_specs_table_and_single_gpu_card(capsys, catalogue, gpu):
    code, out, _ = run(capsys, "specs")
    assert code == 0
    lines = out.splitlines()
    assert table_headers(out)[:4] == ["GPU", "architecture", "launch", "memory (GB)"]
    assert any(line.startswith("GeForce RTX 4090") for line in lines)
    assert f"{len(catalogue)} GPU(s)" in out
    # grouped by segment, consumer first, each group sorted by dense FP16 tensor, largest first
    heads = [i for i, line in enumerate(lines) if line.split(":")[0] in specs.SEGMENTS]
    assert [lines[i].split(":")[0] for i in heads] == list(specs.SEGMENTS)
    counts = catalogue["segment"].value_counts()
    assert all(f"({counts[lines[i].split(':')[0]]}, by FP16 tensor (TFLOPS))" in lines[i] for i in heads)
    consumer = [line.split("  ")[0] for line in lines[heads[0] + 1 : heads[1]]]
    want = catalogue[catalogue["segment"] == "consumer"].sort_values(
        "fp16_tensor_tflops", ascending=False, kind="stable"
    )
    assert consumer == list(want["gpu"])
    code, out, _ = run(capsys, "specs", "--gpu", "T4")
    assert code == 0
    card = dict((re.split(r"\s{2,}", line, maxsplit=1) + [""])[:2] for line in out.splitlines())
    assert (
        card["FP16 tensor (TFLOPS)"] == f"{gpu('T4').fp16_tensor_tflops:g}"
        and card["TF32 tensor (TFLOPS)"] == ""
    )


def test_specs_filters_by_segment_and_sorts_by_the_figure_asked(capsys, catalogue):
    code, out, _ = run(capsys, "specs", "--segment", "workstation", "--sort", "memory_gb", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["segment"] for r in rows} == {"workstation"}
    assert len(rows) == (catalogue["segment"] == "workstation").sum()
    memory = [float(r["memory_gb"]) for r in rows]
    assert (
        memory == sorted(memory, reverse=True)
        and memory[0] == catalogue.loc[catalogue["segment"] == "workstation", "memory_gb"].max()
    )
    code, out, err = run(capsys, "specs", "--sort", "fp16_tflops")
    assert code == 2 and err.count("\n") == 1 and "cannot sort by 'fp16_tflops'; did you mean" in err


def test_text_tables_read_labels_yes_no_and_rounded_numbers():
    from gpukit.cli.formatting import format_table

    rows = [
        {"gpu": "A40", "memory_bandwidth_gbs": 696.0, "fits": True, "usd_per_hour": 0.40123},
        {"gpu": "H100 SXM5", "memory_bandwidth_gbs": 3352.5, "fits": False, "usd_per_hour": None},
    ]
    text = format_table(rows, ["gpu", "memory_bandwidth_gbs", "fits", "usd_per_hour"])
    assert text.splitlines() == [
        "           memory bandwidth",
        "GPU                  (GB/s)  fits  USD/hour",
        "---------  ----------------  ----  --------",
        "A40                     696  yes      0.401",
        "H100 SXM5             3,352  no",
    ]
    assert table_headers(text) == ["GPU", "memory bandwidth (GB/s)", "fits", "USD/hour"]


def test_llm_table_reads_yes_where_csv_and_json_keep_names_and_values(capsys):
    argv = ["llm", "--model", "llama-3-8b", "--gpu", "A40"]
    _, table, _ = run(capsys, *argv)
    _, text, _ = run(capsys, *argv, "--format", "csv")
    _, doc, _ = run(capsys, *argv, "--format", "json")
    headers = table_headers(table)
    assert headers[:3] == ["GPU", "fits", "total (GiB)"] and "USD per million tokens" in headers
    lines = table.splitlines()
    a40 = dict(
        zip(headers, lines[next(i for i, line in enumerate(lines) if line.startswith("---")) + 1].split())
    )
    assert a40["fits"] == "yes" and "True" not in table and "False" not in table
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["fits"] == "True" and "usd_per_million_tokens" in row
    (record,) = json.loads(doc)
    assert record["fits"] is True and float(row["total_gib"]) == pytest.approx(record["total_gib"], rel=1e-9)
    assert (
        f"{record['total_gib']:.3g}" in table and row["total_gib"] not in table
    )  # rounded only in the table


def test_unknown_gpu_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "specs", "--gpu", "A4600")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("gpukit: error: unknown GPU 'A4600'; did you mean RTX A6000")


def test_bad_catalogue_file_is_one_line(capsys, catalogue_copy):
    path = catalogue_copy({("A40", "fp32_tflops"): "lots"})
    code, _, err = run(capsys, "specs", "--catalogue", str(path))
    assert code == 2 and err.count("\n") == 1
    assert f"{path}, line 5 (A40), column fp32_tflops: 'lots' is not a number" in err


def test_report_rejects_a_parameter_given_twice(capsys):
    code, _, err = run(capsys, "report", "-p", "rank_by", "a", "-p", "rank_by", "b")
    assert code == 2 and "given twice" in err


@pytest.mark.slow  # a second or more: the full tier's
def test_console_script_help_documents_every_subcommand():
    exe = [sys.executable, "-m", "gpukit"]
    out = subprocess.run([*exe, "--help"], capture_output=True, text=True, check=True).stdout
    for command in (
        "specs",
        "bench",
        "fit",
        "cost",
        "predict",
        "compare",
        "llm",
        "claims",
        "report",
        "kernel",
    ):
        assert command in out
    out = subprocess.run([*exe, "report", "--help"], capture_output=True, text=True, check=True).stdout
    for option in ("-p NAME VALUE", "--params-file", "--out", "--only"):
        assert option in out


@pytest.mark.parametrize("argv", [["specs", "--format", "xml"], ["nosuch"]])
@pytest.mark.slow  # a second or more: the full tier's
def test_usage_errors_exit_2(argv):
    proc = subprocess.run([sys.executable, "-m", "gpukit", *argv], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage:" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.tensorflow
def test_fit_of_a_keras_model_builds_it_quietly():
    """The estimate builds the model (under a 16-bit policy, for the walk) without TensorFlow's start-up logs."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpukit",
            "fit",
            "--model",
            "keras-vit",
            "--batch",
            "2",
            "--precision",
            "bf16",
            "--gpu",
            "T4",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "keras-vit, 32x32x3 images, batch 2, train, bf16, adam: tensors" in proc.stdout
    assert "fits on: T4" in proc.stdout
    assert proc.stderr == "", proc.stderr


@pytest.mark.tensorflow
def test_bench_end_to_end_on_this_device(tmp_path):
    """A tiny real run through the command: progress on stderr, CSV on stdout, JSON document saved."""
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpukit",
            "bench",
            "--quick",
            "--workloads",
            "bandwidth",
            "--time-budget",
            "1",
            "--out",
            str(out),
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "[2/2] bandwidth add" in proc.stderr and f"results written to {out}" in proc.stderr
    assert "absl" not in proc.stderr and "oneDNN" not in proc.stderr, "TensorFlow log noise"
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [r["configuration"] for r in rows] == ["bandwidth scale 128 MiB", "bandwidth add 128 MiB"]
    assert all(r["status"] == "ok" and float(r["throughput"]) > 0 and r["unit"] == "GB/s" for r in rows)
    from gpukit.bench import results as res

    doc = res.load(out)
    assert doc.tensorflow != "?" and doc.device.kind in ("cpu", "gpu")
    assert [r.bytes_per_step for r in doc.records] == [2 * 2**25 * 4.0, 3 * 2**25 * 4.0]


def test_bench_rejects_unknown_names_before_loading_tensorflow(capsys):
    code, _, err = run(capsys, "bench", "--workloads", "matmul,gemm")
    assert code == 2 and "unknown workload 'gemm'" in err


def test_fit_csv_rows_per_model_batch_and_gpu(capsys, gpu):
    code, out, err = run(
        capsys,
        "fit",
        "--model",
        "bert-base",
        "--model",
        "gpt2-small",
        "--batch",
        "8",
        "64",
        "--precision",
        "mixed_float16",
        "--seq-len",
        "128",
        "--gpu",
        "A4000",
        "--gpu",
        "A40",
        "--format",
        "csv",
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 2 * 2
    for key in (
        "model",
        "batch_size",
        "precision",
        "optimizer",
        "mode",
        "tensor_bytes",
        "total_bytes",
        "gpu",
        "gpu_memory_bytes",
        "fits",
    ):
        assert key in rows[0]
    a40 = [r for r in rows if r["gpu"] == "A40"]
    assert {r["gpu_memory_bytes"] for r in a40} == {str(specs.memory_bytes(gpu("A40").memory_gb))}
    assert all(int(r["total_bytes"]) - int(r["tensor_bytes"]) == 2**30 for r in rows)
    assert {r["precision"] for r in rows} == {"fp16"}
    # --batch repeated, as --model and --gpu are: every batch, not the last one only
    code, again, err = run(
        capsys,
        "fit",
        "--model",
        "bert-base",
        "--model",
        "gpt2-small",
        "--batch",
        "8",
        "--batch",
        "64",
        "--precision",
        "mixed_float16",
        "--seq-len",
        "128",
        "--gpu",
        "A4000",
        "--gpu",
        "A40",
        "--format",
        "csv",
    )
    assert code == 0, err
    assert again == out


def test_fit_table_says_where_it_fits_and_fits_nowhere(capsys):
    code, out, _ = run(
        capsys, "fit", "--model", "llama-7b", "--batch", "8", "--precision", "bf16", "--seq-len", "2048"
    )
    assert code == 0
    assert "llama-7b, 2048 tokens, batch 8, train, bf16, adam" in out and "fits on: nowhere" in out
    code, out, _ = run(
        capsys,
        "fit",
        "--model",
        "bert-base",
        "--batch",
        "8",
        "--mode",
        "infer",
        "--gpu",
        "T4",
        "--seq-len",
        "128",
    )
    assert code == 0 and "fits on: T4" in out


@pytest.mark.tensorflow
def test_fit_seq_len_builds_a_token_model_at_that_length_and_says_where_it_cannot(capsys):
    code, out, err = run(
        capsys,
        "fit",
        "--model",
        "keras-encoder",
        "--model",
        "keras-vit",
        "--batch",
        "8",
        "--mode",
        "infer",
        "--seq-len",
        "512",
        "--gpu",
        "A40",
        "--format",
        "csv",
    )
    assert code == 0
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(out))}
    assert set(rows) == {"keras-encoder seq_len=512", "keras-vit"}
    assert err == (
        "gpukit: keras-vit has no sequence length to set; --seq-len applies to the built-in "
        "transformers and the Keras-layer token models\n"
    )
    code, out, _ = run(
        capsys,
        "fit",
        "--model",
        "keras-encoder",
        "--batch",
        "8",
        "--mode",
        "infer",
        "--gpu",
        "A40",
        "--format",
        "csv",
    )
    short = next(csv.DictReader(io.StringIO(out)))
    assert short["model"] == "keras-encoder"
    assert int(short["tensor_bytes"]) < int(rows["keras-encoder seq_len=512"]["tensor_bytes"])


@pytest.mark.parametrize(
    "argv, message",
    [
        pytest.param(
            ["--model", "ResNet51", "--batch", "8"],
            "unknown model 'ResNet51'; did you mean ResNet50",
            marks=pytest.mark.tensorflow,
        ),
        (["--model", "bert-base", "--batch", "0"], "batch size 0 must be at least 1"),
        (["--model", "bert-base", "--batch", "8", "--optimizer", "adamm"], "unknown optimizer 'adamm'"),
        (["--model", "bert-base", "--batch", "8", "--precision", "fp6"], "unknown precision 'fp6'"),
        pytest.param(
            ["--model", "ResNet50", "--batch", "8", "--input-shape", "16,16,3"],
            "ResNet50 cannot take input shape",
            marks=pytest.mark.tensorflow,
        ),
        (["--model", "ResNet50", "--batch", "8", "--input-shape", "big"], "is not height,width,channels"),
        (["--model", "bert-base", "--batch", "8", "--gpu", "A4600"], "unknown GPU 'A4600'"),
    ],
)
def test_fit_bad_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, "fit", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.tensorflow
def test_predict_csv_has_the_issue_columns_one_row_per_gpu(capsys):
    code, out, err = run(
        capsys,
        "predict",
        "--workload",
        "resnet50",
        "--precision",
        "mixed_float16",
        "--batch",
        "128",
        "--gpu",
        "RTX A4000",
        "--gpu",
        "RTX A5000",
        "--gpu",
        "V100",
        "--format",
        "csv",
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    for col in (
        "gpu",
        "workload",
        "precision",
        "batch_size",
        "mode",
        "step_time_s",
        "throughput",
        "throughput_unit",
        "bound",
    ):
        assert col in rows[0]
    assert {r["gpu"] for r in rows} == {"RTX A4000", "RTX A5000", "V100 PCIe 16GB"}
    for r in rows:
        assert r["batch_size"] == "128" and r["throughput_unit"] == "images/s"
        assert float(r["step_time_s"]) * float(r["throughput"]) == pytest.approx(128, rel=1e-6)
        assert r["bound"] in ("compute", "memory")
    by = {r["gpu"]: float(r["throughput"]) for r in rows}
    assert by["RTX A5000"] > by["RTX A4000"]


def test_predict_table_says_where_its_factors_came_from(capsys, tmp_path):
    from documents import results as document_of

    results = document_of([]).save(tmp_path / "cpu.json")
    code, out, err = run(capsys, "predict", "--workload", "matmul", "--gpu", "A40", "--results", str(results))
    assert code == 0, err
    assert "a CPU cannot calibrate a GPU" in out.splitlines()[0]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["predict", "--precision", "fp6"], "unknown precision 'fp6'"),
        pytest.param(
            ["predict", "--workload", "resnet"], "unknown workload 'resnet'", marks=pytest.mark.tensorflow
        ),
        # a task suffix belongs to an encoder: a decoder has no SQuAD head
        pytest.param(
            ["predict", "--workload", "gpt2-small-squad"],
            "unknown workload 'gpt2-small-squad'",
            marks=pytest.mark.tensorflow,
        ),
        (["predict", "--gpus", "0"], "--gpus 0: give at least 1"),
        (["predict", "--gpus", "2", "--mode", "infer"], "--gpus predicts data-parallel training"),
        (["predict", "--batch", "0"], "batch size 0"),
        # 0 is a length given, not a length left out: it must not fall back to the default
        (
            ["predict", "--workload", "bert-base", "--seq-len", "0"],
            "takes sequences of 1 to 512 tokens, not 0",
        ),
        (["predict", "--gpu", "Z9000"], "Z9000"),
        (
            ["predict", "--workload", "resnet50", "--seq-len", "512"],
            "resnet50 has no sequence length; --seq-len applies to the transformer workloads",
        ),
        (["predict", "--results", "/nonexistent-folder/x.json"], "x.json"),
    ],
)
def test_predict_bad_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.tensorflow
def test_fit_seq_len_that_applies_to_no_model_is_an_error(capsys):
    code, _, err = run(
        capsys, "fit", "--model", "ResNet50", "--batch", "8", "--seq-len", "128", "--gpu", "A40"
    )
    assert code == 2
    assert err == (
        "gpukit: error: ResNet50: no sequence length to set; --seq-len applies to the built-in "
        "transformers and the Keras-layer token models\n"
    )


def test_a_plain_name_that_picks_a_variant_is_named(capsys):
    code, out, err = run(capsys, "cost", "--gpu", "A40", "--gpu", "V100", "--precision", "fp16")
    assert code == 0
    assert "'V100' is the V100 PCIe 16GB; also V100 SXM2 16GB, V100 SXM2 32GB" in out.splitlines()
    code, out, err = run(capsys, "cost", "--gpu", "V100", "--format", "csv")
    assert "gpukit: 'V100' is the V100 PCIe 16GB" in err and "'V100'" not in out


def test_the_cost_table_names_each_prices_kind_provider_and_date(capsys):
    code, out, _ = run(capsys, "cost", "--gpu", "RTX A4000", "--precision", "fp16")
    assert {"price kind", "price date", "cloud provider", "cloud date"} <= set(table_headers(out))


def test_a_cloud_question_prices_the_variant_clouds_rent(capsys):
    code, out, _ = run(capsys, "cost", "--gpu", "V100", "--price-kind", "cloud", "--format", "csv")
    (row,) = list(csv.DictReader(io.StringIO(out)))[:1]
    assert row["gpu"].startswith("V100 SXM2") and row["cloud_usd_per_hour"]
    code, out, _ = run(capsys, "cost", "--gpu", "V100", "--price-kind", "cloud")
    assert "'V100' is priced in the cloud as the V100 SXM2" in out
