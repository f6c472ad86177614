"""The answer keys of the prediction exercises (answers in the page), checked without a build.

Every prediction exercise in the chapters declares a key, each key is well formed, and each is tied to its chapter: the
value the correct choice (or number) claims is recomputed here with posenc or by hand, compared
with what the chapter's solution asserts or states, and every wrong choice is shown wrong by the
same computation.
"""

import html.parser
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import posenc
import posenc.nn
from posenc.book.answer_forms import answer_form, answer_keys
from posenc.course.activities import Activity, prediction
from posenc.course.coursework import ACTIVITIES
from posenc.course.questions import Choice, Choices, Number

from conftest import chapter_notebooks

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


def _cells(chapter: str) -> list[str]:
    (notebook,) = CHAPTERS.glob(f"{chapter}_*.ipynb")
    return ["".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]]


def _prediction_labels() -> dict[str, str]:
    """Label -> chapter of every ``{exercise} Predict...`` in the chapters."""
    labels = {}
    for notebook in chapter_notebooks():
        for source in _cells(notebook.name[:2]):
            if re.search(r"```\{exercise\} Predict", source):
                labels[re.search(r":label: (\S+)", source).group(1)] = notebook.name[:2]
    return labels


def solution(label: str) -> str:
    """The chapter's solution of ``label``: every cell from its solution-start to its solution-end,
    with runs of white space as one space."""
    cells = _cells(label.split("-")[1][2:])
    start = next(i for i, c in enumerate(cells) if re.search(r"\{solution-start\} " + re.escape(label) + r"\b", c))
    end = next(i for i in range(start, len(cells)) if "{solution-end}" in cells[i])
    return re.sub(r"\s+", " ", "\n".join(cells[start : end + 1]))


KEYS = answer_keys()


def _choices(label: str) -> list[tuple[str, bool]]:
    return [(c.text, c.correct) for c in KEYS[label].choices]


def _only_correct(label: str, is_true) -> None:
    """``is_true(text)`` (from an independent computation) holds for the correct choice only."""
    verdicts = {text: bool(is_true(text)) for text, _ in _choices(label)}
    assert verdicts == {text: correct for text, correct in _choices(label)}, verdicts


# --- every prediction has a well-formed key ---------------------------------------------------


def test_every_prediction_in_the_chapters_has_a_key():
    labels = _prediction_labels()
    assert labels  # found in the chapters
    assert set(KEYS) == set(labels)
    assert all(ACTIVITIES[label].kind == "prediction" for label in KEYS)


@pytest.mark.parametrize("label", sorted(KEYS))
def test_each_key_is_well_formed(label):
    key = KEYS[label]
    # the page says "Right." or "Not quite." before the feedback: the feedback does not repeat it
    if isinstance(key, Choices):
        assert sum(c.correct for c in key.choices) == 1
        assert 2 <= len(key.choices) <= 5
        feedback = [c.feedback for c in key.choices]
    else:
        assert isinstance(key, Number) and key.accepts(key.value)
        feedback = [key.right, key.wrong]
    assert not [f for f in feedback if re.match(r"(Right|Wrong|Not quite|Correct|Incorrect|Yes|No)\b", f)]


