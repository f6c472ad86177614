"""The answer key of chapter 06: model answers in other styles, rubrics and prediction keys.

Teacher-only: it is not part of the installed posenc package (see posenc.course.key).
"""

from posenc.course.questions import Choice, Choices, Number  # noqa: F401 (the keys below use some)

_TORCH = """
def my_add_positions(token_embeddings, position_table):
    t = torch.as_tensor(np.array(token_embeddings))
    return (t * t.shape[-1] ** 0.5 + torch.as_tensor(np.array(position_table))[: t.shape[-2]]).numpy()
"""

#: Exercise name -> more model answers (source text), in other styles than the chapter's solution cell.
ANSWERS = {
    "scaled_embedding": (_TORCH,),
}

#: Exercise label -> what a full answer says, one point-earning item per entry.
RUBRICS = {
    "ex-ch06-predict-ratio": (
        "Without scaling the ratio is 1/(0.02 sqrt 2), about 35, for every d (both grow like sqrt d).",
        "With scaling it is 35/sqrt(d): about 4.4 at 64, 0.55 at 4096; measured with the module.",
    ),
    "ex-ch06-param-count": (
        "Counts max_len * d_model for each of the six tables with LearnedPositionalEmbedding (393,216 for "
        "BERT-base up to 1,638,400 for GPT-2 1542M).",
        "No: every table is well under 1% of its model (0.11% to 0.67%).",
        "Within each family the share falls as the models grow (layers grow like d^2, the table like d).",
    ),
}

#: Prediction label -> the question the website asks before it opens the solution, with its key.
PREDICTIONS = {
    "ex-ch06-predict-ratio": Choices(
        "Tokens drawn with σ = 0.02: as d_model grows from 64 to 4096, how does ‖PE‖ / ‖token‖ change, "
        "without and with the √d scaling?",
        (
            Choice(
                "Without scaling it stays about 35; with scaling it falls like 1/√d, from about 4.4 to 0.55",
                "Without scaling both norms grow like √d, so the ratio is 1/(0.02√2) ≈ 35 for every d; "
                "the scaling divides it by √d.",
                correct=True,
            ),
            Choice(
                "Without scaling it falls like 1/√d; with scaling it stays about 35",
                "Swapped: without scaling both norms grow like √d, so the ratio stays about 35; the scaling "
                "multiplies the token by √d.",
            ),
            Choice(
                "Without scaling it grows like √d; with scaling it stays about 35",
                "The table's norm grows like √d, but so does the token's: without scaling the ratio stays about 35.",
            ),
            Choice(
                "With scaling the token outweighs the position at every width",
                "Not at d = 64: the scaled ratio is still about 4.4 there; it falls below 1 only past "
                "d = 1/(2·0.02²) = 1250.",
            ),
        ),
    ),
}
