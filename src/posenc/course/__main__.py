"""``python -m posenc.course``: grade a class, write an edition, or test the checkers (mutants, contract)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import editions
from .engine import course_seed

#: The course seed's file on the grading machine (``python -m posenc.course seed`` writes it).
SEED_FILE = "posenc-course-seed.json"


def write_seed_file(path: Path) -> int:
    """Draw a course seed into ``path`` (a new file: an existing one is never overwritten) and return it."""
    import json
    import secrets

    value = secrets.randbelow(2**31)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        file = open(path, "x", encoding="utf-8")  # "x": refuses a file that exists
    except FileExistsError:
        raise FileExistsError(f"{path} exists: the course already has a seed (a new one would change the hidden "
                              "cases); choose another file to start another course") from None
    with file:
        json.dump({"course seed": value, "written by": "python -m posenc.course seed"}, file)
        file.write("\n")
    return value


def read_seed_file(path: Path, given: bool = True) -> int:
    """The course seed in ``path``; a ``ValueError`` that says how to make one when it is missing or bad."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return course_seed(data["course seed"])
    except FileNotFoundError:
        where = f"{path} does not exist" if given else f"no --course-seed, POSENC_COURSE_SEED or {path} here"
        raise ValueError(
            f"the hidden cases need a course seed: {where}; run `python -m posenc.course seed` once on the grading "
            "machine (it writes posenc-course-seed.json), or pass --course-seed"
        ) from None
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a course seed file ({type(error).__name__}: {error})") from None

