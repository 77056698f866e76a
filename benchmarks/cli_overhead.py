"""What does ``convoscope judge`` cost on top of a plain HTTP loop, as a user runs it? (issue 23)

Both sides are whole processes timed from start to exit, interleaved, against the same OpenAI-
compatible mock (``benchmarks/mock_openai.py``, its own process, optional fixed latency):

* ``plain``: a bare asyncio loop of ``httpx.AsyncClient`` POSTs bounded by a semaphore at the
  same concurrency, sending the very request bodies convoscope sends (rendered beforehand into a
  file, so the loop only reads, sends and parses); ``--plain-shards N`` deals them over N clients,
  as convoscope does, instead of one; ``--plain-http httpcore`` sends through httpcore's pools
  (what convoscope sends through) instead of httpx's client;
* ``convoscope``: ``convoscope judge items.jsonl --criterion survey/effort --judge openai:mock@URL
  --concurrency C --store NEW.db`` with its defaults (response cache, store, progress), into a
  fresh store each time.

Reported per cell: throughput (verdicts or answers per second of wall time), wall-time ratio and
CPU-per-verdict ratio (user + system CPU of the process) against the plain loop, medians over the
repeats. Goals (issue 23): instant server >= 0.9 x the plain loop's throughput at concurrency 8
and 32; 50 ms server <= 1.15 x its wall time at concurrency 32; <= 1.3 x its CPU per verdict.

    python benchmarks/cli_overhead.py --items 3000 --concurrency 8 --repeats 3
    python benchmarks/cli_overhead.py --items 3000 --concurrency 32 --delay 0.05 --repeats 3
    python benchmarks/cli_overhead.py --items 3000 --concurrency 32 --repeats 3 --plain-shards 8
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judge_overhead import start_mock  # noqa: E402

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

# The same loop on httpcore's pools, which httpx sends through (and convoscope uses directly).
PLAIN_CORE = r'''
import asyncio, itertools, json, sys
import httpcore

async def main(base_url, bodies_path, concurrency, shards):
    bodies = [json.loads(line) for line in open(bodies_path)]
    gate = asyncio.Semaphore(concurrency)
    per_shard = -(-concurrency // shards)
    pools = [httpcore.AsyncConnectionPool(max_connections=per_shard) for _ in range(shards)]
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

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
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


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.0, help="the mock's latency in seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--plain-shards", type=int, default=1,
                        help="deal the plain loop's requests over this many httpx clients, as convoscope "
                             "does: one client's pool costs more per request the more connections it "
                             "holds (encode/httpx#3215), which a single-client loop pays at concurrency 32")
    parser.add_argument("--plain-http", choices=("httpx", "httpcore"), default="httpx",
                        help="the plain loop's client: httpx.AsyncClient (the issue's), or httpcore's pools")
    args = parser.parse_args()
    compile_package()
    mock, base_url = start_mock(args.delay)
    plain_runs: list[tuple[float, float]] = []
    ours_runs: list[tuple[float, float]] = []
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            items_path, bodies_path = write_inputs(folder, args.items)
            (folder / "plain.py").write_text(PLAIN if args.plain_http == "httpx" else PLAIN_CORE)
            plain = [sys.executable, str(folder / "plain.py"), base_url, str(bodies_path),
                     str(args.concurrency), str(args.plain_shards)]
            timed(plain, folder)  # warm the mock, the page cache and the interpreter's files
            for repeat in range(args.repeats):
                plain_runs.append(timed(plain, folder))
                ours = [sys.executable, "-m", "convoscope", "judge", str(items_path), "--criterion",
                        "survey/effort", "--judge", f"openai:mock@{base_url}", "--mode", "chat",
                        "--concurrency", str(args.concurrency), "--store", str(folder / f"s{repeat}.db")]
                ours_runs.append(timed(ours, folder))
    finally:
        mock.kill()
    report(args, plain_runs, ours_runs)


def report(args: argparse.Namespace, plain: list[tuple[float, float]],
           ours: list[tuple[float, float]]) -> None:
    wall_plain, wall_ours = statistics.median(w for w, _ in plain), statistics.median(w for w, _ in ours)
    cpu_plain, cpu_ours = statistics.median(c for _, c in plain), statistics.median(c for _, c in ours)
    load = os.getloadavg()[0]
    print(f"items={args.items} concurrency={args.concurrency} delay={args.delay:g} s "
          f"repeats={args.repeats} plain-shards={args.plain_shards} plain-http={args.plain_http} "
          f"load={load:.1f}")
    print(f"plain loop   wall {wall_plain:6.2f} s  {args.items / wall_plain:7.0f}/s  CPU {cpu_plain:6.2f} s "
          f"({1000 * cpu_plain / args.items:.2f} ms/item)   runs: "
          + ", ".join(f"{w:.2f}" for w, _ in plain))
    print(f"convoscope   wall {wall_ours:6.2f} s  {args.items / wall_ours:7.0f}/s  CPU {cpu_ours:6.2f} s "
          f"({1000 * cpu_ours / args.items:.2f} ms/item)   runs: "
          + ", ".join(f"{w:.2f}" for w, _ in ours))
    print(f"ratio        throughput {wall_plain / wall_ours:.2f} x   wall {wall_ours / wall_plain:.2f} x   "
          f"CPU per verdict {cpu_ours / cpu_plain:.2f} x")


if __name__ == "__main__":
    main()
