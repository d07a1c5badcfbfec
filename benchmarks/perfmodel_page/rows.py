"""The table rows several sections of docs/accuracy/perfmodel.md share: a graded pair of GPUs, an error."""

from __future__ import annotations

import pandas as pd

from .._report import table_head


def pct(v: float) -> str:
    return f"{v:+.1f}%"


def pair_rows(frame: pd.DataFrame) -> list[str]:
    out = [
        *table_head(
            "| source | workload | precision | faster | slower | published | predicted | error |", "llllllll"
        ),
    ]
    for _, r in frame.iterrows():
        out.append(
            f"| {r['source']} | {r['workload']} | {r['precision']} | {r['gpu_a']} | {r['gpu_b']} | "
            f"{r['published_speedup']:.3f} | {r['predicted_speedup']:.3f} | {pct(r['error_pct'])} |"
        )
    return out
