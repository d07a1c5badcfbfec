"""What every script under benchmarks/ does with the Markdown it makes: print it, and with
``--write FILE`` also write it there atomically (a reader never sees half a report)."""

from __future__ import annotations

import argparse
import sys

from gpukit import _atomic


def page_main(markdown, description: str, argv=None) -> int:
    """A page script's command line: ``--write FILE`` publishes ``markdown()`` there as well."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", help="also write the Markdown to FILE")
    args = parser.parse_args(argv)
    publish(markdown(), args.write)
    return 0


def publish(text: str, path: str | None) -> None:
    """Print ``text``; when ``path`` is given, write it there too and say so on stderr."""
    print(text)
    if path:
        _atomic.write_text(path, text)
        print(f"written to {path}", file=sys.stderr)
