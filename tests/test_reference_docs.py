"""docs/reference/ is generated from the code it describes (tools/reference_docs.py): these tests fail
when a page has drifted from the parser, a notebook, a schema or the results format."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tool(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    return importlib.import_module("reference_docs")


def test_the_reference_pages_are_what_the_code_gives(tool, capsys):
    assert tool.main(["--check"]) == 0, capsys.readouterr().err


def test_every_command_and_option_is_on_the_cli_page(tool):
    from gpukit.cli import build_parser

    page = (ROOT / "docs/reference/cli.md").read_text()
    parser = build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    for name, command in sub.choices.items():
        assert f"## gpukit {name}" in page
        for action in command._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}`" in page, f"{flag} of gpukit {name} is not on docs/reference/cli.md"


def test_a_changed_parser_makes_the_page_stale(tool, monkeypatch, tmp_path, capsys):
    for page in tool.PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text((ROOT / page).read_text())
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    real = tool.cli
    cli_page = "docs/reference/cli.md"
    monkeypatch.setitem(tool.PAGES[cli_page], "cli", lambda: real() + "\n| `--new` | a new option | |")
    assert tool.main(["--check"]) == 1
    assert f"stale: {cli_page}" in capsys.readouterr().err
    assert tool.main([]) == 0 and "`--new`" in (tmp_path / cli_page).read_text()


def test_a_page_without_its_markers_is_a_clear_error(tool, monkeypatch, tmp_path):
    (tmp_path / "cli.md").write_text("# no markers\n")
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    monkeypatch.setattr(tool, "PAGES", {"cli.md": {"cli": tool.cli}})
    with pytest.raises(SystemExit, match="has no .* markers"):
        tool.main(["--check"])
