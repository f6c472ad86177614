"""The website on a phone (390 x 844 CSS px): no page scrolls sideways, every figure's and
explorer's text is at least 9 CSS px tall, explorers' controls fit a thumb.

A figure's PNG records the size of its smallest text in image pixels (font size in points x dpi
/ 72, :func:`posenc.book.plotting.record_smallest_text`); shown ``w`` CSS px wide, an image
``n`` px wide draws that text ``w / n`` times as tall. The test reads that record from the PNG
files themselves, measures the width the browser lays each figure out at, and checks the product.
"""

from urllib.parse import unquote, urlparse

import pytest
from PIL import Image
from test_site import PAGES, load, new_context, recording_page

from posenc.book.plotting import SMALLEST_TEXT_KEY

WIDTH = 390
PHONE = {"viewport": {"width": WIDTH, "height": 844}, "has_touch": True, "is_mobile": True}
READABLE_PX = 9
THUMB_PX = 44

MEASURE = """() => {
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const main = document.querySelector('main') || document.body;
  const figures = Array.from(main.querySelectorAll('.cell_output img, figure.posenc-explorer img, '
                                                   + 'figure.posenc-explorer canvas'))
    .filter(shown).map(el => {
      const box = el.closest('.posenc-figure-box'), r = el.getBoundingClientRect();
      return {tag: el.tagName, src: el.tagName === 'IMG' && !el.src.startsWith('data:') ? el.src : null,
              natural: el.tagName === 'IMG' ? el.naturalWidth : el.width, shown: r.width,
              smallest: box && box.dataset.smallestTextPx ? +box.dataset.smallestTextPx : null,
              boxRight: box ? box.getBoundingClientRect().right : r.right,
              scrolls: box ? box.scrollWidth > box.clientWidth + 1 : false,
              focusable: box ? box.tabIndex === 0 : false,
              hint: box && box.nextElementSibling && box.nextElementSibling.matches('.posenc-scroll-hint')
                    && shown(box.nextElementSibling) ? box.nextElementSibling.textContent : null};
    });
  const controls = Array.from(main.querySelectorAll('.pe-controls button, .pe-controls input, .pe-controls select'))
    .filter(shown).map(el => { const r = el.getBoundingClientRect();
      return {tag: el.tagName, height: r.height, left: r.left, right: r.right}; });
  const bibtex = Array.from(main.querySelectorAll('div.highlight-bibtex pre')).filter(shown)
    .map(el => el.scrollWidth - el.clientWidth);
  return {scrollWidth: document.scrollingElement.scrollWidth, width: innerWidth, figures, controls, bibtex};
}"""


def _png_record(html, src):
    path = html / unquote(urlparse(src).path).lstrip("/")
    with Image.open(path) as png:
        return png.width, float(png.text[SMALLEST_TEXT_KEY])


@pytest.mark.book
def test_phone_pages_do_not_scroll_sideways_and_figures_are_readable(site, browser):
    base, html = site
    problems, smallest_shown, figures = [], {}, 0
    context = new_context(browser, **PHONE)  # one phone visits every page, as a reader's would
    try:
        page, record = recording_page(context)
        measured = {}
        for name in PAGES:
            record["console"].clear()
            load(page, f"{base}/{name}.html")
            page.wait_for_function(  # explorers' players have drawn (their still images hidden)
                "() => Array.from(document.querySelectorAll('figure.posenc-explorer canvas')).every(c => !c.hidden)"
            )
            measured[name] = (page.evaluate(MEASURE), list(record["console"]))
    finally:
        context.close()
    for name, (m, console) in measured.items():
        assert console == [], f"{name} logged errors: {console}"
        if m["scrollWidth"] > WIDTH or m["width"] != WIDTH:  # a mobile browser widens the viewport to fit
            problems.append(f"{name}: the page scrolls sideways ({m['scrollWidth']} CSS px, viewport {m['width']})")
        for f in m["figures"]:
            figures += 1
            what = f"{name}: {f['tag'].lower()} {(f['src'] or '').rsplit('/', 1)[-1]}"
            if f["smallest"] is None:
                problems.append(f"{what} records no smallest text")
                continue
            if f["src"]:  # the page's record is the PNG's own
                assert _png_record(html, f["src"]) == (f["natural"], pytest.approx(f["smallest"], abs=1e-3)), what
            text_px = f["shown"] / f["natural"] * f["smallest"]
            smallest_shown[name] = min(smallest_shown.get(name, 99.0), text_px)
            if text_px < READABLE_PX - 0.01:
                problems.append(f"{what}: smallest text {text_px:.2f} CSS px")
            if f["boxRight"] > WIDTH + 0.5:
                problems.append(f"{what}: its box reaches past the screen ({f['boxRight']:.0f} px)")
            if f["scrolls"] and not (f["focusable"] and f["hint"] and "sideways" in f["hint"]):
                problems.append(f"{what}: scrolls without a visible hint or a keyboard stop")
        for overflow in m["bibtex"]:  # the landing page's BibTeX entry wraps in its box
            if overflow > 1:
                problems.append(f"{name}: the BibTeX entry runs {overflow} CSS px past its box")
        for c in m["controls"]:
            if c["height"] < THUMB_PX - 0.5 or c["left"] < -0.5 or c["right"] > WIDTH + 0.5:
                where = f"{c['height']:.0f} px tall at {c['left']:.0f}..{c['right']:.0f} CSS px"
                problems.append(f"{name}: explorer {c['tag'].lower()} {where}")
    print(
        f"\n{figures} figures; smallest text shown per page (CSS px):",
        {k: round(v, 2) for k, v in smallest_shown.items()},
    )
    assert figures >= 50
    assert sum(len(m["bibtex"]) for m, _ in measured.values()) == 1  # the landing page's
    assert problems == [], "\n".join(problems[:20])
