"""Compile errors carrying a source position, printed as `FILE:LINE:COL: error: message`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Loc:
    """A position in a source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Loc("<builtin>", 0, 0)


class CompileError(ValueError):
    """A P4 program error at a source position."""

    def __init__(self, loc: Loc | None, message: str) -> None:
        super().__init__(message)
        self.loc = loc or NOWHERE
        self.message = message

    def __str__(self) -> str:
        return f"{self.loc}: error: {self.message}"
