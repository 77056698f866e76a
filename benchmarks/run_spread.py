"""Does a run go faster spread over processes? ``convoscope judge --workers 1`` against ``--workers 2``
(and, with ``--ray-address``, ``--engine ray --workers 1`` against ``2``), timed end to end (issue 23).

Each run is a whole ``convoscope judge ITEMS --criterion survey/effort --judge openai:mock@URL
--mode chat --concurrency C --no-cache --store NEW.db`` process timed from start to exit (its
spawned workers included), into a fresh store, against the same OpenAI-compatible mock (nginx,
``benchmarks/nginx_mock.py``, which leaves the client nearly all of the cores; ``--mock python``
for ``benchmarks/mock_openai.py``; optional fixed latency). The settings are interleaved (1, 2, 1,
2, ...) so that a change in the machine's load hits both alike; medians over the repeats, and the
1-minute load average before and after every run (the machine is shared). Start-up (from the
command's start to its first stored verdict) and the steady rate (between the first and the last
stored verdict) are reported apart, from the verdicts' ``created_at``, and the mock's CPU.

    python benchmarks/run_spread.py --items 20000 --concurrency 32 --repeats 3
    python benchmarks/run_spread.py --items 4000 --concurrency 32 --delay 0.05 --repeats 3
    # a Ray cluster of your own (stop it by its process ids afterwards; `ray stop` stops every one):
    ray start --head --port 6390 --num-cpus 4 --temp-dir /tmp/rb --include-dashboard false \
        --disable-usage-stats
    python benchmarks/run_spread.py --items 4000 --concurrency 32 --repeats 3 --ray-address 127.0.0.1:6390
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from nginx_mock import start  # noqa: E402
from run_scale import write_items  # noqa: E402

# wall s, CPU s, load before, load after, start-up s (start to the first verdict stored),
# steady verdicts/s (first to last verdict stored), the mock's CPU s
Timing = tuple[float, float, float, float, float, float, float]
Timings = list[Timing]


def command(folder: Path, base_url: str, args: argparse.Namespace, workers: int, engine: str,
            store: Path) -> list[str]:
    ray = ["--engine", "ray", "--ray-address", args.ray_address] if engine == "ray" else []
    return [sys.executable, "-m", "convoscope", "judge", str(folder / "items.jsonl"), "--criterion",
            "survey/effort", "--judge", f"openai:mock@{base_url}", "--mode", "chat", "--no-cache",
            "--concurrency", str(args.concurrency), "--chunk-size", str(args.chunk_size),
            "--workers", str(workers), "--store", str(store), *ray]


def timed(argv: list[str], store: Path, mock_cpu: Callable[[], float]) -> Timing:
    """(wall s, CPU s of the process and its children, load before, load after, start-up s,
    steady verdicts/s, the mock's CPU s). Start-up and the steady rate come from the verdicts'
    ``created_at`` in the store (when each was committed): start-up is the time from the process's
    start to the first, the steady rate counts the verdicts between the first and the last."""
    load, mock_before = os.getloadavg()[0], mock_cpu()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, clock = time.perf_counter(), time.time()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"convoscope judge failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with sqlite3.connect(store) as connection:
        count, first, last = connection.execute(
            "SELECT count(*), min(created_at), max(created_at) FROM verdicts").fetchone()
    steady = (count - 1) / (last - first) if count > 1 and last > first else float("nan")
    return wall, cpu, load, os.getloadavg()[0], first - clock, steady, mock_cpu() - mock_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--delay", type=float, default=0.0, help="the mock's latency in seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ray-address", help="also time --engine ray on this running cluster")
    parser.add_argument("--mock", choices=("nginx", "python"), default="nginx",
                        help="the server: nginx (benchmarks/nginx_mock.py, little CPU) or the Python mock")
    parser.add_argument("--local", choices=("yes", "no"), default="yes", help="time the local engine")
    args = parser.parse_args()
    settings = ([("local", 1), ("local", 2)] if args.local == "yes" else []) + (
        [("ray", 1), ("ray", 2)] if args.ray_address else [])
    runs: dict[tuple[str, int], Timings] = {key: [] for key in settings}
    load_before = uptime()
    mock, base_url, mock_cpu = start(args.mock, args.delay)
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            write_items(folder / "items.jsonl", args.items)
            timed(command(folder, base_url, args, 1, "local", folder / "warm.db"), folder / "warm.db",
                  mock_cpu)  # warm the page cache and the byte-compiled modules
            for repeat in range(args.repeats):
                for engine, workers in settings:
                    store = folder / f"{engine}{workers}-{repeat}.db"
                    runs[(engine, workers)].append(timed(command(folder, base_url, args, workers, engine,
                                                                 store), store, mock_cpu))
                    print(f"  {engine} --workers {workers} #{repeat + 1}: "
                          f"{runs[(engine, workers)][-1][0]:.2f} s", file=sys.stderr)
    finally:
        mock.kill()  # type: ignore[attr-defined]
    report(args, runs, load_before, uptime())


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def report(args: argparse.Namespace, runs: dict[tuple[str, int], Timings], load_before: str,
           load_after: str) -> None:
    print(f"items={args.items} concurrency={args.concurrency} (per worker) chunk-size={args.chunk_size} "
          f"delay={args.delay:g} s repeats={args.repeats} cores={os.cpu_count()} mock={args.mock}\n"
          f"uptime before: {load_before}\nuptime after:  {load_after}")
    base: dict[str, tuple[float, float]] = {}
    local_steady = None
    for (engine, workers), found in runs.items():
        wall, cpu, start_up, steady, mock = (statistics.median(run[i] for run in found)
                                             for i in (0, 1, 4, 5, 6))
        base.setdefault(engine, (wall, steady))
        if engine == "local" and workers == 1:
            local_steady = steady
        loads = [load for run in found for load in (run[2], run[3])]
        print(f"{engine:5} --workers {workers}  wall {wall:6.2f} s  {args.items / wall:6.0f} verdicts/s  "
              f"speed-up {base[engine][0] / wall:4.2f} x  CPU {cpu:6.2f} s "
              f"({1000 * cpu / args.items:.2f} ms/verdict)  start-up {start_up:5.2f} s  steady "
              f"{steady:5.0f}/s ({steady / base[engine][1]:.2f} x"
              + (f", {steady / local_steady:.2f} x local 1" if engine == "ray" and local_steady else "")
              + f")  mock CPU {1e6 * mock / args.items:.0f} µs/verdict  "
              f"load {min(loads):.1f}-{max(loads):.1f}"
              "  runs: " + ", ".join(f"{run[0]:.2f}" for run in found))


if __name__ == "__main__":
    main()
