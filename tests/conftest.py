"""Shared test settings and fixtures: a headless matplotlib backend, a bounded hypothesis profile,
and one build of the whole book that the book and browser tests share."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest
import yaml

matplotlib.use("Agg")

from hypothesis import settings

settings.register_profile("book", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "book"))

ROOT = Path(__file__).resolve().parents[1]

# `make check` (the contributors' quick loop) runs every test but the slow ones: those that
# execute chapters, grade a class of notebooks, train the lab's models, build the reference library's
# models layer by layer, read its whole class table, mutate every checker, or time the kernels.
# `make test` (CI) runs them all. A test marked here by its file or its name; a new slow test
# joins by a name below or its own `@pytest.mark.slow`.
SLOW_FILES = {
    "test_lab.py",
    "test_explorer_titles.py",
    "test_course_grade.py",
    "test_course_mutants.py",
    "test_benchmarks.py",
}
SLOW_NAMES = (
    "notebook_runs_top_to_bottom",
    "lab_command_line",
    "layer_by_layer",
    "learned_position_table_before_and_after_training",
    "class_defaults",
    "one_chapter_can_be_handed_out",
    # seconds each, kept out of the quick loop: a pure-Python loop through every hidden case,
    # every mistake model against every hint, the corrections page against the git history
    "sinusoidal-loops",
    "every_hint_is_distinct_and_every_mistake_model_earns_its_own",
    "each_correction_quotes_text_that_the_commit_replaced",
)


# `make test` runs on two workers (pytest-xdist, ``-n 2 --dist loadscope`` with the scopes below).
# The files whose tests read the built book run on one worker, so the book is built once; each
# other file's tests stay together, so that a costly module-scoped fixture runs once; the tests of
# UNGROUPED_FILES (many slow, independent tests) are dealt out one by one. (xdist's own
# ``loadgroup`` marks do not take effect with this pytest, hence a scheduler of our own.)
BOOK_FILES = {
    "test_adoption.py",
    "test_book.py",
    "test_site.py",
    "test_site_answers.py",
    "test_site_explorers.py",
    "test_site_phone.py",
}
UNGROUPED_FILES = {"test_student.py", "test_config_families.py", "test_config_real.py", "test_models.py"}


def test_scope(nodeid: str) -> str:
    """The unit of work a test belongs to on the two workers: "book", its file, or itself."""
    file = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if file in BOOK_FILES:
        return "book"
    return nodeid if file in UNGROUPED_FILES else file


test_scope.__test__ = False  # a helper, not a test


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class BookScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return test_scope(nodeid)

    return BookScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        opens_a_browser = "browser" in getattr(item, "fixturenames", ())
        if item.path.name in SLOW_FILES or any(name in item.name for name in SLOW_NAMES) or opens_a_browser:
            item.add_marker(pytest.mark.slow)
        if "built_book" in getattr(item, "fixturenames", ()) and item.path.name not in BOOK_FILES:
            raise pytest.UsageError(f"{item.nodeid} reads the built book: add {item.path.name} to BOOK_FILES")


BOOK_OUT = ROOT / "_build" / "test-book"


def toc_files() -> list[str]:
    """Every page of the table of contents, root first, as paths without suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            files.append(chapter["file"])
            files += [section["file"] for section in chapter.get("sections", [])]
    return files


@pytest.fixture(scope="session")
def built_book():
    """Build the whole book once, from scratch (so every notebook executes), with warnings as errors.

    ``jupyter-book build --all -W -n --keep-going`` into a fresh output folder, with
    ``POSENC_STATIC=1`` so that explorers render the website's player, as ``make book`` does.
    Returns ``(returncode, log, html_dir)``.
    """
    shutil.rmtree(BOOK_OUT, ignore_errors=True)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [
        str(jupyter_book),
        "build",
        "--all",
        "-W",
        "-n",
        "--keep-going",
        "--path-output",
        str(BOOK_OUT),
        str(ROOT),
    ]
    env = dict(os.environ, POSENC_STATIC="1")
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=3600, env=env)
    log = result.stdout + result.stderr
    BOOK_OUT.mkdir(parents=True, exist_ok=True)
    (BOOK_OUT / "build.log").write_text(log)
    return result.returncode, log, BOOK_OUT / "_build" / "html"
