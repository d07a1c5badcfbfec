"""How far to trust the numbers: the README's table, generated from the kit's own gradings.

Each row's figure is computed here from the shipped data, the same way every answer quotes it:
- training speed per family (:func:`gpukit.perfmodel.accuracy_text`);
- the memory estimate's measured band (``data/memory_error.csv``);
- LLM decode and prefill for the current llama.cpp profile (:mod:`gpukit.llm.calibrate`);
- vLLM's KV pool (:func:`gpukit.llm.pool_validation`);
- serving at batch (:func:`gpukit.llm.serving_summary`).
The table sits between two markers in README.md; ``--write`` replaces it there, and
tests/test_readme.py fails when the README's table is not what this script makes.

    .venv/bin/python -m benchmarks.readme_trust --write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpukit import _atomic, grading, llm, perfmodel
from gpukit.llm import calibrate
from gpukit.memory.bands import error_bands

from ._report import table_head

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN = "<!-- trust table: benchmarks/readme_trust.py writes it -->"
END = "<!-- end of trust table -->"


def _share(s: dict, tolerance: float) -> str:
    return (
        f"{s['within_tolerance']} of {s['pairs']} published same-source pairs within ±{tolerance:.0%}, "
        f"median error {s['median_abs_error_pct']:.1f}%"
    )


def rows() -> list[tuple[str, str, str]]:
    """(what is predicted, its measured error, the page that grades it)."""
    out = [
        (f"training speed, {name}", perfmodel.accuracy_text(family), "docs/accuracy/perfmodel.md")
        for name, family in (("CNNs", "CNN"), ("transformers", "transformer"), ("several GPUs", "scaling"))
    ]
    for (family, mode), band in sorted(error_bands().items()):
        if mode != "train":
            continue
        out.append(
            (
                f"training memory, {family}",
                f"median error {band['median_abs_error']:.0%}, {band['error_low']:+.0%} to {band['error_high']:+.0%} "
                f"over {band['cases']} measured cases",
                "docs/accuracy/memory.md",
            )
        )
    engine = llm.ENGINES["llama.cpp"]
    for test, what in (("tg", "decode"), ("pp", "prefill")):
        s = grading.summarize(calibrate.grade(calibrate.runs(engine, test), engine, test))
        out.append(
            (
                f"LLM {what}, {engine.label}",
                _share(s, calibrate.TOLERANCES[test].speedup),
                "docs/accuracy/llm.md",
            )
        )
    pool = llm.pool_validation()
    out.append(
        (
            "LLM serving memory, vLLM's KV pool",
            f"{pool['within']} of {pool['logs']} published vLLM startup logs within ±{pool['tolerance']:.0%}, "
            f"median error {pool['median_abs_error_pct']:.1f}%",
            "docs/accuracy/kv-pool.md",
        )
    )
    out.append(
        (
            "LLM serving at batch, TensorRT-LLM",
            _share(llm.serving_summary(), llm.SERVING_TOLERANCE.speedup),
            "docs/accuracy/llm.md",
        )
    )
    return out


def table() -> str:
    """The Markdown table between the README's markers."""
    lines = table_head("| prediction | measured error | graded on |", "lll")
    lines += [
        f"| {what} | {error} | [{page.removeprefix('docs/')}]({page}) |" for what, error, page in rows()
    ]
    return "\n".join(lines)


def with_table(readme: str, body: str) -> str:
    """``readme`` with the text between the markers replaced by ``body``; a clear error without them."""
    if BEGIN not in readme or END not in readme:
        sys.exit(f"README.md has no {BEGIN!r} ... {END!r} markers to write the table between")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}\n{END}{tail}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="write the table into README.md (default: print it)"
    )
    args = parser.parse_args(argv)
    body = table()
    if args.write:
        _atomic.write_text(README, with_table(README.read_text(), body))
        print(f"written to {README.relative_to(ROOT)}")
    else:
        print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
