"""The answer key of chapter 05: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_COMPLEX = """
def my_similarity_by_offset(offsets, d_model, base=10000.0):
    w = base ** (-2 * np.arange(d_model // 2) / d_model)
    return np.exp(1j * np.outer(np.asarray(offsets, dtype=np.float64), w)).sum(axis=1).real
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "similarity_by_offset": (_COMPLEX,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch05-one-pair": (
        "One pair gives cos(k): it swings between 1 and -1 for ever, back near 1 every 2 pi (at 6, 13, 19, 25, "
        "...), and does not decay.",
        "The decay of a wide code comes from averaging many cosines of different periods.",
    ),
    "ex-ch05-half-width": (
        "Computes the first shift below half of s(p, p) = d/2 for the five bases: 5, 15, 28, 59 and 122.",
        "It grows with the base, roughly doubling per tenfold base from 1000 on: far slower than the base.",
        "Explains: speeds are log-spaced; a larger base barely moves the fast pairs, which leave the sum first.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch05-one-pair": Choices(
        "Does the similarity curve of a single pair (d_model = 2) decay over shifts 0 to 50?",
        (
            Choice(
                "Yes, like the wide code's curve, only more slowly",
                "One pair gives cos(k): it is back near 1 every 2π ≈ 6.3 tokens, and above 0.99 at shift 44.",
            ),
            Choice(
                "Yes, faster than the wide code's curve: one pair has no slow component",
                "One pair gives cos(k): it is back near 1 every 2π ≈ 6.3 tokens, and above 0.99 at shift 44.",
            ),
            Choice(
                "No: it is cos(k), back near 1 every 2π ≈ 6.3 tokens",
                "The decay of a wide code comes from averaging many cosines of different periods.",
                correct=True,
            ),
        ),
    ),
}
