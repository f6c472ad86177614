"""The answer key of chapter 03: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_LOOPS = """
def my_binary(n_positions, n_bits):
    table = np.zeros((n_positions, n_bits), dtype=int)
    for p in range(n_positions):
        for j in range(n_bits):
            table[p, j] = p // 2**j % 2
    return table
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "binary": (_LOOPS,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch03-sines-only": (
        "No: by the angle-sum identity the next sine needs the current cosine, which is gone (two angles can "
        "share a sine and differ in cosine).",
        "linear_shift_fit confirms it: worst error about 0.84 with sines only, about 1e-15 with both.",
    ),
    "ex-ch03-average-flips": (
        "Computes the mean flips per step for n_bits = 2..12 (1.3333 at 2 bits, 1.9971 at 12) and guesses the limit 2.",
        "Counts per bit: over the 2^B - 1 steps, bit j flips every 2^j steps, 2^(B-j) - 1 times.",
        "Sums to 2^(B+1) - 2 - B flips, a mean of 2 - B/(2^B - 1), which tends to 2.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch03-sines-only": Choices(
        "With only the sine columns, is there still one fixed matrix that maps row p to row p + 1 for every p?",
        (
            Choice(
                "Yes: each sine column still advances by a fixed angle per position",
                "The next sine is sin(θp)cos θ + cos(θp)sin θ: it needs the current cosine, which is gone; the "
                "best fit is off by about 0.84.",
            ),
            Choice(
                "No: the next sine needs the current cosine, which is no longer in the row",
                "By the angle-sum identity; the best linear fit is off by about 0.84, against about 1e-15 with "
                "both columns.",
                correct=True,
            ),
            Choice(
                "Approximately: the best fit is off by less than 0.01",
                "The best fit's worst error is about 0.84, as large as the values themselves.",
            ),
        ),
    ),
}
