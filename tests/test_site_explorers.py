"""Every control of every explorer on the built website, in a real browser, without a kernel.

For each chapter page the test moves every control of every explorer through the page's own
inputs (range sliders by keyboard and by value, menus by selection) and checks that the canvas
changes, that the value shown and ``aria-valuetext`` follow, and that the figure's text
alternative follows the state; it reports each page's redraw time, from setting a state to its
pixels on the canvas, over up to 8 values of every control (median under 50 ms).

Then it reads what the page draws, back in data coordinates, at sampled states and compares it
with values computed here: by hand from the formulas where they are short (the sinusoidal waves,
wavelengths, rotations, the ALiBi slopes, the binary counter), else by calling posenc directly;
the browser's own ports of posenc formulas (images and curves too many to ship) to 1e-6.
"""

import json
import math
import re

import numpy as np
import pytest
from test_site import BOOK_OUT, CHAPTER_PAGES, ROOT, opened

import posenc

MAX_MEDIAN_REDRAW_MS = 50.0
PIXEL_TOLERANCE = 0.35  # px: 1/16 px rounding plus matplotlib's path simplification (1/9 px)

HASH_CANVAS = """r => { const c = r.querySelector('canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let h = 2166136261;
  for (let i = 0; i < d.length; i += 3) { h ^= d[i]; h = Math.imul(h, 16777619); }
  return h >>> 0; }"""


# From a control's change to the pixels: set the state, redraw, and read a pixel back (which waits
# for the canvas to be painted), over up to 8 values of every control.
TIME_REDRAWS = """r => { const x = r.posencExplorer, ctx = r.querySelector('canvas').getContext('2d'), times = [];
  x.data.controls.forEach((c, k) => { const n = c.values.length;
    for (let j = 1; j <= Math.min(8, n); j++) { const t0 = performance.now();
      x.set(k, Math.round(j * (n - 1) / Math.min(8, n))); ctx.getImageData(0, 0, 1, 1);
      times.push(performance.now() - t0); }
    x.set(k, c.start); });
  return times; }"""


def explorer_pages(html):
    return [p for p in CHAPTER_PAGES if "posenc-explorer" in (html / f"{p}.html").read_text()]


@pytest.mark.book
def test_every_chapter_with_an_explorer_is_covered(site):
    _, html = site
    pages = explorer_pages(html)
    assert len(pages) >= 14, pages
    for page in CHAPTER_PAGES:  # each Explorer(...) the chapter's code shows is on its page
        cells = json.loads((ROOT / f"{page}.ipynb").read_text())["cells"]
        shown = sum(
            len(re.findall(r"^Explorer\(", "".join(c["source"]), re.M)) for c in cells if c["cell_type"] == "code"
        )
        on_page = (html / f"{page}.html").read_text().count('class="posenc-explorer"')
        assert on_page == shown, f"{page}: {shown} explorers in the notebook, {on_page} on the page"
    assert sum((html / f"{p}.html").read_text().count('class="posenc-explorer"') for p in pages) >= 19


def _move(page, explorer, k, control, index):
    """Set control ``k`` to value ``index`` through its input element, as a reader would."""
    element = explorer.locator(f"#{explorer.get_attribute('id')}-{k}")
    if control["kind"] == "select":
        element.select_option(str(index))
    else:
        element.fill(str(index))  # dispatches input events, as dragging does
    return element


