"""How `make test` shares its two workers (tests/conftest.py): the order work is handed out in,
and one book build per run for every worker that asks."""

import multiprocessing
import time

import conftest

FILES = ["test_absolute.py", "test_adoption.py", "test_book.py", "test_rope.py", "test_site_explorers.py"]


def test_the_build_checks_go_first_the_browser_files_last():
    order = sorted(FILES, key=conftest.scope_rank)
    assert order[0] == conftest.BUILDS_FIRST == "test_book.py"
    assert set(order[-2:]) == {"test_adoption.py", "test_site_explorers.py"}  # book files, after the rest
    assert order[1:3] == ["test_absolute.py", "test_rope.py"]  # stable: xdist's size order is kept


def test_slow_independent_files_are_dealt_test_by_test_others_stay_whole():
    one = "tests/test_jupyterlab.py::test_chapter_runs_renders_and_explores_in_jupyterlab[01_why_order_matters]"
    assert conftest.test_scope(one) == one
    # a chapter's checks that read its one student run go together, whichever file they are in
    runs = [
        "tests/test_student.py::test_student_notebook_runs_top_to_bottom[08_rope]",
        "tests/test_glue_in_kernel.py::test_every_eval_role_shows_in_the_kernel_what_the_website_shows[08_rope]",
        "tests/test_explorer_titles.py::test_every_explorer_title_stays_inside_its_figure[08_rope]",
    ]
    assert {conftest.test_scope(nodeid) for nodeid in runs} == {"chapter-run[08_rope]"}
    assert conftest.test_scope("tests/test_student.py::test_one_chapter_can_be_handed_out") == "test_student.py"
    assert conftest.test_scope("tests/test_rope.py::test_relative[3]") == "test_rope.py"
    assert conftest.test_scope("tests/test_book.py::test_x") == "test_book.py"  # the build's checks: one unit
    browser_test = "tests/test_site.py::test_page_loads_offline_without_errors[index]"
    assert conftest.test_scope(browser_test) == "test_site.py"  # whole: one visit per page for its checks
    assert conftest.scope_rank("test_site.py") == 2 and conftest.scope_rank("test_book.py") == 0


def _build_in_child(out, run, results):
    def build():
        with open(out.parent / "builds.txt", "a") as count:
            count.write("built\n")
        out.mkdir(parents=True, exist_ok=True)
        time.sleep(0.5)  # the other process asks meanwhile and must wait
        (out / "build.log").write_text("the log")
        return 3, "the log"

    results.put(conftest.shared_build(out, run, build))


def _ask(out, run, processes=2):
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    children = [context.Process(target=_build_in_child, args=(out, run, results)) for _ in range(processes)]
    for child in children:
        child.start()
    answers = [results.get(timeout=60) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    return answers


def test_two_workers_of_one_run_share_one_build(tmp_path):
    out = tmp_path / "book"
    assert _ask(out, "run-1") == [(3, "the log")] * 2
    assert (tmp_path / "builds.txt").read_text().count("built") == 1
    assert _ask(out, "run-1", processes=1) == [(3, "the log")]  # the same run: still one build
    assert (tmp_path / "builds.txt").read_text().count("built") == 1
    _ask(out, "run-2", processes=1)  # a new run builds afresh
    assert (tmp_path / "builds.txt").read_text().count("built") == 2
    _ask(out, None, processes=2)  # no run id (no xdist): every process builds
    assert (tmp_path / "builds.txt").read_text().count("built") == 4
