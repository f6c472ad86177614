"""Shared test settings and fixtures: a headless matplotlib backend, a bounded hypothesis profile,
and one build of the whole book that the book and browser tests share."""

import fcntl
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
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

# jsonschema (imported by nbformat) imports the optional rfc3987_syntax, when installed (JupyterLab's
# jupyter-events brings it), to check the "iri" string format; it builds a parser at import, 2 s in
# every test process. No test validates an IRI, so the tests go without it (jsonschema then skips
# that one format). Commands run by the tests in their own processes still import it.
sys.modules.setdefault("rfc3987_syntax", None)

# `make check` (the contributors' quick loop) runs every test but the slow ones: those that
# execute chapters, grade a class of notebooks, train the lab's models, build the reference library's
# models layer by layer, read its whole class table, mutate every checker, or time the kernels.
# `make test` (CI) runs them all. A test marked here by its file, its name or a fixture it uses (SLOW_FIXTURES);
# a new slow test joins by a name below or its own `@pytest.mark.slow`.
SLOW_FILES = {
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
    "text_configuration_trained_on_the_gpu",  # a 45-s CPU training run
    # the command-line tests that start Python processes (2-12 s each); the functions behind
    # the commands are tested in-process in the quick loop
    "fold_command_checks_and_writes",
    "course_commands_that_need_no_checker_start_without_torch",
    "command_line_answers_a_bad_path_without_a_traceback",
    "two_workers_of_one_run_share_one_build",
    # the sealed grader starts a fenced Python process per exercise graded (about a second each): the
    # classes it grades (the `graded` fixtures), every model answer, the plugin routes, the wheel
    "copied_model_answer_gets_no_points",
    "every_model_answer_passes_sealed",
    "installed_package_holds_no_answer_key",
    "plugin_grades_sealed",
)
SLOW_FIXTURES = {"browser", "graded"}


# `make test` runs on two workers (pytest-xdist, ``-n 2 --dist loadscope`` with the scopes and the
# order below). Each file's tests stay together, so that a costly module-scoped fixture runs once;
# the tests of UNGROUPED_FILES (many slow, independent tests) are dealt out one by one. The files
# that read the built book share one build (the ``built_book`` fixture: the first worker to ask
# builds it under a file lock, the other waits and reads it), and they are handed out in an order
# that keeps both workers busy: first the file that checks the build (its worker builds, about
# 6 minutes on a quiet machine), then every file that needs no book, then the browser files, which both workers
# then share. (xdist's own ``loadgroup`` marks do not take effect with this pytest, hence a scheduler of
# our own.)
BOOK_FILES = {
    "test_adoption.py",
    "test_book.py",
    "test_site.py",
    "test_site_answers.py",
    "test_site_explorers.py",
    "test_site_phone.py",
}
BUILDS_FIRST = "test_book.py"
UNGROUPED_FILES = {
    "test_config_families.py",
    "test_config_real.py",
    "test_models.py",
    "test_jupyterlab.py",
}


# The files whose checks read one run of a chapter's student edition (tests/chapter_runs.py): a chapter's
# tests of all three go to one worker, which runs the chapter once.
CHAPTER_RUN_FILES = {"test_student.py", "test_glue_in_kernel.py", "test_explorer_titles.py"}


def test_scope(nodeid: str) -> str:
    """The unit of work a test belongs to on the two workers: its file; itself (the tests of
    UNGROUPED_FILES); or its chapter (a parametrized test of CHAPTER_RUN_FILES, whose parameter is
    the chapter). The browser files stay whole (the browser and JupyterLab last the whole run on each
    worker, but a file's module fixtures, such as the site's visits, do not)."""
    file = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    if file in CHAPTER_RUN_FILES and nodeid.endswith("]"):
        return "chapter-run[" + nodeid.rsplit("[", 1)[1]
    return nodeid if file in UNGROUPED_FILES else file