@pytest.mark.book
def test_every_control_redraws_the_figure_with_its_value_and_alt_text(site, browser):
    base, html = site
    report = {}
    for name in explorer_pages(html):
        with opened(browser, f"{base}/{name}.html") as (page, record):
            explorers = page.locator("figure.posenc-explorer")
            times = []
            for e in range(explorers.count()):
                explorer = explorers.nth(e)
                assert explorer.locator("canvas").is_visible(), f"{name} #{e}: the canvas is not shown"
                assert explorer.locator("img").is_hidden(), f"{name} #{e}: the still image is still shown"
                data = explorer.evaluate("r => r.posencExplorer.data")
                alt_texts = {explorer.locator("canvas").get_attribute("aria-label")}
                for k, control in enumerate(data["controls"]):
                    last = len(control["values"]) - 1
                    assert last >= 1, f"{name} #{e}: {control['name']} has one value"
                    label = explorer.locator(f"label[for='{explorer.get_attribute('id')}-{k}']")
                    assert label.inner_text() == control["label"]
                    # a control may leave the figure alone where another one makes it moot (the query
                    # position with the correct code, say): try it with the others at their defaults,
                    # then at their last and at their first values
                    changed = False
                    for context in ("start", "last", "first"):
                        for j, other in enumerate(data["controls"]):
                            if j != k:
                                at = {"start": other["start"], "last": len(other["values"]) - 1, "first": 0}[context]
                                _move(page, explorer, j, other, at)
                        _move(page, explorer, k, control, control["start"])
                        start = explorer.evaluate(HASH_CANVAS)
                        for index in dict.fromkeys((0, last, last // 2)):
                            element = _move(page, explorer, k, control, index)
                            output = explorer.locator(f"output[for='{explorer.get_attribute('id')}-{k}']")
                            shown = output.inner_text() if control["kind"] == "range" else output.text_content()
                            assert shown == control["shown"][index], f"{name} #{e}: {control['name']} shows {shown}"
                            if control["kind"] == "range":
                                assert element.get_attribute("aria-valuetext") == shown
                            changed |= explorer.evaluate(HASH_CANVAS) != start
                            alt_texts.add(explorer.locator("canvas").get_attribute("aria-label"))
                        if changed:
                            break
                    assert changed, f"{name} #{e}: moving {control['name']} does not change the figure"
                    for j, other in enumerate(data["controls"]):  # back to the defaults
                        _move(page, explorer, j, other, other["start"])
                assert len(alt_texts) > 1, f"{name} #{e}: the alt text does not follow the state"
                # keyboard: the main control steps with the arrow keys; the play button steps it too
                main = data["main"]
                element = explorer.locator(f"#{explorer.get_attribute('id')}-{main}")
                element.focus()
                before = explorer.evaluate("r => r.posencExplorer.index()")[main]
                key = "ArrowDown" if before == len(data["controls"][main]["values"]) - 1 else "ArrowRight"
                if data["controls"][main]["kind"] == "select":
                    key = "ArrowUp" if before else "ArrowDown"
                page.keyboard.press(key)
                after = explorer.evaluate("r => r.posencExplorer.index()")[main]
                assert after != before, f"{name} #{e}: the arrow keys do not move {data['controls'][main]['name']}"
                button = explorer.locator("button")
                button.click()
                assert button.get_attribute("aria-pressed") == "true"
                button.click()
                assert button.get_attribute("aria-pressed") == "false"
                times += explorer.evaluate(TIME_REDRAWS)
            assert record["console"] == [], f"{name} logged errors: {record['console']}"
        report[name] = {
            "redraws": len(times),
            "median_ms": round(float(np.median(times)), 2),
            "max_ms": round(float(np.max(times)), 2),
        }
    (BOOK_OUT / "explorer_redraw_ms.json").write_text(json.dumps(report, indent=2))
    print("\nexplorer redraw times (ms):", json.dumps(report, indent=2))
    slow = {n: r["median_ms"] for n, r in report.items() if r["median_ms"] >= MAX_MEDIAN_REDRAW_MS}
    assert slow == {}, f"median redraw over {MAX_MEDIAN_REDRAW_MS} ms: {slow}"


# -- what the page draws, against values computed here ----------------------------------------


def _to_px(values, axis):
    values = np.asarray(values, dtype=float)
    scale = (lambda v: np.log10(np.where(v > 0, v, np.nan))) if axis[4] == "log" else (lambda v: v)
    with np.errstate(divide="ignore", invalid="ignore"):
        return axis[0] + (scale(values) - scale(axis[2])) / (scale(axis[3]) - scale(axis[2])) * (axis[1] - axis[0])


def _expected_px(data, drawn, x, y):
    axes = data["axes"][drawn["ax"]]
    points = np.column_stack([_to_px(x, axes["x"]), _to_px(y, axes["y"])])
    points = points[np.all(np.isfinite(points), axis=1)]
    if drawn.get("clip"):
        x0, y0, w, h = drawn["clip"]
        inside = (points[:, 0] > x0 + 1) & (points[:, 0] < x0 + w - 1)
        points = points[inside & (points[:, 1] > y0 + 1) & (points[:, 1] < y0 + h - 1)]
    return points


def _segments(polyline):
    starts, ends, previous = [], [], None
    for point in polyline:
        if point is not None and previous is not None:
            starts.append(previous)
            ends.append(point)
        previous = point
    singles = [p for p in polyline if p is not None]
    if not starts:
        return np.array(singles, float), np.array(singles, float)
    return np.array(starts, float), np.array(ends, float)


def _distance_to_polyline(points, polyline):
    a, b = _segments(polyline)
    ab = b - a
    length2 = np.maximum(np.sum(ab**2, axis=1), 1e-12)
    distances = []
    for chunk in np.array_split(points, max(1, len(points) // 256)):
        t = np.clip(np.einsum("psk,sk->ps", chunk[:, None, :] - a[None], ab) / length2, 0, 1)
        nearest = a[None] + t[..., None] * ab[None]
        distances.append(np.sqrt(np.min(np.sum((chunk[:, None, :] - nearest) ** 2, axis=2), axis=1)))
    return np.concatenate(distances) if distances else np.zeros(0)


def check(data, drawn, expectation, where):
    kind, index, *rest = expectation
    item = drawn[index]
    if kind in ("line", "on_line"):
        x, y = rest
        expected = _expected_px(data, item, x, y)
        assert len(expected), f"{where}: nothing of artist {index} is inside its panel"
        distance = _distance_to_polyline(expected, item["p"])
        assert distance.max() <= PIXEL_TOLERANCE, f"{where}: artist {index} is {distance.max():.2f} px off"
        if kind == "line" and len(expected) > 1:
            vertices = np.array([p for p in item["p"] if p is not None])
            x0, y0, w, h = item["clip"]
            vertices = vertices[(vertices[:, 0] > x0 + 1) & (vertices[:, 0] < x0 + w - 1)]
            vertices = vertices[(vertices[:, 1] > y0 + 1) & (vertices[:, 1] < y0 + h - 1)]
            back = _distance_to_polyline(vertices, [tuple(p) for p in expected])
            assert back.max(initial=0) <= PIXEL_TOLERANCE, f"{where}: artist {index} draws {back.max():.2f} px off"
    elif kind in ("marks", "marks_exact"):  # exact: these markers and no others
        x, y = rest
        expected = _expected_px(data, item, x, y)
        drawn_points = np.array([p for p in item["mp"] if p is not None], float).reshape(-1, 2)
        assert len(drawn_points) >= len(expected), f"{where}: artist {index} draws too few markers"
        if kind == "marks_exact":
            assert len(drawn_points) == len(x), f"{where}: artist {index} draws {len(drawn_points)} markers"
        gaps = np.min(np.linalg.norm(expected[:, None] - drawn_points[None], axis=2), axis=1)
        assert gaps.max(initial=0) <= 0.1, f"{where}: a marker of artist {index} is {gaps.max():.2f} px off"
    elif kind == "values":  # the browser's port of a posenc formula, to 1e-6
        expected = np.asarray(rest[0], dtype=float)
        got = np.array([np.nan if v is None else v for v in (item["values"] if "values" in item else item["y"])])
        assert got.shape == expected.ravel().shape, f"{where}: artist {index} has {got.shape} values"
        assert np.array_equal(np.isnan(got), np.isnan(expected.ravel())), f"{where}: blank cells differ"
        error = np.nanmax(np.abs(got - expected.ravel()))
        assert error <= 1e-6, f"{where}: the browser's {item['fn']} is {error:.2e} off posenc"
    elif kind == "band":  # a patch spanning data x0..x1 (within its panel)
        x0, x1 = rest
        axes = data["axes"][item["ax"]]
        xs = np.array([p[0] for p in item["p"] if p is not None])
        left, right = sorted(_to_px([x0, x1], axes["x"]))
        assert abs(xs.min() - left) <= PIXEL_TOLERANCE and abs(xs.max() - right) <= PIXEL_TOLERANCE, (
            f"{where}: the band spans {xs.min():.1f}-{xs.max():.1f} px, not {left:.1f}-{right:.1f}"
        )
    elif kind == "text":
        text = " ".join(item["lines"])
        assert rest[0] in text, f"{where}: artist {index} reads {text!r}, not {rest[0]!r}"
    elif kind == "pattern":  # palette image: two cells share a colour exactly when their values are equal
        expected = np.asarray(rest[0])
        width, height = item["size"]
        pixels = np.array(item["pixels"], dtype=np.int64).reshape(height, width)
        same_drawn = pixels.ravel()[:, None] == pixels.ravel()[None]
        same_expected = expected.ravel()[:, None] == expected.ravel()[None]
        assert np.array_equal(same_drawn, same_expected), f"{where}: artist {index}'s cells do not follow the values"
    else:  # pragma: no cover
        raise ValueError(kind)


def _theta(d, base=10000.0):
    return base ** (-2 * np.arange(d // 2) / d)


def chapter_01(v):
    n = int(v["n"])
    p = np.arange(n)
    tokens = np.linalg.norm(np.random.default_rng(3).normal(size=(512, 64)), axis=1)
    return [
        ("marks", 0, p[:64], p[:64] / (n - 1)),
        ("marks", 1, [4], [4 / (n - 1)]),
        ("line", 2, p, p * 8 / tokens[:n]),  # the integer code: 64 entries equal to p, norm 8 p
        ("text", 3, f"position 4 is coded {4 / (n - 1):.3f}"),
    ]


def chapter_02_waves(v):
    d, base, position = int(v["d_model"]), v["base"], int(v["position"])
    x, tokens = np.linspace(0, 31, 300), np.arange(32)
    checks = [("text", 18, f"first 8 of d_model = {d} dimensions, base = {base:,.0f}")]
    for row in range(8):
        speed, wave = base ** (-2 * (row // 2) / d), (np.sin if row % 2 == 0 else np.cos)
        checks += [
            ("line", row, x, wave(speed * x) - 2.6 * row),
            ("marks", 8 + row, tokens, wave(speed * tokens) - 2.6 * row),
        ]
        checks.append(("marks", 17, [position], [wave(speed * position) - 2.6 * row]))
    return checks


def chapter_02_table(v):
    base, d, n = v["base"], int(v["d_model"]), int(v["n_positions"])
    table = np.full((128, 64), np.nan)
    table[:n, :d] = posenc.sinusoidal(n, d, base)
    pairs = np.arange(d // 2)
    return [
        ("values", 0, table),
        ("line", 1, pairs, 2 * np.pi * base ** (2 * pairs / d)),
        ("line", 2, np.linspace(-1, 32, 34), np.full(34, n)),
    ]


def chapter_03(v):
    p, d = min(int(v["p"]), 62), int(v["d_model"])
    bits = np.array([[(q >> j) & 1 for j in range(6)] for q in (p, p + 1)])
    step = math.sqrt(np.sum(2 - 2 * np.cos(_theta(d))))  # |PE(p+1) - PE(p)|, the same for every p
    flipped = np.flatnonzero(bits[0] != bits[1])
    return [
        ("pattern", 0, bits),
        ("marks", 2, flipped, np.full(flipped.size, 0.5)),
        ("line", 4, np.arange(63), np.full(63, step)),
        ("text", 7, f"{flipped.size} of 6 bits flip; the sinusoidal step is {step:.3f}"),
    ]


def chapter_04(v):
    k, p = int(v["k"]), int(v["p"])
    theta, checks = _theta(16), []
    for n, (pair, radius) in enumerate(zip((0, 2, 4, 6), (1.0, 0.78, 0.56, 0.34), strict=True)):
        for artist, at in ((5 + n, p), (9 + n, p + k)):
            angle = theta[pair] * at
            checks.append(("marks", artist, [radius * np.sin(angle)], [radius * np.cos(angle)]))
    return [*checks, ("text", 13, f"M_k for k = {k}")]


def chapter_05(v):
    base, d = v["base"], int(v["d_model"])
    shift = np.arange(96)
    row = np.cos(np.outer(shift, _theta(d, base))).sum(axis=1) / (d / 2)
    matrix = posenc.similarity(posenc.sinusoidal(96, d, base), normalize=True)
    return [("values", 0, matrix), ("line", 1, shift, row)]


def alibi_slopes_by_hand(n):
    """The ALiBi paper's rule: 2^(-8h/p) for the largest power of two p <= n, then every other slope of 2p."""
    p = 2 ** int(math.log2(n))
    first = [2 ** (-8 * (h + 1) / p) for h in range(p)]
    return np.array(first + [2 ** (-8 * (h + 1) / (2 * p)) for h in range(0, 2 * p, 2)][: n - p])


def chapter_07_alibi(v):
    heads = int(v["n_heads"])
    slopes, power = alibi_slopes_by_hand(heads), 2 ** int(math.log2(heads))
    h = np.arange(1, heads + 1)
    checks = [("marks_s", 17, h[:power], slopes[:power])]
    if heads > 1:  # one point draws no line
        checks.append(("line", 16, h, slopes))
    if heads > power:
        checks.append(("marks_s", 18, h[power:], slopes[power:]))
    return checks


def _rope_case(base, head_dim, vectors):
    q, k = np.random.default_rng(head_dim).normal(size=(2, head_dim))
    inv_freq = posenc.rope_inv_freq(head_dim, base)
    if vectors == "q = k":
        k = q
    elif vectors == "k matched at 1000":
        k = posenc.apply_rope(q[None], [1000], inv_freq, "interleaved")[0]
    return q, k, inv_freq


def chapter_08_scores(v):
    base, d = v["base"], int(v["head_dim"])
    q, k, inv_freq = _rope_case(base, d, v["vectors"])
    offsets = np.arange(2049)
    scores = posenc.rope_scores(q, k, offsets, inv_freq, "interleaved") / (np.linalg.norm(q) * np.linalg.norm(k))
    bound = posenc.rope_decay_bound(offsets, inv_freq)
    return [("values", 0, scores), ("values", 1, bound / bound[0]), ("line", 0, offsets, scores)]


def chapter_08_pairs(v):
    p = int(v["position"])
    checks = [("text", 0, f"position p = {p:,}")]
    for n, pair in enumerate((0, 2, 4, 7)):
        theta = 10000.0 ** (-2 * pair / 16)
        k = np.arange(p + 1)
        end = (math.cos(p * theta), math.sin(p * theta))  # turned counter-clockwise from (1, 0)
        t = np.linspace(0, 1, 9)
        checks += [
            ("marks", 1 + 3 * n, np.cos(k * theta), np.sin(k * theta)),
            ("line", 2 + 3 * n, t * end[0], t * end[1]),
            ("marks_exact", 2 + 3 * n, [end[0]], [end[1]]),  # one marker, at the tip (markevery=[1])
            ("text", 3 + 3 * n, f"{p * theta / (2 * np.pi):.3g} turns"),
        ]
    return checks


def chapter_09(v):
    length, base, d = round(v["L"]), v["base"], int(v["head_dim"])
    pairs = np.arange(d // 2)
    turns = length * base ** (-2 * pairs / d) / (2 * np.pi)
    edge = (posenc.critical_dimension(d, base, length) - 1) / d
    return [
        ("line", 2, 2 * pairs / d, turns),
        ("marks", 2, 2 * pairs / d, turns),
        ("band", 0, edge, 1.02),  # the pairs that never turn fully, from the critical dimension
        ("text", 4, f"L = {length:,}"),
    ]


def chapter_10(v):
    s, base, d = v["s"], v["base"], int(v["head_dim"])
    pairs = np.arange(d // 2)
    place = 2 * pairs / d
    theta = base ** (-2 * pairs / d)
    dynamic, _ = posenc.scaled_inv_freq(
        "dynamic", d, base, factor=s, original_max_position_embeddings=4096, seq_len=round(s * 4096)
    )
    return [
        ("line", 0, place, np.full(pairs.size, s)),  # interpolation: every pair s times slower
        ("line", 1, place, s ** (2 * pairs / (d - 2))),  # NTK: base s^(d/(d-2)) times larger
        ("line", 2, place, theta / dynamic),
        ("line", 3, place, 2 * np.pi / theta),  # the original wavelengths
        ("text", 8, f"s = {s:g}: PI slows all pairs {s:g}x"),
    ]


def chapter_11_temperature(v):
    s = v["s"]
    a = 0.1 * math.log(s) + 1  # YaRN's factor on cos and sin (Peng et al. 2023, eq. 22)
    return [("marks", 0, [s, s], [a, a**2]), ("text", 3, f"logits x {a**2:.3f}")]


def chapter_11_bands(v):
    length, s = round(v["L"]), v["s"]
    pairs = np.arange(64)
    theta = 10000.0 ** (-2 * pairs / 128)
    ramp = posenc.yarn_ramp(128, 10000.0, length, v["beta_fast"], v["beta_slow"])
    return [
        ("line", 0, pairs, ramp),
        ("line", 1, pairs, length * theta / (2 * np.pi)),  # turns within L
        ("line", 6, pairs, np.full(64, s)),  # linear interpolation
        ("text", 7, f"L = {length:,}, s = {s:.3g}"),
    ]


def chapter_13(v):
    matched = int(v["matched_at"])  # a key matched m back scores |q|^2 there (checked off the panel's edge)
    return [("on_line", 0, [matched], [1.0])] if matched >= 10 else []


def chapter_14(v):
    if v["model"] != "Llama-3.1-8B":
        return []
    config = posenc.MODELS["Llama-3.1-8B"].config
    pairs = np.arange(64)
    return [("line", 1, pairs, 2 * np.pi * config["rope_theta"] ** (2 * pairs / 128))]


EXPECTED = {  # page -> explorer on the page -> values computed here
    "chapters/01_why_order_matters": {0: chapter_01},
    "chapters/02_sinusoidal_encodings": {0: chapter_02_waves, 1: chapter_02_table},
    "chapters/03_binary_analogy": {0: chapter_03},
    "chapters/04_offsets_are_rotations": {0: chapter_04},
    "chapters/05_similarity_matrices": {0: chapter_05},
    "chapters/07_relative_schemes": {0: chapter_07_alibi},
    "chapters/08_rope": {0: chapter_08_pairs, 1: chapter_08_scores},
    "chapters/09_past_the_training_length": {0: chapter_09},
    "chapters/10_interpolation_and_ntk": {0: chapter_10},
    "chapters/11_yarn": {0: chapter_11_temperature, 1: chapter_11_bands},
    "chapters/13_conventions_and_bugs": {0: chapter_13},
    "chapters/14_reading_a_config": {0: chapter_14},
}


def test_the_hand_formulas_here_agree_with_posenc():
    """The independent values above are themselves right: they agree with posenc where both apply."""
    assert np.allclose(alibi_slopes_by_hand(8), posenc.alibi_slopes(8))
    assert np.allclose(alibi_slopes_by_hand(12), posenc.alibi_slopes(12))
    table = posenc.sinusoidal(64, 32)
    assert np.allclose(np.linalg.norm(np.diff(table, axis=0), axis=1), math.sqrt(np.sum(2 - 2 * np.cos(_theta(32)))))
    assert np.array_equal(posenc.binary(64, 6)[[5, 6]], [[(q >> j) & 1 for j in range(6)] for q in (5, 6)])


@pytest.mark.book
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_what_the_explorers_draw_matches_posenc(site, browser, name):
    base, _ = site
    rng = np.random.default_rng(0)
    with opened(browser, f"{base}/{name}.html") as (page, _):
        explorers = page.locator("figure.posenc-explorer")
        for e, expected in EXPECTED[name].items():
            explorer = explorers.nth(e)
            data = explorer.evaluate("r => r.posencExplorer.data")
            sizes = [len(c["values"]) for c in data["controls"]]
            states = [[c["start"] for c in data["controls"]], [0] * len(sizes), [s - 1 for s in sizes]]
            states += [[int(rng.integers(s)) for s in sizes] for _ in range(3)]
            for state in states:
                for k, index in enumerate(state):
                    explorer.evaluate(f"r => r.posencExplorer.set({k}, {index})")
                values = {c["name"]: c["values"][i] for c, i in zip(data["controls"], state, strict=True)}
                drawn = explorer.evaluate("r => r.posencExplorer.drawn()")
                where = f"{name} #{e} at {values}"
                for expectation in expected(values):
                    if expectation[0] == "marks_s":  # a scatter: its points
                        expectation = ("marks", *expectation[1:])
                    check(data, drawn, expectation, where)


def test_pixel_helpers_read_back_known_values():
    """_to_px and the polyline distance, on a panel whose mapping is known."""
    axis = [100.0, 300.0, 0.0, 10.0, "linear"]
    assert np.allclose(_to_px([0, 5, 10], axis), [100, 200, 300])
    log_axis = [400.0, 0.0, 1.0, 1e4, "log"]
    assert np.allclose(_to_px([1, 100, 1e4], log_axis), [400, 200, 0])
    line = [(0.0, 0.0), (10.0, 0.0), None, (20.0, 5.0), (30.0, 5.0)]
    assert np.allclose(_distance_to_polyline(np.array([[5.0, 1.0], [25.0, 5.0], [15.0, 0.0]]), line), [1, 0, 5])
