"""GPUs by natural names: a name resolved to a catalogue GPU ("v100 sxm2 32gb", "NVIDIA
A100-PCIE-40GB", "rtx 4090"), once, into a :class:`GPU` record the layers below take; the default
variant of a plain family name; rows of other data files whose GPU names are resolved alike."""

from __future__ import annotations

import difflib
import math
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..errors import Problem, UnknownGPUError
from .catalogue import load_catalogue

#: Words a name may carry or leave out: brand and product-line words, and the generation and
#: edition words of the newer workstation names ("RTX 6000 Ada Generation", "RTX PRO 6000
#: Blackwell Workstation Edition"), so "6000 Ada" and "RTX PRO 6000" find them; AMD's brand words
#: too ("AMD Instinct MI300X", "Radeon RX 7900 XTX": "MI300X", "7900 XTX").
_NOISE = {
    "nvidia",
    "tesla",
    "geforce",
    "quadro",
    "rtx",
    "gpu",
    "tensor",
    "core",
    "card",
    "generation",
    "edition",
    "workstation",
    "blackwell",
    "amd",
    "apple",
    "instinct",
    "radeon",
    "rx",
}
#: Other names of a catalogue device, as :func:`_key` reduces them: the chip or the code name a
#: machine is known by (a DGX Spark is NVIDIA's GB10; a Ryzen AI Max+ 395 is "Strix Halo", its GPU
#: the Radeon 8060S).
_ALIASES = {
    "spark": "dgxspark",
    "gb10": "dgxspark",
    "strixhalo": "ryzenaimax+395",
    "8060s": "ryzenaimax+395",
    "aimax+395": "ryzenaimax+395",
}
_MEMORY_TYPES = {"hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6", "gddr6x", "gddr7"}
_FORMS = ("pcie", "sxm", "sxm2", "sxm4", "sxm5")


@dataclass(frozen=True)
class _Key:
    model: str
    form: str | None
    memory_gb: int | None
    memory_type: str | None = None


@lru_cache(maxsize=1024)
def _key(name: str) -> _Key:
    text = name.casefold().replace("-", " ").replace("_", " ").replace("/", " ")
    text = re.sub(r"\([^)]*\)", " ", text)  # a qualifier such as "(per GPU)" names no variant
    text = re.sub(r"(\d+)\s*gb\b", r"\1gb", text)
    model, form, memory, mtype = [], None, None, None
    tokens = text.split()
    for i, tok in enumerate(tokens):
        if tok in _NOISE:
            continue
        if tok == "pro" and i + 1 < len(tokens) and re.fullmatch(r"w\d+\w*", tokens[i + 1]):
            continue  # AMD's "Radeon PRO W7900": the W names the workstation line already
        if tok in _MEMORY_TYPES:
            mtype = tok
            continue
        m = re.fullmatch(r"(\d+)gb", tok)
        if m:
            memory = int(m.group(1))
        elif tok in _FORMS:
            form = tok
        else:
            model.append(re.sub(r"^(rtx|gtx)(?=\w)", "", tok))
    joined = "".join(model)
    return _Key(_ALIASES.get(joined, joined), form, memory, mtype)


def _family(name: str) -> str:
    """The family a canonical name belongs to, e.g. 'V100' for 'V100 SXM2 32GB'."""
    words = [w for w in name.split() if w.casefold() not in _FORMS and not re.fullmatch(r"\d+GB", w, re.I)]
    return " ".join(words)


def _pick_default(variants: list[tuple]) -> tuple:
    """The documented default among variants ``(gpu, form factor, memory GB, memory type)``, in
    catalogue order: a PCIe card first, then the most memory, then the first listed."""

    def rank(item):
        order, (_, form, memory, _) = item
        return form != "PCIe", -float(memory) if memory == memory else math.inf, order

    return min(enumerate(variants), key=rank)[1]


@dataclass(frozen=True)
class Resolution:
    """How a name was resolved: the canonical ``gpu`` and whether a default variant was chosen."""

    query: str
    gpu: str
    defaulted: bool
    variants: tuple[str, ...]  # every variant of the family
    matches: tuple[str, ...] = ()  # the variants the name fits (all of them for a bare family name)

    def describe(self) -> str:
        if not self.defaulted:
            return f"{self.query!r} -> {self.gpu}"
        others = ", ".join(v for v in self.variants if v != self.gpu)
        return f"{self.query!r} -> {self.gpu} (default variant; others: {others})"


@dataclass
class _Index:
    """What name lookups read of one catalogue frame, built once per frame: its names' keys, the
    fields a variant is picked by, its rows by name, and the names already resolved."""

    frame: weakref.ref
    rows: list[tuple]
    keys: list[_Key]
    positions: dict[str, int]
    resolved: dict[str, Resolution]
    series: dict[str, pd.Series]


_INDEXES: dict[int, _Index] = {}


