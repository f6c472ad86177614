"""The lab chapter's claims, written down before the seeds that check them were trained.

Chapter 12 states what the lab's small models show. Each statement is one :class:`Claim`
here, written from a task's **discovery seeds** and committed before that task's **held-out
seeds** were trained (:data:`SEEDS`; every run records the git commit it was trained at, so
the order can be checked from the repository alone). :func:`check_claims` decides each claim
on both; the chapter and the test suite assert that every counted claim the text states
survived, and the text reports the others as not confirmed.

One rule decides a claim on any set of seeds, the discovery seeds when it is written and
the held-out seeds when it is checked (:func:`seed_slacks`): each seed either holds the claim
or not, and the claim holds when at least :data:`FINDING_SHARE` of the seeds do
(:func:`finding_threshold`: 9 of 10, 4 of 4, 11 of 12, 29 of 32).

* ``"seeds"``: a condition, given as its *slack* ``slack(at) -> float``: how far the seed's
  numbers are from the threshold, positive when the condition holds (``at`` as
  :func:`posenc.lab.seeds_agreeing` passes it).
* ``"compare"``: two methods' per-seed difference ``v`` (positive: first is better) against
  the margin ``m`` of :data:`MARGINS`. "ahead" holds in a seed when ``v >= m``, "behind"
  when ``v <= -m``, "level" when ``|v| < m``. When the claim is written, the discovery seeds'
  95% interval of the mean difference must also agree (:func:`rule_verdict`: excluding zero on
  the stated side, or inside the margin). "inconclusive" is written when no ranking and no
  level passes that rule; it states nothing the held-out seeds could refute, so it is
  reported, never counted.
* ``"identity"``: two settings that the code makes equal (dynamic NTK at L and the unscaled
  model; dynamic NTK at its target and its static control). Checked in every seed, exactly;
  true by construction, so not counted as a finding.

A claim's *room* is the slack of the seed that decides it under the share rule (the
``finding_threshold``-th largest slack): how far the data could move before the claim fails.
For a ranked claim with no real effect each held-out seed clears the margin in the stated
direction with probability at most 1/2, so it passes with probability at most
:func:`null_pass_probability` (the sign test at the share rule).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import check_choice, check_int
from .results import load_results, paired_difference, seed_values, seeds_agreeing

__all__ = [
    "SEEDS",
    "RESULTS_FILES",
    "FINDING_SHARE",
    "MARGINS",
    "Claim",
    "Compare",
    "compare",
    "verdict",
    "rule_verdict",
    "seed_slacks",
    "check_claim",
    "check_claims",
    "finding_threshold",
    "null_pass_probability",
    "sign_test",
    "task_runs",
    "words",
    "CLAIMS",
    "PASSKEY_CLAIMS",
    "TEXT_CLAIMS",
    "IDENTITIES",
    "NOT_CONFIRMED",
    "FIRST_LOOKUP_ROUND",
]

#: Per task, the seeds its claims were written from and the held-out seeds trained after the claims
#: were committed. Lookup, second round: seeds 0-31 (0-21 of the first round and 22-31, its held-out
#: seeds, on which three of its claims failed: :data:`FIRST_LOOKUP_ROUND`), checked on seeds 32-41;
#: passkey and text: seeds 0-11 (10 and 11 were trained in the same GPU run as 0-9, so they are
#: discovery seeds here).
SEEDS = {
    "lookup": {"discovery": tuple(range(32)), "held_out": tuple(range(32, 42))},
    "passkey": {"discovery": tuple(range(12)), "held_out": tuple(range(12, 16))},
    "text": {"discovery": tuple(range(12)), "held_out": tuple(range(12, 16))},
}
#: Per task, the results files (in ``chapters/data/lab``) that hold its discovery and held-out runs. A file
#: holds one code version on one kind of device (``posenc.lab.mixing_problems``); a task's files may differ.
RESULTS_FILES = {
    "lookup": {
        "discovery": ("lookup.json", "lookup_more.json", "lookup_heldout.json"),
        "held_out": ("lookup_heldout_2.json",),
    },
    "passkey": {"discovery": ("passkey.json",), "held_out": ("passkey_heldout.json",)},
    "text": {"discovery": ("text.json",), "held_out": ("text_heldout.json",)},
}
#: A claim holds on a set of seeds when it holds in at least this share of them.
FINDING_SHARE = 0.9
#: Two methods whose per-seed difference is within this margin are level: 2 points of accuracy (the
#: per-seed standard error of a passkey accuracy over 8 x 512 sequences is at most 0.008), 0.02 bits per
#: character (about a hundredth of a lookup-free text loss).
MARGINS = {"accuracy": 0.02, "bits_per_char": 0.02}
_HIGHER_IS_BETTER = {"lookup": True, "passkey": True, "text": False}
_METRIC = {"lookup": "accuracy", "passkey": "accuracy", "text": "bits_per_char"}


def finding_threshold(n: int) -> int:
    """The fewest seeds of ``n`` in which a claim must hold to hold on them: ``ceil(0.9 n)``."""
    return math.ceil(FINDING_SHARE * check_int("n", n, minimum=1) - 1e-9)


def sign_test(k: int, n: int) -> float:
    """One-sided sign test: the chance that at least ``k`` of ``n`` seeds agree when each agrees
    with probability 1/2, ``sum_{j >= k} C(n, j) / 2^n`` (exact)."""
    n = check_int("n", n, minimum=1)
    k = check_int("k", k, minimum=0, maximum=n)
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n


def null_pass_probability(n: int) -> float:
    """An upper bound on the chance that a ranked claim with no real effect passes ``n`` held-out
    seeds: each seed clears the margin in the stated direction with probability at most 1/2 (a
    difference symmetric about zero), and :func:`finding_threshold` of them must: the sign test."""
    return sign_test(finding_threshold(n), n)


def task_runs(task: str, folder: str | Path, part: str | None = None) -> list[dict]:
    """The runs of ``task`` in its results files (:data:`RESULTS_FILES`) in ``folder``: the "discovery"
    files, the "held_out" ones, or (``part`` None) both. A missing held-out file gives no runs."""
    check_choice("task", task, tuple(RESULTS_FILES))
    parts = ("discovery", "held_out") if part is None else (check_choice("part", part, ("discovery", "held_out")),)
    runs = []
    for which in parts:
        for name in RESULTS_FILES[task][which]:
            path = Path(folder) / name
            if path.exists() or which == "discovery":
                runs += [r for r in load_results(path)["runs"] if r["config"]["task"] == task]
    return runs


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

    def oriented(self, runs, seeds=None) -> np.ndarray:
        """Per seed, the difference first - second oriented so that positive means *first is better*."""
        first, second = self.differences(runs, seeds)
        return (1.0 if _HIGHER_IS_BETTER[self.task] else -1.0) * (first - second)


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


def rule_verdict(oriented, task: str) -> dict:
    """The claims' rule on per-seed differences ``oriented`` (positive: first is better), the rule a
    "compare" claim is written by: :func:`verdict`'s numbers, with ``"verdict"``: "ahead" when the
    95% interval excludes zero and at least :func:`finding_threshold` seeds are better by the margin
    or more; "behind" in the mirror case; "level" when the interval lies within the margin and that
    many seeds differ by less than it; else "inconclusive". Stricter than :func:`verdict`, which
    asks the margin of the mean only and the sign of each seed."""
    v = np.asarray(oriented, dtype=float)
    result = verdict(v, np.zeros_like(v), "lookup")  # oriented already: "higher is better"
    margin = MARGINS[_METRIC[check_choice("task", task, tuple(_HIGHER_IS_BETTER))]]
    need = finding_threshold(v.size)
    clear = {
        "level": int(np.sum(np.abs(v) < margin)),
        "ahead": int(np.sum(v >= margin)),
        "behind": int(np.sum(v <= -margin)),
    }
    if result["low"] > -margin and result["high"] < margin and clear["level"] >= need:
        decided = "level"
    elif result["low"] > 0 and clear["ahead"] >= need:
        decided = "ahead"
    elif result["high"] < 0 and clear["behind"] >= need:
        decided = "behind"
    else:
        decided = "inconclusive"
    # "clear": the seeds beyond the margin on the verdict's side (within it for "level")
    return {**result, "margin": margin, "verdict": decided, "clear": clear.get(decided)}


def compare(runs, comparison: Compare, seeds=None) -> dict:
    """The verdict (:func:`verdict`) on ``comparison.first`` against ``comparison.second`` over
    ``seeds`` (default: all): positive means *first is better*; "ahead", "behind", "level" or
    "inconclusive" (module docstring)."""
    first, second = comparison.differences(runs, seeds)
    return verdict(first, second, comparison.task)


@dataclass(frozen=True)
class Claim:
    """One statement of chapter 12, as it was written from the discovery seeds.

    ``kind`` "seeds": ``slack(at) -> float``, positive when the condition holds in the seed;
    "compare": ``comparison`` with the ``verdict`` written; "identity": ``slack(at)`` is zero
    exactly when the two settings agree. ``says`` is the statement in words; ``task`` the task
    whose seeds decide it (a "compare" claim's is its comparison's)."""

    name: str
    says: str
    kind: str
    slack: Callable | None = None
    comparison: Compare | None = None
    verdict: str | None = None
    task: str | None = None

    def __post_init__(self):
        check_choice("kind", self.kind, ("seeds", "compare", "identity"))
        if self.kind == "compare":
            if not isinstance(self.comparison, Compare):
                raise TypeError(f"claim {self.name!r}: kind 'compare' needs a Compare")
            check_choice("verdict", self.verdict, ("ahead", "behind", "level", "inconclusive"))
            object.__setattr__(self, "task", self.comparison.task)
        else:
            if not callable(self.slack):
                raise TypeError(f"claim {self.name!r}: kind {self.kind!r} needs a slack(at) function")
            check_choice("task", self.task, tuple(SEEDS))

    @property
    def counted(self) -> bool:
        """Whether the claim states something its seeds could refute (not an identity, not an open question)."""
        return self.kind == "seeds" or (self.kind == "compare" and self.verdict != "inconclusive")


def seed_slacks(runs, claim: Claim, seeds) -> np.ndarray:
    """Per seed of ``seeds`` (increasing), how far ``claim`` is from failing in that seed: positive when
    it holds there. "compare": ``v - m`` (ahead), ``-v - m`` (behind), ``m - |v|`` (level), with ``v``
    the oriented difference and ``m`` the margin; an "inconclusive" claim gives ``v`` itself (it
    states nothing to hold). "seeds": its ``slack``; "identity": ``-|slack|`` (zero when exact)."""
    if not all(hasattr(claim, name) for name in ("kind", "slack", "comparison", "verdict", "task")):
        raise TypeError(f"claim must be a Claim, got {claim!r:.80}")
    if claim.kind == "compare":
        v = claim.comparison.oriented(runs, seeds)
        m = MARGINS[_METRIC[claim.task]]
        return {"ahead": v - m, "behind": -v - m, "level": m - np.abs(v), "inconclusive": v}[claim.verdict]
    values = []
    for seed in sorted(set(seeds)):
        found = []

        def condition(at, found=found):
            found.append(float(claim.slack(at)))
            return True

        seeds_agreeing(runs, condition, (seed,))
        values.append(found[0])
    values = np.array(values, dtype=np.float64)
    return -np.abs(values) if claim.kind == "identity" else values


def _holds(slacks: np.ndarray, claim: Claim) -> np.ndarray:
    """Per seed, whether it holds the claim: a ranking by at least the margin (slack >= 0), a level
    pair strictly within it and a condition strictly on its side (slack > 0), an identity exactly."""
    if claim.kind == "identity":
        return slacks == 0
    if claim.kind == "compare" and claim.verdict in ("ahead", "behind"):
        return slacks >= 0
    return slacks > 0


def _room(slacks: np.ndarray) -> float:
    """The slack of the seed that decides the share rule: the ``finding_threshold(n)``-th largest."""
    return float(np.sort(slacks)[::-1][finding_threshold(slacks.size) - 1])


def check_claim(runs, claim: Claim, discovery=None, held_out=None) -> dict:
    """Decide ``claim`` on its task's discovery and held-out seeds (:data:`SEEDS` unless given).

    Returns ``{"name", "says", "kind", "task", "counted", "discovery": (k, n), "held_out": (k, n)
    (seeds that hold the claim), "room", "held_out_room" (:func:`_room`; None for identities and
    open claims), "written", "passed", "confirmed", "held_out_check"}``: ``written`` when the
    discovery seeds hold it under the share rule (and, for "compare", their verdict is the one
    stated); ``passed`` the same on the held-out seeds (None where no held-out seed is given,
    and for an open claim); ``confirmed`` both. An identity must hold in every seed. For
    "compare" also ``"discovery_verdict"``, ``"all_verdict"`` and the all-seed ``"difference"``
    (:func:`compare`). ``"held_out_check"``: ``{"seeds", "holds", "values", "passed"}`` per
    held-out seed (``values``: the oriented differences of a "compare" claim)."""
    discovery = tuple(SEEDS[claim.task]["discovery"] if discovery is None else discovery)
    held_out = tuple(SEEDS[claim.task]["held_out"] if held_out is None else held_out)
    found = seed_slacks(runs, claim, discovery)
    held = seed_slacks(runs, claim, held_out) if held_out else np.zeros(0)
    holds, holds_held = _holds(found, claim), _holds(held, claim)
    base = {"name": claim.name, "says": claim.says, "kind": claim.kind, "task": claim.task, "counted": claim.counted}
    base["discovery"] = (int(holds.sum()), int(holds.size))
    base["held_out"] = (int(holds_held.sum()), int(holds_held.size))
    if claim.kind == "identity":
        written = bool(holds.all())
        passed = bool(holds_held.all()) if held.size else None
    elif claim.kind == "compare" and claim.verdict == "inconclusive":
        written, passed = True, None  # written when the rule finds no ranking (below)
    else:
        written = int(holds.sum()) >= finding_threshold(holds.size)
        passed = int(holds_held.sum()) >= finding_threshold(held.size) if held.size else None
    counted = claim.counted
    base["room"] = _room(found) if counted else None
    base["held_out_room"] = _room(held) if counted and held.size else None
    values = None
    if claim.kind == "compare":
        discovery_verdict = rule_verdict(claim.comparison.oriented(runs, discovery), claim.task)["verdict"]
        written = written and discovery_verdict == claim.verdict
        everything = rule_verdict(claim.comparison.oriented(runs, discovery + held_out), claim.task)
        base |= {"discovery_verdict": discovery_verdict, "all_verdict": everything["verdict"], "difference": everything}
        values = [float(v) for v in claim.comparison.oriented(runs, held_out)] if held_out else []
    check = {
        "seeds": held_out,
        "holds": None if passed is None and claim.kind == "compare" else [bool(h) for h in holds_held],
        "values": values,
        "passed": passed,
    }
    confirmed = None if passed is None else bool(written and passed)
    return {**base, "written": bool(written), "passed": passed, "confirmed": confirmed, "held_out_check": check}


def check_claims(runs, claims=None, discovery=None, held_out=None) -> list[dict]:
    """Every claim (default: :data:`CLAIMS`, :data:`PASSKEY_CLAIMS`, :data:`TEXT_CLAIMS` and
    :data:`IDENTITIES`) checked by :func:`check_claim` on its task's seeds (or the seeds given)."""
    claims = CLAIMS + PASSKEY_CLAIMS + TEXT_CLAIMS + IDENTITIES if claims is None else claims
    return [check_claim(runs, c, discovery, held_out) for c in claims]