_EDITIONS = {
    "student": (editions.write_student_edition, "the student edition: solutions removed, stubs that still run"),
    "teacher": (editions.write_teacher_edition, "the teacher edition: solutions, points, times and rubrics"),
    "nbgrader": (editions.write_nbgrader_source, "an nbgrader source version: solution regions marked"),
}


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        return course_seed(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parser(prog: str = "python -m posenc.course") -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0].strip("`"))
    commands = root.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="grade a folder of submitted notebooks")
    grade.add_argument("submissions", type=Path, help="one folder or one notebook per student")
    grade.add_argument("--course-seed", type=_seed, default=None, help="draws the hidden cases (keep it secret)")
    grade.add_argument(
        "--seed-file", type=Path, default=None,
        help=f"the course seed's file (default {SEED_FILE} here, written once by `python -m posenc.course seed`)",
    )
    grade.add_argument("--out", type=Path, default=Path("grades"), help="where grades.csv and feedback/ go")
    grade.add_argument("--check-timeout", type=_seconds, default=None, help="seconds per checker case")
    grade.add_argument(
        "--accept", action="append", default=[], metavar="STUDENT:EXERCISE",
        help="grade a copied or stopped exercise as usual after a look (repeat for several)",
    )
    grade.add_argument(
        "--chapters", type=Path, default=None,
        help="the teacher's chapters, whose solutions copies are compared with (default: the book's)",
    )
    for name, (_, text) in _EDITIONS.items():
        sub = commands.add_parser(name, help=f"write {text}")
        sub.add_argument("source", type=Path, help="a chapter notebook or the chapters/ folder")
        sub.add_argument("output", type=Path, help="the folder to write")
    nbgrader = commands.choices["nbgrader"]
    nbgrader.add_argument(
        "--course-seed", type=_seed, default=None,
        help="draws the hidden cases (default POSENC_COURSE_SEED, else a new one), written to the grading config",
    )
    nbgrader.add_argument(
        "--config", type=Path, default=None,
        help="where the grading config goes (default: posenc_grading.py in the course folder above source/)",
    )
    otter = commands.add_parser("otter", help="write Otter-Grader (Gradescope) master notebooks")
    otter.add_argument("source", type=Path, help="a chapter notebook or the chapters/ folder")
    otter.add_argument("output", type=Path, help="a new or empty folder, or an earlier Otter export")
    otter.add_argument(
        "--course-seed", type=_seed, default=None, help="draws the hidden tests' cases (default POSENC_COURSE_SEED)"
    )
    otter.add_argument("--posenc", default=None, help="the requirement line that installs posenc in the grading image")
    mutants = commands.add_parser("mutants", help="mutation-test the checkers against their model answers")
    mutants.add_argument("--exercise", action="append", help="an exercise name (repeat for several; default all)")
    mutants.add_argument("--chapters", type=Path, default=Path("chapters"), help="the chapter notebooks' folder")
    mutants.add_argument("--sample", type=int, default=None, help="check a seeded sample of this many per exercise")
    mutants.add_argument("--timeout", type=_seconds, default=2.0, help="seconds per case for a mutant")
    mutants.add_argument("--verbose", action="store_true", help="one line per mutant: verdict and hint")
    contract = commands.add_parser("contract", help="print an exercise's 'Checked with' sentence for its task text")
    contract.add_argument("exercise", help="the exercise's name, e.g. rope")
    fold = commands.add_parser("fold", help="fold in JupyterLab the cells the website hides, and the solutions")
    fold.add_argument("source", type=Path, help="a chapter notebook or the chapters/ folder (changed in place)")
    fold.add_argument("--check", action="store_true", help="list the cells out of step, write nothing (exit 1 if any)")
    seed = commands.add_parser("seed", help="draw a course seed into a file of the grading machine (once per course)")
    seed.add_argument("file", type=Path, nargs="?", default=Path(SEED_FILE), help=f"default {SEED_FILE}")
    site = commands.add_parser("site", help="write a copy of the book whose chapters are the student edition")
    site.add_argument("book", type=Path, help="the book's root folder (with _toc.yml)")
    site.add_argument("output", type=Path)
    return root


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None, prog: str = "python -m posenc.course") -> int:
    args = parser(prog).parse_args(argv)
    try:
        if args.command == "seed":
            value = write_seed_file(args.file)
            print(f"wrote {args.file}: the course seed {value}; keep the file on the grading machine, out of "
                  "what students get")
        elif args.command == "grade":
            if not args.submissions.is_dir():
                return _fail(prog, f"{args.submissions} is not a folder of submissions")
            from .grade import grade_class

            chosen = args.course_seed if args.course_seed is not None else course_seed(None)
            if chosen is None:
                chosen = read_seed_file(args.seed_file or Path(SEED_FILE), given=args.seed_file is not None)
            path = grade_class(
                args.submissions,
                args.out,
                seed=chosen,
                check_timeout=args.check_timeout,
                accept=args.accept,
                chapters=args.chapters,
                log=lambda text: print(text, file=sys.stderr),
            )
            print(f"wrote {path} and {args.out / 'feedback'}/")
        elif args.command == "contract":
            import textwrap

            from .coursework import EXERCISES

            if args.exercise not in EXERCISES:
                return _fail(prog, f"no exercise called {args.exercise!r}; the known ones are: {', '.join(EXERCISES)}")
            print(textwrap.fill(EXERCISES[args.exercise].contract(), width=88, break_on_hyphens=False))
        elif args.command == "mutants":
            from .coursework import EXERCISES
            from .mutants import main_report, run_exercise

            names = args.exercise or list(EXERCISES)
            unknown = [n for n in names if n not in EXERCISES]
            if unknown:
                return _fail(prog, f"no exercise called {unknown[0]!r}; the known ones are: {', '.join(EXERCISES)}")
            reports = []
            for name in names:
                reports.append(run_exercise(EXERCISES[name], args.chapters, sample=args.sample, timeout=args.timeout))
                print(reports[-1].row(), file=sys.stderr, flush=True)
            print(main_report(reports, verbose=args.verbose))
            bad = sum(r.count("survived") for r in reports) + sum(bool(r.model_ok) for r in reports)
            return 1 if bad else 0
        elif args.command == "otter":
            from .otter_export import write_otter_source

            written = write_otter_source(args.source, args.output, seed=args.course_seed, posenc=args.posenc)
            print(f"wrote {len(written)} Otter master notebooks to {args.output}/ (then: otter assign NOTEBOOK DIST)")
        elif args.command == "fold":
            from .folding import fold_files

            changed = fold_files(args.source, check=args.check)
            for path, found in changed.items():
                print(f"{path}: out of step" + "".join(f"\n  {line}" for line in found))
            if args.check:
                return 1 if changed else 0
            print(f"folded {len(changed)} notebooks" if changed else "every notebook already in step")
        elif args.command == "site":
            out = editions.write_site_source(args.book, args.output)
            print(f"wrote the student website's sources to {out}/")
        else:
            config = None
            if args.command == "nbgrader":  # a config this command did not write stops it before anything is written
                config = args.config or editions.nbgrader_config_path(args.output)
                editions.check_nbgrader_config(config)
            written = _EDITIONS[args.command][0](args.source, args.output)
            print(f"wrote {len(written)} {args.command} notebooks to {args.output}/")
            if config is not None:
                import secrets

                seed = args.course_seed if args.course_seed is not None else course_seed(None)
                if seed is None:  # an earlier export's seed stays: a new one would change the hidden cases
                    seed = editions.nbgrader_config_seed(config)
                seed = seed if seed is not None else secrets.randbelow(2**31)
                editions.write_nbgrader_config(config, seed)
                print(f"wrote {config}: the sealed grading config with the course seed (keep it to yourself); "
                      f'load it from nbgrader_config.py with load_subconfig("{Path(config).name}")')
    except (FileNotFoundError, FileExistsError, ValueError, NotADirectoryError, PermissionError) as error:
        return _fail(prog, str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