def _index(cat: pd.DataFrame) -> _Index:
    """The :class:`_Index` of ``cat`` (a frame is never changed in place once looked up in: the
    kit copies before it changes one)."""
    found = _INDEXES.get(id(cat))
    if found is not None and found.frame() is cat:
        return found
    names = list(cat["gpu"])
    built = _Index(
        weakref.ref(cat),
        list(zip(names, cat["form_factor"], cat["memory_gb"], cat["memory_type"])),
        [_key(g) for g in names],
        {g: i for i, g in enumerate(names)},
        {},
        {},
    )
    if len(_INDEXES) > 64:  # frames of tests and notebooks come and go
        _INDEXES.clear()
    _INDEXES[id(cat)] = built
    return built


def resolve(name: str, catalogue: pd.DataFrame | None = None) -> Resolution:
    """Resolve a natural GPU name to a catalogue row.

    Case-insensitive; "NVIDIA", "Tesla", "GeForce", "RTX" are optional; a form factor
    (``PCIe``, ``SXM``, ``SXM2``…), memory size (``32GB``) or memory type (``HBM3``, as
    nvidia-smi names an H100 SXM5) picks a variant. A bare family
    name that has several variants resolves to the default one: a PCIe card if there is one,
    then the one with the most memory. Unknown names raise :class:`UnknownGPUError` with
    suggestions.
    """
    cat = load_catalogue() if catalogue is None else catalogue
    if not isinstance(name, str) or not name.strip():
        raise UnknownGPUError("empty GPU name; give a name such as 'A40' or 'V100 SXM2 32GB'")
    index = _index(cat)
    known = index.resolved.get(name)
    if known is None:
        known = index.resolved[name] = _resolve(name, cat, index.rows, index.keys)
    return known


def _resolve(name: str, cat: pd.DataFrame, rows: list[tuple], keys: list[_Key]) -> Resolution:
    q = _key(name)
    family = [r for r, k in zip(rows, keys) if k.model == q.model]
    if not family:
        models = sorted({_family(g) for g in cat["gpu"]})
        by_model = {k.model: _family(g) for k, g in zip(keys, cat["gpu"])}
        close = difflib.get_close_matches(q.model, list(by_model), n=3, cutoff=0.5)
        close_names = [by_model[c] for c in close] or difflib.get_close_matches(name, models, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(close_names)}? " if close_names else ""
        raise UnknownGPUError(f"unknown GPU {name!r}; {hint}`gpukit specs` lists all {len(cat)} GPUs")
    _refuse_bare_number(name, q, [k.model for k in keys], family[0][0], cat["gpu"])
    variants = tuple(r[0] for r in family)
    matches = [
        r
        for r in family
        if (q.form is None or r[1].casefold().startswith(q.form))
        and (q.memory_gb is None or float(r[2]) == q.memory_gb)
        and (q.memory_type is None or r[3].casefold() == q.memory_type)
    ]
    if not matches:
        raise UnknownGPUError(
            f"no {_family(variants[0])} variant matches {name!r}; it comes as: {', '.join(variants)}"
        )
    return Resolution(
        name,
        _pick_default(matches)[0],
        defaulted=len(matches) > 1,
        variants=variants,
        matches=tuple(r[0] for r in matches),
    )


def _refuse_bare_number(name: str, q: _Key, models: list[str], exact: str, names) -> None:
    """A bare model number that several cards carry ("4070": the 4070, 4070 Super, 4070 Ti and 4070
    Ti Super) names none of them: list them and ask. With a brand word it names the plain card
    ("RTX 4070"), as the product is called."""
    if not re.sub(r"\d+\s*gb\b", "", name.casefold()).strip().isdigit():
        return
    longer = sorted(
        {g for g, m in zip(names, models) if m.startswith(q.model) and m[len(q.model) :].isalpha()}
    )
    if longer:
        cards = ", ".join([exact, *longer])
        raise UnknownGPUError(
            f"{name!r} fits {len(longer) + 1} GPUs: {cards}; say which (e.g. 'RTX {q.model}' for the {exact})"
        )


@dataclass(frozen=True, eq=False)
class GPU:
    """A catalogue GPU, resolved once where its name came in (a command's argument, a notebook's
    parameter, a library call), so that the layers below take the record instead of resolving the
    name again: the canonical :attr:`name`, its catalogue :attr:`row`, and how the name given was
    read (:attr:`resolution`), so that an answer can say which variant a plain name picked. It
    reads like its row (``gpu["memory_gb"]``, ``gpu.get("l2_cache_mib")``)."""

    row: pd.Series
    resolution: Resolution

    @property
    def name(self) -> str:
        return self.resolution.gpu

    def __getitem__(self, column: str):
        return self.row[column]

    def get(self, column: str, default=None):
        return self.row.get(column, default)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"GPU({self.name!r})"

    @property
    def variant_note(self) -> str | None:
        """Where a plain name picked one variant of several, a sentence that says so ("'V100' is
        the V100 PCIe 16GB; also V100 SXM2 16GB, V100 SXM2 32GB"); else None."""
        r = self.resolution
        if not r.defaulted:
            return None
        others = ", ".join(v for v in r.matches if v != r.gpu)
        return f"{r.query!r} is the {r.gpu}; also {others}"