_UNITS = {"accuracy": "", "bits_per_char": " bits per character"}


def _seed_words(k: int, n: int, which: str) -> str:
    if k == n:
        return f"all {n} {which} seeds" if n > 2 else f"both {which} seeds" if n == 2 else f"the one {which} seed"
    return f"{k} of the {n} {which} seeds" if k else f"none of the {n} {which} seeds"


def words(result: dict, task: str | None = None, *, as_measured: bool = False) -> str:
    """A checked claim (:func:`check_claim`) in words, for the chapter's text.

    "seeds" and "identity" claims: "in 21 of the 22 discovery seeds and all 8 held-out seeds"
    (or "... but 6 of the 8 held-out seeds"). "compare" claims (``task`` names the metric): the
    verdict on all seeds with the mean difference and its 95% interval, e.g. "level within 0.02:
    mean difference +0.004 (95% interval -0.006 to +0.014), 30 seeds".

    The difference is :func:`compare`'s, oriented so that positive means *first is better*; for
    an accuracy that is first minus second. With ``as_measured`` (and a ``task`` whose metric is
    lower-is-better, bits per character) the words give instead the *loss difference* as measured,
    first minus second, so that its sign is the loss's own: positive means the first setting's
    loss is higher. For an accuracy ``as_measured`` changes nothing."""
    if result["kind"] != "compare":
        k, n = result["discovery"]
        k_held, n_held = result["held_out"]
        found = f"in {_seed_words(k, n, 'discovery')}"
        if not n_held:
            return found
        joint = "and" if result["passed"] else "but"
        return f"{found} {joint} {_seed_words(k_held, n_held, 'held-out')}"
    d = result["difference"]
    unit = _UNITS[_METRIC[task]] if task else ""
    verdict = result["all_verdict"]
    if as_measured and task and not _HIGHER_IS_BETTER[task]:
        return _loss_words(d, verdict, unit)
    interval = f"95% interval {d['low']:+.3f} to {d['high']:+.3f}"
    if verdict == "level":
        within = f", within it in {d['clear']} of {d['n']} seeds" if d.get("clear") is not None else f", {d['n']} seeds"
        return f"level within {d['margin']:g}{unit}: mean difference {d['mean']:+.3f} ({interval}){within}"
    if verdict in ("ahead", "behind"):
        if d.get("clear") is not None:
            return (
                f"{verdict} by {abs(d['mean']):.3f}{unit} ({interval}), by the margin in {d['clear']} of {d['n']} seeds"
            )
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
    clear = d.get("clear")
    if verdict == "level":
        within = f", within it in {clear} of {n} seeds" if clear is not None else f", {n} seeds"
        return f"level within {d['margin']:g}{unit}: mean loss difference {mean:+.3f} ({interval}){within}"
    if verdict == "behind":
        count = f"by the margin in {clear}" if clear is not None else f"in {higher}"
        return f"behind: loss higher by {mean:.3f}{unit} ({interval}), {count} of {n} seeds"
    if verdict == "ahead":
        count = f"by the margin in {clear}" if clear is not None else f"in {lower}"
        return f"ahead: loss lower by {-mean:.3f}{unit} ({interval}), {count} of {n} seeds"
    return f"inconclusive: mean loss difference {mean:+.3f}{unit} ({interval}), first lower in {lower} of {n} seeds"


