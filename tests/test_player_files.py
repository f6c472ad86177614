"""The explorers' player lives in real files (``posenc/book/_book_static``) that every explorer loads.

A notebook's output carries the files inline, so that an explorer works on its own; a page of the
website links them once instead (``posenc.book.sphinxext``). Checked here: the files ship with the
package, an explorer's HTML holds them and then calls the player, a small Sphinx site links them
only where there is an explorer, the browser formulas' JavaScript ports agree with their Python
twins (in node), and in Chromium an explorer works both ways: alone on a page and on the site.
"""

import contextlib
import fnmatch
import functools
import http.server
import json
import math
import re
import shutil
import subprocess
import textwrap
import threading
import tomllib
from pathlib import Path

import numpy as np
import pytest

from posenc.book import Explorer, choice, slider
from posenc.book.browser_formulas import BROWSER_FORMULAS
from posenc.book.player import PLAYER_FILES, STATIC, player_code

from conftest import QuietHandler

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")


def wave_explorer(speed=1.0):
    """A sine or cosine wave whose speed and shape are the controls; ``speed`` is the default."""
    x = np.linspace(0, 10, 200)

    def setup(fig):
        ax = fig.subplots()
        (line,) = ax.plot(x, np.sin(speed * x))
        ax.set(ylim=(-1.1, 1.1))

        def update(speed, shape):
            line.set_ydata(np.sin(speed * x) if shape == "sin" else np.cos(speed * x))
            return [line]

        return update

    controls = {"speed": slider(0.5, 2.0, speed, step=0.5), "shape": choice(["sin", "cos"])}
    return Explorer(setup, controls, animate="speed", alt=lambda speed, shape: f"a {shape} wave at speed {speed}")


@functools.cache
def explorers() -> tuple[str, str]:
    return wave_explorer(1.0).static_html(), wave_explorer(1.5).static_html()


def ident(explorer_html: str) -> str:
    return re.search(r'<figure class="posenc-explorer" id="([\w-]+)"', explorer_html).group(1)


def test_the_player_files_ship_with_the_package():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["posenc"]
    package = ROOT / "src" / "posenc"
    assert STATIC == package / "book" / "_book_static"
    assert [Path(name).suffix for name in PLAYER_FILES] == [".css", ".js", ".js"]
    for name in PLAYER_FILES:
        text = (STATIC / name).read_text()
        assert len(text) > 500, name
        assert any(fnmatch.fnmatch(f"book/_book_static/{name}", glob) for glob in globs), f"{name} is not package data"
        # inlined into <style> or <script>: nothing in the file may close the element early
        assert "</style" not in text.lower() and "</script" not in text.lower(), name
    formulas, player = ((STATIC / name).read_text() for name in PLAYER_FILES[1:])
    assert "var posencFormulas={" in formulas and "function posencPlayer(id,S,interval){" in player


def test_an_explorer_carries_the_player_inline_then_hands_it_its_data():
    html = explorers()[0]
    code = player_code()
    assert html.startswith(code) and html.count(code) == 1
    css, formulas, player = ((STATIC / name).read_text() for name in PLAYER_FILES)
    assert code == f"<style>{css}</style><script>{formulas}{player}</script>"
    rest = html[len(code) :]
    assert rest.startswith(f'<figure class="posenc-explorer" id="{ident(html)}">')
    call = re.search(r"</figure><script>posencPlayer\(\"([\w-]+)\",(\{.*\}),(\d+)\);</script>$", rest)
    assert call and call.group(1) == ident(html) and call.group(3) == "600"
    data = json.loads(call.group(2))
    assert [c["values"] for c in data["controls"]] == [[0.5, 1.0, 1.5, 2.0], ["sin", "cos"]]
    assert "posencPlayer" not in rest[: call.start()]  # one call, after the figure it drives


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """A two-page Sphinx site with the book's extension: one page with two explorers, one without."""
    from sphinx.cmd.build import build_main

    source = tmp_path_factory.mktemp("site-source")
    (source / "conf.py").write_text('extensions = ["posenc.book.sphinxext"]\nhtml_theme = "basic"\n')
    (source / "index.rst").write_text("Index\n=====\n\n.. toctree::\n\n   explorers\n")
    raw = "".join(".. raw:: html\n\n" + textwrap.indent(html, "   ") + "\n\n" for html in explorers())
    (source / "explorers.rst").write_text("Explorers\n=========\n\n" + raw)
    out = tmp_path_factory.mktemp("site") / "html"
    assert build_main(["-b", "html", "-q", "-W", str(source), str(out)]) == 0
    return out