def test_bad_keys_are_refused_with_a_message():
    yes, no = Choice("yes", "Right: so."), Choice("no", "No: so.")
    with pytest.raises(ValueError, match="exactly one choice must be correct, got 0"):
        Choices("q?", (yes, no))
    with pytest.raises(ValueError, match="exactly one choice must be correct, got 2"):
        Choices("q?", (Choice("a", "x", True), Choice("b", "y", True)))
    with pytest.raises(ValueError, match="2 to 5 options, got 1"):
        Choices("q?", (Choice("a", "x", True),))
    with pytest.raises(ValueError, match="same text"):
        Choices("q?", (Choice("a", "x", True), Choice("a", "y")))
    with pytest.raises(TypeError, match="tuple of Choice"):
        Choices("q?", [Choice("a", "x", True), no])
    with pytest.raises(ValueError, match="question must be a non-empty string"):
        Choices(" ", (Choice("a", "x", True), no))
    with pytest.raises(ValueError, match="tolerance must be >= 0, got -1"):
        Number("q?", 3, -1, "Right.", "No.")
    with pytest.raises(TypeError, match="value must be a finite number, got nan"):
        Number("q?", math.nan, 0, "Right.", "No.")
    assert prediction("ex-ch01-x", 5).answer is None  # no key of that label: no question
    assert Activity("ex-ch07-predict-buckets", "investigation", 5).answer is None  # an investigation asks none


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('PREDICTIONS = {"ex-ch01-x": "yes"}', "must be a Choices or a Number, got 'yes'"),
        ('RUBRICS = {"ex-ch01-x": ["a list"]}', "must be a tuple of non-empty strings"),
        ('RUBRICS = {"ex-ch01-x": ("",)}', "must be a tuple of non-empty strings"),
        ('ANSWERS = {"binary": "def f(): pass"}', "must be a tuple of non-empty strings"),
    ],
)
def test_a_bad_answer_key_is_refused_with_a_message(tmp_path, body, words):
    from posenc.course.key import load_key

    (tmp_path / "ch01.py").write_text(body + "\n")
    with pytest.raises(TypeError, match=re.escape(words)):
        load_key(tmp_path)


def test_a_number_accepts_exactly_its_tolerance():
    key = Number("q?", 52_000, 500, "Right.", "No.")
    assert key.accepts(51_500) and key.accepts(52_500) and key.accepts(51_862)
    assert not key.accepts(51_499.9) and not key.accepts(5_400)


class _Form(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.fors = [], set(), set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "label":
            self.fors.add(attrs["for"])


@pytest.mark.parametrize("label", ["ex-ch01-predict-mask", "ex-ch14-predict-partial"])
def test_the_form_is_labelled_and_announces_its_result(label):
    form = _Form()
    form.feed(answer_form(label, KEYS[label]))
    tags = [tag for tag, _ in form.tags]
    assert tags[:3] == ["form", "fieldset", "legend"]
    assert form.fors and form.fors <= form.ids  # every label names its input
    inputs = [attrs for tag, attrs in form.tags if tag == "input"]
    if isinstance(KEYS[label], Choices):
        assert [i["type"] for i in inputs] == ["radio"] * len(KEYS[label].choices)
        assert len({i["name"] for i in inputs}) == 1  # one group: arrow keys move within it
    else:
        assert [i["type"] for i in inputs] == ["text"] and inputs[0]["inputmode"] == "decimal"
    (status,) = [attrs for _, attrs in form.tags if attrs.get("role") == "status"]
    assert status["aria-live"] == "polite"
    form_attrs = form.tags[0][1]
    assert "hidden" in form_attrs  # until the script runs: without JavaScript nothing dead shows
    assert json.loads(form_attrs["data-answer"]) == KEYS[label].as_data()


# --- each key tied to its chapter ------------------------------------------------------------


def test_ch01_only_a_and_b_change():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 16))
    w_q, w_k, w_v = (rng.normal(size=(16, 8)) / 4 for _ in range(3))
    before = posenc.self_attention(x, w_q, w_k, w_v, causal=True)
    after = posenc.self_attention(x[[1, 0, 2, 3]], w_q, w_k, w_v, causal=True)[[1, 0, 2, 3]]
    changed = {word for word, same in zip("abcd", np.all(np.isclose(before, after), axis=1), strict=True) if not same}
    assert changed == {"a", "b"}
    claims = {"All four": set("abcd"), "Only a and b": {"a", "b"}, "None": set(), "Only c and d": {"c", "d"}}
    _only_correct("ex-ch01-predict-mask", lambda t: claims[next(k for k in claims if t.startswith(k))] == changed)
    assert "assert unchanged.tolist() == [False, False, True, True]" in solution("ex-ch01-predict-mask")


