"""What does ``convoscope judge`` cost on top of a plain HTTP loop, as a user runs it? (issues 23, 39)

Four sides, each a whole process timed from start to exit, interleaved, against the same
OpenAI-compatible mock (``benchmarks/mock_openai.py``, its own process, optional fixed latency):

* ``httpcore x8`` (the baseline, issue 39): the best plain loop, an asyncio loop bounded by a
  semaphore at the same concurrency that deals its POSTs over 8 ``httpcore.AsyncConnectionPool``
  shards (the library convoscope itself sends through), sending the very request bodies convoscope
  sends (rendered beforehand into a file, so the loop only reads, sends and parses);
* ``httpx x1`` (the naive loop, beside it): the same loop through one ``httpx.AsyncClient``,
  which costs more per request the more connections its pool holds (encode/httpx#3215);
* ``_net x8`` (the matched cell): the same loop over 8 pools of convoscope's own sender
  (``src/convoscope/models/_net.py``, loaded alone: h11 on asyncio protocols) instead of
  httpcore's; what convoscope costs on top of the very transport it uses;
* ``convoscope``: ``convoscope judge items.jsonl --criterion survey/effort --judge openai:mock@URL
  --concurrency C --store NEW.db`` with its defaults (response cache, store, progress), into a
  fresh store each time.

Reported per side: wall time, throughput, and CPU per verdict (user + system CPU of the process,
not wall), medians over the repeats; then convoscope's ratios against the baseline (and against
the naive loop beside it), and the load (``uptime``) before and after. Targets (issue 39): CPU per
verdict <= 1.3 x the baseline's at concurrency 8 and 32; wall <= 1.15 x at 50 ms and 32.

``--first-request N`` also measures, N times each, the process CPU spent when the first request
reaches the server (any request, and the first item's, after the capability probes): the mock
then runs in this process and reads the child's CPU from ``/proc/PID/stat``. Target: <= 0.5 s.

    python benchmarks/cli_overhead.py --items 3000 --concurrency 8 --repeats 3
    python benchmarks/cli_overhead.py --items 3000 --concurrency 32 --repeats 3
    python benchmarks/cli_overhead.py --items 3000 --concurrency 32 --delay 0.05 --repeats 3
    python benchmarks/cli_overhead.py --items 300 --repeats 0 --first-request 5

``--mock nginx`` serves the same replies from nginx (``benchmarks/nginx_mock.py``), which uses about
half the Python mock's CPU per request, so the sides have more of the cores to themselves.
``--by-thread N`` runs convoscope (and the ``--compare-src`` tree) N more times each, interleaved,
through a wrapper that prints each thread's CPU at exit: the event loop ("main", imports included),
the planning threads ("asyncio"), the verdict writer; less noisy than whole-process CPU on a
shared machine, and it says where the CPU went.

``--start-up N`` also runs every side N times on one item, interleaved: each side's start-up CPU
(imports, set-up, one request), and its marginal CPU per verdict, ``(CPU(items) - CPU(1)) /
(items - 1)``, what a verdict costs once the process runs, apart from the fixed start-up that a
short run divides among few verdicts.

``--append results/cli_overhead.md`` appends the figures as a table row (date, commit, load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from nginx_mock import start  # noqa: E402

PLAIN = r'''
import asyncio, itertools, json, sys
import httpx

async def main(base_url, bodies_path, concurrency, shards):
    bodies = [json.loads(line) for line in open(bodies_path)]
    gate = asyncio.Semaphore(concurrency)
    per_shard = -(-concurrency // shards)
    clients = [httpx.AsyncClient(base_url=base_url, timeout=600,
                                 limits=httpx.Limits(max_connections=per_shard)) for _ in range(shards)]
    turn = itertools.count()

    async def one(body):
        async with gate:
            client = clients[next(turn) % shards]
            response = await client.post("/chat/completions", json=body)
            json.loads(response.content)["choices"][0]["message"]["content"]

    await asyncio.gather(*(one(body) for body in bodies))
    for client in clients:
        await client.aclose()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
'''

# The same loop on httpcore's pools, which httpx sends through; or, given the path of convoscope's
# models/_net.py, on its pools (the matched cell), which then never imports httpcore.
PLAIN_CORE = r'''
import asyncio, itertools, json, sys

async def main(base_url, bodies_path, concurrency, shards, make_pool):
    bodies = [json.loads(line) for line in open(bodies_path)]
    gate = asyncio.Semaphore(concurrency)
    per_shard = -(-concurrency // shards)
    pools = [make_pool(max_connections=per_shard) for _ in range(shards)]
    turn = itertools.count()
    url = base_url + "/chat/completions"
    headers = [(b"Content-Type", b"application/json")]
    timeouts = {"timeout": {"connect": 10, "read": 600, "write": 600, "pool": 600}}

    async def one(body):
        async with gate:
            pool = pools[next(turn) % shards]
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            response = await pool.request("POST", url, headers=headers, content=content, extensions=timeouts)
            json.loads(response.content)["choices"][0]["message"]["content"]

    await asyncio.gather(*(one(body) for body in bodies))
    for pool in pools:
        await pool.aclose()

if len(sys.argv) > 5:  # convoscope's own pools: the file models/_net.py, loaded alone
    import importlib.util
    spec = importlib.util.spec_from_file_location("convoscope_net", sys.argv[5])
    net = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(net)

    class Reply:  # what the loop reads of httpcore's response
        def __init__(self, answer):
            self.status, _, self.content = answer

    class NetPool:  # httpcore's pool.request(...) on top of net.Pool
        def __init__(self, **_options):
            import ssl
            self.pool = net.Pool(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), keepalive_expiry=5.0, max_idle=64)
            self.timeouts = net.Timeouts.of(600.0)

        async def request(self, method, url, headers, content, extensions):
            return Reply(await self.pool.request(method.encode(), url, headers, content, self.timeouts))

        async def aclose(self):
            await self.pool.aclose()

    make_pool = NetPool
else:
    import httpcore
    make_pool = httpcore.AsyncConnectionPool
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), make_pool))
'''

# convoscope judge with each thread's CPU printed at exit (--by-thread): the event loop ("main",
# imports included), the planning threads ("asyncio"), the verdict writer.
BY_THREAD = r'''
import atexit, collections, os, runpy, sys, threading, time
spent = collections.Counter()
run = threading.Thread.run

def timed(self):
    try:
        run(self)
    finally:
        spent[self.name.split(":")[0].split(" ")[0].rstrip("_0123456789")] += time.thread_time()

threading.Thread.run = timed

def report():
    spent["main"] += time.thread_time()
    times = os.times()
    spent["process"] = times.user + times.system
    print("BY-THREAD " + " ".join(f"{name}={value:.3f}" for name, value in spent.items()), file=sys.stderr)

atexit.register(report)
sys.argv = ["convoscope"] + sys.argv[1:]
runpy.run_module("convoscope", run_name="__main__")
'''


def write_inputs(folder: Path, items: int) -> tuple[Path, Path]:
    """The items file, and the chat bodies convoscope renders for them (the plain loop's input)."""
    from convoscope.criteria import get_criterion
    from convoscope.items import Item
    from convoscope.judges import build_request

    answers = ["asdf", "More buses.", "I want trams at night and cheaper monthly passes.",
               "Trains are late; real-time screens at stops would help me plan."]
    criterion = get_criterion("survey:effort")
    items_path, bodies_path = folder / "items.jsonl", folder / "bodies.jsonl"
    with items_path.open("w") as items_file, bodies_path.open("w") as bodies_file:
        for i in range(items):
            row = {"id": str(i), "question": "What would improve public transport for you?",
                   "response": f"{answers[i % len(answers)]} (respondent {i})"}
            items_file.write(json.dumps(row) + "\n")
            request = build_request(criterion, Item(**row))
            bodies_file.write(json.dumps({
                "model": "mock", "messages": [m.model_dump() for m in request.messages or ()],
                "max_tokens": request.max_tokens, "temperature": 0.0, "seed": 0,
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "judgement", "schema": request.json_schema, "strict": False}}}) + "\n")
    return items_path, bodies_path


