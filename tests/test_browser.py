"""The rendered report in a real browser: Debian's Chromium, driven by Playwright.

Every page must load without console errors or network requests, every image must show, and
every link must resolve (links to files of the run exist; web links are well-formed https
URLs, not followed: the report is read offline). Untrusted text in a data file must show as
text, never run. On every page of the whole report, a table stays within a 1280-pixel window
(a wide one scrolls inside its own box) and reads as words: no True or False, no column name.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from gpukit import report
from gpukit.present import labels

pytestmark = pytest.mark.notebooks

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if not CHROMIUM:
        pytest.skip(
            "Debian's chromium is not installed; `make test` installs it where it can (root with apt-get)"
        )
    root = tmp_path_factory.mktemp("browser")
    hostile = root / "claims.csv"
    hostile.write_text(
        "source,gpu,field,relation,claimed_value,other_gpu,quote\n"
        'x.txt,A40,memory_gb,eq,48,,"<img src=x onerror=""window.__pwned=1""><script>'
        'window.__pwned=2</script>"\n'
    )
    run = report.render_report(
        out_dir=root / "out",
        only=["01", "06", "07"],
        progress=None,
        parameters={"claims_file": str(hostile), "models": ["ResNet50"], "workloads": ["resnet50"]},
    )
    return Path(run.path)


@pytest.fixture(scope="module")
def rest_of_the_report(tmp_path_factory):
    """The notebooks :func:`rendered` leaves out, so that the tables of every page are checked
    (the benchmark on its two quickest workloads)."""
    if not CHROMIUM:
        pytest.skip("Debian's chromium is not installed")
    run = report.render_report(
        out_dir=tmp_path_factory.mktemp("browser-rest") / "out",
        only=["00", "02", "03", "04", "05", "08", "09"],
        progress=None,
        parameters={"02_benchmark": {"workloads": ["matmul", "bandwidth"]}},
    )
    return Path(run.path)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _visit(browser, path: Path) -> dict:
    page = browser.new_page()
    errors, remote = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
    page.goto(path.as_uri(), wait_until="load")
    images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth])")
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    pwned = page.evaluate("window.__pwned === undefined ? null : window.__pwned")
    text = page.inner_text("body")
    page.close()
    return {
        "errors": errors,
        "remote": remote,
        "images": images,
        "links": links,
        "pwned": pwned,
        "text": text,
    }


def test_every_page_loads_cleanly_with_its_images_and_links(rendered, browser):
    pages = sorted(rendered.glob("*.html"))
    names = {p.name for p in pages}
    assert {
        "index.html",
        "01_specs.html",
        "07_fact_check.html",
        "06_tradeoffs--a40-vs-v100.html",
        "06_tradeoffs--rtx-a4000-vs-rtx-a5000.html",
    } <= names
    for path in pages:
        seen = _visit(browser, path)
        assert seen["errors"] == [], (path.name, seen["errors"])
        assert seen["remote"] == [], (path.name, seen["remote"])
        assert all(complete and width > 0 for complete, width in seen["images"]), (path.name, seen["images"])
        if path.name != "index.html":
            assert seen["images"], f"{path.name} shows no figure"
        for href in seen["links"]:
            url = urlparse(href)
            if url.scheme == "file":
                assert Path(unquote(url.path)).exists(), (path.name, href)
            else:
                assert url.scheme == "https" and url.netloc, (path.name, href)


def test_index_opens_with_each_pairs_bottom_line_and_lists_the_pages(rendered, browser):
    seen = _visit(browser, rendered / "index.html")
    text = seen["text"]
    for label in ("Specs", "Head to head: A40 vs V100", "Head to head: RTX A4000 vs RTX A5000", "Fact-check"):
        assert label in text
    assert report.SECTIONS["fact_check"][1] in text  # each page with the question it answers
    first, second = text.index("A40 or V100 PCIe 16GB?"), text.index("RTX A4000 or RTX A5000?")
    assert text.index("The bottom line") < first < second < text.index("The pages")
    assert "which wins, by how much" in text and "images/s per $1,000, buying" in text
    assert len(seen["images"]) == 2 and all(done and width > 600 for done, width in seen["images"])
    assert "the ranking page did not run" in text  # 00 was not in this run


def test_untrusted_text_shows_as_text_and_never_runs(rendered, browser):
    seen = _visit(browser, rendered / "07_fact_check.html")
    assert seen["pwned"] is None
    assert "<script>window.__pwned=2</script>" in seen["text"]


def test_table_sentences_keep_a_readable_width_on_a_laptop_screen(rendered, browser):
    """A browser fits a wide table to the page by wrapping its text down to one word a line; on
    a 1300-pixel-wide window every cell of a sentence stays at least 15 of its letters' heights
    wide (the table scrolls sideways instead), and no cell shows a structure meant for code."""
    for name in ("06_tradeoffs--a40-vs-v100.html", "01_specs.html"):
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((rendered / name).as_uri(), wait_until="load")
        narrow = page.eval_on_selector_all(
            "td",
            """els => els.filter(e => e.innerText.trim().length > 40)
                        .map(e => [e.innerText.slice(0, 40),
                                   e.getBoundingClientRect().width / parseFloat(getComputedStyle(e).fontSize)])
                        .filter(([, ems]) => ems < 15)""",
        )
        text = page.inner_text("body")
        page.close()
        assert narrow == [], (name, narrow[:5])
        assert "{'" not in text, name


#: The window of the table checks: a laptop's, the width of a page the report must fit.
WINDOW = {"width": 1280, "height": 900}

#: Tables of the whole report that may be wider than their box (scrolling sideways inside it):
#: most fit once their text wraps, those of many columns cannot. Set from today's count with a
#: margin of three, so that text pushing tables wider again fails the check (the specs page shows
#: every column of the catalogue in a table per segment: three where it was one).
MOST_SCROLLING = 22

#: Each table of a page as the browser lays it out: its box, whether its columns are wider than
#: the box and how the box overflows, the text of its column headers (a thead, or a first row all
#: of headers: not the name-and-value tables of parameters), and its cells that read True or False.
TABLES_JS = """els => els.map(t => {
    const box = t.getBoundingClientRect();
    const first = t.rows[0];
    const heads = t.tHead ? [...t.tHead.querySelectorAll('th')]
        : (first && first.cells.length > 1 && [...first.cells].every(c => c.tagName === 'TH') ? [...first.cells] : []);
    return {
        left: box.left, right: box.right,
        wider: t.scrollWidth > t.clientWidth + 1, overflow: getComputedStyle(t).overflowX,
        heads: heads.map(h => h.innerText.trim()).filter(h => h),
        truths: [...t.querySelectorAll('td')].map(c => c.innerText.trim()).filter(x => x === 'True' || x === 'False'),
    };
})"""


def test_every_table_fits_the_window_and_reads_as_words(rendered, rest_of_the_report, browser):
    """At 1280 pixels no table runs off the page or is cut by it: its box stays in the window and a
    table wider than its box scrolls inside it; no cell reads True or False (yes or no); no
    header is a column name (memory_gb), each is a header :func:`labels.label` leaves as it is."""
    pages = sorted(rendered.glob("*.html")) + sorted(rest_of_the_report.glob("*.html"))
    assert {p.name for p in pages} >= {
        f"{nb}.html" for nb in ("00_which_gpu", "03_cost_per_tflop", "08_llm", "09_workshop")
    }
    seen, scrolling = 0, []
    for path in pages:
        page = browser.new_page(viewport=WINDOW)
        page.goto(path.as_uri(), wait_until="load")
        found = page.eval_on_selector_all("table", TABLES_JS)
        page_width = page.evaluate("document.documentElement.scrollWidth")
        page.close()
        seen += len(found)
        assert page_width <= WINDOW["width"], (path.name, page_width)
        for i, t in enumerate(found):
            where = (path.name, i, t["heads"][:3])
            assert 0 <= t["left"] and t["right"] <= WINDOW["width"], (where, t["left"], t["right"])
            if t["wider"]:
                assert t["overflow"] in ("auto", "scroll"), (where, t["overflow"])
                scrolling.append(where)
            assert t["truths"] == [], (where, t["truths"][:3])
            raw = [
                h for h in t["heads"] if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", h) or labels.label(h) != h
            ]
            assert raw == [], (where, raw)
    assert seen > 40, seen  # every page's tables were looked at
    assert len(scrolling) <= MOST_SCROLLING, scrolling