def test_the_site_links_the_player_files_on_pages_with_an_explorer_only(small_site):
    page = (small_site / "explorers.html").read_text()
    head, body = page.split("<body", 1)
    links = re.findall(r'(?:href|src)="_static/(posenc-(?:player|formulas)\.\w+)(?:\?v=\w+)?"', head)
    assert links == list(PLAYER_FILES)  # styles first, the formulas before the player that uses them
    assert player_code() not in page and "function posencPlayer" not in page and "<style>" not in body
    for html in explorers():
        figure_and_call = html[len(player_code()) :]
        assert figure_and_call in body
    assert body.count("posencPlayer(") == 2
    for name in PLAYER_FILES:
        assert (small_site / "_static" / name).read_bytes() == (STATIC / name).read_bytes()
    index = (small_site / "index.html").read_text()
    assert "posenc-player" not in index and "posenc-formulas" not in index


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_player_files_parse_as_javascript():
    for name in PLAYER_FILES[1:]:
        result = subprocess.run([NODE, "--check", str(STATIC / name)], capture_output=True, text=True)
        assert result.returncode == 0, f"{name}: {result.stderr}"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_every_browser_formula_port_agrees_with_its_python_twin():
    rng = np.random.default_rng(7)
    cases = [
        ("sinusoidal", {"n_positions": 5, "d_model": 6, "base": 100.0, "rows": 8, "cols": 10}),
        ("sinusoidal", {"n_positions": 64, "d_model": 32, "base": 10000.0, "rows": 64, "cols": 32}),
        ("sinusoidal_similarity", {"n_positions": 24, "d_model": 16, "base": 50.0}),
        ("rope_decay_bound", {"base": 10000.0, "head_dim": 64, "max_offset": 500, "normalize": False}),
        ("rope_decay_bound", {"base": 500000.0, "head_dim": 128, "max_offset": 300, "normalize": True}),
    ]
    for layout in ("interleaved", "half"):
        for d, rotate, normalize in ((8, 0, False), (64, 1000, True)):
            q, k = rng.normal(size=(2, d)).tolist()
            arguments = {"q": q, "k": k, "base": 1e4, "max_offset": 300, "layout": layout}
            cases.append(("rope_scores", {**arguments, "rotate_k_by": rotate, "normalize": normalize}))
    script = (STATIC / "posenc-formulas.js").read_text() + (
        f"\nconst cases = {json.dumps(cases)};\n"
        "const plain = v => Array.from(v, t => (Number.isNaN(t) ? null : t));\n"
        "console.log(JSON.stringify({keys: Object.keys(posencFormulas), values: cases.map(([name, a]) => {\n"
        "  const r = posencFormulas[name](a); return r.x ? [plain(r.x), plain(r.y)] : plain(r); })}));\n"
    )
    result = subprocess.run([NODE], input=script, capture_output=True, text=True, check=True)
    ported = json.loads(result.stdout)
    assert sorted(ported["keys"]) == sorted(BROWSER_FORMULAS)  # every twin has its port, keyed by its name
    assert {name for name, _ in cases} == set(BROWSER_FORMULAS)
    for (name, arguments), values in zip(cases, ported["values"], strict=True):
        twin = BROWSER_FORMULAS[name](**arguments)
        if isinstance(twin, tuple):  # a line: (x, y)
            np.testing.assert_array_equal(values[0], twin[0], err_msg=name)
            np.testing.assert_allclose(values[1], twin[1], rtol=1e-9, atol=1e-9, err_msg=name)
        else:  # an image, row by row; NaN (null in JSON) where the table is padded
            got = np.array([np.nan if v is None else v for v in values]).reshape(np.shape(twin))
            np.testing.assert_allclose(got, twin, rtol=1e-9, atol=1e-9, err_msg=f"{name} {arguments}")


