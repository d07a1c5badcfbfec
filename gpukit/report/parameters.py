"""The report's parameters: which notebooks it renders, the parameters each declares, values
given by file or on the command line checked against them, and one job per rendering (a
head-to-head notebook once per pair of GPUs)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import papermill
import yaml

from ..errors import ParameterError, ReportError
from ..resources import NOTEBOOKS_DIR

#: The pairs a head-to-head notebook (one declaring ``gpu_a`` and ``gpu_b``) renders in the
#: default report; ``-p gpu_a``/``-p gpu_b`` render that one pair instead, and ``pairs`` add more.
DEFAULT_PAIRS = (("A40", "V100"), ("RTX A4000", "RTX A5000"))
PAIR_PARAMETERS = ("gpu_a", "gpu_b")


def discover_notebooks(notebooks_dir: Path | None = None, only: Iterable[str] | None = None) -> list[Path]:
    """The report's notebooks: ``NN_name.ipynb`` in ``notebooks_dir``, in number order.

    ``only`` keeps those whose stem or number prefix is named (``01_specs``, ``01``, ``specs``).
    """
    folder = Path(notebooks_dir) if notebooks_dir else NOTEBOOKS_DIR
    if not folder.is_dir():
        raise ReportError(f"notebook folder {folder} does not exist; pass --notebooks DIR")
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb") if p.is_file())
    if not found:
        raise ReportError(f"no notebooks named NN_name.ipynb in {folder}")
    if only:
        wanted = list(only)
        keep = []
        for w in wanted:
            hits = [p for p in found if w in (p.stem, p.name, p.stem[:2], p.stem[3:])]
            if not hits:
                names = ", ".join(p.stem for p in found)
                raise ReportError(f"no notebook {w!r} in {folder}; choose from {names}")
            keep.extend(h for h in hits if h not in keep)
        found = sorted(keep)
    return found


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The parameters a notebook declares: name -> {default, type, help} (from its parameters cell)."""
    try:
        raw = papermill.inspect_notebook(str(notebook))
    except Exception as exc:  # papermill raises several kinds for unreadable notebooks
        raise ReportError(f"cannot read the parameters of {notebook.name}: {exc}") from None
    out = {}
    for name, info in raw.items():
        try:
            default = yaml.safe_load(info["default"]) if info.get("default") is not None else None
        except yaml.YAMLError:
            default = info.get("default")
        out[name] = {
            "default": default,
            "type": info.get("inferred_type_name", "None"),
            "help": info.get("help", ""),
        }
    return out


def _type_name(value) -> str:
    return type(value).__name__


def _coerce(name: str, value, expected, notebook: str):
    """Check ``value`` against the notebook default's type; ints pass where floats are expected."""
    if expected is None or value is None:
        return value
    want = type(expected)
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
        raise ParameterError(
            f"parameter {name} of {notebook} expects {want.__name__} (default {expected!r}), "
            f"got {_type_name(value)} {value!r}"
        )
    return value


def parse_cli_value(text: str):
    """A ``-p NAME VALUE`` value: YAML scalars and lists (``3``, ``0.5``, ``true``, ``[A40, V100]``)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def load_params_file(path: str | os.PathLike) -> dict:
    """A YAML or JSON mapping of parameters; a notebook's stem as key scopes a nested mapping to it."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParameterError(f"parameters file {p} not found") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0]
        raise ParameterError(f"parameters file {p} is not valid YAML/JSON ({first})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParameterError(
            f"parameters file {p} must hold a mapping of name: value, not a {_type_name(data)}"
        )
    return data


def plan_parameters(
    notebooks: list[Path], overrides: Mapping | None = None, raw_cli: Mapping[str, str] | None = None
) -> dict[str, dict]:
    """Parameters for each notebook: every given name goes to the notebooks that declare it.

    ``overrides`` hold typed values (from a parameters file: a notebook's stem as key scopes
    a nested mapping to that notebook); ``raw_cli`` hold ``-p`` strings, parsed as YAML
    unless the notebook expects a string. An unknown name or a wrong type is a
    :class:`ParameterError`.
    """
    declared = {nb.stem: declared_parameters(nb) for nb in notebooks}
    plan: dict[str, dict] = {nb.stem: {} for nb in notebooks}
    everything = sorted({n for d in declared.values() for n in d})

    def unknown(name: str) -> ParameterError:
        close = difflib.get_close_matches(name, everything, n=2)
        hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(everything)}"
        return ParameterError(f"no notebook takes a parameter {name!r}; {hint}")

    def assign(name: str, value, stems: list[str], from_cli: bool) -> None:
        takers = [s for s in stems if name in declared[s]]
        if not takers:
            raise unknown(name)
        for s in takers:
            expected = declared[s][name]["default"]
            v = value
            if from_cli:
                v = value if isinstance(expected, str) else parse_cli_value(value)
            plan[s][name] = _coerce(name, v, expected, f"{s}.ipynb")

    for key, value in (overrides or {}).items():
        if key in declared and isinstance(value, dict):
            for name, v in value.items():
                assign(name, v, [key], from_cli=False)
        else:
            assign(key, value, list(declared), from_cli=False)
    for name, text in (raw_cli or {}).items():
        assign(name, text, list(declared), from_cli=True)
    return plan


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def plan_jobs(
    notebooks: list[Path], plan: Mapping[str, dict], pairs: Iterable[tuple[str, str]] | None = None
) -> list[tuple[Path, str, dict, str]]:
    """(notebook, output stem, parameters, title) for each rendering of the run.

    A notebook that declares ``gpu_a`` and ``gpu_b`` renders once per pair: the
    :data:`DEFAULT_PAIRS`, or the pair set with ``gpu_a``/``gpu_b``, then any ``pairs`` added.
    """
    jobs = []
    extra = [tuple(p) for p in (pairs or [])]
    for nb in notebooks:
        params = dict(plan[nb.stem])
        declared = declared_parameters(nb)
        if not all(p in declared for p in PAIR_PARAMETERS):
            jobs.append((nb, nb.stem, params, nb.stem))
            continue
        if any(p in params for p in PAIR_PARAMETERS):
            chosen = [
                (
                    params.get("gpu_a", declared["gpu_a"]["default"]),
                    params.get("gpu_b", declared["gpu_b"]["default"]),
                )
            ]
        else:
            chosen = list(DEFAULT_PAIRS)
        for a, b in chosen + [p for p in extra if p not in chosen]:
            stem = f"{nb.stem}--{_slug(a)}-vs-{_slug(b)}"
            jobs.append((nb, stem, {**params, "gpu_a": a, "gpu_b": b}, f"{nb.stem}: {a} vs {b}"))
    return jobs