# --- the claims --------------------------------------------------------------------------------
# Written from each task's discovery seeds (SEEDS) and committed before its held-out seeds were
# trained; each held-out run records the commit it was trained at, which holds these claims.
# ``at`` is the per-seed accessor of :func:`posenc.lab.seeds_agreeing`:
# at(task, scheme, test_factor, extension="none", finetuned=False, value="all").

_SCHEMES = ("nope", "learned", "sinusoidal", "rope", "alibi", "partial_rope", "p_rope", "rope_nope")
_METHODS = ("ntk", "dynamic", "yarn", "yarn_matched", "longrope")  # all but linear and the control ntk_at_dynamic
_CHANCE_LOOKUP = 1 / 32  # a uniform guess over the lookup task's 32 tokens
#: rope-p-rope-kept, rewritten from seeds 0-21 (issue 45): the first sweep's 0.7 failed in 5 of seeds 12-21
ROPE_KEPT = 0.4  # the lookup accuracy past L at 4L that RoPE and p-RoPE keep
OTHERS_BELOW = 0.65  # and that every other scheme stays below


#: Each method against the unscaled model past L at 4L, zero-shot, as seeds 0-31 decide it by the rule (the
#: same verdicts as seeds 0-21 gave).
_LOOKUP_METHOD_VERDICTS = {
    "ntk": "inconclusive",
    "dynamic": "inconclusive",
    "yarn": "ahead",
    "yarn_matched": "inconclusive",
    "longrope": "ahead",
}


