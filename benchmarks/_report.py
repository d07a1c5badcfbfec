"""What every script under benchmarks/ does with the Markdown it makes: print it, and with
``--write FILE`` also write it there atomically (a reader never sees half a report)."""

from __future__ import annotations

import argparse
import sys

from gpukit import _atomic


def page_main(markdown, description: str, argv=None) -> int:
    """A page script's command line: ``--write FILE`` publishes ``markdown()`` there as well."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="also write the Markdown to FILE")
    args = parser.parse_args(argv)
    publish(markdown(), args.write)
    return 0


def publish(text: str, path: str | None) -> None:
    """Print ``text``; when ``path`` is given, write it there too and say so on stderr."""
    print(text)
    if path:
        _atomic.write_text(path, text)
        print(f"written to {path}", file=sys.stderr)


def held_out_table(held, key: str, unit: str) -> list[str]:
    """A bandwidth-only profile's fit with each ``key`` (gpu or model) of its runs held out
    (:func:`gpukit.llm.calibrate.held_out_bandwidth_profile`), beside the bare datasheet bandwidth,
    as Markdown table lines; ``unit`` names what unpacks the weights (a core, a compute unit)."""
    lines = [
        *table_head(
            "| held out | runs | fitted without it | within ±20% | median error "
            "| bare bandwidth: within ±20% | bare bandwidth: median error |",
            "lllllll",
        ),
    ]
    for _, r in held.iterrows():
        v = r["fitted_without_it"]
        lines.append(
            f"| {r[key]} | {r['runs']} | share {v['stream_share']:g}, {v['core_ops_per_s']:.3g} ops/s {unit} "
            f"| {r['within_20_pct']} | {r['median_abs_error_pct']:.1f}% | {r['bare_bandwidth_within_20_pct']} "
            f"| {r['bare_bandwidth_median_abs_error_pct']:.1f}% |"
        )
    return lines


def table_head(header: str, align: str) -> list[str]:
    """A Markdown table's first two lines: ``header`` (``"| a | b |"``) and the rule under it, a
    column left-aligned for each ``l`` of ``align`` and right-aligned (figures) for each ``r``;
    an error where the header has another number of columns than ``align`` says."""
    columns = header.strip().strip("|").count("|") + 1
    if columns != len(align) or set(align) - {"l", "r"}:
        raise ValueError(f"table header of {columns} columns, aligned {align!r}: {header}")
    return [header, "|" + "".join("---:|" if a == "r" else "---|" for a in align)]
