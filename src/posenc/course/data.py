"""Every exercise of the book in one place: kind, points, time, checker or rubric.

Implementation exercises are graded by their checker (all points or none); prediction
and investigation exercises are graded by hand with the rubric here, written from the
chapter's solution (the teacher edition prints it under each exercise). Times are for a
student who has read the chapter.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Activity", "ACTIVITIES", "POINTS", "activities_for_chapter"]

POINTS = {"implementation": 4, "prediction": 2, "investigation": 3}


@dataclass(frozen=True)
class Activity:
    """One exercise: its ``{exercise}`` label, kind, points, minutes, and checker name or rubric."""

    label: str
    kind: str  # "implementation", "prediction" or "investigation"
    minutes: int
    check: str | None = None  # the checker of an implementation exercise
    rubric: tuple[str, ...] = ()  # what a full answer says, one point-earning item per line

    @property
    def points(self) -> int:
        return POINTS[self.kind]

    @property
    def chapter(self) -> str:
        return self.label.split("-")[1][2:]  # "ex-ch08-rope" -> "08"


def _impl(label, check, minutes):
    return Activity(label, "implementation", minutes, check=check)


#: Exercise label (``ex-ch08-rope``) -> its :class:`Activity`: kind, points, minutes, checker or rubric.
ACTIVITIES: dict[str, Activity] = {
    a.label: a
    for a in (
        _impl("ex-ch01-attention", "self_attention", 20),
        Activity(
            "ex-ch01-predict-mask",
            "prediction",
            10,
            rubric=(
                "Only a and b change; c and d keep their outputs.",
                "Reason: under the mask a word's output depends on itself and the set of words up to it, and attention "
                "ignores their order: a and b now see different sets, c and d the same ones.",
            ),
        ),
        Activity(
            "ex-ch01-float16",
            "investigation",
            20,
            rubric=(
                "Finds by search the first length with a shared code, n = 2051 (positions 1537 and 1538): float16's "
                "spacing just below 1 is 2^-11, and the step 1/(n-1) must fall a little below it.",
                "Counts the neighbour pairs sharing a code with normalized_code_collisions and plots their share "
                "against n: at n = 4097, 1024 of 4096 (25%), all among positions >= 2048.",
                "Explains why neighbours suffice: rounding never reverses order, so if p < q share a code, every "
                "position between them does too, p and p + 1 included.",
            ),
        ),
        _impl("ex-ch02-sinusoidal", "sinusoidal", 20),
        Activity(
            "ex-ch02-predict-base",
            "prediction",
            10,
            rubric=(
                "No calm half: all 32 pairs complete a turn within 128 positions, each at least two.",
                "Longest wavelength 2 pi 10^(62/64), about 58 tokens; neighbour ratio 10^(2/64), about 1.07 "
                "instead of 1.33.",
            ),
        ),
        Activity(
            "ex-ch02-turns",
            "investigation",
            15,
            rubric=(
                "Counts the pairs with at least one turn within 512 positions (wavelength <= 512): 123 of the 256, "
                "fewer than half.",
                "Longest wavelength 2 pi 10000^(510/512), about 60,611 tokens.",
                "Compares: just short of 2 pi 10000 (about 62,832), since the last exponent is 510/512, not 1.",
            ),
        ),
        _impl("ex-ch03-binary", "binary", 15),
        Activity(
            "ex-ch03-sines-only",
            "prediction",
            10,
            rubric=(
                "No: by the angle-sum identity the next sine needs the current cosine, which is gone "
                "(two angles can share a sine and differ in cosine).",
                "linear_shift_fit confirms it: worst error about 0.84 with sines only, about 1e-15 with both.",
            ),
        ),
        Activity(
            "ex-ch03-average-flips",
            "investigation",
            15,
            rubric=(
                "Computes the mean flips per step for n_bits = 2..12 (1.3333 at 2 bits, 1.9971 at 12) and guesses the limit 2.",
                "Counts per bit: over the 2^B - 1 steps, bit j flips every 2^j steps, 2^(B-j) - 1 times.",
                "Sums to 2^(B+1) - 2 - B flips, a mean of 2 - B/(2^B - 1), which tends to 2.",
            ),
        ),
        _impl("ex-ch04-offset-matrix", "offset_matrix", 20),
        Activity(
            "ex-ch04-predict-blocks",
            "prediction",
            15,
            rubric=(
                "Block i turns by 1000 theta_i: 1000, 316, 100, 32, 10, 3.2, 1 and 0.3 rad; the slowest pair "
                "(0.3 rad) is near the identity.",
                "A fast pair can be nearer: pair 3 (about 32 rad, five whole turns plus 0.2) beats pair 6 (1 rad), "
                "since a block shows the angle only modulo 2 pi; slow pairs make long offsets unambiguous.",
            ),
        ),
        Activity(
            "ex-ch04-full-turn",
            "investigation",
            15,
            rubric=(
                "Finds k = 710 (710/2 pi is about 113.00001 turns; 355/113 approximates pi).",
                "No integer k > 0 gives exactly the identity: k = 2 pi j would make pi = k/(2j) rational.",
                "Notes that for the full M_k all pairs would have to complete whole turns at once: codes never "
                "repeat exactly.",
            ),
        ),
        _impl("ex-ch05-similarity-by-offset", "similarity_by_offset", 15),
        Activity(
            "ex-ch05-one-pair",
            "prediction",
            10,
            rubric=(
                "One pair gives cos(k): it swings between 1 and -1 for ever, back near 1 every 2 pi (at 6, 13, 19, "
                "25, ...), and does not decay.",
                "The decay of a wide code comes from averaging many cosines of different periods.",
            ),
        ),
        Activity(
            "ex-ch05-half-width",
            "investigation",
            15,
            rubric=(
                "Computes the first shift below half of s(p, p) = d/2 for the five bases: 5, 15, 28, 59 and 122.",
                "It grows with the base, roughly doubling per tenfold base from 1000 on: far slower than the base.",
                "Explains: speeds are log-spaced; a larger base barely moves the fast pairs, which leave the sum first.",
            ),
        ),
        _impl("ex-ch06-scaled-embedding", "scaled_embedding", 10),
        Activity(
            "ex-ch06-predict-ratio",
            "prediction",
            10,
            rubric=(
                "Without scaling the ratio is 1/(0.02 sqrt 2), about 35, for every d (both grow like sqrt d).",
                "With scaling it is 35/sqrt(d): about 4.4 at 64, 0.55 at 4096; measured with the module.",
            ),
        ),
        Activity(
            "ex-ch06-param-count",
            "investigation",
            15,
            rubric=(
                "Counts max_len * d_model for each of the six tables with LearnedPositionalEmbedding "
                "(393,216 for BERT-base up to 1,638,400 for GPT-2 1542M).",
                "No: every table is well under 1% of its model (0.11% to 0.67%).",
                "Within each family the share falls as the models grow (layers grow like d^2, the table like d).",
            ),
        ),
        _impl("ex-ch07-alibi-slopes", "alibi_slopes", 20),
        Activity(
            "ex-ch07-predict-buckets",
            "prediction",
            15,
            rubric=(
                "Encoder: both past keys in bucket 15, the key 200 ahead in 31; decoder: 31, 31 and 0.",
                "Meaning: the bias cannot tell 200 back from 1000 back (the last bucket starts 91 back in the "
                "encoder); it says only 'far', so the model must rely on content.",
            ),
        ),
        Activity(
            "ex-ch07-half-span",
            "investigation",
            15,
            rubric=(
                "Computes, per head, the number of recent keys holding half of the attention: 2, 3, 6, 12, 23, 45, "
                "89 and 173.",
                "Compares with ln 2 / mu_h: close, slightly shorter for the gentlest head (e^-4 not negligible).",
                "Spans double from head to head, from a couple of keys to a couple of hundred.",
            ),
        ),
        _impl("ex-ch08-rope", "rope", 25),
        Activity(
            "ex-ch08-predict-base",
            "prediction",
            15,
            rubric=(
                "Pair 0's speed does not change; the slowest pair becomes almost ten times slower.",
                "The curve falls roughly like 1 - ln r / ln b: with base 100,000 it is higher at almost every "
                "distance past the first few tokens (98.9% of 11 to 10,000), about 0.17 on average over 5,000 to "
                "10,000 where base 10,000 is about 0.",
            ),
        ),
        Activity(
            "ex-ch08-bfloat16",
            "investigation",
            20,
            rubric=(
                "Uses angle_rounding_error: 30 of the 64 pairs are off by more than 0.1 rad, all but one (pair 36) "
                "among pairs 0 to 31.",
                "Explains: bfloat16 stores 5000 as 4992 (spacing 32), an error of about 8 theta_i radians, above 0.1 "
                "when theta_i > 0.0125, so the fast (low-numbered) pairs.",
                "Pair 0 is off by 8 radians, more than a whole turn.",
            ),
        ),
        Activity(
            "ex-ch08-which-layout",
            "investigation",
            15,
            rubric=(
                "Rotates a probe with the module, such as the unit vector e_0 at position 1.",
                "Finds which dimension picks up the sine: dimension 4 = d/2, not dimension 1.",
                "Concludes the module uses the half layout (i, i + d/2) by default.",
            ),
        ),
        _impl("ex-ch09-turns", "turns_within_context", 10),
        Activity(
            "ex-ch09-predict",
            "prediction",
            15,
            rubric=(
                "(a) Up: doubling L moves the one-turn crossing by about 4.8 pairs, about 10 dimensions: 100.",
                "(b) Down: the 50 times larger base moves it to about half the dimensions, 64; both checked with "
                "critical_dimension.",
            ),
        ),
        Activity(
            "ex-ch09-llama3",
            "investigation",
            15,
            rubric=(
                "Counts the pairs with at least one turn within 8192: 35 of 64 (29 never turn).",
                "Critical dimension 70 (Llama 2: 92).",
                "Slowest wavelength about 2.56 million tokens, about 312 L, against about 13 L for Llama 2.",
            ),
        ),
        _impl("ex-ch10-ntk-base", "ntk_base", 15),
        Activity(
            "ex-ch10-predict",
            "prediction",
            15,
            rubric=(
                "PI: pair 0 at 0.25 rad/token, last pair 4 times slower. NTK: pair 0 unchanged, last pair 4 times slower.",
                "Dynamic NTK at 2L: effective factor 5, pair 0 unchanged, last pair 5 times slower.",
            ),
        ),
        Activity(
            "ex-ch10-count",
            "investigation",
            15,
            rubric=(
                "From 8^(2i/126): more than 2 for i > 21, 42 pairs; more than 4 for i > 42, 21 pairs.",
                "Counts the same 42 and 21 with effective_scale.",
                "PI slows all 64 pairs by 8; NTK-aware slows pairs 0 to 21 by at most 2, pair 0 not at all.",
            ),
        ),
        _impl("ex-ch11-ramp", "yarn_ramp", 25),
        _impl("ex-ch11-temperature", "yarn_temperature", 10),
        Activity(
            "ex-ch11-double-l",
            "prediction",
            15,
            rubric=(
                "The ramp moves towards the slow pairs by d ln 2 / (2 ln b), about 4.8 pairs.",
                "Its width stays the same (rounding can change the plotted width by one pair).",
            ),
        ),
        Activity(
            "ex-ch11-llama31",
            "investigation",
            25,
            rubric=(
                "Counts kept, blended and divided pairs: Llama 3 29, 6 and 29; YaRN 19, 16 and 29.",
                "YaRN's kept pairs (0 to 18) are a subset of Llama 3's (0 to 28): more than 32 turns against more "
                "than 4.",
                "Both divide by s the pairs with less than one turn, 35 to 63: Llama 3 by its rule lambda > L, YaRN "
                "because its 1-turn boundary, pair 34.98, rounds up to 35.",
            ),
        ),
        Activity(
            "ex-ch12-predict",
            "prediction",
            15,
            rubric=(
                "A prediction per scheme (above 0.9 at 4L or not) with a reason, written before looking.",
                "Compared with the measurements (printed in the solution): only RoPE and p-RoPE come near 0.9 at 4L; "
                "the absolute schemes fail past L; ALiBi and NoPE fail 'three back' even within L; partial RoPE "
                "and the RoPE/NoPE hybrid fall well below.",
            ),
        ),
        Activity(
            "ex-ch12-k",
            "investigation",
            25,
            rubric=(
                "Trains ALiBi, RoPE and NoPE on k = 1 and reports accuracy at 1x and 4x.",
                "ALiBi now solves the task, also at 4L; NoPE does much worse.",
                "Explains: a monotone penalty prefers the nearest key, so a low self-score finds the previous token, "
                "but nothing singles out the third one back.",
            ),
        ),
        Activity(
            "ex-ch12-betas",
            "investigation",
            20,
            rubric=(
                "Measures zero-shot accuracy at 4L for the six (beta_fast, beta_slow) pairs and prints each ramp.",
                "Notes that at L = 32 a beta_fast of 4 or 32 puts the boundary below pair 1, rounded down or "
                "clamped to pair 0: (32, 1) and (4, 1) give the same ramp and the same accuracy.",
                "Identifies the slow pairs (less than one turn within L, pairs 2 and up) as the ones that decide "
                "the result: ramps that leave part of them unscaled, the matched betas included, do worse than "
                "the defaults in this run.",
            ),
        ),
        _impl("ex-ch13-fix-rope", "rope_half", 15),
        _impl("ex-ch13-fix-permute", "permute_for_half", 15),
        Activity(
            "ex-ch13-predict-table",
            "prediction",
            10,
            rubric=(
                "Predicts no difference (zero up to rounding): the rebuilt table is the original with its columns "
                "reordered, and PE PE^T sums over the columns.",
                "Concludes that the test cannot catch the bug; a useful test compares the columns themselves or "
                "scores through the trained weights.",
            ),
        ),
        Activity(
            "ex-ch13-gqa",
            "investigation",
            20,
            rubric=(
                "Finds that permute(wk, 32, 1024, d_model) raises no error: 1024 rows split evenly into 32 blocks "
                "of 32.",
                "Shows where rows go: with 8 heads new rows 0..3 of head 0 hold old rows 0, 2, 4, 6 and rows 64.. "
                "hold 1, 3, ...; with 32, new row 64 holds old row 64 (each 128-row head permuted as four 32-row "
                "heads).",
                "Counts the pairs still together ((2j, 2j+1) of a head at rows j and j + 64): 0 of 512.",
            ),
        ),
        _impl("ex-ch14-config-inv-freq", "config_inv_freq", 25),
        Activity(
            "ex-ch14-predict-partial",
            "prediction",
            10,
            rubric=(
                "48 pairs rotate (96 of 128 dimensions); the slowest has the speed of a 96-wide head, "
                "10000^(-94/96), so its wavelength is 2 pi 10000^(94/96), about 52,000 tokens.",
                "p-RoPE with p = 0.75 also rotates 48 pairs, but with the 128-wide head's speeds: it keeps the "
                "fastest 48 of 64 and stops the slowest 16, so its slowest rotated wavelength is about 5,400 tokens.",
            ),
        ),
        Activity(
            "ex-ch14-gpt-oss",
            "investigation",
            20,
            rubric=(
                "Sliding-window and full-attention layers alternate, 12 each, and both use base 150,000 (no "
                "smaller local base, unlike Gemma 3 and ModernBERT).",
                "YaRN keeps pairs 0-8, blends 9-17 and divides 18-31 by 32, with truncate false or true; truncate "
                "only rounds the ramp's ends (8.09 and 17.40 to 8 and 18), changing the blended speeds by up to "
                "about 43%.",
                "The attention factor 0.1 ln 32 + 1 = 1.347 multiplies cos and sin, so the logits grow by its square, "
                "1.813; DeepSeek-V3 applies its multiplier through the softmax scale, which also reaches the "
                "dimensions that never rotate.",
            ),
        ),
        Activity(
            "ex-ch15-predict",
            "prediction",
            15,
            rubric=(
                "A prediction for both models with a reason, written before looking.",
                "Table 2: YaRN (s = 16) 7B goes from 2.42 at 65536 to more than 10 at 98304, past its 64k window "
                "(s L = 16 x 4096); YaRN (s = 32) 7B keeps falling to 2.36 at 98304 and is 2.37 at 131072.",
                "Explains: the limit is set by the window the rescaled frequencies cover (s L), not by the length "
                "of the fine-tuning data (64k tokens for both).",
            ),
        ),
        _impl("ex-ch15-interpolate", "paper_interpolate", 20),
        Activity(
            "ex-ch15-investigate",
            "investigation",
            25,
            rubric=(
                "For each Figure 1 curve, finds the longest length with a perplexity below its value at 8192: "
                "Together 34816, YaRN (s = 16) 75776 (13B) and 77824 (7B), Code Llama and YaRN (s = 32) 131072.",
                "Compares with the windows: each curve stays below its 8k value up to about its window and rises "
                "past it; Code Llama's minimum (81920 and 94208) lies inside its 100k window.",
                "For the lab (text, bits per character): zero-shot, every method is above its 1x value at 4x; "
                "every fine-tuned extension is below it at 4x, as the quoted fine-tuned models are within their "
                "windows.",
            ),
        ),
    )
}


def activities_for_chapter(chapter: str) -> list[Activity]:
    """The activities of a chapter (``"08"``), in the book's order."""
    return [a for a in ACTIVITIES.values() if a.chapter == chapter]
