"""A judging run at scale, as a user runs it: time to the first verdict, peak memory, CPU per
verdict, and how fast a killed run resumes (issue 23).

Writes N items (JSON lines), starts the instant OpenAI-compatible mock in this process
(``benchmarks/mock_openai.py``) and runs ``convoscope judge ITEMS --criterion survey/effort --judge
openai:mock@URL --out v.jsonl`` as a child process:

1. *first verdict*: seconds from the command's start to the first line in ``--out``;
2. *kill and resume*: the run is killed (SIGKILL) once ``--kill-at`` verdicts are out, then the
   same command is started again: seconds from its start to the first request the mock receives;
3. *the whole run* (``--full``): peak RSS (the child's maximum resident set, from the kernel) and CPU
   per verdict, to the end.

Targets (issue 23): first verdict within 2 s at 1M items; peak RSS <= 300 MB at 1M items; resume of a
1M-item run to its first new call within 5 s.

    python benchmarks/run_scale.py --items 100000 --full
    python benchmarks/run_scale.py --items 1000000 --kill-at 20000
    python benchmarks/run_scale.py --items 1000000 --full
    python benchmarks/run_scale.py --resume-cost 0,10000,100000,1000000

``--resume-cost``: CPU from the start of a run to its first new request when N verdicts are
already done and 100 items are new (appended; in a renamed copy; at the top): issue 39's target
is 1 s whatever N. See ``resume_cost.py`` for how the store is filled.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cli_overhead import compile_package  # noqa: E402
from mock_openai import MockServer  # noqa: E402

ANSWERS = ["asdf", "More buses.", "I want trams at night and cheaper monthly passes.",
           "Trains are late; real-time screens at stops would help me plan."]


def write_items(path: Path, count: int) -> None:
    with path.open("w") as handle:
        for i in range(count):
            handle.write(json.dumps({"id": f"r{i}", "question": "What would improve public transport?",
                                     "response": f"{ANSWERS[i % 4]} (respondent {i})"}) + "\n")


def command(folder: Path, base_url: str, concurrency: int) -> list[str]:
    return [sys.executable, "-m", "convoscope", "judge", str(folder / "items.jsonl"), "--criterion",
            "survey/effort", "--judge", f"openai:mock@{base_url}", "--mode", "chat", "--concurrency",
            str(concurrency), "--store", str(folder / "run.db"), "--out", str(folder / "v.jsonl")]


def lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def first_verdict(folder: Path, argv: list[str]) -> tuple[subprocess.Popen[bytes], float]:
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = folder / "v.jsonl"
    while lines(out) == 0 and process.poll() is None:
        time.sleep(0.01)
    return process, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--kill-at", type=int, default=0, help="verdicts out before the kill")
    parser.add_argument("--full", action="store_true", help="run to the end: peak RSS, CPU per verdict")
    parser.add_argument("--resume-cost", default="", metavar="N,N,...",
                        help="instead: CPU to the first new request at N verdicts done (resume_cost.py)")
    parser.add_argument("--fill-direct-above", type=int, default=20_000,
                        help="above this many verdicts done, write them through the store API")
    args = parser.parse_args()
    compile_package()  # as pip install does: start-up is part of what is timed
    if args.resume_cost:
        resume_costs([int(n) for n in args.resume_cost.split(",")], args.concurrency, args.fill_direct_above)
        return
    with tempfile.TemporaryDirectory() as name, MockServer() as mock:
        folder = Path(name)
        write_items(folder / "items.jsonl", args.items)
        argv = command(folder, mock.base_url, args.concurrency)
        print(f"items={args.items} concurrency={args.concurrency} load={os.getloadavg()[0]:.1f}")
        process, seconds = first_verdict(folder, argv)
        print(f"first verdict after {seconds:.2f} s")
        if args.kill_at:
            while lines(folder / "v.jsonl") < args.kill_at and process.poll() is None:
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait()
            done, before = lines(folder / "v.jsonl"), mock.requests
            started = time.perf_counter()
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while mock.requests == before and process.poll() is None:
                time.sleep(0.005)
            print(f"killed after {done} verdicts; the resumed run's first new call after "
                  f"{time.perf_counter() - started:.2f} s")
        if not args.full:
            process.send_signal(signal.SIGTERM)
            process.wait()
            return
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        process.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        verdicts = lines(folder / "v.jsonl")
        print(f"whole run: exit {process.returncode}, {verdicts} verdicts in --out, "
              f"{time.perf_counter() - started:.0f} s more; peak RSS {after.ru_maxrss / 1024:.0f} MB; "
              f"CPU {1000 * cpu / max(verdicts, 1):.2f} ms per verdict (this last process)")


def resume_costs(sizes: list[int], concurrency: int, direct_above: int) -> None:
    from resume_cost import measure

    with MockServer() as mock:
        print(f"concurrency={concurrency}; CPU of the child process to the mock's first new request")
        for done in sizes:
            print(f"{done} done, load {os.getloadavg()[0]:.1f}", flush=True)
            for case, first, cpu, code, out in measure(done, 100, mock, concurrency, direct_above, ANSWERS):
                shown = "no request" if first is None else f"{first:.2f} s"
                print(f"  {case}: first new request after {shown} CPU; whole run {cpu:.2f} s CPU, "
                      f"exit {code}, --out {out} lines; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