def gpu(name: str | GPU, catalogue: pd.DataFrame | None = None) -> GPU:
    """The :class:`GPU` a natural name means (:func:`resolve`); a :class:`GPU` is returned as it is."""
    if isinstance(name, GPU):
        return name
    cat = load_catalogue() if catalogue is None else catalogue
    res = resolve(name, cat)
    return GPU(row(cat, res.gpu), res)


def gpus(catalogue: pd.DataFrame | None = None, names: Iterable[str | GPU] | str | None = None) -> list[GPU]:
    """The :class:`GPU` records of ``names`` in the order given (duplicates dropped), or of every
    catalogue GPU when ``names`` is empty."""
    cat = load_catalogue() if catalogue is None else catalogue
    if names is None or (not isinstance(names, str | GPU) and len(list(names)) == 0):
        return [
            GPU(r, Resolution(r["gpu"], r["gpu"], False, (r["gpu"],), (r["gpu"],))) for _, r in cat.iterrows()
        ]
    out: list[GPU] = []
    for n in [names] if isinstance(names, str | GPU) else names:
        g = gpu(n, cat)
        if all(o.name != g.name for o in out):
            out.append(g)
    return out


def row(catalogue: pd.DataFrame, name: str) -> pd.Series:
    """The catalogue row of a canonical GPU name (as ``data/gpus.csv`` spells it)."""
    index = _index(catalogue)
    if name not in index.series:
        if name not in index.positions:
            raise UnknownGPUError(f"{name!r} is not a GPU of this catalogue; `gpukit specs` lists them")
        index.series[name] = catalogue.iloc[index.positions[name]]
    return index.series[name]


def lookup(name: str | GPU, catalogue: pd.DataFrame | None = None) -> pd.Series:
    """The catalogue row (a Series) for a natural GPU name; see :func:`resolve`."""
    return gpu(name, catalogue).row


def select(catalogue: pd.DataFrame, names: Iterable[str | GPU] | str | GPU | None = None) -> pd.DataFrame:
    """Rows for ``names`` (natural names or :class:`GPU` records, which are not resolved again) in
    the order given (duplicates dropped); all rows when empty."""
    if names is None or (not isinstance(names, str | GPU) and len(list(names)) == 0):
        return catalogue.reset_index(drop=True)
    if isinstance(names, str | GPU):
        names = [names]
    chosen: list[str] = []
    for n in names:
        g = n.name if isinstance(n, GPU) else resolve(n, catalogue).gpu
        if g not in chosen:
            chosen.append(g)
    order = {g: i for i, g in enumerate(chosen)}
    out = catalogue[catalogue["gpu"].isin(chosen)].copy()
    out["_order"] = out["gpu"].map(order)
    return out.sort_values("_order").drop(columns="_order").reset_index(drop=True)


def load_measurements(
    path: Path,
    schema,
    key,
    what: str,
    catalogue: pd.DataFrame | None = None,
    today=None,
    checks=(),
    kind: str = "measurement",
) -> pd.DataFrame:
    """The one way a file of published measurements is read: parsed against ``schema``, each row's
    own ``checks`` (``check(path, parsed) -> problems``), its GPU resolved against the catalogue and
    a row whose ``key`` repeats an earlier line's refused (``what`` names the key); every problem
    together in one :class:`~gpukit.errors.DataError`, naming file, line and column."""
    from datetime import date

    from .._csv import parse_rows, to_frame
    from ..errors import DataError

    cat = load_catalogue() if catalogue is None else catalogue
    parsed, problems = parse_rows(path, schema, today or date.today(), kind)
    for check in checks:
        problems += check(path, parsed)
    records = resolve_rows(path, parsed, cat, key, problems, what)
    if problems:
        raise DataError(problems)
    return to_frame(records, schema)


def resolve_rows(
    path: Path, rows: list[tuple[int, dict]], catalogue, key, problems: list[Problem], what: str
) -> list[dict]:
    """Resolve each row's ``gpu`` against the catalogue (canonical names) and drop rows whose
    ``key(row)`` repeats an earlier line; problems are appended, naming line and column."""
    seen: dict[tuple, int] = {}
    names: dict[str, str | UnknownGPUError] = {}  # each spelling resolved once
    kept = []
    for line, row in rows:
        name = row["gpu"]
        if name not in names:
            try:
                names[name] = resolve(name, catalogue).gpu
            except UnknownGPUError as exc:
                names[name] = exc
        if isinstance(names[name], UnknownGPUError):
            problems.append(Problem(path, line, "gpu", str(names[name]), name))
            continue
        row["gpu"] = names[name]
        k = key(row)
        if k in seen:
            problems.append(
                Problem(path, line, None, f"repeats line {seen[k]} ({what}); keep one", row["gpu"])
            )
            continue
        seen[k] = line
        kept.append(row)
    return kept
