"""`pip install .` (not editable): the data and notebooks travel inside the package, and the
commands find them from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (whl,) = out.glob("gpukit-*.whl")
    return whl


def test_the_wheel_carries_every_data_file_and_notebook(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, pattern in (("data", "*.csv"), ("notebooks", "*.ipynb")):
        shipped = {f"gpukit/{folder}/{p.name}" for p in (ROOT / folder).glob(pattern)}
        assert shipped and shipped <= names, shipped - names
    assert "gpukit/perfmodel/roofline.py" in names
    walks = {f"gpukit/models/walks/{p.name}" for p in (ROOT / "gpukit" / "models" / "walks").glob("*.json")}
    assert walks and walks <= names, "the shipped layer walks travel in the wheel"


def test_an_installed_package_works_from_any_folder(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("GPUKIT_DATA_DIR", None)

    def gpukit(*argv: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "gpukit", *argv],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import gpukit.resources as r; print(r.DATA_DIR); print(r.NOTEBOOKS_DIR); print(r.OUTPUTS_DIR)",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where == [
        str(target / "gpukit" / "data"),
        str(target / "gpukit" / "notebooks"),
        str(elsewhere / "outputs"),
    ]
    assert "A40" in gpukit("specs", "--gpu", "A40", "--format", "csv")
    assert "fits on:" in gpukit("fit", "--model", "bert-base", "--batch", "8", "--gpu", "A40")
    listing = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gpukit import report; print([p.name for p in report.discover_notebooks()])",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "01_specs.ipynb" in listing and "07_fact_check.ipynb" in listing