def test_ch02_every_pair_turns_within_128_positions_at_base_10():
    key = KEYS["ex-ch02-predict-base"]
    turns = posenc.rotations_within_context(posenc.sinusoidal_frequencies(64, 10.0), 128)
    assert turns.size == 32 and key.value == np.sum(turns >= 1) and key.tolerance == 0
    assert turns.min() >= 2  # "at least two turns"
    assert round(2 * np.pi * 10 ** (62 / 64)) == 58  # the slowest wavelength the feedback names
    text = solution("ex-ch02-predict-base")
    assert "Every pair completes at least two turns within 128 positions" in text
    assert "assert np.all(turns_10 >= 2)" in text


def test_ch03_sines_alone_have_no_shift_matrix():
    table = posenc.sinusoidal(64, 8)
    _, error_both = posenc.linear_shift_fit(table, 1)
    _, error_sines = posenc.linear_shift_fit(table[:, 0::2], 1)
    assert error_both < 1e-10 and abs(error_sines - 0.84) < 0.01  # "about 0.84", "about 1e-15"
    _only_correct("ex-ch03-sines-only", lambda t: t.startswith("No") and error_sines > 0.01)
    text = solution("ex-ch03-sines-only")
    assert text.split("```")[2].strip().startswith("No.") and "error_sines > 0.1" in text


def test_ch04_pair_3_is_nearer_the_identity_than_pair_6():
    m = posenc.offset_matrix(1000, 16)
    distance = [np.abs(m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] - np.eye(2)).max() for i in range(8)]
    turned = 1000 * 10 ** (-np.arange(8) / 2)  # theta_i = 10000^(-i/8) by hand
    assert abs(((turned[3] + np.pi) % (2 * np.pi) - np.pi) - 0.2) < 0.05  # "five whole turns plus about 0.2"
    assert turned[3] // (2 * np.pi) == 5
    assert distance[3] < distance[6] and (round(distance[3], 1), round(distance[7], 1)) == (0.2, 0.3)
    _only_correct("ex-ch04-predict-blocks", lambda t: t.startswith("Pair 3") and distance[3] < distance[6])
    assert "assert distance[3] < distance[6]" in solution("ex-ch04-predict-blocks")


def test_ch05_one_pair_is_a_cosine_that_never_decays():
    one_pair = posenc.similarity(posenc.sinusoidal(51, 2))[0]
    np.testing.assert_allclose(one_pair, np.cos(np.arange(51)), atol=1e-12)
    decays = one_pair[44] < 0.9  # shift 44: back above 0.99
    _only_correct("ex-ch05-one-pair", lambda t: t.startswith("Yes") == decays)
    assert set(np.flatnonzero(one_pair > 0.9)) >= {6, 13, 19, 25, 44}
    text = solution("ex-ch05-one-pair")
    assert "It does not decay at all" in text and "one_pair[44] > 0.99" in text


def test_ch06_the_ratio_stays_without_scaling_and_falls_with_it():
    torch.manual_seed(6)
    ratio = {}
    for d_model in (64, 4096):
        tokens = 0.02 * torch.randn(1, 32, d_model)
        for scale in (False, True):
            module = posenc.nn.SinusoidalPositionalEncoding(d_model, max_len=32, scale_embeddings=scale)
            position = module(torch.zeros_like(tokens))
            ratio[d_model, scale] = float((position.norm(dim=-1) / (module(tokens) - position).norm(dim=-1)).mean())
    unscaled = 1 / (0.02 * math.sqrt(2))
    assert round(unscaled) == 35 and all(abs(ratio[d, False] / unscaled - 1) < 0.05 for d in (64, 4096))
    assert abs(ratio[64, True] - 4.4) < 0.15 and abs(ratio[4096, True] - 0.55) < 0.03
    assert math.isclose(unscaled / math.sqrt(1250), 1.0)  # the scaled ratio crosses 1 at d = 1250
    _only_correct("ex-ch06-predict-ratio", lambda t: t.startswith("Without scaling it stays about 35"))
    text = solution("ex-ch06-predict-ratio")
    assert "about 4.4 at $d = 64$" in text and "0.55 at $d = 4096$" in text


