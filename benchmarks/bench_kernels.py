"""Benchmark posenc.apply_rope against transformers' apply_rotary_pos_emb and a plain copy.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/bench_kernels.py [--quick]``).

Everything is timed in one process, in one run, on the same tensors, and reported as
ratios, which travel between machines better than seconds. The contenders take turns, one
call each per round, in an order shuffled anew (with a fixed seed) every round. Each applies
RoPE to a query and a key tensor of shape (batch, heads, seq, head_dim) in float32 (or copies them):

* ``transformers``: ``apply_rotary_pos_emb(q, k, cos, sin)`` with cos/sin precomputed
  by ``LlamaRotaryEmbedding`` outside the timed region (in its favour);
* ``posenc.apply_rope``: two calls, the query's and the key's, as an attention layer makes them
  (the second, and every later call with the same positions, reuses the first's cos/sin tables,
  as a model's later layers would);
* ``posenc.apply_rope, tables formed each call``: the same two calls with positions that differ
  from the previous call's, so that each forms its angles (float64) anew;
* ``posenc.nn.RotaryEmbedding``: the module, with cached cos/sin tables;
* ``copy (clone)``: ``q.clone(); k.clone()``, the practical ceiling for any function that
  returns new tensors (one read and one write of each, plus allocating the output);
* ``copy_ into buffer``: copying into preallocated tensors (no allocation), for scale.

The rounds run twice in the same run: on the machine as it is ("idle"), then beside a
busy neighbour that the benchmark starts and stops itself, a subprocess spinning on one
core (as a JupyterLab kernel, a browser or a CI neighbour would). posenc's targets:
at least 5x transformers' speed idle and 2x with the neighbour.

Last, the memory of ``posenc.nn.RotaryEmbedding`` for one query at position 2**26, in
a fresh subprocess: the peak of Python's and NumPy's allocations during the call
(``tracemalloc``) and the growth of the process's peak resident size during the call
(``VmHWM`` of ``/proc/self/status`` after resetting it, since ``resource.getrusage``'s
peak is inherited from the parent process across ``exec``; ``getrusage`` elsewhere). A
table of every position up to 2**26 would take 2**26 x head_dim/2 x 8 bytes x 2 (cos and
sin): 64 GiB for head_dim 128.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import posenc
from posenc.nn import RotaryEmbedding


def time_round_robin(contenders: dict, repeats: int, warmup: int = 2) -> dict:
    """Time each contender once per round, ``repeats`` rounds, so that a slow spell of
    the machine hits every contender alike; report the median and the minimum.

    Each round takes the contenders in a new order (shuffled with a fixed seed), so that no
    contender always follows the same one: the one timed right after transformers' call pays for
    the memory that call has just freed (on these machines ``posenc.apply_rope``, in that seat in
    all or most rounds, had medians of 195-239 ms in six runs; 120-132 ms once the order was
    shuffled, with its tables formed on each call or not)."""
    for function in contenders.values():
        for _ in range(warmup):
            function()
    seconds = {name: [] for name in contenders}
    order = random.Random(0)
    for _ in range(repeats):
        names = list(contenders)
        order.shuffle(names)
        for name in names:
            function = contenders[name]
            start = time.perf_counter()
            function()
            seconds[name].append(time.perf_counter() - start)
    return {
        name: {"median_s": statistics.median(s), "min_s": min(s), "repeats": repeats} for name, s in seconds.items()
    }


@contextmanager
def busy_neighbour():
    """A subprocess spinning on one core (core 0 where affinity can be set) while the block runs."""
    pin = (lambda: os.sched_setaffinity(0, {0})) if hasattr(os, "sched_setaffinity") else None
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=pin)
    try:
        time.sleep(0.3)  # let it start spinning
        yield
    finally:
        spinner.kill()
        spinner.wait()


MEMORY_PROBE = """
import json, resource, time, tracemalloc
import torch
from posenc.nn import RotaryEmbedding

def status_kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

head_dim, position = {head_dim}, {position}
module = RotaryEmbedding(head_dim)
q = torch.randn(1, 1, 1, head_dim)
# warm up both paths (cached rows, and rows computed past the cache) so that loading torch's kernels is not counted
module(q, q, positions=[1])
module(q, q, positions=[module.cache_limit + 1])
try:  # reset the peak resident size (Linux >= 4.0); getrusage's peak is inherited from the parent across exec
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before, method = status_kib("VmRSS"), "/proc/self/status VmHWM after clear_refs"
except OSError:
    before, method = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "resource.getrusage ru_maxrss"
tracemalloc.start()
start = time.perf_counter()
module(q, q, positions=[position])
seconds = time.perf_counter() - start
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
if method.startswith("/proc"):
    after = status_kib("VmHWM")
else:
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(position=position, head_dim=head_dim, seconds=seconds, tracemalloc_peak_bytes=peak,
                      rss_before_kib=before, rss_peak_kib=after, rss_method=method,
                      cached_rows=module.cos_cached.shape[0])))
