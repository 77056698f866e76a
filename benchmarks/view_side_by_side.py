"""How large a pair of runs can `convoscope view` show side by side? (issue 40)

Builds a store with two runs of N synthetic verdicts each (N // 4 items, four criteria, values
0-6; the second run moves a third of the values by one), then, in a fresh process per size,
loads the store as `convoscope view` does and asks for the side-by-side page twice (the first
request computes the comparison, the second is filtered and sorted from the kept one). Reports
the peak resident memory and each step's wall time. The viewer holds every verdict in memory,
so memory grows with N: this says by how much.

    python benchmarks/view_side_by_side.py --verdicts 10000 40000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, resource, sys, time
from starlette.testclient import TestClient
from convoscope.viewer import create_app, load
start = time.perf_counter()
data = load(sys.argv[1])
loaded = time.perf_counter()
client = TestClient(create_app(data))
first = client.get("/compare", params={"a": "first", "b": "second"})
compared = time.perf_counter()
second = client.get("/compare", params={"a": "first", "b": "second", "flipped": "1", "sort": "a",
                                        "criterion": "c1"})
filtered = time.perf_counter()
assert first.status_code == second.status_code == 200
print(json.dumps({"load_s": loaded - start, "first_page_s": compared - loaded,
                  "filtered_page_s": filtered - compared,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build(store: Path, count: int) -> None:
    """Runs ``first`` and ``second`` of ``count`` verdicts each."""
    from convoscope.judges import Verdict
    from convoscope.store import Store

    opened = Store(store)
    criteria = ["c0", "c1", "c2", "c3"]
    for run_id, shift in (("first", 0), ("second", 1)):
        opened.start_run(run_id, {"judge": {"kind": "python", "name": "bench", "version": str(shift)},
                                  "criteria": criteria})
        for start in range(0, count, 5000):
            rows = [(f"{run_id}-{n}", Verdict(item_id=f"i{n // 4}", criterion=criteria[n % 4],
                                               rater="python:bench", value=(n + shift * (n % 3 == 0)) % 7,
                                               reason="a reason of a few words " * 3, system=f"s{n % 5}"))
                    for n in range(start, min(count, start + 5000))]
            opened.add_many(run_id, rows)
    opened.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, nargs="+", default=[10000, 40000])
    arguments = parser.parse_args()
    for count in arguments.verdicts:
        with tempfile.TemporaryDirectory() as folder:
            store = Path(folder) / "bench.db"
            build(store, count)
            out = subprocess.run([sys.executable, "-c", CHILD, str(store)], capture_output=True, text=True,
                                 check=True).stdout
            print(json.dumps({"verdicts_per_run": count, **json.loads(out.strip().splitlines()[-1])}))


if __name__ == "__main__":
    main()
