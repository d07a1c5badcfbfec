"""How the measuring processes ran, per family: TensorFlow's inter-op threads, its CPU kernels and the
CPU's 16-bit instructions, as every run recorded them."""

from __future__ import annotations

from gpukit import memory

from .cases import native_16bit


def _per_family(rows: list[dict], labels) -> str:
    """What the runs recorded, per family (``labels(row)``: a row's labels, None for runs from before
    it was recorded), said once where every family recorded the same."""
    per: dict[str, set] = {}
    for r in rows:
        per.setdefault(r["family"], set()).update(labels(r))
    said = {}
    for fam, used in sorted(per.items()):
        known = "/".join(sorted(used - {None}))
        said[fam] = " and ".join(part for part in (known, "not recorded" if None in used else "") if part)
    if len(set(said.values())) == 1:
        return f"{next(iter(said.values()))} in every family"
    return "; ".join(f"{fam}: {text}" for fam, text in said.items())


def _recorded(key: str, say=str):
    """``labels`` for :func:`_per_family`: what every run of a row recorded under ``key``."""
    return lambda r: [say(v) for v in r[key]] if r.get(key) else [None]


def _native_label(row: dict) -> list:
    native = native_16bit(row)
    return [None] if native is None else ["+".join(native) or "none"]


def conditions_lines(rows: list[dict]) -> list[str]:
    """How the measuring processes ran, per family: TensorFlow's inter-op threads, its CPU kernels and
    the CPU's 16-bit instructions."""
    return [
        "- TensorFlow's inter-op threads in the measuring process (`gpukit.memory.measure_env`: at least "
        f"{memory.MEASURE_INTER_OP_THREADS}; with one, a recurrent layer's backward loop runs ahead, "
        f"`docs/accuracy/rnn-runahead.md`): {_per_family(rows, _recorded('inter_op_threads'))}",
        "- its CPU kernels (`gpukit.memory.MEASURE_ONEDNN`: oneDNN's, as TensorFlow's Eigen kernels, its default "
        "on CPUs without AVX-512 VNNI/BF16, AVX-VNNI or AMX, hold convolution-gradient buffers a GPU does not; "
        "Eigen's for models with LSTM or GRU layers, `MEASURE_ONEDNN_RECURRENT`, as under oneDNN's an LSTM's "
        "backward loop runs ahead in some runs): "
        + _per_family(rows, _recorded("onednn", lambda v: "oneDNN" if v else "Eigen")),
        "- the 16-bit formats the CPU of each 16-bit run had dot-product instructions for "
        "(`gpukit.bench.device.cpu_native_16bit`; without them a 16-bit matrix multiply works through float32 copies): "
        + "; ".join(
            f"{p} cases: {_per_family([r for r in rows if r['precision'] == p], _native_label)}"
            for p in ("bf16", "fp16")
            if any(r["precision"] == p for r in rows)
        ),
    ]
