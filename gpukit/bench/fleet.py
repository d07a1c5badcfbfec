"""Results from many machines: merge a folder of results documents, never averaging across runs.

``gpukit report --results DIR`` (and the notebooks' ``results_dir`` parameter) read every
``*.json`` in a folder — one results document per machine or run, as ``gpukit bench --out``
writes them. :func:`load_folder`:

* reads each document (:func:`gpukit.bench.results.load`; older schema versions are upgraded in
  memory); a corrupt, truncated or newer-version file is reported by name with the reason and
  skipped;
* groups the documents by environment (the device and the TensorFlow version): documents of
  different environments are kept apart, each row labelled with its file and environment, and
  nothing is averaged across documents;
* never writes to the folder or its files.

Measured rows replace predicted ones per GPU (:func:`gpukit.perfmodel.predict_table` and
:func:`gpukit.compare.compare` take the list of documents); where two documents measured the
same configuration on the same GPU, the newest is used and the note says how many there were.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import DataError, GpukitError
from . import results as res
from .results import Results


@dataclass
class Fleet:
    folder: str
    documents: list[Results] = field(default_factory=list)  # readable results documents, each naming its file
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (file name, reason)

    @property
    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for doc in self.documents:
            out.setdefault(doc.environment_key, []).append(doc.source)
        return out

    def records(self) -> pd.DataFrame:
        """Every record of every benchmark document, labelled with its file and environment."""
        frames = []
        for doc in self.documents:
            if doc.kind == "scaling":
                continue
            f = doc.frame()
            f.insert(0, "environment", doc.environment_key)
            f.insert(0, "file", doc.source)
            frames.append(f)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def rejected_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rejected, columns=["file", "reason"])

    def summary(self) -> str:
        return (
            f"{len(self.documents)} results document(s) in {len(self.groups)} environment(s) from "
            f"{self.folder}; {len(self.rejected)} skipped"
        )


def load_folder(folder: str | os.PathLike) -> Fleet:
    """Read every ``*.json`` of ``folder`` (read-only); see the module doc."""
    path = Path(folder)
    if not path.is_dir():
        raise GpukitError(
            f"results folder {path} does not exist; give a folder of `gpukit bench --out` files"
        )
    fleet = Fleet(str(path))
    for file in sorted(path.glob("*.json")):
        try:
            doc = res.load(file)
        except DataError as exc:
            reason = str(exc.problems[0].message) if exc.problems else str(exc)
            fleet.rejected.append((file.name, reason))
            continue
        except OSError as exc:
            fleet.rejected.append((file.name, f"unreadable: {exc.strerror or exc}"))
            continue
        fleet.documents.append(doc)
    return fleet


def load_results(path: str | os.PathLike, warn=None) -> list[Results]:
    """The results documents a command's ``--results`` names: one file, or every readable file of
    a folder (those that cannot be read are named through ``warn``, one line each, and skipped)."""
    if Path(path).is_dir():
        fleet = load_folder(path)
        for name, reason in fleet.rejected:
            (warn or _stderr)(f"gpukit: skipped {name}: {reason}")
        return fleet.documents
    return [res.load(path)]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def documents(
    results_file: str | os.PathLike | None = None, results_dir: str | os.PathLike | None = None
) -> list[Results]:
    """The measurements a notebook merges: the results document at ``results_file`` (empty: the
    one this report run's benchmark saved, if any), followed by a folder's documents (if any)."""
    here = res.load_for_report(results_file or None)
    docs = [here] if here else []
    if results_dir:
        docs += load_folder(results_dir).documents
    return docs


class _View:
    """The merged folder for a notebook: summary, every record labelled, the files skipped."""

    def __init__(self, fleet: Fleet | None):
        self.fleet = fleet

    def _repr_html_(self) -> str:
        import html

        from ..present.tables import show

        if self.fleet is None:
            return (
                "<p>No results folder given (<code>results_dir</code>, or <code>gpukit report --results "
                "DIR</code>): only this machine's measurements are shown.</p>"
            )
        parts = [f"<p>{html.escape(self.fleet.summary())}.</p>"]
        for env, files in self.fleet.groups.items():
            parts.append(f"<p><b>{html.escape(env)}</b>: {html.escape(', '.join(files))}</p>")
        records = self.fleet.records()
        if len(records):
            cols = [
                "file",
                "environment",
                "configuration",
                "precision",
                "status",
                "throughput",
                "unit",
                "peak_fraction",
                "note",
            ]
            parts.append(show(records[cols]).to_html())
        if self.fleet.rejected:
            parts.append("<p><b>Skipped</b> (the files are left as they are):</p>")
            parts.append(show(self.fleet.rejected_frame()).to_html())
        return "".join(parts)

    def __repr__(self) -> str:
        return self.fleet.summary() if self.fleet else "no results folder"


def view(results_dir: str | os.PathLike | None) -> _View:
    return _View(load_folder(results_dir) if results_dir else None)