@contextlib.contextmanager
def served(folder: Path):
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


CANVAS_HASH = """id => { const c = document.getElementById(id).querySelector('canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let h = 2166136261; for (let i = 0; i < d.length; i++) { h ^= d[i]; h = Math.imul(h, 16777619); }
  return h >>> 0; }"""


def check_explorers_work(browser, url):
    """Open ``url`` (other hosts refused); every explorer on it draws and follows its two controls."""
    page = browser.new_page()
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.route("**/favicon.ico", lambda route: route.fulfill(status=204))  # the browser's own request
    try:
        page.goto(url, wait_until="load")
        for html in explorers():
            name = ident(html)
            root = f"#{name}"
            page.wait_for_selector(f"{root} canvas:not([hidden])")
            assert page.locator(f"{root} img").is_hidden() and page.locator(f"{root} .pe-controls").is_visible()
            canvas = page.locator(f"{root} canvas")
            start = page.evaluate(CANVAS_HASH, name)
            page.locator(f"#{name}-0").fill("3")  # speed 2.0, the last of 0.5, 1, 1.5, 2
            assert page.locator(f'output[for="{name}-0"]').inner_text() == "2"
            assert page.locator(f"#{name}-0").get_attribute("aria-valuetext") == "2"
            moved = page.evaluate(CANVAS_HASH, name)
            assert moved != start
            page.locator(f"#{name}-1").select_option("1")
            assert canvas.get_attribute("aria-label") == "a cos wave at speed 2.0"
            assert page.evaluate(CANVAS_HASH, name) not in (start, moved)
        assert errors == []
        local = ("http://127.0.0.1:", "data:", "file:")
        assert [u for u in requests if not u.startswith(local)] == []
        return requests
    finally:
        page.close()


def test_an_explorer_works_alone_as_in_a_notebook_output(browser, tmp_path):
    page = "<!doctype html><html lang='en'><title>t</title><body>" + "".join(explorers()) + "</body></html>"
    (tmp_path / "notebook-output.html").write_text(page)
    with served(tmp_path) as base:
        requests = check_explorers_work(browser, f"{base}/notebook-output.html")
    assert not any("posenc-player" in u or "posenc-formulas" in u for u in requests)  # all inline


def test_explorers_work_on_the_site_with_the_linked_files(browser, small_site):
    with served(small_site) as base:
        requests = check_explorers_work(browser, f"{base}/explorers.html")
    loaded = [name for name in PLAYER_FILES for u in requests if f"/_static/{name}" in u]
    assert loaded == list(PLAYER_FILES)  # each file once


def test_an_explorer_is_boxed_with_the_width_that_makes_its_smallest_text_9px():
    from posenc.book.webfigure import figure_data

    explorer = wave_explorer(1.0)
    data = figure_data(explorer)
    fig = explorer.figure
    # the smallest text is the tick labels at the style's font size (points), at the figure's dpi
    ticks_pt = min(t.get_fontsize() for t in explorer.figure.axes[0].get_xticklabels())
    assert data["smallest_text_px"] == pytest.approx(ticks_pt * fig.dpi / 72, abs=1e-3)
    html = explorer.static_html()
    width = re.search(r'<canvas width="(\d+)"', html).group(1)
    assert int(width) == round(fig.bbox.width)
    box = re.search(r'<div class="posenc-figure-box" style="--posenc-min-width:(\d+)px"', html)
    assert int(box.group(1)) == math.ceil(int(width) * 9 / data["smallest_text_px"])
    assert html.index("posenc-figure-box") < html.index("<img") < html.index("<canvas") < html.index("</div>")