def compile_package() -> None:
    """Byte-compile convoscope as ``pip install`` does. Run from a source tree with
    PYTHONDONTWRITEBYTECODE set, every start would compile ~0.3 s of modules the plain loop's
    installed httpx never compiles."""
    import compileall

    import convoscope

    compileall.compile_dir(Path(convoscope.__file__).parent, quiet=1)


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


SIDES = ("httpcore x8", "httpx x1", "convoscope")
# The baseline loop over convoscope's own pools (models/_net.py) instead of httpcore's: the
# matched cell beside the baseline.
MATCHED = "_net x8"
NET = Path(__file__).resolve().parent.parent / "src" / "convoscope" / "models" / "_net.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.0, help="the mock's latency in seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shards", type=int, default=8, help="the baseline's httpcore pools")
    parser.add_argument("--first-request", type=int, default=0, metavar="N",
                        help="also measure the CPU spent before the first request, N times per side")
    parser.add_argument("--mock", choices=("python", "nginx"), default="python",
                        help="the server: the Python mock, or nginx (benchmarks/nginx_mock.py: a "
                             "fraction of the CPU, so the client has the cores to itself)")
    parser.add_argument("--by-thread", type=int, default=0, metavar="N",
                        help="also run convoscope (and --compare-src) N times each, interleaved, "
                             "and report each thread's CPU (medians)")
    parser.add_argument("--start-up", type=int, default=0, metavar="N",
                        help="also run every side N times on one item: start-up CPU, and the marginal "
                             "CPU per verdict beside it")
    parser.add_argument("--append", type=Path, help="append the figures to this markdown file")
    parser.add_argument("--compare-src", type=Path, metavar="DIR",
                        help="also run convoscope from this source tree (e.g. an earlier commit's "
                             "`git archive` of src/), interleaved with the others: before and after")
    args = parser.parse_args()
    compile_package()
    sides: tuple[str, ...] = (*SIDES, MATCHED)
    other_env = None
    if args.compare_src is not None:
        import compileall

        compileall.compile_dir(args.compare_src, quiet=1)
        other_env = {**os.environ, "PYTHONPATH": str(args.compare_src.resolve())}
        sides = (*sides, "compared")
    load_before = uptime()
    runs: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    alone: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}  # one item (--start-up)
    first: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        items_path, bodies_path = write_inputs(folder, args.items)
        (folder / "one").mkdir()
        one_item = write_inputs(folder / "one", 1)
        (folder / "plain_httpx.py").write_text(PLAIN)
        (folder / "plain_httpcore.py").write_text(PLAIN_CORE)

        def command(side: str, base_url: str, repeat: int, one: bool = False) -> list[str]:
            items, bodies = one_item if one else (items_path, bodies_path)
            if side in ("convoscope", "compared"):
                return [sys.executable, "-m", "convoscope", "judge", str(items), "--criterion",
                        "survey/effort", "--judge", f"openai:mock@{base_url}", "--mode", "chat",
                        "--concurrency", str(args.concurrency),
                        "--store", str(folder / f"{side}-{repeat}.db")]  # a fresh store each time
            core = side in ("httpcore x8", MATCHED)
            script, shards = ("plain_httpcore.py", args.shards) if core else ("plain_httpx.py", 1)
            return [sys.executable, str(folder / script), base_url, str(bodies),
                    str(args.concurrency), str(shards), *([str(NET)] if side == MATCHED else [])]

        if args.repeats:
            mock, base_url, _ = start(args.mock, args.delay)
            try:
                timed(command("httpcore x8", base_url, -1), folder)  # warm the mock and the page cache
                for repeat in range(args.repeats):
                    for side in sides:
                        env = other_env if side == "compared" else None
                        runs[side].append(timed(command(side, base_url, repeat), folder, env))
                for repeat in range(args.start_up):
                    for side in sides:
                        env = other_env if side == "compared" else None
                        alone[side].append(timed(command(side, base_url, 3000 + repeat, one=True),
                                                 folder, env))
            finally:
                mock.kill()  # type: ignore[attr-defined]
        if args.first_request:
            first = first_requests(args.first_request, lambda side, url, n: command(side, url, 1000 + n),
                                   folder, other_env)
        threads = by_thread(args.by_thread, folder, command, other_env, args.mock) if args.by_thread else []
    report(args, runs, first, load_before, uptime())
    if args.start_up:
        print("\n".join(start_up_lines(args.items, runs, alone)))
    print("\n".join(threads))


