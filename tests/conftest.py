"""Shared test settings: a headless matplotlib backend and a bounded hypothesis profile."""

import os

import matplotlib

matplotlib.use("Agg")

from hypothesis import settings

settings.register_profile("book", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "book"))
