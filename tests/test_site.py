"""The built website in a real browser: self-contained, typeset, explorable, accessible, light.

Playwright drives Debian's Chromium (``apt-get install -y chromium``) against the site served on
127.0.0.1. Every request to another host is aborted and counted as a failure: the site must work
from a USB stick. Without Chromium these tests skip with a message, except under ``CI=true``,
where a missing browser is a failure.
"""

import contextlib
import functools
import gzip
import html.parser
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from conftest import BOOK_OUT, ROOT, toc_files

PAGES = toc_files()
CHAPTER_PAGES = [p for p in PAGES if re.match(r"chapters/\d\d_", p)]
MAX_PAGE_BYTES = 3 * 2**20


@contextlib.contextmanager
def opened(browser, url, color_scheme="light", **context_options):
    """``open_page`` as a context: the page's browser context is closed afterwards."""
    page, record = open_page(browser, url, color_scheme, **context_options)
    try:
        yield page, record
    finally:
        page.context.close()


def open_page(browser, url, color_scheme="light", **context_options):
    """Load ``url`` in a fresh context (empty cache), recording console errors, failed requests
    (network errors and HTTP statuses >= 400) and requests to other hosts. The book's theme
    follows the reader's ``color_scheme`` (light or dark); ``context_options`` (a phone's
    ``viewport``, ``has_touch``) go to the browser context, whose viewport is 1280 x 900 unless given."""
    page, record = recording_page(new_context(browser, color_scheme, **context_options))
    load(page, url)
    return page, record


def new_context(browser, color_scheme="light", **context_options):
    """A browser context (empty cache) for ``color_scheme``, 1280 x 900 unless ``context_options`` say."""
    options = {"viewport": {"width": 1280, "height": 900}, **context_options}
    return browser.new_context(color_scheme=color_scheme, **options)


