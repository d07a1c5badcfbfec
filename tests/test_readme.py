"""Every ``gpukit`` command the README shows runs as written and answers (exit status 0), and every
relative link in the README and docs/ resolves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gpukit import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def readme_commands() -> list[list[str]]:
    """The arguments of each ``.venv/bin/gpukit`` line in the README's shell blocks (comments dropped)."""
    text = README.read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    out = []
    for block in blocks:
        for line in block.splitlines():
            line = line.strip()
            if line.startswith(".venv/bin/gpukit "):
                words = shlex.split(line, comments=True)
                out.append(words[1:])
    return out


COMMANDS = readme_commands()
FAST = [c for c in COMMANDS if c[0] not in ("bench", "report")]


def test_the_readme_shows_questions_and_their_commands():
    assert len(COMMANDS) >= 12
    assert {c[0] for c in COMMANDS} >= {
        "rank",
        "compare",
        "specs",
        "fit",
        "predict",
        "cost",
        "llm",
        "claims",
        "bench",
    }


@pytest.mark.tensorflow  # a CNN's layer walk, where the cache has none, builds the Keras model
@pytest.mark.parametrize("args", FAST, ids=[" ".join(c)[:60] for c in FAST])
def test_a_readme_command_answers(args, tmp_path, monkeypatch, capsys):
    """Each README command answers, and its answer fits a terminal of 100 columns (``COLUMNS``):
    a table keeps the columns that answer and wraps its cells, prose wraps at the width."""
    monkeypatch.chdir(tmp_path)  # where --plot writes
    monkeypatch.setenv("COLUMNS", "100")
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # a command may name a file of the clone (a config.json)
    assert cli.main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.strip()
    wide = [line for line in out.splitlines() if len(line) > 100]
    assert not wide, f"{len(wide)} lines wider than 100 columns, e.g. {wide[0]!r}"


@pytest.mark.slow  # a ranking of every GPU
@pytest.mark.tensorflow  # a CNN's layer walk, where the cache has none, builds the Keras model
@pytest.mark.parametrize(
    "args",
    [["rank", "--workload", "resnet50", "--format", "csv"], ["rank", "--llm", "--format", "csv"]],
)
def test_csv_keeps_every_column_whatever_the_terminal(args, monkeypatch, capsys):
    """A terminal's width narrows the table, never ``--format csv``."""
    import csv
    import io

    from gpukit import rank

    monkeypatch.setenv("COLUMNS", "60")
    assert cli.main(args) == 0
    header = next(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert set(rank.COLUMNS) <= set(header)


@pytest.mark.slow  # every README command twice
@pytest.mark.tensorflow  # a CNN's layer walk, where the cache has none, builds the Keras model
@pytest.mark.parametrize("args", [c for c in FAST if "--plot" not in c], ids=" ".join)
def test_a_readme_commands_csv_is_the_same_at_any_width(args, tmp_path, monkeypatch, capsys):
    """``--format csv`` keeps every column and every cell whole: the same at 60 columns as unfitted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    csv_args = [*args, "--format", "csv"]
    assert cli.main(csv_args) == 0, capsys.readouterr().err
    whole = capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", "60")
    assert cli.main(csv_args) == 0
    assert capsys.readouterr().out == whole and whole.count(",") > whole.count("\n")


@pytest.mark.parametrize("args", [c for c in COMMANDS if c[0] == "bench"])
def test_the_readme_benchmark_command_parses(args):
    """``bench --quick`` as the README gives it parses; a real run of it (a narrower one: one workload,
    a time budget) is tests/test_cli.py's end-to-end test. The whole quick benchmark is not run here:
    a minute of every core beside the memory measurements of the other test worker disturbs them."""
    parsed = cli.build_parser().parse_args(args)
    assert parsed.command == "bench" and parsed.quick


def _links(path: Path) -> list[str]:
    text = path.read_text()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # not inside code
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]


@pytest.mark.parametrize(
    "page",
    [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_relative_link_resolves(page):
    # relative to the page itself, as GitHub and a docs site resolve it
    missing = [target for target in _links(page) if not (page.parent / target.split("#")[0]).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to what is not there: {missing}"


@pytest.mark.slow
@pytest.mark.tensorflow  # the scaling family's grading builds ResNet-50 where the cache has none
def test_the_readme_trust_table_is_what_the_gradings_give(monkeypatch):
    """The figures in the README's "How far to trust it" table are generated, never typed:
    benchmarks/readme_trust.py's table, between its markers."""
    from benchmarks import readme_trust

    text = README.read_text()
    shown = text.split(readme_trust.BEGIN, 1)[1].split(readme_trust.END, 1)[0].strip()
    assert shown == readme_trust.table(), (
        "README.md's trust table is stale: run python -m benchmarks.readme_trust --write"
    )


def test_a_commands_width_is_its_own(monkeypatch, capsys):
    """The width one command fitted its table to is not the next caller's in the same process (a
    notebook, a test): outside ``gpukit``'s entry a table fits the terminal, or prints whole."""
    from gpukit.cli import formatting

    monkeypatch.setenv("COLUMNS", "60")
    assert cli.main(["specs", "--gpu", "A40"]) == 0
    capsys.readouterr()
    assert formatting.TABLE_WIDTH == "auto"
    monkeypatch.delenv("COLUMNS")
    assert formatting.table_width() is None  # not a terminal: whole
