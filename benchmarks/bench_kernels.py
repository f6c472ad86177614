"""Benchmark posenc.apply_rope against transformers' apply_rotary_pos_emb and a plain copy.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/bench_kernels.py [--quick]``).

Everything is timed in one process, in one run, on the same tensors, and reported as
ratios, which travel between machines better than seconds. The contenders rotate a
query and a key tensor of shape (batch, heads, seq, head_dim) in float32:

* ``transformers``: ``apply_rotary_pos_emb(q, k, cos, sin)`` with cos/sin precomputed
  by ``LlamaRotaryEmbedding`` outside the timed region (in its favour);
* ``posenc.apply_rope``: two calls, each forming its angles (float64) inside the call;
* ``posenc.nn.RotaryEmbedding``: the module, with cached cos/sin tables;
* ``copy (clone)``: ``q.clone(); k.clone()``, the practical ceiling for any function that
  returns new tensors (one read and one write of each, plus allocating the output);
* ``copy_ into buffer``: copying into preallocated tensors (no allocation), for scale.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import posenc
from posenc.nn import RotaryEmbedding


def time_round_robin(contenders: dict, repeats: int, warmup: int = 2) -> dict:
    """Time each contender once per round, ``repeats`` rounds, so that a slow spell of
    the machine hits every contender alike; report the median and the minimum."""
    for function in contenders.values():
        for _ in range(warmup):
            function()
    seconds = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, function in contenders.items():
            start = time.perf_counter()
            function()
            seconds[name].append(time.perf_counter() - start)
    return {
        name: {"median_s": statistics.median(s), "min_s": min(s), "repeats": repeats} for name, s in seconds.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[4, 32, 2048, 128], metavar=("B", "H", "S", "D"))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--layout", choices=posenc.LAYOUTS, default="half")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, 3 repeats: a smoke test")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    if args.quick:
        args.shape, args.repeats = [1, 2, 64, 32], 3
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    batch, heads, seq, head_dim = args.shape
    q = torch.randn(batch, heads, seq, head_dim)
    k = torch.randn(batch, heads, seq, head_dim)
    positions = torch.arange(seq)
    inv_freq = posenc.rope_inv_freq(head_dim)

    config = LlamaConfig(
        hidden_size=heads * head_dim,
        num_attention_heads=heads,
        head_dim=head_dim,
        max_position_embeddings=seq,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    cos, sin = LlamaRotaryEmbedding(config)(q, positions[None])
    module = RotaryEmbedding(head_dim, layout=args.layout, max_len=seq)
    buffers = (torch.empty_like(q), torch.empty_like(k))

    # Same numbers, or the comparison means nothing: both against float64 on one (batch, head) slice.
    exact = posenc.apply_rope(q[:1, :1].double(), positions, inv_freq, args.layout)
    error_posenc = (posenc.apply_rope(q[:1, :1], positions, inv_freq, args.layout).double() - exact).abs().max().item()
    assert error_posenc < 1e-5, f"posenc.apply_rope is off by {error_posenc}"
    error_transformers = None
    if args.layout == "half":
        rotated = apply_rotary_pos_emb(q[:1, :1], k[:1, :1], cos, sin)[0]
        error_transformers = (rotated.double() - exact).abs().max().item()

    contenders = {
        "transformers apply_rotary_pos_emb": lambda: apply_rotary_pos_emb(q, k, cos, sin),
        "posenc.apply_rope": lambda: (
            posenc.apply_rope(q, positions, inv_freq, args.layout),
            posenc.apply_rope(k, positions, inv_freq, args.layout),
        ),
        "posenc.nn.RotaryEmbedding (cached)": lambda: module(q, k),
        "copy (clone)": lambda: (q.clone(), k.clone()),
        "copy_ into buffer": lambda: (buffers[0].copy_(q), buffers[1].copy_(k)),
    }
    with torch.inference_mode():
        results = time_round_robin(contenders, args.repeats)

    reference = results["transformers apply_rotary_pos_emb"]["median_s"]
    clone = results["copy (clone)"]["median_s"]
    megabytes = 2 * q.numel() * q.element_size() / 2**20
    print(
        f"posenc {posenc.__version__}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{platform.processor() or platform.machine()}"
    )
    print(
        f"q and k of shape {tuple(q.shape)} float32 ({megabytes:.0f} MiB together), layout {args.layout!r}, "
        f"{args.repeats} rounds, contenders interleaved"
    )
    reference_min = results["transformers apply_rotary_pos_emb"]["min_s"]
    header = f"{'contender':38s} {'median ms':>10s} {'min ms':>8s} {'speed-up (median, min)':>24s} {'vs clone':>9s}"
    print(header)
    for name, r in results.items():
        speedup = f"{reference / r['median_s']:.2f}x, {reference_min / r['min_s']:.2f}x"
        print(
            f"{name:38s} {1e3 * r['median_s']:10.1f} {1e3 * r['min_s']:8.1f} {speedup:>24s} "
            f"{clone / r['median_s']:9.2f}"
        )
    print("speed-up: transformers' time over the contender's, from medians and from minima (the minimum is the")
    print("machine's quietest moment for each; the reference's median varies most). 'vs clone': the fraction of")
    print("a plain copy's speed reached (1.00 = as fast as copying the tensors).")
    print(
        f"max |error| against float64 on one (batch, head) slice: posenc {error_posenc:.1e}"
        + (f", transformers {error_transformers:.1e} (its angles are formed in float32)" if error_transformers else "")
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "shape": args.shape,
                    "layout": args.layout,
                    "threads": args.threads,
                    "torch": torch.__version__,
                    "results": results,
                    "max_error_vs_float64": {"posenc": error_posenc, "transformers": error_transformers},
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