def by_thread(times: int, folder: Path, command: Any, other_env: dict[str, str] | None,
              kind: str) -> list[str]:
    """Each thread's CPU in convoscope (and the compared tree), ``times`` runs each, interleaved."""
    (folder / "by_thread.py").write_text(BY_THREAD)
    sides = ["convoscope"] + (["compared"] if other_env is not None else [])
    found: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    mock, base_url, _ = start(kind, 0.0)
    try:
        for n in range(times):
            for side in sides:
                argv = [sys.executable, str(folder / "by_thread.py"), *command(side, base_url, 2000 + n)[3:]]
                done = subprocess.run(argv, cwd=folder, capture_output=True, text=True,
                                      env=other_env if side == "compared" else None)
                line = next(line for line in done.stderr.splitlines() if line.startswith("BY-THREAD"))
                found[side].append({name: float(value) for name, value in
                                    (part.split("=") for part in line.split()[1:])})
    finally:
        mock.kill()  # type: ignore[attr-defined]
    lines = []
    for side, rows in found.items():
        names = sorted({name for row in rows for name in row})
        lines.append(f"by thread ({side}), CPU s, medians of {times}: " + ", ".join(
            f"{name} {statistics.median(row.get(name, 0.0) for row in rows):.3f}" for name in names))
        lines.append("  process CPU per run: " + ", ".join(f"{row['process']:.2f}" for row in rows))
    return lines


