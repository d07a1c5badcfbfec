"""The ``gpukit`` command: thin subcommands over the library, one module each (``specs``, ``report``,
``bench``, ...) with its ``add_parser`` and ``run``; ``formatting`` prints, ``options`` holds the
options several commands share.

A :class:`~gpukit.errors.GpukitError` becomes one line on stderr and exit status 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import GpukitError
from . import (
    bench,
    claims,
    compare,
    cost,
    fit,
    formatting,
    llm,
    predict,
    prices,
    rank,
    register_kernel,
    report,
    specs,
)

#: The subcommands, in the order ``gpukit --help`` lists them.
COMMANDS = (rank, specs, report, bench, fit, cost, prices, predict, llm, compare, claims, register_kernel)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpukit",
        description="Choose GPUs for deep learning with numbers you can trust.",
        epilog="Run 'gpukit COMMAND --help' for the options of each command.",
    )
    parser.add_argument("--version", action="version", version=f"gpukit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # a table answer fits the terminal (COLUMNS); CSV, JSON and Markdown keep their lines whole, and
    # a command that draws live progress on the terminal (report) writes to it unwrapped
    fitted = (
        getattr(args, "format", "table") == "table"
        and not getattr(args, "wide", False)
        and getattr(args, "fitted", True)
    )
    width = formatting.terminal_width() if fitted else None
    formatting.TABLE_WIDTH = width
    try:
        with formatting.fitted_output(width):
            return args.func(args)
    except GpukitError as exc:
        print(f"gpukit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpukit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`gpukit llm --list | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        formatting.TABLE_WIDTH = "auto"  # this command's width, not the next caller's in this process


__all__ = ["COMMANDS", "build_parser", "main"]
