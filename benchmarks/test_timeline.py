"""Where a test run's time went, worker by worker: ``python benchmarks/test_timeline.py FILE`` for the
FILE a run wrote with ``POSENC_TEST_TIMELINE=FILE`` (tests/conftest.py: a line per test).

Prints the run's span; per worker its busy seconds, its idle seconds (gaps between its tests, and
after its last test until the run's end) and the files it ran, largest first; and the last tests
each worker ran (a long tail on one worker is time the other spends idle)."""

import json
import sys
from collections import defaultdict


def main(path: str) -> None:
    records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    if not records:
        raise SystemExit(f"{path}: no tests recorded")
    start, stop = min(r["start"] for r in records), max(r["stop"] for r in records)
    print(f"run: {stop - start:.0f} s, {len(records)} tests")
    by_worker = defaultdict(list)
    for r in records:
        by_worker[r["worker"]].append(r)
    for worker, runs in sorted(by_worker.items()):
        runs.sort(key=lambda r: r["start"])
        busy = sum(r["stop"] - r["start"] for r in runs)
        files = defaultdict(float)
        for r in runs:
            files[r["test"].split("::")[0]] += r["stop"] - r["start"]
        tail = stop - runs[-1]["stop"]
        print(f"\n{worker}: busy {busy:.0f} s, idle {stop - start - busy:.0f} s (after its last test: {tail:.0f} s)")
        for name, seconds in sorted(files.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {seconds:7.1f} s  {name}")
        last = [f"{r['test'].split('::')[-1][:50]} ({r['stop'] - r['start']:.0f} s)" for r in runs[-4:]]
        print("  last:", ", ".join(last))


if __name__ == "__main__":
    main(sys.argv[1])
