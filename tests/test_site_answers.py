"""Answers in the page, on the built website in a real browser, by keyboard only.

Each prediction with an answer key has its form before its solution. A reader picks a wrong answer
with the keyboard and checks it: the page says "Not quite." with that choice's feedback and opens the
solution; then the right one: "Right.". A number is typed the way a reader writes it ("52,000").
The answered form passes axe's checks in light and dark mode. (The whole page's axe checks are in
test_site.py.)
"""

import re

import pytest
from test_site import CHAPTER_PAGES, opened

from posenc.course.coursework import ACTIVITIES
from posenc.course.questions import Choices

KEYS = {label: a.answer for label, a in ACTIVITIES.items() if a.answer is not None}


def _page(label):
    chapter = label.split("-")[1][2:]
    (page,) = [p for p in CHAPTER_PAGES if p.startswith(f"chapters/{chapter}_")]
    return page


def _solution_open(page, form):
    """Whether the solution after ``form`` is shown (sphinx-togglebutton's state)."""
    return page.evaluate(
        """id => { let s = document.getElementById(id).nextElementSibling;
             while (!s.classList.contains('solution')) s = s.nextElementSibling;
             return !s.classList.contains('toggle-hidden')
               && s.querySelector('.toggle-button').getAttribute('aria-expanded') === 'true'; }""",
        form,
    )


def _axe_serious(page, selector, **options):
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page, context=selector, options=options or None).response["violations"]
    return [f"{v['id']}: {v['help']}" for v in violations if v["impact"] in ("serious", "critical")]


@pytest.mark.book
def test_every_keyed_prediction_has_a_form_before_its_solution(site):
    _, html = site
    for label in KEYS:
        text = (html / f"{_page(label)}.html").read_text()
        form = text.index(f'<form class="posenc-answer" id="{label}-answer"')
        assert text.index(f'id="{label}"') < form < text.index('class="solution', form), label
        assert "posenc-answers.js" in text and "posenc-answers.css" in text


@pytest.mark.book
@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_choose_by_keyboard_wrong_then_right(site, browser, color_scheme):
    label = "ex-ch01-predict-mask"
    key = KEYS[label]
    assert isinstance(key, Choices)
    wrong = next(i for i, c in enumerate(key.choices) if not c.correct)
    right = next(i for i, c in enumerate(key.choices) if c.correct)
    base, _ = site
    form = f"{label}-answer"
    with opened(browser, f"{base}/{_page(label)}.html", color_scheme) as (page, record):
        assert page.is_visible(f"#{form}") and not _solution_open(page, form)
        result = page.locator(f"#{form} .posenc-answer-result")
        # focus the first choice, move to the wrong one with the arrow keys, Tab to "Check", Enter
        page.focus(f"#{form}-0")
        for _ in range(wrong):
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Space")
        assert page.is_checked(f"#{form}-{wrong}")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.textContent") == "Check"
        page.keyboard.press("Enter")
        assert result.inner_text().startswith("Not quite.")
        assert key.choices[wrong].feedback in result.inner_text()
        assert f"The answer: {key.correct.text}." in result.inner_text()
        assert _solution_open(page, form)
        assert record["console"] == [] and record["failed"] == [], record  # before axe, whose requests may 404
        # back to the group (Shift+Tab), arrows to the right choice, check again
        page.keyboard.press("Shift+Tab")
        for _ in range(right - wrong):
            page.keyboard.press("ArrowDown" if right > wrong else "ArrowUp")
        assert page.is_checked(f"#{form}-{right}")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        assert result.inner_text().startswith("Right.")
        assert _solution_open(page, form)  # checking again leaves the solution open
        assert page.get_attribute(f"#{form}", "class") == "posenc-answer posenc-answer-right"
        assert page.evaluate("() => document.activeElement.textContent") == "Check"
        assert _axe_serious(page, f"#{form}") == []


@pytest.mark.book
def test_type_a_number_by_keyboard(site, browser):
    label = "ex-ch14-predict-partial"
    base, _ = site
    form = f"{label}-answer"
    with opened(browser, f"{base}/{_page(label)}.html") as (page, record):
        result = page.locator(f"#{form} .posenc-answer-result")
        page.focus(f"#{form}-value")
        page.keyboard.press("Enter")  # nothing typed: asks for a number, opens nothing
        assert result.inner_text().startswith("Enter a number") and not _solution_open(page, form)
        page.keyboard.type("5,400")  # the p-RoPE wavelength: wrong
        page.keyboard.press("Enter")
        assert result.inner_text().startswith("Not quite.") and _solution_open(page, form)
        page.fill(f"#{form}-value", "")
        page.keyboard.type("52,000")
        page.keyboard.press("Enter")
        assert re.match(r"Right\. .*52,000 tokens", result.inner_text())
        assert record["console"] == [] and record["failed"] == [], record
        assert _axe_serious(page, f"#{form}") == []
