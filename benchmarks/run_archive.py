"""Does a run archive stay in bounded memory as runs grow? (issue 40)

Builds a store holding one run of N synthetic verdicts (written straight into the store's tables,
as a judging run leaves them), then times ``convoscope export-run`` and ``convoscope import-run``
as whole processes and reports each one's peak resident memory, wall time and the archive's size.
Memory that stays flat while N grows tenfold means the verdicts are streamed, not held.

    python benchmarks/run_archive.py --verdicts 10000 100000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - start
print(code, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def write_group(opened, run_id: str, rows: list, first: int) -> None:
    """Verdicts (task key, Verdict) and their ``run_tasks`` rows at positions ``first``..., in one
    transaction: what a judging run leaves in the store (also used by compare_scale.py)."""
    import sqlalchemy as sa

    from convoscope.store._schema import run_tasks

    with opened.engine.begin() as connection:
        opened.write(connection, rows, run_id=run_id)
        connection.execute(sa.insert(run_tasks), [
            {"run_id": run_id, "task_key": key, "chunk": 0, "position": first + offset, "member": False}
            for offset, (key, _) in enumerate(rows)])


def build(store: Path, count: int) -> str:
    """One run of ``count`` verdicts on count // 4 items and four criteria."""
    from convoscope.judges import Verdict
    from convoscope.store import Store

    opened = Store(store)
    run_id = f"bench{count}"
    criteria = ["c0", "c1", "c2", "c3"]
    opened.start_run(run_id, {"judge": {"kind": "python", "name": "bench"}, "criteria": criteria})
    group = 5000
    for first in range(0, count, group):
        rows = [(f"{run_id}-{n:012d}",
                 Verdict(item_id=f"i{n // 4}", criterion=criteria[n % 4], rater="python:bench",
                         value=n % 7, reason="a reason of a few words " * 3))
                for n in range(first, min(count, first + group))]
        write_group(opened, run_id, rows, first)
    opened.finish_run(run_id, {"verdicts": count})
    opened.close()
    return run_id


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command run as its own process."""
    out = subprocess.run([sys.executable, "-c", CHILD, *command], capture_output=True, text=True, check=True)
    code, wall, rss_kb = out.stdout.split()
    if code != "0":
        raise SystemExit(f"{' '.join(command)} exited {code}")
    return float(wall), int(rss_kb) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    cli = [sys.executable, "-m", "convoscope"]
    results = []
    for count in args.verdicts:
        with tempfile.TemporaryDirectory(prefix="archive-bench-") as folder:
            store, archive = Path(folder) / "runs.db", Path(folder) / "run.cvs.zip"
            started = time.perf_counter()
            run_id = build(store, count)
            built = time.perf_counter() - started
            export_s, export_mb = timed([*cli, "export-run", run_id, "--store", str(store),
                                         "--out", str(archive)])
            import_s, import_mb = timed([*cli, "import-run", str(archive),
                                         "--store", str(Path(folder) / "new.db")])
            results.append({"verdicts": count, "build_s": round(built, 1), "export_s": round(export_s, 1),
                            "export_peak_mb": round(export_mb), "import_s": round(import_s, 1),
                            "import_peak_mb": round(import_mb),
                            "archive_mb": round(archive.stat().st_size / 2**20, 1)})
            print(json.dumps(results[-1]), flush=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
