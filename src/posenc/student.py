"""Write the student edition of the chapters (kept for ``python -m posenc.student``).

``python -m posenc.student chapters _build/student`` (``make student``) or
``python -m posenc.student chapters/08_rope.ipynb out/`` for one chapter. The code lives
in :mod:`posenc.course.editions`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .course.editions import stub_source, student_notebook, write_student_edition

__all__ = ["stub_source", "student_notebook", "write_student_edition"]


def main(argv: list[str] | None = None) -> int:
    prog = "python -m posenc.student"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="?", default=Path("chapters"), help="a notebook or a folder")
    parser.add_argument("output", type=Path, nargs="?", default=Path("_build/student"))
    args = parser.parse_args(argv)
    try:
        written = write_student_edition(args.source, args.output)
    except (FileNotFoundError, ValueError, NotADirectoryError, PermissionError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} student notebooks to {args.output}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