def _compare(name, says, task, factor, first, second, verdict, value="all") -> Claim:
    return Claim(name, says, "compare", comparison=Compare(task, factor, first, second, value), verdict=verdict)


def _seeds(name, says, slack, kind="seeds") -> Claim:
    """A condition given by its slack; the task is the one its name names ("passkey", "text"; else lookup).

    (At commit 3bba2d3, which the passkey and text held-out seeds (and lookup's first round) were
    trained at, the task was the one the name *ended* with, which attached passkey-within-L,
    alibi-passkey-8x and nope-passkey-falls to lookup's seed lists; fixed after the passkey held-out
    seeds were trained, no threshold changed.)"""
    task = next((t for t in ("passkey", "text") if t in name.split("-")), "lookup")
    return Claim(name, says, kind, slack=slack, task=task)


def _plain(scheme: str) -> tuple:
    return (scheme, "none", False)


def _rope(extension: str = "none", finetuned: bool = False) -> tuple:
    return ("rope", extension, finetuned)


_LOOKUP = (
    _seeds(
        "within-L-solved",
        "Within L every scheme but NoPE and ALiBi solves the lookup task: accuracy above 0.95.",
        lambda at: min(at("lookup", s, 1, value="inside") for s in _SCHEMES if s not in ("nope", "alibi")) - 0.95,
    ),
    _seeds(
        "within-L-failed",
        "Within L NoPE and ALiBi are above a uniform guess (1/32) and below 0.5 on lookup.",
        lambda at: min(
            min(at("lookup", s, 1, value="inside") - _CHANCE_LOOKUP, 0.5 - at("lookup", s, 1, value="inside"))
            for s in ("nope", "alibi")
        ),
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
        "Past L at 4L the sinusoidal code against NoPE on lookup: inconclusive.",
        "compare",
        comparison=Compare("lookup", 4, _plain("sinusoidal"), _plain("nope")),
        verdict="inconclusive",
    ),
    Claim(
        "sinusoidal-vs-nope-lookup-2x",
        "Past L at 2L the sinusoidal code against NoPE on lookup: inconclusive.",
        "compare",
        comparison=Compare("lookup", 2, _plain("sinusoidal"), _plain("nope")),
        verdict="inconclusive",
    ),
    _seeds(
        "learned-beyond-guess",
        "Past L at 4L the learned table's lookup accuracy is below twice a uniform guess (2/32).",
        lambda at: 2 * _CHANCE_LOOKUP - at("lookup", "learned", 4, value="beyond"),
    ),
    _seeds(
        "rope-p-rope-kept",
        f"Past L at 4L RoPE and p-RoPE keep lookup above {ROPE_KEPT}; every other scheme is below {OTHERS_BELOW}.",
        lambda at: min(
            min(at("lookup", s, 4, value="beyond") for s in ("rope", "p_rope")) - ROPE_KEPT,
            OTHERS_BELOW - max(at("lookup", s, 4, value="beyond") for s in _SCHEMES if s not in ("rope", "p_rope")),
        ),
    ),
    Claim(
        "p-rope-vs-rope-lookup",
        "Past L at 4L p-RoPE against RoPE on lookup: inconclusive.",
        "compare",
        comparison=Compare("lookup", 4, _plain("p_rope"), _plain("rope")),
        verdict="inconclusive",
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
        "Past L at 4L RoPE against the RoPE/NoPE hybrid on lookup: inconclusive.",
        "compare",
        comparison=Compare("lookup", 4, _plain("rope"), _plain("rope_nope")),
        verdict="inconclusive",
    ),
    _seeds(
        "alibi-lookup-falls",
        "ALiBi's lookup accuracy past L at 4L is below its accuracy within L, by more than 0.03.",
        lambda at: at("lookup", "alibi", 1, value="inside") - 0.03 - at("lookup", "alibi", 4, value="beyond"),
    ),
    _seeds(
        "linear-fails-at-L-lookup",
        "Position interpolation for 4L, zero-shot, fails lookup even at L: accuracy below 0.1.",
        lambda at: 0.1 - at("lookup", "rope", 1, "linear", value="inside"),
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
            f"Past L at 4L, {m} (zero-shot; LongRoPE after its search) is ahead of the unscaled RoPE model on lookup."
            if verdict == "ahead"
            else f"Past L at 4L, {m} (zero-shot) against the unscaled RoPE model on lookup: inconclusive.",
            "compare",
            comparison=Compare("lookup", 4, _rope(m), _rope()),
            verdict=verdict,
        )
        for m, verdict in _LOOKUP_METHOD_VERDICTS.items()
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
    _seeds(
        "ft-all-solve-lookup",
        "Fine-tuned at 4L, the plain RoPE model and every method but interpolation are above 0.95 on lookup past L.",
        lambda at: (
            min(at("lookup", "rope", 4, m, True, "beyond") for m in ("none", "ntk_at_dynamic", *_METHODS)) - 0.95
        ),
    ),
    _seeds(
        "linear-ft-fails-lookup",
        "Fine-tuned at 4L, position interpolation stays below 0.1 on lookup, at L and past L.",
        lambda at: (
            0.1
            - max(at("lookup", "rope", 4, "linear", True, "beyond"), at("lookup", "rope", 1, "linear", True, "inside"))
        ),
    ),
)


