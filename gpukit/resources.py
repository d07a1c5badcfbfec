"""Where gpukit finds its files: the shipped data folder, the notebooks, the default output folder,
and the user-level file of refreshed cloud prices.

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

#: Where ``gpukit prices refresh`` writes the offers it fetched: ``$GPUKIT_PRICES_DIR``, else
#: ``$XDG_DATA_HOME/gpukit``, else ``~/.local/share/gpukit``.
PRICES_DIR_ENV = "GPUKIT_PRICES_DIR"
REFRESHED_NAME = "cloud_prices_refreshed.csv"


def refreshed_path() -> Path:
    """The user-level file of refreshed cloud prices (it may not exist)."""
    base = os.environ.get(PRICES_DIR_ENV)
    if base:
        return Path(base) / REFRESHED_NAME
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "gpukit" / REFRESHED_NAME