def test_ch07_t5_buckets():
    r = np.array([-200, -1000, 200])
    computed = [*posenc.t5_relative_bucket(r), *posenc.t5_relative_bucket(r, bidirectional=False)]
    assert computed == [15, 15, 31, 31, 31, 0]

    def claims(text):
        match = re.fullmatch(r"Encoder (\d+), (\d+), (\d+); decoder (\d+), (\d+), (\d+)", text)
        return [int(v) for v in match.groups()] == computed

    _only_correct("ex-ch07-predict-buckets", claims)
    assert "assert list(bidirectional_buckets) == [15, 15, 31]" in solution("ex-ch07-predict-buckets")


def test_ch08_pair_0_keeps_its_speed_and_the_curve_stays_higher():
    slow, fast = posenc.rope_inv_freq(128, 1e5), posenc.rope_inv_freq(128, 1e4)
    slowdown = fast / slow
    assert slow[0] == fast[0] == 1.0 and np.all(slowdown[1:] > 1)
    assert 9 < slowdown[-1] < 10 and np.isclose(slowdown[-1], 10 ** (126 / 128))  # "almost ten times"
    q, back = np.tile([1.0, 0.0], 64), np.arange(1, 10_001)
    curve = {b: posenc.rope_scores(q, q, back, posenc.rope_inv_freq(128, b), "interleaved") / 64 for b in (1e4, 1e5)}
    higher = (curve[1e5][10:] > curve[1e4][10:]).mean()
    assert higher > 0.95  # the chapter glues this share (ch08-higher-pct) and asserts > 0.95

    def claims(text):
        keeps = "Pair 0 keeps its speed" in text and slowdown[0] == 1
        return keeps and "stays higher" in text and higher > 0.95

    _only_correct("ex-ch08-predict-base", claims)
    text = solution("ex-ch08-predict-base")
    assert "pair 0 keeps 1 radian per token, and the slowest pair becomes almost ten times slower" in text
    assert "assert higher.mean() > 0.95" in text


def test_ch09_critical_dimension_up_to_100_and_down_to_64():
    doubled, larger_base = posenc.critical_dimension(128, 1e4, 8192), posenc.critical_dimension(128, 5e5, 4096)
    assert posenc.critical_dimension(128, 1e4, 4096) == 92 and (doubled, larger_base) == (100, 64)

    def claims(text):
        a, b = re.fullmatch(r"\(a\) (.*); \(b\) (.*)", text).groups()
        return a.startswith(f"Up, to about {doubled}") and b.startswith(f"down, to about {larger_base}")

    _only_correct("ex-ch09-predict", claims)
    assert "expected = {(4096, 1e4): 92, (8192, 1e4): 100, (4096, 5e5): 64}" in solution("ex-ch09-predict")


def test_ch10_pair_0_and_the_last_pair_under_pi_ntk_and_dynamic_ntk():
    theta = posenc.rope_inv_freq(128, 1e4)
    extend = {"factor": 4, "original_max_position_embeddings": 4096}
    computed = []
    for method, params in (("linear", {}), ("ntk", {}), ("dynamic", {"seq_len": 8192})):
        freq, _ = posenc.scaled_inv_freq(method, 128, 1e4, **extend, **params)
        computed += [round(float(freq[0]), 6), round(float(posenc.effective_scale(theta, freq)[-1]), 6)]
    assert computed == [0.25, 4.0, 1.0, 4.0, 1.0, 5.0]
    # by hand: dynamic NTK's factor s n / L - (s - 1) = 5 at n = 2L; the NTK base is b s^(d/(d-2))
    last = (1e4 * 5 ** (128 / 126)) ** (-126 / 128)
    assert math.isclose(theta[-1] / last, 5.0)

    def claims(text):
        pattern = r"PI (\S+) rad/token, (\d+)×; NTK (\S+) rad/token, (\d+)×; dynamic (\S+) rad/token, (\d+)×"
        return [float(v) for v in re.fullmatch(pattern, text).groups()] == computed

    _only_correct("ex-ch10-predict", claims)
    text = solution("ex-ch10-predict")
    assert "pair 0 turns 0.25 radian per token and the last pair is 4 times slower" in text
    assert "slows the last pair exactly 4 times" in text and "pair is 5 times slower" in text


