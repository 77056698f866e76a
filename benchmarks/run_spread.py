"""Does a run go faster spread over processes? ``convoscope judge --workers 1`` against ``--workers 2``
(and, with ``--ray-address``, ``--engine ray --workers 1`` against ``2``), timed end to end (issue 23).

Each run is a whole ``convoscope judge ITEMS --criterion survey/effort --judge openai:mock@URL
--mode chat --concurrency C --no-cache --store NEW.db`` process timed from start to exit (its
spawned workers included), into a fresh store, against the same OpenAI-compatible mock
(``benchmarks/mock_openai.py``, its own process, optional fixed latency). The settings are
interleaved (1, 2, 1, 2, ...) so that a change in the machine's load hits both alike; medians over
the repeats, and the 1-minute load average before and after every run (the machine is shared).

    python benchmarks/run_spread.py --items 4000 --concurrency 32 --repeats 3
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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judge_overhead import start_mock  # noqa: E402
from run_scale import write_items  # noqa: E402

Timings = list[tuple[float, float, float, float]]  # wall s, CPU s, load before, load after


def command(folder: Path, base_url: str, args: argparse.Namespace, workers: int, engine: str,
            store: Path) -> list[str]:
    ray = ["--engine", "ray", "--ray-address", args.ray_address] if engine == "ray" else []
    return [sys.executable, "-m", "convoscope", "judge", str(folder / "items.jsonl"), "--criterion",
            "survey/effort", "--judge", f"openai:mock@{base_url}", "--mode", "chat", "--no-cache",
            "--concurrency", str(args.concurrency), "--chunk-size", str(args.chunk_size),
            "--workers", str(workers), "--store", str(store), *ray]


def timed(argv: list[str]) -> tuple[float, float, float, float]:
    """(wall s, CPU s of the process and its children, load before, load after)."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"convoscope judge failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, load, os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--delay", type=float, default=0.0, help="the mock's latency in seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ray-address", help="also time --engine ray on this running cluster")
    args = parser.parse_args()
    settings = [("local", 1), ("local", 2)] + ([("ray", 1), ("ray", 2)] if args.ray_address else [])
    runs: dict[tuple[str, int], Timings] = {key: [] for key in settings}
    mock, base_url = start_mock(args.delay)
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            write_items(folder / "items.jsonl", args.items)
            timed(command(folder, base_url, args, 1, "local", folder / "warm.db"))  # warm caches
            for repeat in range(args.repeats):
                for engine, workers in settings:
                    store = folder / f"{engine}{workers}-{repeat}.db"
                    runs[(engine, workers)].append(timed(command(folder, base_url, args, workers, engine,
                                                                 store)))
                    print(f"  {engine} --workers {workers} #{repeat + 1}: "
                          f"{runs[(engine, workers)][-1][0]:.2f} s", file=sys.stderr)
    finally:
        mock.kill()
    report(args, runs)


def report(args: argparse.Namespace, runs: dict[tuple[str, int], Timings]) -> None:
    print(f"items={args.items} concurrency={args.concurrency} (per worker) chunk-size={args.chunk_size} "
          f"delay={args.delay:g} s repeats={args.repeats} cores={os.cpu_count()}")
    base: dict[str, float] = {}
    for (engine, workers), found in runs.items():
        wall = statistics.median(w for w, _, _, _ in found)
        cpu = statistics.median(c for _, c, _, _ in found)
        base.setdefault(engine, wall)
        loads = [load for _, _, before, after in found for load in (before, after)]
        print(f"{engine:5} --workers {workers}  wall {wall:6.2f} s  {args.items / wall:6.0f} verdicts/s  "
              f"speed-up {base[engine] / wall:4.2f} x  CPU {cpu:6.2f} s "
              f"({1000 * cpu / args.items:.2f} ms/verdict)  load {min(loads):.1f}-{max(loads):.1f}  "
              "runs: " + ", ".join(f"{w:.2f}" for w, _, _, _ in found))


if __name__ == "__main__":
    main()