def start_up_lines(items: int, runs: dict[str, list[tuple[float, float]]],
                   alone: dict[str, list[tuple[float, float]]]) -> list[str]:
    """Each side's start-up CPU (one item) and marginal CPU per verdict, and convoscope's ratios."""
    lines, marginal, fixed = [], {}, {}
    for side, timings in alone.items():
        if not timings or not runs[side]:
            continue
        fixed[side] = statistics.median(c for _, c in timings)
        marginal[side] = (statistics.median(c for _, c in runs[side]) - fixed[side]) / (items - 1)
        lines.append(f"{side:12} start-up CPU {fixed[side]:.2f} s (one item; runs "
                     + ", ".join(f"{c:.2f}" for _, c in timings)
                     + f"), marginal {1000 * marginal[side]:.3f} ms per verdict")
    for base in ("httpcore x8", MATCHED):
        if "convoscope" in marginal and base in marginal:
            more = fixed["convoscope"] - fixed[base]
            lines.append(f"convoscope vs {base}: start-up {more:+.2f} s, "
                         f"marginal CPU per verdict {marginal['convoscope'] / marginal[base]:.2f} x")
    return lines


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_requests(times: int, command: Any, folder: Path,
                   other_env: dict[str, str] | None) -> dict[str, list[tuple[float, float]]]:
    """(CPU at the first request, CPU at the first item's request) of each side, ``times`` each."""
    from mock_openai import MockServer

    found: dict[str, list[tuple[float, float]]] = {"httpcore x8": [], "convoscope": []}
    if other_env is not None:
        found["compared"] = []
    with MockServer() as mock:
        for n in range(times):
            for side in found:
                marks: list[float] = []
                item_seen = threading.Event()
                pid: list[int] = []

                def seen(body: bytes, marks: list[float] = marks, event: threading.Event = item_seen,
                         pid: list[int] = pid) -> None:
                    if not pid or event.is_set():
                        return
                    # The capability probes ask for 8 tokens; a GET (llama.cpp's /props) has no body.
                    item = b'"messages"' in body and b'"max_tokens":8,' not in body
                    if not marks or item:
                        marks.append(proc_cpu(pid[0]))
                    if item:
                        event.set()

                mock.on_request = seen
                child = subprocess.Popen(command(side, mock.base_url, n), cwd=folder,
                                         env=other_env if side == "compared" else None,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                pid.append(child.pid)
                item_seen.wait(120)
                child.kill()
                child.wait()
                found[side].append((marks[0], marks[-1]))
        mock.on_request = None
    return found


def report(args: argparse.Namespace, runs: dict[str, list[tuple[float, float]]],
           first: dict[str, list[tuple[float, float]]], load_before: str, load_after: str) -> None:
    lines = [f"items={args.items} concurrency={args.concurrency} delay={args.delay:g} s "
             f"repeats={args.repeats} (interleaved) mock={args.mock}", f"load before: {load_before}",
             f"load after:  {load_after}"]
    medians: dict[str, tuple[float, float]] = {}
    for side, timings in runs.items():
        if not timings:
            continue
        wall, cpu = statistics.median(w for w, _ in timings), statistics.median(c for _, c in timings)
        medians[side] = (wall, cpu)
        lines.append(f"{side:12} wall {wall:6.2f} s  {args.items / wall:6.0f}/s  CPU {cpu:6.2f} s "
                     f"= {1000 * cpu / args.items:.2f} ms per verdict   runs (wall/CPU): "
                     + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in timings))
    row = ""
    if "compared" in medians:
        wall, cpu = medians["compared"]
        lines.append(f"convoscope vs compared ({args.compare_src}): CPU per verdict "
                     f"{medians['convoscope'][1] / cpu:.2f} x, wall {medians['convoscope'][0] / wall:.2f} x; "
                     f"compared vs httpcore x8: CPU {cpu / medians['httpcore x8'][1]:.2f} x")
    if all(side in medians for side in SIDES):
        (base_wall, base_cpu), (naive_wall, naive_cpu) = medians["httpcore x8"], medians["httpx x1"]
        wall, cpu = medians["convoscope"]
        lines.append(f"convoscope vs httpcore x8: CPU per verdict {cpu / base_cpu:.2f} x, wall "
                     f"{wall / base_wall:.2f} x, throughput {base_wall / wall:.2f} x;  vs httpx x1: "
                     f"CPU {cpu / naive_cpu:.2f} x, wall {wall / naive_wall:.2f} x")
        if MATCHED in medians:
            lines.append(f"convoscope vs {MATCHED} (the same loop on convoscope's own pools): "
                         f"CPU per verdict {cpu / medians[MATCHED][1]:.2f} x, wall "
                         f"{wall / medians[MATCHED][0]:.2f} x")
        row = (f"| {args.delay * 1000:g} ms, c {args.concurrency} | {args.items} × {args.repeats} | "
               + " | ".join(f"{1000 * medians[side][1] / args.items:.2f} ms / {medians[side][0]:.2f} s"
                            for side in SIDES)
               + f" | **{cpu / base_cpu:.2f} ×** / {wall / base_wall:.2f} × | "
               f"{cpu / naive_cpu:.2f} × / {wall / naive_wall:.2f} × |")
    for side, marks in first.items():
        lines.append(f"first request ({side}): CPU {statistics.median(m[0] for m in marks):.2f} s "
                     f"(any), {statistics.median(m[1] for m in marks):.2f} s (first item's)   runs: "
                     + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in marks))
    print("\n".join(lines))
    if args.append is not None:
        commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        with args.append.open("a") as out:
            out.write(f"\n<!-- {stamp}, {commit}, {load_before.split('load average:')[-1].strip()} -->\n")
            if row:
                out.write(row + "\n")
            if MATCHED in medians:
                out.write(f"{MATCHED} (the baseline on convoscope's own pools): "
                          f"{1000 * medians[MATCHED][1] / args.items:.2f} ms / {medians[MATCHED][0]:.2f} s; "
                          f"convoscope vs it: CPU {medians['convoscope'][1] / medians[MATCHED][1]:.2f} x\n")
            for side, marks in first.items():
                out.write(f"first request ({side}): {statistics.median(m[0] for m in marks):.2f} s / "
                          f"{statistics.median(m[1] for m in marks):.2f} s CPU (any / first item's)\n")


if __name__ == "__main__":
    main()