# Text and passkey (chapters/data/lab/text.json and passkey.json): first written from seeds 0-9
# (2026-11-27), then, under issue 45's rule, from seeds 0-11 (2026-11-29): six rankings that fewer
# than 11 of the 12 seeds hold beyond the margin are open questions now.
_M8 = ("ntk", "dynamic", "yarn", "yarn_matched", "longrope")

_PASSKEY = (
    _seeds(
        "passkey-within-L",
        "Within L every scheme but the sinusoidal code finds the passkey more than 95% of the time.",
        lambda at: min(at("passkey", s, 1) for s in _SCHEMES if s != "sinusoidal") - 0.95,
    ),
    _seeds(
        "alibi-passkey-8x",
        "At 8L ALiBi finds the passkey more than 95% of the time; every other scheme less than half the time.",
        lambda at: min(
            at("passkey", "alibi", 8) - 0.95, 0.5 - max(at("passkey", s, 8) for s in _SCHEMES if s != "alibi")
        ),
    ),
    _seeds(
        "nope-passkey-falls",
        "NoPE's passkey accuracy falls at each doubling of the length, L to 8L.",
        lambda at: min(at("passkey", "nope", f) - at("passkey", "nope", 2 * f) for f in (1, 2, 4)),
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
        "At 8L the RoPE/NoPE hybrid against RoPE on passkey: inconclusive.",
        "passkey",
        8,
        _plain("rope_nope"),
        _plain("rope"),
        "inconclusive",
    ),
    _compare(
        "partial-vs-rope-passkey-8x",
        "At 8L partial RoPE against RoPE on passkey: inconclusive.",
        "passkey",
        8,
        _plain("partial_rope"),
        _plain("rope"),
        "inconclusive",
    ),
    _seeds(
        "linear-fails-at-L-passkey",
        "Position interpolation for 8L, zero-shot, finds the passkey at L less than half the time.",
        lambda at: 0.5 - at("passkey", "rope", 1, "linear"),
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
        "At 8L LongRoPE's searched factors against dynamic NTK on passkey: inconclusive.",
        "passkey",
        8,
        _rope("longrope"),
        _rope("dynamic"),
        "inconclusive",
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
        lambda at: 0.7 - at("passkey", "rope", 8, "linear", True),
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
        lambda at: 0.15 - max(abs(at("text", "alibi", f) - at("text", "alibi", 1)) for f in (2, 4)),
    ),
    _seeds(
        "partial-flat-text",
        "Partial RoPE's text loss at 4L is within 0.2 bits per character of its loss at L; "
        "RoPE's grows by more than 0.5.",
        lambda at: min(
            0.2 - (at("text", "partial_rope", 4) - at("text", "partial_rope", 1)),
            at("text", "rope", 4) - at("text", "rope", 1) - 0.5,
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
        "At 4L p-RoPE against RoPE on text: inconclusive.",
        "text",
        4,
        _plain("p_rope"),
        _plain("rope"),
        "inconclusive",
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
        lambda at: at("text", "rope", 1, "linear") - at("text", "rope", 4),
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
        "At 4L dynamic NTK against NTK-aware scaling (factor 4) on text: inconclusive.",
        "text",
        4,
        _rope("dynamic"),
        _rope("ntk"),
        "inconclusive",
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
        for m in ("dynamic", "linear")
    ),
    _compare(
        "longrope-ft-at-L-text",
        "Fine-tuned for 4L, longrope at L against the unscaled model on text: inconclusive.",
        "text",
        1,
        _rope("longrope", True),
        _rope(),
        "inconclusive",
    ),
)


def _identity(name, says, task, first, second, factor, values) -> Claim:
    """Two settings the code makes equal: the largest per-value difference (zero when exact)."""

    def slack(at):
        return max(
            abs(at(task, "rope", factor, first, value=v) - at(task, "rope", factor, second, value=v)) for v in values
        )

    return Claim(name, says, "identity", slack=slack, task=task)


#: Dynamic NTK's two identities on each task: at L its factor is 1 (the unscaled model); at the target it is
#: static NTK at its effective factor (the control ntk_at_dynamic). True by construction, so not findings.
IDENTITIES: tuple[Claim, ...] = (
    _identity(
        "dynamic-exact-within-L-lookup",
        "Dynamic NTK leaves the lookup accuracy at L exactly as it was.",
        "lookup",
        "dynamic",
        "none",
        1,
        ("inside",),
    ),
    _identity(
        "dynamic-is-its-control-lookup",
        "At the target 4L dynamic NTK and static NTK at its factor (13) give exactly the same lookup accuracy.",
        "lookup",
        "dynamic",
        "ntk_at_dynamic",
        4,
        ("inside", "beyond"),
    ),
    _identity(
        "dynamic-exact-within-L-passkey",
        "Dynamic NTK leaves the passkey accuracy at L exactly as it was.",
        "passkey",
        "dynamic",
        "none",
        1,
        ("all",),
    ),
    _identity(
        "dynamic-is-its-control-passkey",
        "At the target 8L dynamic NTK and static NTK at its factor (57) give exactly the same passkey accuracy.",
        "passkey",
        "dynamic",
        "ntk_at_dynamic",
        8,
        ("all",),
    ),
    _identity(
        "dynamic-exact-within-L-text",
        "Dynamic NTK leaves the text loss at L exactly as it was.",
        "text",
        "dynamic",
        "none",
        1,
        ("all",),
    ),
    _identity(
        "dynamic-is-its-control-text",
        "At the target 4L dynamic NTK and static NTK at its factor (13) give exactly the same text loss, "
        "within and past L.",
        "text",
        "dynamic",
        "ntk_at_dynamic",
        4,
        ("inside", "beyond"),
    ),
)

#: The chapter's lookup claims, in the order the chapter states them (written from the discovery seeds).
CLAIMS: tuple[Claim, ...] = _LOOKUP
#: The passkey and text claims (written from their discovery seeds).
PASSKEY_CLAIMS: tuple[Claim, ...] = _PASSKEY
TEXT_CLAIMS: tuple[Claim, ...] = _TEXT

#: Counted claims that did not hold on their held-out seeds (filled in only after those seeds were
#: trained); the chapter reports them as not confirmed. Passkey (seeds 12-15, 2026-11-29): RoPE behind
#: NoPE at 8L (3 of 4 seeds by the margin), the hybrid ahead of RoPE at 2L (2 of 4) and LongRoPE
#: fine-tuned ahead of the plain model fine-tuned (3 of 4). Text: none. Lookup (second round, seeds
#: 32-41, 2026-11-29; the first round's: :data:`FIRST_LOOKUP_ROUND`): the hybrid ahead of partial RoPE
#: past L at 4L (8 of 10 by the margin; all 32 discovery seeds held it).
NOT_CONFIRMED: frozenset[str] = frozenset(
    {
        "rope-vs-nope-passkey-8x",
        "hybrid-vs-rope-passkey-2x",
        "longrope-ft-vs-plain-ft-passkey",
        "hybrid-above-partial-lookup",
    }
)

#: Lookup's first round (issue 45): its claims were written from seeds 0-21, committed at ``commit`` and
#: checked on seeds 22-31, trained at that commit. Three counted claims failed there (``not_confirmed``:
#: each with the verdict it stated then, 9 of 10 seeds needed). The same rule then re-decided every lookup
#: claim on seeds 0-31: RoPE against the hybrid became an open question, the other two kept their
#: verdicts, every other claim its statement; seeds 32-41 were trained after that was committed.
FIRST_LOOKUP_ROUND = {
    "commit": "3bba2d31925c31ea2053fe5e1d909292b489e2c5",
    "discovery": tuple(range(22)),
    "held_out": tuple(range(22, 32)),
    "not_confirmed": {
        "rope-above-hybrid-lookup": "ahead",
        "yarn-vs-matched-lookup": "ahead",
        "yarn-vs-longrope-lookup": "level",
    },
}
