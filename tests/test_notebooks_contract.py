"""The notebook contract: committed clean, one parameters cell, thin code cells."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import papermill
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_report_notebooks():
    assert [p.name for p in NOTEBOOKS if re.match(r"\d\d_", p.name)], "no NN_name.ipynb notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    assert "papermill" not in nb["metadata"]
    assert nb["metadata"]["kernelspec"]["name"] == "gpukit"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_one_parameters_cell_with_documented_lines(path):
    nb = json.loads(path.read_text())
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    source = "".join(tagged[0]["source"])
    lines = [ln for ln in source.splitlines() if ln.strip()]
    declared = papermill.inspect_notebook(str(path))
    assert len(declared) == len(lines), "every line of the parameters cell must parse as name = value  # help"
    for name, info in declared.items():
        assert info["help"].strip(), f"parameter {name} has no '# what it is, unit' comment"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_cells_only_call_the_package(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or "parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        source = "".join(cell["source"])
        assert "sys.path" not in source and "import *" not in source
        for line in source.splitlines():
            if line.startswith(("import ", "from ")):
                assert re.match(r"(from gpukit\b|import gpukit\b)", line), line
            assert not re.match(r"\s*(def|class|for|while) ", line), f"logic belongs in gpukit/: {line}"
        assert len(source.splitlines()) <= 6, "a notebook cell calls the package; move logic into gpukit/"


#: The package's modules whose functions return frames and values, not displays: a cell that ends
#: in one of their calls would show pandas' raw repr (every float's digits, the index), not a table.
DATA_MODULES = {"claims", "compare", "cost", "llm", "memory", "perfmodel", "prices", "specs"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_cell_shows_its_frame_through_tables_show(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        body = ast.parse("".join(cell["source"])).body
        last = body[-1] if body else None
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            func = last.value.func
            module = (
                func.value.id
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                else None
            )
            assert module not in DATA_MODULES, (
                f"{path.name}: wrap {module}.{func.attr}(...) in tables.show(...) to display it as a table"
            )
