"""``gpukit kernel``: register this environment's Python as the Jupyter kernel the notebooks run on."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "kernel",
        help="register the gpukit Jupyter kernel (make setup does this)",
        description="Register this environment's Python as a Jupyter kernel for the notebooks "
        "and reports, with TensorFlow's C++ logging turned down.",
    )
    p.add_argument("--name", default="gpukit", help="kernel name (default: gpukit)")
    p.add_argument(
        "--user", action="store_true", help="register for this user instead of inside the environment"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here, not above: nbformat and its schema validators would slow every command's start
    from .. import report

    where = report.install_kernel(args.name, user=args.user)
    print(f"gpukit: Jupyter kernel {args.name!r} registered in {where}")
    return 0