def scope_rank(scope: str) -> int:
    """When a unit of work is handed out: 0 the build's own checks, 1 the rest, 2 the other book files."""
    file = scope.split("::", 1)[0].rsplit("/", 1)[-1]
    if file == BUILDS_FIRST:
        return 0
    return 2 if file in BOOK_FILES else 1


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from collections import OrderedDict

    from xdist.scheduler import LoadScopeScheduling

    class BookScheduling(LoadScopeScheduling):
        _ordered = False

        def _split_scope(self, nodeid):
            return test_scope(nodeid)

        def _assign_work_unit(self, node):
            if not self._ordered:  # xdist queues the largest scopes first; keep that within each rank
                self._ordered = True
                order = sorted(self.workqueue, key=scope_rank)
                self.workqueue = OrderedDict((scope, self.workqueue[scope]) for scope in order)
            super()._assign_work_unit(node)

    return BookScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        slow_fixture = SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if item.path.name in SLOW_FILES or any(name in item.name for name in SLOW_NAMES) or slow_fixture:
            item.add_marker(pytest.mark.slow)
        if "built_book" in getattr(item, "fixturenames", ()) and item.path.name not in BOOK_FILES:
            raise pytest.UsageError(f"{item.nodeid} reads the built book: add {item.path.name} to BOOK_FILES")


# Where the test run's time goes, worker by worker (issue 42): with POSENC_TEST_TIMELINE=FILE, each test
# appends a line {"worker", "test", "start", "stop"} (seconds since the epoch) to FILE;
# benchmarks/test_timeline.py reads it (each worker's busy time, its idle time and what it ran last).
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = time.time()
    yield
    timeline = os.environ.get("POSENC_TEST_TIMELINE")
    if timeline:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        line = json.dumps({"worker": worker, "test": item.nodeid, "start": start, "stop": time.time()})
        with open(timeline, "a") as out:  # one short write in append mode: lines of two workers do not mix
            out.write(line + "\n")


BOOK_OUT = ROOT / "_build" / "test-book"


@pytest.fixture(scope="session")
def site(built_book):
    """The built book served on 127.0.0.1 (one server per worker): ``(base URL, html folder)``."""
    returncode, _, html = built_book
    if returncode != 0:
        pytest.fail("the book did not build; see tests/test_book.py")
    handler = functools.partial(QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", html
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright, one per worker for the whole run (a launch costs seconds).
    Without Chromium the browser tests skip with how to install it, except under ``CI=true``, where
    a missing browser is a failure."""
    if not CHROMIUM.exists():
        message = f"no Chromium at {CHROMIUM}: `apt-get install -y chromium` to run the browser tests"
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but " + message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        yield browser
        browser.close()


def chapter_notebooks() -> list[Path]:
    """Every chapter notebook, in the book's order: ``chapters/NN_*.ipynb``. The one place the tests
    find the chapters (tests/test_book.py checks that _toc.yml lists each of them, in this order)."""
    return sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


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
def student_edition(tmp_path_factory):
    """The student edition of every chapter (``python -m posenc.course student chapters``), written
    once per worker; tests/chapter_runs.py runs its chapters."""
    from posenc.course.editions import write_student_edition

    out = tmp_path_factory.mktemp("student")
    write_student_edition(ROOT / "chapters", out)
    return out


@pytest.fixture(scope="session")
def built_book():
    """Build the whole book once, from scratch (so every notebook executes), with warnings as errors.

    ``jupyter-book build --all -W -n --keep-going`` into a fresh output folder, with
    ``POSENC_STATIC=1`` so that explorers render the website's player, as ``make book`` does.
    Under pytest-xdist the workers of one run share one build: the first to ask builds it while
    holding a file lock; the others wait for the lock and read the build's status and log.
    Returns ``(returncode, log, html_dir)``.
    """
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # one value for all workers of a run
    returncode, log = shared_build(BOOK_OUT, run, _build_book)
    return returncode, log, BOOK_OUT / "_build" / "html"


def shared_build(out: Path, run: str | None, build) -> tuple[int, str]:
    """``build()`` once per test run (``run``: the run's id, or None for always) for every process
    that asks, under a file lock beside ``out``; the others read ``out/build.returncode`` and
    ``out/build.log``. ``build`` empties ``out`` and writes ``build.log``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    marker, status = out / "built-for-run", out / "build.returncode"
    with open(out.parent / f"{out.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if run and marker.exists() and marker.read_text() == run and status.exists():
                return int(status.read_text()), (out / "build.log").read_text()
            returncode, log = build()
            status.write_text(str(returncode))
            if run:
                marker.write_text(run)
            return returncode, log
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_book() -> tuple[int, str]:
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
    return result.returncode, log
