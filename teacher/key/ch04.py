"""The answer key of chapter 04: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_VECTORISED = """
def my_offset_matrix(k, d_model, base=10000.0):
    w = base ** (-np.arange(0, d_model, 2) / d_model)
    c, s = np.cos(k * w), np.sin(k * w)
    m = np.zeros((d_model, d_model))
    e = np.arange(0, d_model, 2)
    m[e, e], m[e, e + 1], m[e + 1, e], m[e + 1, e + 1] = c, s, -s, c
    return m
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "offset_matrix": (_VECTORISED,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch04-predict-blocks": (
        "Block i turns by 1000 theta_i: 1000, 316, 100, 32, 10, 3.2, 1 and 0.3 rad; the slowest pair (0.3 rad) "
        "is near the identity.",
        "A fast pair can be nearer: pair 3 (about 32 rad, five whole turns plus 0.2) beats pair 6 (1 rad), "
        "since a block shows the angle only modulo 2 pi; slow pairs make long offsets unambiguous.",
    ),
    "ex-ch04-full-turn": (
        "Finds k = 710 (710/2 pi is about 113.00001 turns; 355/113 approximates pi).",
        "No integer k > 0 gives exactly the identity: k = 2 pi j would make pi = k/(2j) rational.",
        "Notes that for the full M_k all pairs would have to complete whole turns at once: codes never repeat exactly.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch04-predict-blocks": Choices(
        "Which block of M_1000 is nearer the identity: pair 3 (turned by about 32 radians) or pair 6 (turned by "
        "1 radian)?",
        (
            Choice(
                "Pair 6: it turned by far less",
                "A block shows the angle only modulo 2π: 32 radians is five whole turns plus about 0.2, nearer "
                "the identity than 1 radian.",
            ),
            Choice(
                "Pair 3: 32 radians is five whole turns plus about 0.2 radians",
                "A block cannot show whole turns, so a fast pair knows a long offset only modulo its wavelength.",
                correct=True,
            ),
            Choice(
                "Neither: a shift of 1000 takes every block far from the identity",
                "Pair 3's block is within about 0.2 of the identity, and the slowest pair's within about 0.3.",
            ),
        ),
    ),
}
