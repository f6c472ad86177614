"""The lab chapter's claims, written down before the seeds that check them were trained.

Chapter 12 states what the lab's small models show. Each statement is one :class:`Claim`
here, with its thresholds and margins, written from the **discovery seeds**
(:data:`DISCOVERY_SEEDS`) and committed before the **held-out seeds** (:data:`HELD_OUT_SEEDS`)
were trained. :func:`check_claims` then decides each claim on the held-out seeds from the
committed results; the chapter and the test suite assert that every claim the text states
survived, and the text reports the others as not confirmed.

Two kinds of claim:

* ``"seeds"``: a condition checked seed by seed (``condition(at)``, as
  :func:`posenc.lab.seeds_agreeing` calls it). It is written as a finding when it holds in at
  least :data:`FINDING_SHARE` of the discovery seeds (9 of 10: a one-sided sign test gives
  p = 0.011; 8 of 10 gives 0.055, no finding), and it is confirmed when it holds in every
  held-out seed.
* ``"compare"``: two methods' per-seed difference, with a margin below which they are
  *level* (:func:`compare`): "ahead" (or "behind") when its 95% interval excludes zero, its
  mean is at least the margin and at least 9 in 10 seeds agree; "level" when the whole interval
  lies within the margin; "inconclusive" otherwise. It is confirmed when the verdict on all
  seeds, held-out ones included, is the verdict written from the discovery seeds, and, for
  "ahead" or "behind", every held-out seed agrees in sign. An "inconclusive" verdict states no
  ranking, so nothing on the held-out seeds can refute it; the text reports its numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_int
from .results import paired_difference, seed_values, seeds_agreeing

__all__ = [
    "DISCOVERY_SEEDS",
    "HELD_OUT_SEEDS",
    "FINDING_SHARE",
    "MARGINS",
    "Claim",
    "Compare",
    "compare",
    "verdict",
    "check_claim",
    "check_held_out",
    "check_claims",
    "finding_threshold",
    "sign_test",
    "words",
    "CLAIMS",
    "PASSKEY_CLAIMS",
    "TEXT_CLAIMS",
]

#: The seeds the claims were written from.
DISCOVERY_SEEDS = tuple(range(10))
#: The seeds trained after the claims were committed: they check them.
HELD_OUT_SEEDS = (10, 11)
#: A condition is a finding when it holds in at least this share of the seeds (9 of 10).
FINDING_SHARE = 0.9
#: Two methods whose mean per-seed difference is within this margin (95% interval inside it) are level:
#: 2 points of accuracy (the per-seed standard error of a passkey accuracy over 8 x 512 sequences is at
#: most 0.008), 0.02 bits per character (about a hundredth of a lookup-free text loss).
MARGINS = {"accuracy": 0.02, "bits_per_char": 0.02}
_HIGHER_IS_BETTER = {"lookup": True, "passkey": True, "text": False}
_METRIC = {"lookup": "accuracy", "passkey": "accuracy", "text": "bits_per_char"}


def finding_threshold(n: int) -> int:
    """The fewest seeds of ``n`` in which a condition must hold to be a finding: ``ceil(0.9 n)``."""
    return math.ceil(FINDING_SHARE * check_int("n", n, minimum=1) - 1e-9)


def sign_test(k: int, n: int) -> float:
    """One-sided sign test: the chance that at least ``k`` of ``n`` seeds agree when each agrees
    with probability 1/2, ``sum_{j >= k} C(n, j) / 2^n`` (exact)."""
    n = check_int("n", n, minimum=1)
    k = check_int("k", k, minimum=0, maximum=n)
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n


@dataclass(frozen=True)
class Compare:
    """Two measurements of one task at one test length, compared seed by seed.

    ``first`` and ``second`` are ``(scheme, extension, finetuned)``; ``value`` is "all", "inside"
    or "beyond"."""

    task: str
    test_factor: int
    first: tuple
    second: tuple
    value: str = "beyond"

    def differences(self, runs, seeds=None) -> tuple[np.ndarray, np.ndarray]:
        get = lambda who: seed_values(runs, self.task, who[0], self.test_factor, who[1], who[2], self.value, seeds)  # noqa: E731
        return get(self.first), get(self.second)


def verdict(first, second, task: str) -> dict:
    """The margin rule on two per-seed series of one task's metric (same seeds, same order).

    Returns :func:`posenc.lab.paired_difference`'s numbers for the difference oriented so that
    positive means *first is better* (higher accuracy, lower bits per character), plus
    ``"margin"`` (:data:`MARGINS`) and ``"verdict"``: "level" when the 95% interval lies within
    the margin; "ahead" when it excludes zero, the mean is at least the margin and at least
    :func:`finding_threshold` seeds agree; "behind" in the mirror case; else "inconclusive".
    The two series may be any two settings, e.g. one model at two test lengths."""
    check_choice("task", task, tuple(_HIGHER_IS_BETTER))
    sign = 1.0 if _HIGHER_IS_BETTER[task] else -1.0
    result = paired_difference(sign * np.asarray(first, dtype=float), sign * np.asarray(second, dtype=float))
    margin = MARGINS[_METRIC[task]]
    need = finding_threshold(result["n"])
    if result["low"] > -margin and result["high"] < margin:
        decided = "level"
    elif result["low"] > 0 and result["mean"] >= margin and result["positive"] >= need:
        decided = "ahead"
    elif result["high"] < 0 and result["mean"] <= -margin and result["negative"] >= need:
        decided = "behind"
    else:
        decided = "inconclusive"
    return {**result, "margin": margin, "verdict": decided}


def compare(runs, comparison: Compare, seeds=None) -> dict:
    """The verdict (:func:`verdict`) on ``comparison.first`` against ``comparison.second`` over
    ``seeds`` (default: all): positive means *first is better*; "ahead", "behind", "level" or
    "inconclusive" (module docstring)."""
    first, second = comparison.differences(runs, seeds)
    return verdict(first, second, comparison.task)


@dataclass(frozen=True)
class Claim:
    """One statement of chapter 12, as it was written from the discovery seeds.

    ``kind`` "seeds": ``condition(at) -> bool`` per seed; "compare": ``comparison`` with the
    ``verdict`` written. ``says`` is the statement in words."""

    name: str
    says: str
    kind: str
    condition: Callable | None = None
    comparison: Compare | None = None
    verdict: str | None = None
    # which results: "main" (the current protocol's files in chapters/data/lab/: lookup.json, passkey.json,
    # text.json, one per task) or "budget" (chapters/data/lab/lookup_budget.json)
    results: str = "main"

    def __post_init__(self):
        check_choice("kind", self.kind, ("seeds", "compare"))
        check_choice("results", self.results, ("main", "budget"))
        if self.kind == "seeds" and not callable(self.condition):
            raise TypeError(f"claim {self.name!r}: kind 'seeds' needs a condition(at) function")
        if self.kind == "compare":
            if not isinstance(self.comparison, Compare):
                raise TypeError(f"claim {self.name!r}: kind 'compare' needs a Compare")
            check_choice("verdict", self.verdict, ("ahead", "behind", "level", "inconclusive"))


def check_claim(runs, claim: Claim, discovery=DISCOVERY_SEEDS, held_out=HELD_OUT_SEEDS) -> dict:
    """Decide ``claim`` on the discovery and the held-out seeds of ``runs``.

    Returns ``{"name", "says", "discovery": (k, n), "held_out": (k, n), "written": bool,
    "confirmed": bool}`` for a "seeds" claim (``written``: it holds in at least
    :func:`finding_threshold` of the discovery seeds); for a "compare" claim also
    ``"discovery_verdict"``, ``"all_verdict"`` and the all-seed ``"difference"``
    (:func:`compare`), with ``(k, n)`` counting the seeds where first is better."""
    base = {"name": claim.name, "says": claim.says, "kind": claim.kind}
    if claim.kind == "seeds":
        k, n = seeds_agreeing(runs, claim.condition, discovery)
        k_held, n_held = seeds_agreeing(runs, claim.condition, held_out)
        written = k >= finding_threshold(n)
        return {
            **base,
            "discovery": (k, n),
            "held_out": (k_held, n_held),
            "written": written,
            "confirmed": written and k_held == n_held,
        }
    found = compare(runs, claim.comparison, discovery)
    everything = compare(runs, claim.comparison, tuple(discovery) + tuple(held_out))
    first, second = claim.comparison.differences(runs, held_out)
    sign = 1.0 if _HIGHER_IS_BETTER[claim.comparison.task] else -1.0
    held = sign * (first - second)
    if claim.verdict == "ahead":
        agree = int(np.sum(held > 0))
    elif claim.verdict == "behind":
        agree = int(np.sum(held < 0))
    else:
        agree = int(held.size)  # a tie or an open question predicts no sign
    written = found["verdict"] == claim.verdict
    # an open question states nothing the held-out seeds could refute; the others must survive them
    survives = everything["verdict"] == claim.verdict and agree == held.size
    confirmed = written and (claim.verdict == "inconclusive" or survives)
    return {
        **base,
        "discovery": (found["positive"], found["n"]),
        "held_out": (int(np.sum(held > 0)), int(held.size)),
        "discovery_verdict": found["verdict"],
        "all_verdict": everything["verdict"],
        "difference": everything,
        "written": written,
        "confirmed": confirmed,
    }


def check_held_out(runs, claim: Claim, held_out=HELD_OUT_SEEDS) -> dict:
    """Decide ``claim`` on the held-out seeds alone, seed by seed (no discovery seed enters).

    Two seeds give no useful interval, so each held-out seed is a test of its own:

    * "seeds": the condition holds in that seed;
    * "compare", "ahead" ("behind"): first is better (worse) in that seed, the sign
      :func:`check_claim` requires of every held-out seed;
    * "compare", "level": the difference in that seed is within the margin
      (:data:`MARGINS`), stricter than the interval rule, which two seeds cannot decide;
    * "compare", "inconclusive": states no ranking, so no seed can refute it (``passed`` None).

    Returns ``{"name", "says", "kind", "seeds", "holds" (per seed, None for an inconclusive
    claim), "values" (per-seed oriented difference for "compare": positive means first is
    better; None for "seeds"), "passed"}``."""
    seeds = tuple(held_out)
    base = {"name": claim.name, "says": claim.says, "kind": claim.kind, "seeds": seeds}
    if claim.kind == "seeds":
        holds = [bool(seeds_agreeing(runs, claim.condition, (seed,))[0]) for seed in seeds]
        return {**base, "holds": holds, "values": None, "passed": all(holds)}
    first, second = claim.comparison.differences(runs, seeds)
    sign = 1.0 if _HIGHER_IS_BETTER[claim.comparison.task] else -1.0
    values = [float(v) for v in sign * (first - second)]
    margin = MARGINS[_METRIC[claim.comparison.task]]
    if claim.verdict == "inconclusive":
        return {**base, "holds": None, "values": values, "passed": None}
    test = {"ahead": lambda v: v > 0, "behind": lambda v: v < 0, "level": lambda v: abs(v) < margin}[claim.verdict]
    holds = [bool(test(v)) for v in values]
    return {**base, "holds": holds, "values": values, "passed": all(holds)}


def check_claims(runs, claims=None, discovery=DISCOVERY_SEEDS, held_out=HELD_OUT_SEEDS) -> list[dict]:
    """Every claim (default :data:`CLAIMS`) checked as written (:func:`check_claim`: discovery
    seeds, and the all-seed rule) and on the held-out seeds alone (:func:`check_held_out`,
    under ``"held_out_check"``)."""
    claims = CLAIMS if claims is None else claims
    return [
        {**check_claim(runs, c, discovery, held_out), "held_out_check": check_held_out(runs, c, held_out)}
        for c in claims
    ]


_UNITS = {"accuracy": "", "bits_per_char": " bits per character"}


def _held_out_words(k: int, n: int) -> str:
    if k == n:
        return "both held-out seeds" if n == 2 else f"all {n} held-out seeds"
    return f"only {k} of the {n} held-out seeds" if k else f"none of the {n} held-out seeds"


def words(result: dict, task: str | None = None, *, as_measured: bool = False) -> str:
    """A checked claim (:func:`check_claim`) in words, for the chapter's text.

    "seeds" claims: "in all 10 discovery seeds and both held-out seeds" (or "in 9 of 10 ...",
    "... but only 1 of the 2 held-out seeds"). "compare" claims (``task`` names the metric): the
    verdict on all seeds with the mean difference and its 95% interval, e.g. "level within
    0.02: mean difference +0.004 (95% interval -0.006 to +0.014), 12 seeds".

    The difference is :func:`compare`'s, oriented so that positive means *first is better*; for
    an accuracy that is first minus second. With ``as_measured`` (and a ``task`` whose metric is
    lower-is-better, bits per character) the words give instead the *loss difference* as measured,
    first minus second, so that its sign is the loss's own: positive means the first setting's
    loss is higher. E.g. "behind: loss higher by 0.141 bits per character (95% interval +0.117 to
    +0.165), in 5 of 5 seeds", "inconclusive: mean loss difference -0.086 bits per character
    (95% interval -0.227 to +0.055), first lower in 4 of 5 seeds". For an accuracy
    ``as_measured`` changes nothing."""
    if result["kind"] == "seeds":
        k, n = result["discovery"]
        k_held, n_held = result["held_out"]
        found = f"in all {n} discovery seeds" if k == n else f"in {k} of {n} discovery seeds"
        joint = "and" if k_held == n_held else "but"
        return f"{found} {joint} {_held_out_words(k_held, n_held)}"
    d = result["difference"]
    unit = _UNITS[_METRIC[task]] if task else ""
    verdict = result["all_verdict"]
    if as_measured and task and not _HIGHER_IS_BETTER[task]:
        return _loss_words(d, verdict, unit)
    interval = f"95% interval {d['low']:+.3f} to {d['high']:+.3f}"
    if verdict == "level":
        return f"level within {d['margin']:g}{unit}: mean difference {d['mean']:+.3f} ({interval}), {d['n']} seeds"
    if verdict in ("ahead", "behind"):
        agree = d["positive"] if verdict == "ahead" else d["negative"]
        return f"{verdict} by {abs(d['mean']):.3f}{unit} ({interval}), in {agree} of {d['n']} seeds"
    return (
        f"inconclusive: mean difference {d['mean']:+.3f}{unit} ({interval}), "
        f"first better in {d['positive']} of {d['n']} seeds"
    )


def _loss_words(d: dict, verdict: str, unit: str) -> str:
    """:func:`words` for a lower-is-better metric, as measured: the loss difference first - second
    (``d`` is oriented, positive = first better, so the loss difference is ``-d``)."""
    mean, low, high = -d["mean"], -d["high"], -d["low"]
    lower, higher, n = d["positive"], d["negative"], d["n"]  # seeds where first's loss is lower / higher
    interval = f"95% interval {low:+.3f} to {high:+.3f}"
    if verdict == "level":
        return f"level within {d['margin']:g}{unit}: mean loss difference {mean:+.3f} ({interval}), {n} seeds"
    if verdict == "behind":
        return f"behind: loss higher by {mean:.3f}{unit} ({interval}), in {higher} of {n} seeds"
    if verdict == "ahead":
        return f"ahead: loss lower by {-mean:.3f}{unit} ({interval}), in {lower} of {n} seeds"
    return f"inconclusive: mean loss difference {mean:+.3f}{unit} ({interval}), first lower in {lower} of {n} seeds"


# --- the claims --------------------------------------------------------------------------------
# Written from the discovery seeds 0-9, one task at a time, each committed before its
# held-out seeds were trained (the git history shows the order). ``at`` is the per-seed
# accessor of :func:`posenc.lab.seeds_agreeing`:
# at(task, scheme, test_factor, extension="none", finetuned=False, value="all").

_SCHEMES = ("nope", "learned", "sinusoidal", "rope", "alibi", "partial_rope", "p_rope", "rope_nope")
_METHODS = ("ntk", "ntk_at_dynamic", "dynamic", "yarn", "yarn_matched", "longrope")  # all but linear
_CHANCE_LOOKUP = 1 / 32  # a uniform guess over the lookup task's 32 tokens


def _plain(scheme: str) -> tuple:
    return (scheme, "none", False)


def _rope(extension: str = "none", finetuned: bool = False) -> tuple:
    return ("rope", extension, finetuned)


_LOOKUP = (
    Claim(
        "within-L-solved",
        "Within L every scheme but NoPE and ALiBi solves the lookup task: accuracy above 0.95.",
        "seeds",
        lambda at: all(at("lookup", s, 1, value="inside") > 0.95 for s in _SCHEMES if s not in ("nope", "alibi")),
    ),
    Claim(
        "within-L-failed",
        "Within L NoPE and ALiBi are above a uniform guess (1/32) and below 0.5 on lookup.",
        "seeds",
        lambda at: all(_CHANCE_LOOKUP < at("lookup", s, 1, value="inside") < 0.5 for s in ("nope", "alibi")),
    ),
    Claim(
        "alibi-above-nope-within-L",
        "Within L ALiBi is ahead of NoPE on lookup.",
        "compare",
        comparison=Compare("lookup", 1, _plain("alibi"), _plain("nope"), "inside"),
        verdict="ahead",
    ),
    Claim(
        "learned-below-nope-lookup",
        "Past L at 4L the learned table is behind NoPE on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _plain("learned"), _plain("nope")),
        verdict="behind",
    ),
    Claim(
        "sinusoidal-below-nope-lookup",
        "Past L at 4L the sinusoidal code is behind NoPE on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _plain("sinusoidal"), _plain("nope")),
        verdict="behind",
    ),
    Claim(
        "sinusoidal-vs-nope-lookup-2x",
        "Past L at 2L the sinusoidal code against NoPE on lookup: inconclusive.",
        "compare",
        comparison=Compare("lookup", 2, _plain("sinusoidal"), _plain("nope")),
        verdict="inconclusive",
    ),
    Claim(
        "learned-beyond-guess",
        "Past L at 4L the learned table's lookup accuracy is below twice a uniform guess (2/32).",
        "seeds",
        lambda at: at("lookup", "learned", 4, value="beyond") < 2 * _CHANCE_LOOKUP,
    ),
    Claim(
        "rope-p-rope-kept",
        "Past L at 4L RoPE and p-RoPE keep lookup above 0.7; every other scheme is below 0.6.",
        "seeds",
        lambda at: (
            all(at("lookup", s, 4, value="beyond") > 0.7 for s in ("rope", "p_rope"))
            and all(at("lookup", s, 4, value="beyond") < 0.6 for s in _SCHEMES if s not in ("rope", "p_rope"))
        ),
    ),
    Claim(
        "p-rope-vs-rope-lookup",
        "Past L at 4L p-RoPE and RoPE are level on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _plain("p_rope"), _plain("rope")),
        verdict="level",
    ),
    Claim(
        "hybrid-above-partial-lookup",
        "Past L at 4L the RoPE/NoPE hybrid is ahead of partial RoPE on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _plain("rope_nope"), _plain("partial_rope")),
        verdict="ahead",
    ),
    Claim(
        "rope-above-hybrid-lookup",
        "Past L at 4L RoPE is ahead of the RoPE/NoPE hybrid on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _plain("rope"), _plain("rope_nope")),
        verdict="ahead",
    ),
    Claim(
        "alibi-lookup-falls",
        "ALiBi's lookup accuracy past L at 4L is below its accuracy within L, by more than 0.03.",
        "seeds",
        lambda at: at("lookup", "alibi", 4, value="beyond") < at("lookup", "alibi", 1, value="inside") - 0.03,
    ),
    Claim(
        "linear-fails-at-L-lookup",
        "Position interpolation for 4L, zero-shot, fails lookup even at L: accuracy below 0.1.",
        "seeds",
        lambda at: at("lookup", "rope", 1, "linear", value="inside") < 0.1,
    ),
    Claim(
        "dynamic-exact-within-L-lookup",
        "Dynamic NTK leaves the lookup accuracy at L exactly as it was.",
        "seeds",
        lambda at: at("lookup", "rope", 1, "dynamic", value="inside") == at("lookup", "rope", 1, value="inside"),
    ),
    Claim(
        "dynamic-is-its-control-lookup",
        "At the target 4L dynamic NTK and static NTK at its factor (13) give exactly the same lookup accuracy.",
        "seeds",
        lambda at: all(
            at("lookup", "rope", 4, "dynamic", value=v) == at("lookup", "rope", 4, "ntk_at_dynamic", value=v)
            for v in ("inside", "beyond")
        ),
    ),
    Claim(
        "dynamic-vs-ntk-lookup",
        "Past L at 4L dynamic NTK against NTK-aware scaling (factor 4) on lookup: inconclusive.",
        "compare",
        comparison=Compare("lookup", 4, _rope("dynamic"), _rope("ntk")),
        verdict="inconclusive",
    ),
    *(
        Claim(
            f"{m}-ahead-of-none-lookup",
            f"Past L at 4L, {m} (zero-shot; LongRoPE after its search) is ahead of the unscaled RoPE model on lookup.",
            "compare",
            comparison=Compare("lookup", 4, _rope(m), _rope()),
            verdict="ahead",
        )
        for m in _METHODS
    ),
    Claim(
        "yarn-vs-matched-lookup",
        "Past L at 4L YaRN with the default betas is ahead of YaRN with matched betas on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _rope("yarn"), _rope("yarn_matched")),
        verdict="ahead",
    ),
    Claim(
        "yarn-vs-longrope-lookup",
        "Past L at 4L YaRN and the searched LongRoPE factors are level on lookup.",
        "compare",
        comparison=Compare("lookup", 4, _rope("yarn"), _rope("longrope")),
        verdict="level",
    ),
    Claim(
        "yarn-at-L-lookup",
        "At L YaRN configured for 4L and the unscaled model are level on lookup.",
        "compare",
        comparison=Compare("lookup", 1, _rope("yarn"), _rope(), "inside"),
        verdict="level",
    ),
    Claim(
        "ft-all-solve-lookup",
        "Fine-tuned at 4L, the plain RoPE model and every method but interpolation are above 0.95 on lookup past L.",
        "seeds",
        lambda at: all(at("lookup", "rope", 4, m, True, "beyond") > 0.95 for m in ("none", *_METHODS)),
    ),
    Claim(
        "linear-ft-fails-lookup",
        "Fine-tuned at 4L, position interpolation stays below 0.1 on lookup, at L and past L.",
        "seeds",
        lambda at: (
            at("lookup", "rope", 4, "linear", True, "beyond") < 0.1
            and at("lookup", "rope", 1, "linear", True, "inside") < 0.1
        ),
    ),
)


def _compare(name, says, task, factor, first, second, verdict, value="all") -> Claim:
    return Claim(name, says, "compare", comparison=Compare(task, factor, first, second, value), verdict=verdict)


def _seeds(name, says, condition) -> Claim:
    return Claim(name, says, "seeds", condition)


# Text and passkey, rerun under the current protocol (chapters/data/lab/text.json and passkey.json):
# written from seeds 0-9 on 2026-11-27 and committed before seeds 10 and 11 were checked.
_M8 = ("ntk", "dynamic", "yarn", "yarn_matched", "longrope")

_PASSKEY = (
    _seeds(
        "passkey-within-L",
        "Within L every scheme but the sinusoidal code finds the passkey more than 95% of the time.",
        lambda at: all(at("passkey", s, 1) > 0.95 for s in _SCHEMES if s != "sinusoidal"),
    ),
    _seeds(
        "alibi-passkey-8x",
        "At 8L ALiBi finds the passkey more than 95% of the time; every other scheme less than half the time.",
        lambda at: (
            at("passkey", "alibi", 8) > 0.95 and all(at("passkey", s, 8) < 0.5 for s in _SCHEMES if s != "alibi")
        ),
    ),
    _seeds(
        "nope-passkey-falls",
        "NoPE's passkey accuracy falls at each doubling of the length, L to 8L.",
        lambda at: (
            at("passkey", "nope", 1) > at("passkey", "nope", 2) > at("passkey", "nope", 4) > at("passkey", "nope", 8)
        ),
    ),
    _compare(
        "rope-vs-nope-passkey-8x",
        "At 8L plain RoPE is behind NoPE on passkey.",
        "passkey",
        8,
        _plain("rope"),
        _plain("nope"),
        "behind",
    ),
    _compare(
        "rope-vs-nope-passkey-2x",
        "At 2L plain RoPE against NoPE on passkey: inconclusive.",
        "passkey",
        2,
        _plain("rope"),
        _plain("nope"),
        "inconclusive",
    ),
    _compare(
        "hybrid-vs-rope-passkey-2x",
        "At 2L the RoPE/NoPE hybrid is ahead of RoPE on passkey.",
        "passkey",
        2,
        _plain("rope_nope"),
        _plain("rope"),
        "ahead",
    ),
    _compare(
        "hybrid-vs-rope-passkey-4x",
        "At 4L the RoPE/NoPE hybrid is ahead of RoPE on passkey.",
        "passkey",
        4,
        _plain("rope_nope"),
        _plain("rope"),
        "ahead",
    ),
    _compare(
        "hybrid-vs-rope-passkey-8x",
        "At 8L the RoPE/NoPE hybrid is ahead of RoPE on passkey.",
        "passkey",
        8,
        _plain("rope_nope"),
        _plain("rope"),
        "ahead",
    ),
    _compare(
        "partial-vs-rope-passkey-8x",
        "At 8L partial RoPE is behind RoPE on passkey.",
        "passkey",
        8,
        _plain("partial_rope"),
        _plain("rope"),
        "behind",
    ),
    _seeds(
        "linear-fails-at-L-passkey",
        "Position interpolation for 8L, zero-shot, finds the passkey at L less than half the time.",
        lambda at: at("passkey", "rope", 1, "linear") < 0.5,
    ),
    _seeds(
        "dynamic-exact-within-L-passkey",
        "Dynamic NTK leaves the passkey accuracy at L exactly as it was.",
        lambda at: at("passkey", "rope", 1, "dynamic") == at("passkey", "rope", 1),
    ),
    _seeds(
        "dynamic-is-its-control-passkey",
        "At the target 8L dynamic NTK and static NTK at its factor (57) give exactly the same passkey accuracy.",
        lambda at: at("passkey", "rope", 8, "dynamic") == at("passkey", "rope", 8, "ntk_at_dynamic"),
    ),
    _compare(
        "dynamic-vs-ntk-passkey",
        "At 8L dynamic NTK is ahead of NTK-aware scaling (factor 8) on passkey.",
        "passkey",
        8,
        _rope("dynamic"),
        _rope("ntk"),
        "ahead",
    ),
    *(
        _compare(
            f"{m}-vs-none-passkey",
            f"At 8L, {m} (zero-shot; LongRoPE after its search) is ahead of the unscaled RoPE model on passkey.",
            "passkey",
            8,
            _rope(m),
            _rope(),
            "ahead",
        )
        for m in _M8
    ),
    _compare(
        "yarn-at-L-passkey",
        "At L YaRN configured for 8L is behind the unscaled model on passkey.",
        "passkey",
        1,
        _rope("yarn"),
        _rope(),
        "behind",
    ),
    _compare(
        "yarn-vs-matched-passkey",
        "At 8L YaRN with the default betas is ahead of matched betas on passkey.",
        "passkey",
        8,
        _rope("yarn"),
        _rope("yarn_matched"),
        "ahead",
    ),
    _compare(
        "longrope-vs-yarn-passkey",
        "At 8L LongRoPE's searched factors against YaRN on passkey: inconclusive.",
        "passkey",
        8,
        _rope("longrope"),
        _rope("yarn"),
        "inconclusive",
    ),
    _compare(
        "longrope-vs-dynamic-passkey",
        "At 8L LongRoPE's searched factors are ahead of dynamic NTK on passkey.",
        "passkey",
        8,
        _rope("longrope"),
        _rope("dynamic"),
        "ahead",
    ),
    *(
        _compare(
            f"{m}-ft-vs-plain-ft-passkey",
            f"Fine-tuned at 8L, {m} is ahead of the plain RoPE model fine-tuned the same way, on passkey at 8L.",
            "passkey",
            8,
            _rope(m, True),
            _rope("none", True),
            "ahead",
        )
        for m in ("dynamic", "yarn", "longrope", "ntk")
    ),
    _seeds(
        "linear-ft-fails-passkey",
        "Fine-tuned at 8L, position interpolation finds the passkey at 8L less than 0.7 of the time.",
        lambda at: at("passkey", "rope", 8, "linear", True) < 0.7,
    ),
)

_TEXT = (
    _compare(
        "learned-vs-nope-text",
        "Past L at 4L the learned table is behind NoPE on text.",
        "text",
        4,
        _plain("learned"),
        _plain("nope"),
        "behind",
        "beyond",
    ),
    _compare(
        "sinusoidal-vs-nope-text",
        "Past L at 4L the sinusoidal code is behind NoPE on text.",
        "text",
        4,
        _plain("sinusoidal"),
        _plain("nope"),
        "behind",
        "beyond",
    ),
    _seeds(
        "alibi-flat-text",
        "ALiBi's text loss at 2L and 4L is within 0.15 bits per character of its loss at L.",
        lambda at: all(abs(at("text", "alibi", f) - at("text", "alibi", 1)) < 0.15 for f in (2, 4)),
    ),
    _seeds(
        "partial-flat-text",
        "Partial RoPE's text loss at 4L is within 0.2 bits per character of its loss at L; "
        "RoPE's grows by more than 0.5.",
        lambda at: (
            at("text", "partial_rope", 4) - at("text", "partial_rope", 1) < 0.2
            and at("text", "rope", 4) - at("text", "rope", 1) > 0.5
        ),
    ),
    *(
        _compare(
            f"partial-vs-{s}-text",
            f"At 4L partial RoPE is ahead of {s} on text.",
            "text",
            4,
            _plain("partial_rope"),
            _plain(s),
            "ahead",
        )
        for s in _SCHEMES
        if s != "partial_rope"
    ),
    _compare(
        "p-rope-vs-rope-text",
        "At 4L p-RoPE is behind RoPE on text.",
        "text",
        4,
        _plain("p_rope"),
        _plain("rope"),
        "behind",
    ),
    _compare(
        "rope-vs-alibi-text-L",
        "At L RoPE is ahead of ALiBi on text.",
        "text",
        1,
        _plain("rope"),
        _plain("alibi"),
        "ahead",
    ),
    _seeds(
        "linear-fails-at-L-text",
        "Position interpolation for 4L, zero-shot, gives a text loss at L above the unscaled model's at 4L.",
        lambda at: at("text", "rope", 1, "linear") > at("text", "rope", 4),
    ),
    _seeds(
        "dynamic-exact-within-L-text",
        "Dynamic NTK leaves the text loss at L exactly as it was.",
        lambda at: at("text", "rope", 1, "dynamic") == at("text", "rope", 1),
    ),
    _seeds(
        "dynamic-is-its-control-text",
        "At the target 4L dynamic NTK and static NTK at its factor (13) give exactly the same text loss, "
        "within and past L.",
        lambda at: all(
            at("text", "rope", 4, "dynamic", value=v) == at("text", "rope", 4, "ntk_at_dynamic", value=v)
            for v in ("inside", "beyond")
        ),
    ),
    _compare(
        "dynamic-inside-text",
        "At 4L dynamic NTK raises the loss on the positions within L above the unscaled model's.",
        "text",
        4,
        _rope("dynamic"),
        _rope(),
        "behind",
        "inside",
    ),
    _compare(
        "dynamic-vs-ntk-text",
        "At 4L dynamic NTK is ahead of NTK-aware scaling (factor 4) on text.",
        "text",
        4,
        _rope("dynamic"),
        _rope("ntk"),
        "ahead",
    ),
    *(
        _compare(
            f"{m}-vs-none-text",
            f"At 4L, {m} (zero-shot; LongRoPE after its search) is ahead of the unscaled RoPE model on text.",
            "text",
            4,
            _rope(m),
            _rope(),
            "ahead",
        )
        for m in _M8
    ),
    _compare(
        "yarn-at-L-text",
        "At L YaRN configured for 4L is behind the unscaled model on text.",
        "text",
        1,
        _rope("yarn"),
        _rope(),
        "behind",
    ),
    _compare(
        "yarn-vs-matched-text",
        "At 4L YaRN with the default betas is ahead of matched betas on text.",
        "text",
        4,
        _rope("yarn"),
        _rope("yarn_matched"),
        "ahead",
    ),
    _compare(
        "longrope-vs-yarn-text",
        "At 4L LongRoPE against YaRN on text: inconclusive.",
        "text",
        4,
        _rope("longrope"),
        _rope("yarn"),
        "inconclusive",
    ),
    *(
        _compare(
            f"{m}-ft-vs-plain-ft-text",
            f"Fine-tuned at 4L, {m} is ahead of the plain RoPE model fine-tuned the same way, on text at 4L.",
            "text",
            4,
            _rope(m, True),
            _rope("none", True),
            "ahead",
        )
        for m in ("ntk", "dynamic", "yarn", "longrope")
    ),
    _compare(
        "linear-ft-vs-yarn-ft-text",
        "Fine-tuned at 4L, interpolation is behind YaRN on text at 4L.",
        "text",
        4,
        _rope("linear", True),
        _rope("yarn", True),
        "behind",
    ),
    *(
        _compare(
            f"{m}-ft-at-L-text",
            f"Fine-tuned for 4L, {m} at L is level with the unscaled model on text.",
            "text",
            1,
            _rope(m, True),
            _rope(),
            "level",
        )
        for m in ("ntk", "yarn")
    ),
    *(
        _compare(
            f"{m}-ft-at-L-text",
            f"Fine-tuned for 4L, {m} at L is behind the unscaled model on text.",
            "text",
            1,
            _rope(m, True),
            _rope(),
            "behind",
        )
        for m in ("dynamic", "longrope", "linear")
    ),
)

#: The chapter's lookup claims, in the order the chapter states them (written from the discovery seeds).
CLAIMS: tuple[Claim, ...] = _LOOKUP
#: The passkey and text claims of the rerun (written from seeds 0-9 of the current protocol's files).
PASSKEY_CLAIMS: tuple[Claim, ...] = _PASSKEY
TEXT_CLAIMS: tuple[Claim, ...] = _TEXT

#: Claims that did not hold on the held-out seeds (filled in only after those seeds were trained);
#: the chapter reports them as not confirmed. Lookup (chapters/data/lab/lookup.json, seeds 10 and 11
#: trained after the lookup claims were committed, 2026-11-25): every claim that states a ranking or
#: a condition held in both held-out seeds. Passkey and text (chapters/data/lab/passkey.json and
#: text.json, seeds 10 and 11 trained after 9399ac9 committed their claims, 2026-11-27): 59 of the 60
#: that state something held; the RoPE/NoPE hybrid's lead over RoPE on passkey at 2L did not (seed 11:
#: -0.022). The test suite and chapter 12 assert this list on the committed files.
NOT_CONFIRMED: frozenset[str] = frozenset({"hybrid-vs-rope-passkey-2x"})