def recording_page(context):
    """A new page of ``context`` and the record ``open_page`` describes, kept for every load in it
    (clear its lists between pages)."""
    page = context.new_page()
    record = {"console": [], "failed": [], "external": []}
    page.on("console", lambda m: record["console"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: record["console"].append(str(e)))
    page.on("requestfailed", lambda r: record["failed"].append(r.url))

    def check_status(response):
        if response.status >= 400:
            record["failed"].append(f"{response.status} {response.url}")

    page.on("response", check_status)

    def route(request_route):
        host = urlparse(request_route.request.url).hostname
        if request_route.request.url.startswith("data:") or host == "127.0.0.1":
            request_route.continue_()
        else:
            record["external"].append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    return page, record


def load(page, url):
    """Go to ``url`` and wait until the network is idle and MathJax has typeset the page."""
    page.goto(url, wait_until="networkidle")
    page.wait_for_function("() => !window.MathJax || !MathJax.startup || MathJax.startup.promise")
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")


# axe checks the page without its code cells' inputs: two thirds of a chapter's elements are the
# syntax highlighter's token spans in them, which made axe take 20-45 s a page (10-13 s without).
# Outputs, code blocks in the prose and their copy buttons stay in. All tokens of one class share
# one colour, so low_contrast_code() checks one token of every class on the page (inputs included).
WITHOUT_CODE = {"exclude": [[".cell_input"]]}

CODE_TOKENS = """() => {
  const seen = new Map();
  const opaque = c => c && c !== 'transparent' && !/rgba\\(.*,\\s*0\\)$/.test(c);
  for (const span of document.querySelectorAll('.highlight span[class]')) {
    if (!span.textContent.trim()) continue;  // folded code counts too: a reader can open it
    const key = span.className;
    if (seen.has(key)) continue;
    let e = span, background = null;
    while (e && !background) {
      const b = getComputedStyle(e).backgroundColor;
      if (opaque(b)) background = b;
      e = e.parentElement;
    }
    seen.set(key, {token: key, color: getComputedStyle(span).color, background: background || 'rgb(255, 255, 255)'});
  }
  return Array.from(seen.values());
}"""


def _luminance(css_colour: str) -> float:
    """WCAG 2.1 relative luminance of an ``rgb(r, g, b)`` or ``rgba(...)`` colour."""
    channels = [int(float(v)) / 255 for v in re.findall(r"[\d.]+", css_colour)[:3]]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2.1 contrast ratio, (L1 + 0.05) / (L2 + 0.05) with L1 the lighter."""
    high, low = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def low_contrast_code(page) -> list[str]:
    """One token of each highlighter class on the page (folded code included) whose colour against its
    background is below WCAG AA's 4.5:1 for normal text."""
    tokens = page.evaluate(CODE_TOKENS)
    return [
        f"{t['token']}: {t['color']} on {t['background']} ({contrast_ratio(t['color'], t['background']):.2f}:1)"
        for t in tokens
        if contrast_ratio(t["color"], t["background"]) < 4.5
    ]


def test_contrast_ratio_matches_wcag_examples():
    assert contrast_ratio("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    assert contrast_ratio("rgb(255, 255, 255)", "rgb(255, 255, 255)") == pytest.approx(1.0)
    # #767676 on white is the lightest grey that passes AA (4.54:1, WebAIM's contrast checker)
    assert contrast_ratio("rgb(118, 118, 118)", "rgb(255, 255, 255)") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("rgba(119, 119, 119, 1)", "rgb(255, 255, 255)") < 4.5


WEIGHT_SCRIPT = """() => {
  const entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
  const next = f => f.nextElementSibling;
  const script = f => (next(f) && next(f).tagName === 'SCRIPT' ? next(f).outerHTML : '');
  const players = Array.from(document.querySelectorAll('figure.posenc-explorer')).map(f => f.outerHTML + script(f));
  return {resources: entries.map(e => [e.name, e.encodedBodySize || 0]), players: players.join('')};
}"""
MAX_FIRST_VISIT_GZIP = 1.5 * 2**20
MAX_EXPLORER_DATA_GZIP = 2**20


def _gzipped(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=6))


# Every check of one page reads one visit: a fresh context (empty cache, so its resource timings are a
# first visit's), the page loaded once in light mode (load, offline, math and alt text; then its weight;
# then axe), then the reader's preference switched to dark with ``emulate_media`` (the theme follows it
# in "auto" mode, as a reader's browser does when the system turns dark) and axe's contrast rule again.
_VISITS: dict[str, dict] = {}


def visit(base: str, browser, name: str) -> dict:
    """What the page checks read, from one visit to ``name`` (made on the first ask, then kept)."""
    if name not in _VISITS:
        _VISITS[name] = _visit(base, browser, name)
    return _VISITS[name]


def _visit(base: str, browser, name: str) -> dict:
    from axe_playwright_python.sync_playwright import Axe

    context = new_context(browser)
    try:
        page, record = recording_page(context)
        load(page, f"{base}/{name}.html")
        loaded = {
            "external": list(record["external"]),
            "failed": list(record["failed"]),
            "console": list(record["console"]),
            "text": page.inner_text("main"),
            "typeset": page.locator("mjx-container").count(),
            "math": page.locator(".math").count(),
            "no_alt": page.eval_on_selector_all(
                "img", "els => els.filter(e => !(e.getAttribute('alt') || '').trim()).map(e => e.src.slice(0, 80))"
            ),
        }
        weight = page.evaluate(WEIGHT_SCRIPT)
        violations = Axe().run(page, context=WITHOUT_CODE).response["violations"]
        light = {"violations": violations, "code": low_contrast_code(page)}
        page.emulate_media(color_scheme="dark")
        page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'", timeout=10_000)
        # the theme's colours ease in (CSS transitions of 0.15 s): measure once every one has ended
        page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')", timeout=10_000)
        response = Axe().run(page, context=WITHOUT_CODE, options={"runOnly": ["color-contrast"]}).response
        dark = {
            "theme": page.evaluate("() => document.documentElement.dataset.theme"),
            "violations": response["violations"],
            "code": low_contrast_code(page),
        }
        return {"load": loaded, "weight": weight, "light": light, "dark": dark}
    finally:
        context.close()


@pytest.mark.book
@pytest.mark.parametrize("name", PAGES)
def test_page_loads_offline_without_errors(site, browser, name):
    loaded = visit(site[0], browser, name)["load"]
    assert loaded["external"] == [], f"{name} requested other hosts: {loaded['external']}"
    assert loaded["failed"] == [], f"{name} had failed requests: {loaded['failed']}"
    assert loaded["console"] == [], f"{name} logged errors: {loaded['console']}"
    # math is typeset: no raw TeX delimiters left in the visible text
    text = loaded["text"]
    assert "\\(" not in text and "\\[" not in text and "$$" not in text, f"{name} has untypeset math"
    assert loaded["typeset"] == loaded["math"]
    # every image has alt text
    assert loaded["no_alt"] == [], f"{name} has images without alt text: {loaded['no_alt']}"


@pytest.mark.book
@pytest.mark.parametrize("name", PAGES)
def test_no_serious_accessibility_violations(site, browser, name):
    light = visit(site[0], browser, name)["light"]
    serious = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in light["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == [], f"{name}: " + "; ".join(serious)
    assert light["code"] == [], f"{name}: code token colours below 4.5:1"


@pytest.mark.book
@pytest.mark.parametrize("name", PAGES)
def test_dark_mode_keeps_text_contrast(site, browser, name):
    """The theme follows the reader's dark preference; text in boxes and explorers stays legible."""
    dark = visit(site[0], browser, name)["dark"]
    assert dark["theme"] == "dark"
    failures = [f"{n['target']}: {n['failureSummary'][:160]}" for v in dark["violations"] for n in v["nodes"]]
    assert failures == [], f"{name} in dark mode: " + "; ".join(failures[:5])
    assert dark["code"] == [], f"{name} in dark mode: code token colours below 4.5:1"


@pytest.mark.book
def test_page_weight_first_visit_and_explorer_data(site, browser):
    """What a reader's first visit to each page transfers, as a static server with gzip serves it.

    Every file the page loads (its HTML with the explorers' figures and data, the player's and the
    theme's scripts, styles and fonts, the images) is gzipped as a server would; a first visit
    (empty cache) transfers them all: at most 1.5 MB. Its explorers' data (figures, recorded
    states, the call that hands them to the player) at most 1 MB gzipped.
    The uncompressed sizes are reported beside them; every page's own part stays under 3 MB.
    """
    base, html = site
    report = {}
    for name in PAGES:
        loaded = visit(base, browser, name)["weight"]
        first_visit = own = shared = 0
        for url, size in loaded["resources"]:
            path = html / unquote(urlparse(url).path).lstrip("/")
            if path.is_file():
                first_visit += _gzipped(path.read_bytes())
            if "/_static/" in urlparse(url).path:
                shared += size
            else:
                own += size
        report[name] = {
            "first_visit_gzip_mb": round(first_visit / 2**20, 3),
            "explorer_data_gzip_mb": round(_gzipped(loaded["players"].encode()) / 2**20, 3),
            "page_mb": round(own / 2**20, 2),
            "shared_assets_mb": round(shared / 2**20, 2),
        }
    report = dict(sorted(report.items(), key=lambda kv: -kv[1]["first_visit_gzip_mb"]))
    (BOOK_OUT / "page_weights_mb.json").write_text(json.dumps(report, indent=2))
    print("\npage weights (MB):", json.dumps(report, indent=2))
    for key, limit, what in (
        ("page_mb", MAX_PAGE_BYTES, "pages over 3 MB uncompressed"),
        ("first_visit_gzip_mb", MAX_FIRST_VISIT_GZIP, "first visits over 1.5 MB with gzip"),
        ("explorer_data_gzip_mb", MAX_EXPLORER_DATA_GZIP, "explorer data over 1 MB with gzip"),
    ):
        over = {n: r[key] for n, r in report.items() if r[key] * 2**20 > limit}
        assert over == {}, f"{what}: {over}"


@pytest.mark.book
def test_explorer_pages_link_the_player_files_instead_of_copies(built_book):
    """Each page with an explorer links the player's files once in its head and carries no copy of
    them; its explorers each call the player once; pages without an explorer load none of it."""
    from posenc.book.player import PLAYER_FILES, STATIC, player_code

    _, _, html = built_book
    code = player_code()
    with_explorers = 0
    for name in PAGES:
        page = (html / f"{name}.html").read_text()
        head, body = page.split("<body", 1)
        explorers = body.count('<figure class="posenc-explorer"')
        links = re.findall(r'(?:href|src)="(?:\.\./)*_static/(posenc-(?:player|formulas)\.\w+)(?:\?v=\w+)?"', page)
        assert code not in page and "function posencPlayer" not in page, f"{name} carries the player's code"
        assert body.count("<script>posencPlayer(") == explorers, name
        if explorers:
            with_explorers += 1
            assert links == list(PLAYER_FILES) and all(f"_static/{n}" in head for n in PLAYER_FILES), (name, links)
        else:
            assert links == [], f"{name} has no explorer but links {links}"
    assert with_explorers >= 14
    for name in PLAYER_FILES:
        assert (html / "_static" / name).read_bytes() == (STATIC / name).read_bytes()


class _LinkParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag in ("img", "script") and attrs.get("src"):
            self.links.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.links.append(attrs["href"])


@functools.cache
def _parse(path: Path) -> _LinkParser:
    parser = _LinkParser()
    parser.feed(path.read_text(errors="replace"))
    return parser


@pytest.mark.book
def test_no_broken_internal_links_or_anchors(built_book):
    _, _, html = built_book
    broken = []
    for page in sorted(html.rglob("*.html")):
        if "_static" in page.parts:
            continue
        for link in _parse(page).links:
            parsed = urlparse(link)
            if parsed.scheme or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (page.parent / unquote(parsed.path)).resolve() if parsed.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(html)} -> {link}")
            elif parsed.fragment and target.suffix == ".html" and parsed.fragment not in _parse(target).ids:
                broken.append(f"{page.relative_to(html)} -> {link} (no such anchor)")
    assert broken == [], "broken links:\n" + "\n".join(broken[:40])


def test_site_tests_cover_every_toc_page():
    assert PAGES[0] == "index" and all((ROOT / f"{p}.ipynb").exists() or (ROOT / f"{p}.md").exists() for p in PAGES)
    assert re.match(r"chapters/\d\d_", CHAPTER_PAGES[0])
