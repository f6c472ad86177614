"""Drive the chapters in JupyterLab as a reader does: ``make lab``'s JupyterLab and jupyterlab-myst,
started on the loopback address over a copy of ``chapters/``, opened in Debian's Chromium by
Playwright. Used by tests/test_jupyterlab.py (every chapter: run all, rendered prose, one figure per
explorer, every control moved) and benchmarks/bench_jupyterlab.py (each control's latency).

The copy (chapters/ and images/, served from their parent as `make lab` serves the repository)
keeps the repository's notebooks untouched (JupyterLab saves what it runs). JupyterLab runs with the
book's extension and settings (posenc.book.lab_server) and the extensions `make lab` installs, its
settings its defaults but for no news or update checks (the machine may be offline)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

# as `make lab` starts it: no Nagle delay, the book's JupyterLab extension
from posenc.book.lab_server import EXTENSION_OPTION, SERVER_OPTION, SETTINGS_OPTION

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
JUPYTER = Path(sys.executable).with_name("jupyter")
TOKEN = "posenc-lab-test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def strip_folds(folder: Path) -> None:
    """Remove every fold flag (``metadata.jupyter``) from the notebooks in ``folder``: a chapter
    saved by a JupyterLab without the book's extension. The extension folds them again on open."""
    for path in folder.glob("*.ipynb"):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            cell.get("metadata", {}).pop("jupyter", None)
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@contextlib.contextmanager
def lab_server(workdir: Path, folded: bool = True, windowing: str | None = None, **kernel_env: str):
    """JupyterLab over a copy of the repository's chapters/ and images/ in ``workdir``, as ``make lab``
    serves the repository; yields its base URL (token in ``TOKEN``). ``kernel_env``: environment
    variables for the server and its kernels (``POSENC_LAB_SMOKE="1"``); ``folded=False``: the copies
    carry no fold flags (:func:`strip_folds`). ``windowing``: a notebook windowing mode the reader
    chose in Settings; None: the book's default ("none", every cell in the page, as `make lab` and a
    pip install set it: posenc.book.lab_server.LAB_SETTINGS)."""
    chapters = workdir / "chapters"
    shutil.copytree(ROOT / "chapters", chapters, ignore=shutil.ignore_patterns("reviews", "ruff.toml"))
    if not folded:
        strip_folds(chapters)
    shutil.copytree(ROOT / "images", workdir / "images")
    settings = workdir / "settings" / "@jupyterlab"
    settings_files = {"apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}}
    if windowing is not None:
        settings_files["notebook-extension/tracker"] = {"windowingMode": windowing}
    for extension, values in settings_files.items():
        path = settings / f"{extension}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    # the JupyterLab extensions .venv-lab (make lab) has: .venv's, less jupytext's (the book build's);
    # the book's own from the repository's folder (EXTENSION_OPTION), as `make lab` loads it
    extensions = workdir / "labextensions"
    installed = Path(sys.prefix, "share", "jupyter", "labextensions")
    for folder in [*installed.glob("[!@]*"), *installed.glob("@*/*")]:
        if folder.name not in ("jupyterlab-jupytext", "posenc-jupyterlab"):  # the book's: from the repository
            (extensions / folder.relative_to(installed)).parent.mkdir(parents=True, exist_ok=True)
            (extensions / folder.relative_to(installed)).symlink_to(folder)
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(workdir / "config"),
        JUPYTER_RUNTIME_DIR=str(workdir / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(workdir / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(workdir / "workspaces"),
        **kernel_env,
    )
    env.pop("POSENC_STATIC", None)  # a reader's kernel: live ipywidgets, not the website's player
    port = _free_port()
    command = [
        str(JUPYTER), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={workdir}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
        SERVER_OPTION, EXTENSION_OPTION, SETTINGS_OPTION,
        f"--LabServerApp.labextensions_path={extensions}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    if os.getuid() == 0:
        command.append("--allow-root")
    log = open(workdir / "server.log", "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log_text = (workdir / "server.log").read_text()[-3000:]
                    raise RuntimeError("JupyterLab did not start:\n" + log_text) from None
                time.sleep(0.3)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


SCRIPT = Path(__file__).with_name("lab_driver.js")


def open_chapter(browser, base: str, notebook: str):
    """Open ``notebook`` (a chapter's name) in a fresh browser context; returns (page, page errors),
    each error its message and stack.
    The page records its console messages as (type, text) in ``page.console_messages`` and the
    addresses the server answered with an error (4xx, 5xx) in ``page.failed_requests``."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(path=str(SCRIPT))
    page = context.new_page()
    errors = []
    page.console_messages, page.failed_requests = [], []
    page.on("pageerror", lambda error: errors.append(f"{error}\n{error.stack or ''}"))
    page.on("console", lambda message: page.console_messages.append((message.type, message.text)))
    page.on("response", lambda response: response.status >= 400 and page.failed_requests.append(response.url))
    page.goto(f"{base}/lab/tree/chapters/{notebook}.ipynb?token={TOKEN}&reset")  # reset: no tab of an earlier run
    return page, errors


# every document open in JupyterLab's main area closed, its kernel shut down first (no dialog: a
# widget disposed of is closed as it is, saved or not)
CLOSE_ALL = """async () => {
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (widget.sessionContext && widget.sessionContext.session) await widget.sessionContext.shutdown();
    widget.dispose();
  }
}"""


class Reader:
    """One browser page with JupyterLab loaded, kept for chapter after chapter: loading JupyterLab's page
    costs about 4 s a time, and a reader opens chapter after chapter in one JupyterLab too.

    :meth:`open` closes what is open (its kernels shut down), then opens the chapter from the file
    browser's command (the first chapter: by its address, :func:`open_chapter`); the page's records of
    errors, console messages and failed requests start empty for each chapter. After a failure,
    :meth:`discard` drops the page, so that the next chapter starts in a fresh one."""

    def __init__(self, browser, base: str):
        self.browser, self.base = browser, base
        self.page, self.errors = None, []

    def open(self, notebook: str):
        """Open ``notebook`` (a chapter's name); returns (page, page errors) as :func:`open_chapter` does."""
        if self.page is not None:
            try:
                self.page.evaluate(CLOSE_ALL)
            except Exception:
                self.discard()
        path = f"chapters/{notebook}.ipynb"
        if self.page is None:
            self.page, self.errors = open_chapter(self.browser, self.base, notebook)
            return self.page, self.errors
        self.errors.clear()
        self.page.console_messages.clear()
        self.page.failed_requests.clear()
        self.page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", path)
        self.page.wait_for_function(
            "(path) => { const w = window.jupyterapp.shell.currentWidget;"
            " return !!(w && w.context && w.context.path === path); }",
            arg=path,
            timeout=60_000,
        )
        return self.page, self.errors

    def discard(self) -> None:
        if self.page is not None:
            with contextlib.suppress(Exception):
                self.page.context.close()
        self.page, self.errors = None, []


def open_and_run_all(browser, base: str, notebook: str, timeout_s: float = 900, reader: Reader | None = None):
    """Open ``notebook`` (in ``reader``'s page if given, else in a fresh browser context), Run All Cells
    (code and markdown, so jupyterlab-myst evaluates the prose's ``{eval}`` roles) at the first moment
    the kernel is idle, as an eager reader clicks it, while JupyterLab may still be drawing the
    notebook; wait until every cell ran. Returns (page, seconds the run took, page errors)."""
    page, errors = reader.open(notebook) if reader is not None else open_chapter(browser, base, notebook)
    page.wait_for_function("() => posencLab.kernelIdle()", timeout=120_000, polling=50)
    started = time.monotonic()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function("() => posencLab.prompts().some(p => /[0-9*]/.test(p))", timeout=60_000, polling=100)
    page.wait_for_function("() => posencLab.allRun()", timeout=timeout_s * 1000, polling=250)
    seconds = time.monotonic() - started
    page.wait_for_timeout(500)  # the last widget views and inline expressions render
    return page, seconds, errors


def move_every_control(page, moves: int = 1, pause_ms: int = 250) -> list[dict]:
    """Move each control of each live explorer ``moves`` times, ``pause_ms`` after each new figure
    (a reader stepping with the arrow keys); one record per move."""
    records = []
    for e, count in enumerate(page.evaluate("() => posencLab.explorerControls()")):
        for k in range(count):
            for _ in range(moves):
                record = page.evaluate("([e, k]) => posencLab.move(e, k)", [e, k])
                records.append({"explorer": e, "control": k, **record})
                page.wait_for_timeout(pause_ms)
    return records
