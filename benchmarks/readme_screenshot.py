"""The README's picture of the report's front page: a screenshot of ``outputs/latest/index.html``.

Run ``make report`` first; this opens the rendered index in a headless Chromium (Debian's
``chromium``, or Playwright's, which ``make setup`` installs) and writes the top of the page to
``docs/images/report-front.png``.

    .venv/bin/python -m benchmarks.readme_screenshot
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gpukit import _atomic

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "outputs" / "latest" / "index.html"
IMAGE = ROOT / "docs" / "images" / "report-front.png"
#: The window the picture is taken in: wide enough for the front page's tables, tall enough for
#: its bottom line and the first pair's figure.
WINDOW = (1280, 1400)


def chromium() -> str:
    """A headless Chromium to take the picture with: Debian's, else Playwright's."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            return p.chromium.executable_path
    except Exception:  # pragma: no cover - neither installed
        sys.exit("no Chromium found: apt-get install chromium, or make setup (Playwright's)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=INDEX, help="the rendered report's index.html")
    parser.add_argument("--out", type=Path, default=IMAGE)
    args = parser.parse_args(argv)
    if not args.index.is_file():
        sys.exit(f"{args.index} does not exist: run make report first")
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "front.png"
        subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--hide-scrollbars",
                f"--window-size={WINDOW[0]},{WINDOW[1]}",
                f"--screenshot={shot}",
                args.index.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        _atomic.write_bytes(args.out, shot.read_bytes())
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