def test_ch11_the_ramp_moves_to_the_slow_pairs_and_keeps_its_width():
    low_4k, high_4k = posenc.yarn_correction_range(32, 1, 128, 1e4, 4096, False)
    low_8k, high_8k = posenc.yarn_correction_range(32, 1, 128, 1e4, 8192, False)
    shift = 128 * math.log(2) / (2 * math.log(1e4))
    assert round(shift, 1) == 4.8
    assert math.isclose(low_8k - low_4k, shift) and math.isclose(high_8k - high_4k, shift)  # same width
    assert np.all(np.diff(posenc.rope_inv_freq(128, 1e4)) < 0)  # a higher pair index is a slower pair

    def claims(text):
        return text == "Towards the slow pairs, by about 4.8 pairs, with the same width" and shift > 0

    _only_correct("ex-ch11-double-l", claims)
    text = solution("ex-ch11-double-l")
    assert "the ramp moves towards the slow end" in text and "\\approx 4.8$ pairs" in text
    assert "so the ramp keeps its width" in text


def test_ch13_reordered_columns_leave_the_similarity_matrix_unchanged():
    table = posenc.sinusoidal_variant(2048, 512)
    rebuilt = posenc.sinusoidal_variant(2048, 512, layout="concatenated")
    assert np.abs(table - rebuilt).max() > 1  # the bug is there
    gap = np.abs(table @ table.T - rebuilt @ rebuilt.T).max()
    assert gap < 1e-9 and np.isclose(np.abs(table @ table.T).max(), 256)
    _only_correct("ex-ch13-predict-table", lambda t: t.startswith("Zero, up to rounding") and gap < 1e-9)
    text = solution("ex-ch13-predict-table")
    assert text.split("```")[2].strip().startswith("Zero, up to rounding") and "assert gap < 1e-9" in text


def test_ch14_the_slowest_rotated_wavelength_of_phi4_mini():
    key = KEYS["ex-ch14-predict-partial"]
    config = {**posenc.MODELS["Phi-4-mini-instruct"].config, "rope_scaling": None}
    inv_freq = posenc.from_config(config)[0].inv_freq
    slowest = posenc.wavelengths(inv_freq)[-1]
    assert inv_freq.size == 48 and math.isclose(slowest, 2 * math.pi * 1e4 ** (94 / 96))
    assert key.accepts(slowest) and key.accepts(float(f"{slowest:.2g}")) and f"{key.value:.2g}" == "5.2e+04"
    p_rope = posenc.p_rope_inv_freq(128, 1e4, p=0.75)
    assert not key.accepts(posenc.wavelengths(p_rope[p_rope > 0])[-1])  # the p-RoPE answer is wrong
    assert not key.accepts(2 * math.pi * 1e4 ** (94 / 128))  # so is pair 47 of a 128-wide head
    text = solution("ex-ch14-predict-partial")
    assert '== "5.2e+04"' in text and "np.array_equal(phi4_plain, posenc.rope_inv_freq(96, 10000.0))" in text


