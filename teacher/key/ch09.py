"""The answer key of chapter 09: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_WAVELENGTHS = """
def my_turns(head_dim, base, context_length):
    wavelength = 2 * np.pi * base ** (np.arange(0, head_dim, 2) / head_dim)
    return context_length / wavelength
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "turns_within_context": (_WAVELENGTHS,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch09-predict": (
        "(a) Up: doubling L moves the one-turn crossing by about 4.8 pairs, about 10 dimensions: 100.",
        "(b) Down: the 50 times larger base moves it to about half the dimensions, 64; both checked with "
        "critical_dimension.",
    ),
    "ex-ch09-llama3": (
        "Counts the pairs with at least one turn within 8192: 35 of 64 (29 never turn).",
        "Critical dimension 70 (Llama 2: 92).",
        "Slowest wavelength about 2.56 million tokens, about 312 L, against about 13 L for Llama 2.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch09-predict": Choices(
        "Llama 2's critical dimension is 92. What becomes of it (a) when L doubles to 8192, (b) when the base "
        "grows 50 times, to 500,000, at L = 4096?",
        (
            Choice(
                "(a) Down, to about 84; (b) up, to about 120",
                "Directions swapped: a longer L gives every pair more turns, so more pairs turn (up); a larger "
                "base slows the pairs, so fewer do (down).",
            ),
            Choice(
                "(a) Up, to 128: at twice the length every pair turns; (b) down, to about 64",
                "Doubling L moves the one-turn crossing by only (d/2)·log_b 2 ≈ 4.8 pairs: the critical "
                "dimension rises to about 100.",
            ),
            Choice(
                "(a) Up, to about 100; (b) up, to about 120: a larger base gives longer wavelengths",
                "Longer wavelengths mean fewer pairs complete a turn within L: the critical dimension falls, to 64.",
            ),
            Choice(
                "(a) Up, to about 100; (b) down, to about 64",
                "Doubling L moves the crossing by (d/2)·log_b 2 ≈ 4.8 pairs, about 10 dimensions; the "
                "larger base moves it to about half the dimensions.",
                correct=True,
            ),
        ),
    ),
}
