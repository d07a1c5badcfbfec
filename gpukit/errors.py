"""The gpukit exception family.

Every error a user can cause (bad data, an unknown GPU name, a wrong parameter) is a
:class:`GpukitError`. Its message is one line that says what is wrong and how to fix it;
the CLI prints that line and exits non-zero. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class GpukitError(Exception):
    """Base class of the errors a user can cause and fix."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one cell of a data file.

    ``line`` is the line number in the file as an editor shows it (the header is line 1).
    """

    path: Path
    line: int | None
    column: str | None
    message: str
    row_name: str | None = None

    def __str__(self) -> str:
        where = [_shown(self.path)]
        if self.line is not None:
            row = f"line {self.line}"
            if self.row_name:
                row += f" ({self.row_name})"
            where.append(row)
        if self.column:
            where.append(f"column {self.column}")
        return f"{', '.join(where)}: {self.message}"


def _shown(path: Path) -> str:
    """A path as a user would type it: relative to the working folder when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class DataError(GpukitError):
    """A data file (catalogue, prices, results) is missing or malformed.

    ``problems`` lists everything found; the message names the first and counts the rest.
    """

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        first = str(self.problems[0]) if self.problems else "invalid data"
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more > 0 else ""
        super().__init__(first + suffix)


class UnknownGPUError(GpukitError):
    """A GPU name matches no catalogue row."""


class ParameterError(GpukitError):
    """A report or notebook parameter is unknown, of the wrong type or out of range."""


class ReportError(GpukitError):
    """Rendering the report failed (a notebook raised, or its kernel died)."""
