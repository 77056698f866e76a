"""Does `convoscope compare` stay in bounded memory as runs grow? (issue 40)

Fills two SQLite stores with one run each of N synthetic verdicts. The verdicts are written
straight through the store's API (``Store.write`` and the ``run_tasks`` table, as a judging run
leaves them), not judged: N items × criteria would take days to judge, and compare reads only what
is stored. Run B differs from A on about a third of the items. Then ``convoscope compare A B
--store a.db --store-b b.db --out x.json`` runs as its own process, and its wall time, CPU time
(user + system) and peak resident memory are recorded. A peak that stays flat while N grows
tenfold means the runs are streamed, not held.

    python benchmarks/compare_scale.py --verdicts 10000 100000 1000000

Results are appended to benchmarks/results/compare_scale.md with the machine's load (uptime).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024}))
"""
CRITERIA = ("effort", "relevance", "fluency", "safety")
RESULTS = Path(__file__).parent / "results" / "compare_scale.md"


def build(store: Path, run_id: str, count: int, shift: int) -> float:
    """One run of ``count`` verdicts (count // 4 items × four criteria, 0–7 scores, three systems,
    two languages, a reason each) written through the store's API; returns the seconds taken."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run_archive import write_group

    from convoscope.judges import Verdict
    from convoscope.store import Store

    started = time.perf_counter()
    opened = Store(store)
    opened.start_run(run_id, {"judge": {"kind": "python", "name": run_id}, "criteria": list(CRITERIA)})
    group = 5000
    for first in range(0, count, group):
        rows = []
        for n in range(first, min(count, first + group)):
            item, criterion = n // 4, CRITERIA[n % 4]
            value = (item * 7 + n % 4) % 8
            if shift and item % 3 == 0:
                value = min(7, value + shift)
            key = hashlib.sha256(f"{run_id}/{n}".encode()).hexdigest()
            verdict = Verdict(item_id=f"item-{item:08d}", criterion=criterion, rater=f"python:{run_id}",
                              value=value, reason=f"run {run_id} gave {value}: a reason of some words",
                              system=f"bot-{item % 3}", language=("en", "de")[item % 2])
            rows.append((key, verdict))
        write_group(opened, run_id, rows, first)
    opened.finish_run(run_id, {"verdicts": count})
    opened.close()
    return time.perf_counter() - started


def timed(command: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one command run as its own process."""
    out = subprocess.run([sys.executable, "-c", CHILD, *command], capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if found["code"] not in (0, 1):  # 1: a --fail-if held; none is given here
        raise SystemExit(f"{' '.join(command)} exited {found['code']}")
    return found


def one_size(count: int) -> dict[str, object]:
    cli = [sys.executable, "-m", "convoscope"]
    with tempfile.TemporaryDirectory(prefix="compare-bench-") as folder:
        first, second = Path(folder) / "a.db", Path(folder) / "b.db"
        built = build(first, "run-a", count, 0) + build(second, "run-b", count, 1)
        out = Path(folder) / "comparison.json"
        figures = timed([*cli, "compare", "run-a", "run-b", "--store", str(first), "--store-b", str(second),
                         "--out", str(out)])
        document = json.loads(out.read_text(encoding="utf-8"))
    effort = next(row for row in document["criteria"] if row["criterion"] == "effort")
    return {"verdicts_per_run": count, "build_s": round(built, 1), "wall_s": round(figures["wall_s"], 1),
            "cpu_s": round(figures["cpu_s"], 1), "peak_mb": round(figures["peak_mb"]),
            "effort_items": effort["n_items"], "effort_changed": effort["changed"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--no-record", action="store_true", help="Print only; do not append to the results.")
    args = parser.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    for count in args.verdicts:
        rows.append(one_size(count))
        print(json.dumps(rows[-1]), flush=True)
    machine = f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs shared; before: {load}"
    print(machine)
    if not args.no_record:
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write(f"\n## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n{machine}\n\n"
                         "| verdicts per run | fill both stores (s) | compare wall (s) | compare CPU (s) "
                         "| compare peak RSS (MB) | effort: items, changed |\n|---|---|---|---|---|---|\n")
            for row in rows:
                handle.write(f"| {row['verdicts_per_run']:,} | {row['build_s']} | {row['wall_s']} | "
                             f"{row['cpu_s']} | {row['peak_mb']} | {row['effort_items']:,}, "
                             f"{row['effort_changed']:,} |\n")


if __name__ == "__main__":
    main()
