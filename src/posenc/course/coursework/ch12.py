"""Chapter 12: the lab (a prediction and two investigations; no implementation exercise)."""

from ..activities import investigation, prediction

#: This chapter's exercises in the book's order, with points, minutes and rubrics.
CHAPTER_ACTIVITIES = (
    prediction("ex-ch12-predict", 15),
    investigation("ex-ch12-k", 25),
    investigation("ex-ch12-betas", 20),
)

#: Said after the kinds in the teacher's guide's table.
GUIDE_NOTE = "training runs, a few minutes of CPU each"
