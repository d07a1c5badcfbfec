"""Write the layer walks the kit ships (``gpukit/models/walks/``), so that the first answer after
installing loads no TensorFlow: every question :mod:`benchmarks.answer_speed` times (the README's
commands among them) runs as a whole ``gpukit`` process against an empty cache, and the walks those
runs built replace the shipped ones. ``make walks`` runs it; ``tests/test_walk_cache.py`` fails when
a shipped walk is one the code at hand would not read (an edit under ``gpukit/graph`` or
``gpukit/models``, another Keras or TensorFlow).

    .venv/bin/python -m benchmarks.walk_seeds
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from gpukit import cache
from gpukit.models import walk_cache

from .answer_speed import questions, timed


def built_walks(argvs: list[list[str]], cache_root: Path) -> list[Path]:
    """Run each command with ``cache_root`` as its cache; the walk files they left."""
    env = {**os.environ, cache.ENV: str(cache_root), walk_cache.SEED_ENV: "off"}
    for argv in argvs:
        timed(argv, env)
    return sorted((cache_root / "walks").glob("*.json"))


def replace_seeds(walks: list[Path], seed_dir: Path) -> None:
    """``seed_dir`` holds exactly ``walks``: written beside it, then swapped in."""
    fresh = seed_dir.with_name(seed_dir.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    for path in walks:
        shutil.copyfile(path, fresh / path.name)
    old = seed_dir.with_name(seed_dir.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if seed_dir.exists():
        os.replace(seed_dir, old)
    os.replace(fresh, seed_dir)
    shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    seed_dir = walk_cache.SEED_DIR
    with tempfile.TemporaryDirectory(prefix="gpukit-walks-") as tmp:
        walks = built_walks([a for _, a in questions()], Path(tmp))
        replace_seeds(walks, seed_dir)
    size = sum(p.stat().st_size for p in seed_dir.glob("*.json"))
    print(f"{len(walks)} walks ({size / 1e6:.2f} MB) written to {seed_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
