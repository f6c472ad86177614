"""The answer key of chapter 12: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch12-predict": (
        "A prediction per scheme (above 0.9 at 4L or not) with a reason, written before looking.",
        "Compared with the measurements (printed in the solution): only RoPE and p-RoPE come near 0.9 at 4L; "
        "the absolute schemes fail past L; ALiBi and NoPE fail 'three back' even within L; partial RoPE and the"
        " RoPE/NoPE hybrid fall well below.",
    ),
    "ex-ch12-k": (
        "Trains ALiBi, RoPE and NoPE on k = 1 and reports accuracy within L at 1x and past L at 2x and 4x.",
        "ALiBi now solves the task within L and keeps it past L at 4L; NoPE does much worse.",
        "Explains: a monotone penalty prefers the nearest key, so a low self-score finds the previous token, "
        "but in a single layer nothing singles out the third one back (stacked layers can, with more steps).",
    ),
    "ex-ch12-betas": (
        "Measures zero-shot accuracy on the positions past L at 4L for the six (beta_fast, beta_slow) pairs "
        "and prints each ramp.",
        "Notes that at L = 32 a beta_fast of 4 or 32 puts the boundary below pair 1, rounded down or clamped to"
        " pair 0: (32, 1) and (4, 1) give the same ramp and the same accuracy.",
        "Identifies the slow pairs (less than one turn within L, pairs 2 and up) as the ones that decide the "
        "result: ramps that leave part of them unscaled, the matched betas included, do worse than the defaults"
        " in this run.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch12-predict": Choices(
        (
            "Lookup, three back, at four times the training length: which schemes keep an accuracy above 0.9 on "
            "the positions past L, in at least one of the lab's seeds?"
        ),
        (
            Choice(
                "RoPE and p-RoPE only, and neither in every seed",
                (
                    "Both pass 0.9 past L in some seeds but not in all (the solution prints how many); the "
                    "other six schemes stay below 0.9 past L in every seed."
                ),
                correct=True,
            ),
            Choice(
                "Every scheme of the RoPE family: RoPE, partial RoPE, p-RoPE and the RoPE/NoPE hybrid",
                (
                    "Partial RoPE and the RoPE/NoPE hybrid are perfect within L but fall well below 0.9 past "
                    "L in every seed."
                ),
            ),
            Choice(
                "ALiBi and NoPE: they have no position table or angle to run out of",
                (
                    "Neither learned to single out 'three back' even within L: both stay below 0.4 at the "
                    "training length in every seed, so there is nothing to keep past it."
                ),
            ),
            Choice(
                "Every scheme but the absolute ones (learned and sinusoidal)",
                (
                    "Only RoPE and p-RoPE pass 0.9 past L; ALiBi, NoPE, partial RoPE and the hybrid stay below "
                    "in every seed."
                ),
            ),
            Choice(
                "None of the eight",
                "RoPE and p-RoPE pass 0.9 past L at 4L in some seeds, though not in all of them.",
            ),
        ),
    ),
}
