"""What every script under benchmarks/ does with the Markdown it makes: print it, and with
``--write FILE`` also write it there atomically (a reader never sees half a report)."""

from __future__ import annotations

import sys

from gpukit import _atomic


def publish(text: str, path: str | None) -> None:
    """Print ``text``; when ``path`` is given, write it there too and say so on stderr."""
    print(text)
    if path:
        _atomic.write_text(path, text)
        print(f"written to {path}", file=sys.stderr)
