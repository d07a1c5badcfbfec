"""Layer walks kept on disk: read back as they were built, built again where the code or versions
they were made with differ, passed over where the cache is off or unreadable."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpukit import cache
from gpukit.graph import Graph, Op
from gpukit.models import walk_cache


def _graph() -> Graph:
    ops = [
        Op(
            "conv",
            "Conv2D",
            [11],
            [12],
            params=9,
            trainable_params=9,
            needs_input=True,
            flops=18.0,
            matmul=True,
        ),
        Op("relu", "ReLU", [12], [13], needs_output=True, keeps=[13], holds=[11], in_place=True),
    ]
    return Graph("tiny", ops, {11: 4, 12: 8, 13: 8}, [11], 4, 9, 9, {13}, largest_variable=9, outputs=[13])


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    return tmp_path / "walks"


def test_a_walk_reads_back_as_it_was_built():
    graph = _graph()
    assert walk_cache.graph_from_dict(json.loads(json.dumps(walk_cache.graph_to_dict(graph)))) == graph


def test_built_once_then_read_and_built_again_for_other_code_or_keras(kept, monkeypatch):
    builds = []

    def build():
        builds.append(1)
        return _graph()

    first = walk_cache.graph("test", {"model": ("tiny", (4, 4))}, build)
    again = walk_cache.graph("test", {"model": ("tiny", (4, 4))}, build)
    assert first == again == _graph() and len(builds) == 1
    walk_cache.graph("test", {"model": ("other", None)}, build)
    assert len(builds) == 2 and len(list(kept.iterdir())) == 2
    monkeypatch.setattr(walk_cache, "code_digest", lambda: "edited walk code")
    walk_cache.graph("test", {"model": ("tiny", (4, 4))}, build)
    assert len(builds) == 3, "a walk older code made is never read"
    assert len(list(kept.iterdir())) == 2, "it is stored over the old one"
    monkeypatch.setattr(walk_cache, "_version", lambda package: f"{package} 99")
    walk_cache.graph("test", {"model": ("tiny", (4, 4))}, build)
    assert len(builds) == 4, "nor one another Keras or TensorFlow built"


def test_the_walk_code_digest_covers_the_walk_and_the_model_builders():
    digest = walk_cache.code_digest()
    assert digest and len(digest) == 64
    # the walk (graph/) and the model builders (models/: registry, zoo, this cache), every one there
    assert {"graph", "models"} <= set(walk_cache.WALK_CODE)
    assert all((walk_cache.PACKAGE_DIR / name).exists() for name in walk_cache.WALK_CODE)


def test_a_torn_or_foreign_file_is_built_again_and_an_unwritable_cache_passed_over(kept, monkeypatch):
    walk_cache.load_or_build("test", {"n": 1}, lambda: {"v": 1})
    (path,) = kept.iterdir()
    for junk in ("{not json", "[]", json.dumps({"what": 1})):
        path.write_text(junk)
        assert walk_cache.load_or_build("test", {"n": 1}, lambda: {"v": 2}) == {"v": 2}
    monkeypatch.setattr(walk_cache._atomic, "write_text", lambda *a: (_ for _ in ()).throw(PermissionError()))
    assert walk_cache.load_or_build("test", {"n": 3}, lambda: {"v": 3}) == {"v": 3}


def test_off_builds_every_time_and_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, "off")
    builds = []
    for _ in range(2):
        walk_cache.load_or_build("test", {}, lambda: builds.append(1) or {"v": 1})
    assert len(builds) == 2 and walk_cache.cache_dir() is None


@pytest.mark.tensorflow
def test_a_kept_walk_estimates_as_the_built_one_and_needs_no_tensorflow(kept):
    from gpukit import memory
    from gpukit.models import registry as models

    built = memory.Estimator("keras-cnn")  # builds the model: TensorFlow
    models._application_names_kept.cache_clear()  # this process may have read them elsewhere
    models.keras_application_names()
    read = memory.Estimator("keras-cnn")
    assert read.graph == built.graph and read.input_shape == built.input_shape
    assert read.estimate(64, "fp16", "adam") == built.estimate(64, "fp16", "adam")
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from gpukit import memory, models; "
            "e = memory.Estimator('keras-cnn'); models.resolve_model('ResNet50'); "
            "print(e.estimate(64, 'fp16', 'adam').total_bytes, 'tensorflow' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert fresh.stdout.split() == [str(built.estimate(64, "fp16", "adam").total_bytes), "False"]


def test_the_shipped_walks_are_ones_this_code_reads():
    names = sorted(p.name for p in walk_cache.SEED_DIR.glob("*.json"))
    assert any(n.startswith("applications-") for n in names) and any(n.startswith("memory-") for n in names)
    assert walk_cache.stale_seeds() == [], (
        "these shipped walks were made by other code or another Keras/TensorFlow: run `make walks`"
    )


def test_a_shipped_walk_is_read_where_the_cache_lacks_it(kept, tmp_path, monkeypatch):
    seeds = tmp_path / "seeds"
    monkeypatch.setattr(walk_cache, "SEED_DIR", seeds)
    monkeypatch.delenv(walk_cache.SEED_ENV, raising=False)
    walk_cache.load_or_build("test", {"n": 1}, lambda: {"v": "built"})
    seeds.mkdir()
    (path,) = kept.iterdir()
    path.rename(seeds / path.name)  # shipped, and gone from the user's cache

    def never():
        raise AssertionError("a shipped walk is read, not built")

    assert walk_cache.load_or_build("test", {"n": 1}, never) == {"v": "built"}
    assert walk_cache.stale_seeds() == []
    monkeypatch.setattr(walk_cache, "code_digest", lambda: "edited walk code")
    assert walk_cache.stale_seeds() == [path.name]
    assert walk_cache.load_or_build("test", {"n": 1}, lambda: {"v": "again"}) == {"v": "again"}


def test_off_the_shipped_walks_are_not_read(kept, tmp_path, monkeypatch):
    seeds = tmp_path / "seeds"
    monkeypatch.setattr(walk_cache, "SEED_DIR", seeds)
    monkeypatch.setenv(walk_cache.SEED_ENV, "off")
    walk_cache.load_or_build("test", {"n": 2}, lambda: {"v": 1})
    seeds.mkdir()
    (path,) = kept.iterdir()
    path.rename(seeds / path.name)
    assert walk_cache.seed_dir() is None
    assert walk_cache.load_or_build("test", {"n": 2}, lambda: {"v": "built"}) == {"v": "built"}


@pytest.mark.tensorflow
def test_a_shipped_walk_is_what_building_it_gives():
    from gpukit.models import registry

    (path,) = walk_cache.SEED_DIR.glob("applications-*.json")
    assert json.loads(path.read_text())["value"] == registry._application_names()


@pytest.mark.slow
def test_the_readmes_questions_answer_cold_without_tensorflow(tmp_path):
    """With an empty cache and the shipped walks, no README question loads TensorFlow."""
    from benchmarks.answer_speed import questions

    script = (
        "import sys, contextlib, io\n"
        "from gpukit import cli\n"
        f"for argv in {[a for _, a in questions()]!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert cli.main(argv) == 0, argv\n"
        "print('tensorflow' in sys.modules)\n"
    )
    env = {**os.environ, cache.ENV: str(tmp_path)}
    env.pop(walk_cache.SEED_ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False", "a README question loaded TensorFlow on its first run"