def test_ch15_only_the_model_scaled_past_98304_stays_near():
    quoted = posenc.load_paper_results(CHAPTERS / "data" / "paper_results.json")
    near = {}
    for s in (16, 32):
        record = quoted[f"yarn-t2-7b-yarn-s{s}"]
        printed = dict(zip(record.lengths, record.printed, strict=True))
        assert record.trained_length == 4096
        near[s] = printed[98304] != ">10^1" and float(printed[98304]) <= float(printed[65536])
        assert near[s] == (98304 <= s * record.trained_length)  # the window s L decides
    assert near == {16: False, 32: True}

    def claims(text):
        said = {16: None, 32: None}
        if text.startswith("Both far"):
            said = {16: False, 32: False}
        elif text.startswith("Both near"):
            said = {16: True, 32: True}
        elif text.startswith("The s = 16 model far above"):
            said = {16: False, 32: True}
        elif text.startswith("The s = 32 model far above"):
            said = {16: True, 32: False}
        return said == near

    _only_correct("ex-ch15-predict", claims)
    text = solution("ex-ch15-predict")
    assert "The $s = 16$ model goes from 2.42 at 65536 to more than 10 at 98304" in text
    assert "The $s = 32$ model falls to 2.36 at 98304" in text


def test_ch15_investigation_rubric_quotes_the_lab_files_seed_counts():
    """The rubric's seed counts are the committed text results' (bits per character at 4L
    minus at L, per seed), and its verdicts chapter 12's margin rule (claims.verdict)."""
    from posenc import lab
    from posenc.lab import claims

    runs = lab.load_results(CHAPTERS / "data" / "lab" / "text.json")["runs"]
    (rubric,) = [r for r in ACTIVITIES["ex-ch15-investigate"].rubric if "For the lab" in r]

    def change(extension, finetuned):
        at = [lab.seed_values(runs, "text", "rope", f, extension, finetuned) for f in (1, 4)]
        return at[1] - at[0]

    def verdict(extension, finetuned):
        at = [lab.seed_values(runs, "text", "rope", f, extension, finetuned) for f in (4, 1)]
        return claims.verdict(*at, "text")["verdict"]  # "ahead": lower at 4x

    n = len({r["config"]["seed"] for r in runs})
    for extension in lab.EXTENSIONS:
        if extension != "ntk_at_dynamic":
            assert np.all(change(extension, False) > 0) and verdict(extension, False) == "behind"
    assert f"at 4x in all {n} seeds (behind by the rule)" in rubric
    said = {
        "dynamic": ("dynamic NTK (below in {k} of {n} seeds)", "ahead"),
        "longrope": ("LongRoPE ({k} of {n}) are below it by the rule", "ahead"),
        "yarn": ("YaRN ({k} of {n})", "inconclusive"),
        "linear": ("PI ({k} of {n})", "inconclusive"),
        "ntk": ("NTK-aware ({k} of {n}) are inconclusive", "inconclusive"),
    }
    for extension, (words, expected) in said.items():
        assert verdict(extension, True) == expected, extension
        assert words.format(k=int(np.sum(change(extension, True) < 0)), n=n) in rubric, extension
    for extension in ("yarn_matched", "none"):
        assert np.all(change(extension, True) > 0), extension
    assert f"without a method stay above it in all {n} seeds" in rubric