"""


def rotary_memory(head_dim: int = 128, position: int = 2**26) -> dict:
    """Peak memory of one ``RotaryEmbedding`` call at ``position``, measured in a fresh process."""
    probe = MEMORY_PROBE.format(head_dim=head_dim, position=position)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"the memory probe failed:\n{result.stdout}{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def print_table(results: dict) -> None:
    reference = results["transformers apply_rotary_pos_emb"]["median_s"]
    reference_min = results["transformers apply_rotary_pos_emb"]["min_s"]
    clone = results["copy (clone)"]["median_s"]
    header = f"{'contender':44s} {'median ms':>10s} {'min ms':>8s} {'speed-up (median, min)':>24s} {'vs clone':>9s}"
    print(header)
    for name, r in results.items():
        ratio = f"{reference / r['median_s']:.2f}x, {reference_min / r['min_s']:.2f}x"
        print(
            f"{name:44s} {1e3 * r['median_s']:10.1f} {1e3 * r['min_s']:8.1f} {ratio:>24s} "
            f"{clone / r['median_s']:9.2f}"
        )


def speedup(results: dict, name: str = "posenc.apply_rope") -> float:
    return results["transformers apply_rotary_pos_emb"]["median_s"] / results[name]["median_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[4, 32, 2048, 128], metavar=("B", "H", "S", "D"))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--layout", choices=posenc.LAYOUTS, default="half")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, 3 repeats: a smoke test")
    parser.add_argument("--no-busy", action="store_true", help="skip the rounds beside a busy neighbour")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory probe at position 2**26")
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
    shifted = (positions + 1, positions + 2)  # positions no other call uses: no tables to reuse
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
        "posenc.apply_rope, tables formed each call": lambda: (
            posenc.apply_rope(q, shifted[0], inv_freq, args.layout),
            posenc.apply_rope(k, shifted[1], inv_freq, args.layout),
        ),
        "posenc.nn.RotaryEmbedding (cached)": lambda: module(q, k),
        "copy (clone)": lambda: (q.clone(), k.clone()),
        "copy_ into buffer": lambda: (buffers[0].copy_(q), buffers[1].copy_(k)),
    }
    with torch.inference_mode():
        results = time_round_robin(contenders, args.repeats)
        busy = None
        if not args.no_busy:
            with busy_neighbour():
                busy = time_round_robin(contenders, args.repeats)

    megabytes = 2 * q.numel() * q.element_size() / 2**20
    print(
        f"posenc {posenc.__version__}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}"
    )
    print(
        f"q and k of shape {tuple(q.shape)} float32 ({megabytes:.0f} MiB together), layout {args.layout!r}, "
        f"{args.repeats} rounds, contenders interleaved"
    )
    print("\n-- the machine as it is (idle unless something else runs) --")
    print_table(results)
    if busy is not None:
        print("\n-- beside a busy neighbour: a subprocess spinning on one core --")
        print_table(busy)
    print("\nspeed-up: transformers' time over the contender's, from medians and from minima (the minimum is the")
    print("machine's quietest moment for each; the reference's median varies most). 'vs clone': the fraction of")
    print("a plain copy's speed reached (1.00 = as fast as copying the tensors).")
    print(
        f"max |error| against float64 on one (batch, head) slice: posenc {error_posenc:.1e}"
        + (f", transformers {error_transformers:.1e} (its angles are formed in float32)" if error_transformers else "")
    )
    summary = f"posenc.apply_rope over transformers (medians): {speedup(results):.2f}x as it is (target >= 5x)"
    if busy is not None:
        summary += f", {speedup(busy):.2f}x with one core busy (target >= 2x)"
    print(summary)
    formed = "posenc.apply_rope, tables formed each call"
    summary = f"{formed}: {speedup(results, formed):.2f}x as it is"
    if busy is not None:
        summary += f", {speedup(busy, formed):.2f}x with one core busy"
    print(summary)

    memory = None
    if not args.no_memory:
        memory = rotary_memory()
        grown = max(0, memory["rss_peak_kib"] - memory["rss_before_kib"]) / 1024
        traced = memory["tracemalloc_peak_bytes"] / 1024
        print(
            f"\nRotaryEmbedding(head_dim={memory['head_dim']}), one query at position 2**26 = {memory['position']}: "
            f"{1e3 * memory['seconds']:.2f} ms; peak of Python/NumPy allocations during the call {traced:.1f} KiB "
            f"(tracemalloc); peak resident size grew by {grown:.2f} MiB during the call ({memory['rss_method']}; "
            f"{memory['rss_before_kib'] / 1024:.0f} MiB before, mostly torch itself); "
            f"{memory['cached_rows']} cached rows"
        )
        table = memory["position"] * memory["head_dim"] // 2 * 8 * 2
        print(f"(a cos/sin table up to that position in float64 would need {table / 2**30:.0f} GiB)")

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
                    "busy_results": busy,
                    "speedup_vs_transformers": {
                        "idle": speedup(results),
                        "busy": None if busy is None else speedup(busy),
                    },
                    "max_error_vs_float64": {"posenc": error_posenc, "transformers": error_transformers},
                    "rotary_memory_at_2_26": memory,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
