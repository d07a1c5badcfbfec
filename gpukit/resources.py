"""Where gpukit finds its shipped files: the data folder, the notebooks and the default output folder.

A source checkout (``make setup``, an editable install) keeps ``data/`` and ``notebooks/`` beside
the package; an installed wheel (``pip install .``) carries them inside the package as
``gpukit/data`` and ``gpukit/notebooks``. ``GPUKIT_DATA_DIR`` and ``GPUKIT_NOTEBOOKS_DIR``
override either.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: The checkout the package was imported from, or None for an installed package.
SOURCE_ROOT: Path | None = (
    PACKAGE_DIR.parent
    if (PACKAGE_DIR.parent / "pyproject.toml").is_file() and (PACKAGE_DIR.parent / "data").is_dir()
    else None
)


def _locate(env: str, name: str) -> Path:
    if os.environ.get(env):
        return Path(os.environ[env])
    inside = PACKAGE_DIR / name
    if inside.is_dir():
        return inside
    if SOURCE_ROOT is not None:
        return SOURCE_ROOT / name
    return inside  # missing: the loader's "file not found" names this path


#: Folder of the shipped data files (gpus.csv, prices, reference measurements, claims).
DATA_DIR = _locate("GPUKIT_DATA_DIR", "data")
#: Folder of the report notebooks.
NOTEBOOKS_DIR = _locate("GPUKIT_NOTEBOOKS_DIR", "notebooks")
#: Where reports go by default: ``outputs/`` of the checkout, or of the working folder when installed.
OUTPUTS_DIR = (SOURCE_ROOT if SOURCE_ROOT is not None else Path.cwd()) / "outputs"