def test_ch12_only_rope_and_p_rope_pass_past_l_and_not_in_every_seed():
    from posenc import lab

    runs = lab.load_results(CHAPTERS / "data" / "lab" / "lookup.json")["runs"]
    passing, within = {}, {}
    for scheme in lab.SCHEMES:
        passing[scheme] = lab.seeds_agreeing(runs, lambda at, s=scheme: at("lookup", s, 4, value="beyond") > 0.9)
        within[scheme] = lab.seeds_agreeing(runs, lambda at, s=scheme: at("lookup", s, 1) < 0.4)
    some = {scheme for scheme, (k, _) in passing.items() if k > 0}
    every = {scheme for scheme, (k, n) in passing.items() if k == n}
    assert some == {"rope", "p_rope"} and not every
    # the feedback's facts: partial RoPE and the hybrid perfect within L; ALiBi and NoPE below 0.4 there
    for scheme in ("partial_rope", "rope_nope"):
        assert lab.seeds_agreeing(runs, lambda at, s=scheme: at("lookup", s, 1) == 1.0) == (12, 12)
    assert within["alibi"] == within["nope"] == (12, 12)
    named = {
        "RoPE": {"rope"},
        "p-RoPE": {"p_rope"},
        "partial RoPE": {"partial_rope"},
        "RoPE/NoPE hybrid": {"rope_nope"},
        "ALiBi": {"alibi"},
        "NoPE": {"nope"},
    }

    def claims(text):
        if text.startswith("None"):
            said = set()
        elif text.startswith("Every scheme but the absolute"):
            said = set(lab.SCHEMES) - {"learned", "sinusoidal"}
        else:
            said = set().union(*(s for name, s in named.items() if re.search(rf"(^|[ ,:]){re.escape(name)}\b", text)))
        if "neither in every seed" in text and every:
            return False
        return said == some

    _only_correct("ex-ch12-predict", claims)
    text = solution("ex-ch12-predict")
    assert 'at("lookup", s, 4, value="beyond") > 0.9' in text


def test_ch16_shifted_positions_change_nothing_under_the_block_mask_and_read_as_one_document():
    rng = np.random.default_rng(0)
    lengths, d = (4, 3, 5), 8
    total = sum(lengths)
    q, k, v = (rng.normal(size=(total, d)) for _ in range(3))
    restarted = np.concatenate([np.arange(n) for n in lengths])
    counted = np.arange(total)
    mask, theta = posenc.document_mask(lengths), posenc.rope_inv_freq(d)
    same = (
        np.abs(
            posenc.rope_attention(q, k, v, counted, theta, mask)
            - posenc.rope_attention(q, k, v, restarted, theta, mask)
        ).max()
        < 1e-12
    )
    one_document = len(set(posenc.document_ids_from_position_ids(counted).tolist())) == 1
    assert len(set(posenc.document_ids_from_position_ids(restarted).tolist())) == 3  # restarts do separate

    def claims(text):
        part_a, part_b = text.split("; ")
        return ("the same outputs" in part_a) == same and ("one document" in part_b) == one_document

    assert same and one_document
    _only_correct("ex-ch16-predict-continuing", claims)
    text = solution("ex-ch16-predict-continuing")
    assert "assert shift_gap < 1e-12" in text and "finds a single document" in text


def test_the_teachers_guide_names_the_chapters_with_answers_in_the_page():
    chapters = sorted({int(ACTIVITIES[label].chapter) for label in KEYS})
    runs, start = [], chapters[0]
    for previous, current in zip(chapters, [*chapters[1:], None], strict=True):
        if current != previous + 1:
            runs.append(f"{start}–{previous}" if previous > start else f"{start}")
            start = current
    named = " and ".join([", ".join(runs[:-1]), runs[-1]] if len(runs) > 1 else runs)
    text = re.sub(r"\s+", " ", (CHAPTERS / "coursework.md").read_text())
    assert f"the prediction exercises of chapters {named} first ask the reader" in text


def test_the_transform_puts_the_form_right_before_a_keyed_solution_only():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document
    from sphinx_exercise.nodes import solution_node

    from posenc.book.answer_forms import insert_answer_forms

    document = new_document("page", get_default_settings(Parser))
    section = nodes.section()
    document += section
    keyed, unkeyed = solution_node(target_label="ex-ch07-predict-buckets"), solution_node(target_label="ex-ch07-x")
    section += [nodes.paragraph(text="exercise"), keyed, nodes.paragraph(text="next"), unkeyed]
    insert_answer_forms(None, document, "page")
    forms = list(document.findall(nodes.raw))
    assert len(forms) == 1 and forms[0]["format"] == "html"
    assert section.index(forms[0]) + 1 == section.index(keyed)
    assert forms[0].astext() == answer_form("ex-ch07-predict-buckets", KEYS["ex-ch07-predict-buckets"])
