"""The answer key of chapter 13: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_TRANSFORMERS_STYLE = """
def my_rope_half(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    angles = torch.as_tensor(np.asarray(positions)).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    t = torch.as_tensor(np.array(x))
    rotated = torch.cat((-t[..., d // 2 :], t[..., : d // 2]), dim=-1)
    return t * emb.cos().double() + rotated * emb.sin().double()
"""

_PERMUTE_WITH_HELPER = """
def my_permute_for_half(w, n_heads):
    head_dim = w.shape[0] // n_heads
    perm = posenc.interleaved_to_half_permutation(head_dim)
    rows = [h * head_dim + perm for h in range(n_heads)]
    return w[np.concatenate(rows)].tolist()
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "rope_half": (_TRANSFORMERS_STYLE,),
    "permute_for_half": (_PERMUTE_WITH_HELPER,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch13-predict-table": (
        "Predicts no difference (zero up to rounding): the rebuilt table is the original with its columns "
        "reordered, and PE PE^T sums over the columns.",
        "Concludes that the test cannot catch the bug; a useful test compares the columns themselves or scores "
        "through the trained weights.",
    ),
    "ex-ch13-gqa": (
        "Finds that permute(wk, 32, 1024, d_model) raises no error: 1024 rows split evenly into 32 blocks of 32.",
        "Says which original row each new row of head 0 holds: with 8 heads new row i holds old row 2i for "
        "i < 64 (rows 0..3: 0, 2, 4, 6) and new row i + 64 old row 2i + 1 (1, 3, ...); with 32, new row 64 "
        "holds old row 64 (each 128-row head permuted as four 32-row heads).",
        "Counts the pairs still together ((2i, 2i+1) of a head at rows i and i + 64): 0 of 512.",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch13-predict-table": Choices(
        "How large is the largest difference between the two similarity matrices PE PEᵀ (2048 positions, "
        "d_model = 512), and would the test catch the bug?",
        (
            Choice(
                "About as large as the largest entries (256): the test catches the bug at once",
                "PE PEᵀ sums over the columns, so reordering the columns leaves every entry unchanged.",
            ),
            Choice(
                "Small but not zero (about 1): a tight tolerance catches the bug",
                "PE PEᵀ sums over the columns, so reordering the columns leaves every entry unchanged, up to rounding.",
            ),
            Choice(
                "Zero, up to rounding: the test cannot catch the bug",
                "The rebuilt table is the original with its columns reordered, and PE PEᵀ sums over the "
                "columns; compare the columns themselves instead.",
                correct=True,
            ),
        ),
    ),
}
