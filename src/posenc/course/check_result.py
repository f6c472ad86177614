"""The outcome of a check, as the student reads it."""

from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["CheckResult"]

_HEADS = {
    "passed": "Correct",
    "failed": "Not yet",
    "not attempted": "Not attempted yet",
    "error": "Your function raised an error",
    "timed out": "Time limit reached",
    "exited": "Your function tried to end the program",
}

@dataclass
class CheckResult:
    """The outcome of a check.

    ``status`` is "passed", "failed", "not attempted", "error", "timed out" or "exited";
    ``passed`` (and ``bool(result)``) is true only for "passed".
    """

    exercise: str
    status: str
    message: str
    hint: str | None = None
    checked: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        text = f"[{self.exercise}] {_HEADS.get(self.status, self.status)}: {self.message}"
        return text + (f"\nHint: {self.hint}" if self.hint else "")

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#009E73" if self.passed else "#0072B2" if self.status == "not attempted" else "#D55E00"
        lines = html.escape(str(self)).replace("\n", "<br>")
        return (
            f'<div style="border-left:4px solid {colour};padding:.3em .8em;margin:.3em 0">'
            f"<code style='white-space:pre-wrap'>{lines}</code></div>"
        )
