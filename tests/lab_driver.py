"""Drive the chapters in JupyterLab as a reader does: ``make lab``'s JupyterLab and jupyterlab-myst,
started on the loopback address over a copy of ``chapters/``, opened in Debian's Chromium by
Playwright. Used by tests/test_jupyterlab.py (every chapter: run all, rendered prose, one figure per
explorer, every control moved) and benchmarks/bench_jupyterlab.py (each control's latency).

The copy keeps the repository's notebooks untouched (JupyterLab saves what it runs). Settings live
in the copy too: notebook windowing off (JupyterLab 4 otherwise renders only the cells on screen),
no news or update checks (the machine may be offline)."""

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

from posenc.book.lab_server import SERVER_OPTION  # as `make lab` starts it: no Nagle delay

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
JUPYTER = Path(sys.executable).with_name("jupyter")
TOKEN = "posenc-lab-test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def lab_server(workdir: Path, **kernel_env: str):
    """JupyterLab over a copy of chapters/ in ``workdir``; yields its base URL (token in ``TOKEN``).
    ``kernel_env``: environment variables for the server and its kernels (``POSENC_LAB_SMOKE="1"``)."""
    chapters = workdir / "chapters"
    shutil.copytree(ROOT / "chapters", chapters, ignore=shutil.ignore_patterns("reviews", "*.md", "ruff.toml"))
    settings = workdir / "settings" / "@jupyterlab"
    for extension, values in {
        "notebook-extension/tracker": {"windowingMode": "none"},
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        path = settings / f"{extension}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
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
        f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={chapters}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None", SERVER_OPTION,
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


def open_and_run_all(browser, base: str, notebook: str, timeout_s: float = 900):
    """Open ``notebook`` in a fresh browser context, Run All Cells (code and markdown, so
    jupyterlab-myst evaluates the prose's ``{eval}`` roles), wait until every cell ran.
    Returns (page, seconds the run took, page errors)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(path=str(SCRIPT))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{base}/lab/tree/{notebook}.ipynb?token={TOKEN}&reset")  # reset: no tab of an earlier run
    page.wait_for_function("() => posencLab.kernelIdle()", timeout=120_000, polling=250)
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
