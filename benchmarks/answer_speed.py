"""How long a buyer waits for an answer: each question as a whole ``gpukit`` process, timed, and
the whole report.

The questions are the ones people ask before they buy or rent, each answered by one command.
A cold run has a cache of derived results (``gpukit.cache``) of its own that starts empty, as on
a machine where the kit was just installed or its data changed; ``--cold-runs`` of them give the
cold answer (their median, target 3 s), then ``--runs`` more read what the last one kept: the warm
answer (their median, target 2 s).

The report (``gpukit report``, every notebook with its defaults) runs once with the cache empty and
then ``--report-runs`` more times; its target is 60 s.

    .venv/bin/python -m benchmarks.answer_speed                           # print the tables
    .venv/bin/python -m benchmarks.answer_speed --write docs/accuracy/answer-speed.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from gpukit.bench import device

from ._report import publish, table_head

TARGET_S = 2.0
COLD_TARGET_S = 3.0
REPORT_TARGET_S = 60.0

#: (the question, the command that answers it).
QUESTIONS = (
    (
        "I train BERT-base at 128 tokens in mixed precision: RTX A4000 or RTX A5000, per dollar?",
        [
            "compare",
            "RTX A4000",
            "RTX A5000",
            "--workloads",
            "bert-base",
            "--seq-len",
            "128",
            "--precision",
            "fp16",
        ],
    ),
    (
        "I have $2,000: which GPU gives me the most transformer training throughput?",
        ["rank", "--workload", "bert-base", "--seq-len", "128", "--budget", "2000"],
    ),
    (
        "What does a dense FP16 TFLOP-hour cost on an A40 and a V100 in the cloud?",
        ["cost", "--gpu", "A40", "--gpu", "V100", "--precision", "fp16", "--price-kind", "cloud"],
    ),
    (
        "Which GPU trains ResNet-50 for the least money in the cloud?",
        ["rank", "--workload", "resnet50", "--price-kind", "cloud"],
    ),
    (
        "Which GPU generates Llama 3 8B tokens for the least money in the cloud?",
        ["rank", "--llm", "llama-3-8b", "--price-kind", "cloud"],
    ),
)


#: The README's questions and their commands (its "Questions → commands" block), each timed too; the
#: device benchmark is left out (it measures, for a minute), and a figure's ``--plot`` (a file) too.
README = Path(__file__).resolve().parents[1] / "README.md"


def readme_questions() -> list[tuple[str, list[str]]]:
    """(the question, the command) of every line of the README's commands block but ``bench``."""
    import re
    import shlex

    text = README.read_text()
    block = text.split("## Questions → commands", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    out = []
    for line in block.splitlines():
        if not line.startswith(".venv/bin/gpukit "):
            continue
        command, _, question = line.partition("#")
        argv = shlex.split(command)[1:]
        if argv[0] == "bench":
            continue
        if "--plot" in argv:
            at = argv.index("--plot")
            argv = argv[:at] + argv[at + 2 :]
        question = re.sub(r"\s+", " ", question).strip()
        out.append((question[:1].upper() + question[1:] or " ".join(argv), argv))
    return out


def questions() -> list[tuple[str, list[str]]]:
    """:data:`QUESTIONS`, then the README's that are not among them."""
    seen = {tuple(argv) for _, argv in QUESTIONS}
    return [*QUESTIONS, *[(q, a) for q, a in readme_questions() if tuple(a) not in seen]]


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one whole ``gpukit`` process (its output read and dropped)."""
    exe = Path(sys.executable).with_name("gpukit")
    start = time.perf_counter()
    done = subprocess.run([str(exe), *argv], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"gpukit {' '.join(argv)} failed: {done.stderr.strip()}")
    return seconds


def cold_then_warm(argv: list[str], runs: int, keep_cache: bool) -> tuple[float, list[float]]:
    """The first run of ``argv`` (in a cache of derived results of its own, empty, unless
    ``keep_cache``: cold) and ``runs`` more (reading what it kept: warm)."""
    with tempfile.TemporaryDirectory() as empty:
        env = os.environ.copy() if keep_cache else {**os.environ, "GPUKIT_CACHE_DIR": empty}
        return timed(argv, env), [timed(argv, env) for _ in range(runs)]


def question_times(
    argv: list[str], runs: int, cold_runs: int, keep_cache: bool
) -> tuple[list[float], list[float]]:
    """``cold_runs`` cold runs of ``argv``, each in an empty cache of its own (one slow or lucky run
    must not decide the cold answer), and the warm runs after the last of them."""
    cold = []
    for _ in range(cold_runs - 1):
        cold.append(cold_then_warm(argv, 0, keep_cache)[0])
    first, warm = cold_then_warm(argv, runs, keep_cache)
    return [*cold, first], warm


def report_times(runs: int, keep_cache: bool) -> tuple[float, list[float]]:
    """Wall seconds of ``gpukit report`` into a scratch folder, cold and then ``runs`` times warm."""
    with tempfile.TemporaryDirectory() as out:
        return cold_then_warm(["report", "--out", out], runs, keep_cache)


def markdown(runs: int, report_runs: int, keep_cache: bool = False, cold_runs: int = 3) -> str:
    timings = [(q, argv, *question_times(argv, runs, cold_runs, keep_cache)) for q, argv in questions()]
    warm_met = cold_met = met = 0
    rows = []
    for question, argv, colds, times in timings:
        median, first = statistics.median(times), statistics.median(colds)
        warm, cold = median <= TARGET_S, first <= COLD_TARGET_S
        warm_met, cold_met, met = warm_met + warm, cold_met + cold, met + (warm and cold)
        rows.append(
            f"| {question} | `gpukit {' '.join(_quoted(a) for a in argv)}` | "
            f"{first:.2f} ({min(colds):.2f}–{max(colds):.2f}) | "
            f"{median:.2f} ({min(times):.2f}–{max(times):.2f}) | {'yes' if warm and cold else 'no'} |"
        )
    first_report, reports = report_times(report_runs, keep_cache)
    report_median = statistics.median(reports)
    return "\n".join(
        [
            "# How long an answer takes",
            "",
            f"Written by `benchmarks/answer_speed.py` on {datetime.now(UTC):%Y-%m-%d}: each question as a whole "
            f"`gpukit` process, {cold_runs} times cold (each in a cache of derived results of its own, empty, "
            f"as just after installing or a data change), then {runs} times warm.",
            f"Machine: {device.cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, no GPU.",
            "",
            f"**{met} of {len(rows)} questions answer within both targets**: {warm_met} within {TARGET_S:g} s "
            f"warm, {cold_met} within {COLD_TARGET_S:g} s cold (medians).",
            "",
            *table_head(
                "| question | command | cold, median (min–max), s | warm, median (min–max), s | within targets |",
                "llrrl",
            ),
            *rows,
            "",
            "The cold run computes what the cache keeps (the grading of the published runs against the "
            "performance and LLM models, the prices as loaded and checked) and reads the layer walks of the "
            "Keras models these questions name from the ones the kit ships (`make walks`), so it loads no "
            "TensorFlow; warm runs read the cache back.",
            "",
            "## The report",
            "",
            f"`gpukit report` with every notebook's defaults, the notebooks two at a time after the benchmark: "
            f"{first_report:.1f} s on the first run (its cache empty), then {report_median:.1f} s "
            f"(median of {len(reports)} runs, "
            f"{min(reports):.1f}–{max(reports):.1f} s). Target {REPORT_TARGET_S:g} s: "
            f"{'met' if report_median <= REPORT_TARGET_S else 'not met'} once the cache is filled, "
            f"{'met' if first_report <= REPORT_TARGET_S else 'not met'} on the first run. Each notebook's time "
            "is on the index of every report (`outputs/latest/index.html`, section Run time).",
        ]
    )


def _quoted(arg: str) -> str:
    return f'"{arg}"' if " " in arg else arg


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs after the first (default 5)")
    parser.add_argument("--cold-runs", type=int, default=3, help="cold runs of each question (default 3)")
    parser.add_argument("--report-runs", type=int, default=2, help="report runs after the first (default 2)")
    parser.add_argument(
        "--keep-cache", action="store_true", help="time against the cache as it is, not an empty one"
    )
    parser.add_argument("--write", metavar="FILE", help="also write the Markdown here")
    args = parser.parse_args(argv)
    publish(markdown(args.runs, args.report_runs, args.keep_cache, args.cold_runs), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
