"""How much does a convoscope judging run add on top of a plain HTTP client? (issue 11)

Starts the instant OpenAI-compatible mock (``benchmarks/mock_openai.py``, its own process, with
an optional fixed latency) and judges N items with the same chat requests at the same concurrency:

1. ``plain``: a bare asyncio loop of ``httpx.AsyncClient`` POSTs, each answer parsed as JSON (the floor);
2. ``convoscope``: ``convoscope.runs.judge_async`` (RubricJudge + HTTP backend + response cache +
   verdict store with its writer thread and task leases), on SQLite and, with ``--postgres URL``,
   on PostgreSQL;
3. ``cached``: the same run again into a fresh store on the same response cache (no model call).

Each phase runs in its own Python process, so peak RSS is that phase's alone and the mock never
shares a GIL with the client. Goals: convoscope >= 0.9 x the plain loop's requests/s on SQLite,
>= 0.8 x on PostgreSQL (instant mock); within 1.1 x of the plain loop's wall time with a 50 ms mock
at concurrency 32.

Run by hand (figures in the issue's closing note)::

    python benchmarks/judge_overhead.py --items 5000 --concurrency 32
    python benchmarks/judge_overhead.py --items 2000 --concurrency 32 --delay 0.05
    python benchmarks/judge_overhead.py --items 5000 --concurrency 32 --postgres postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_mock(delay: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    mock = subprocess.Popen([sys.executable, str(HERE / "mock_openai.py"), "--port", str(port),
                             "--delay", str(delay)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.post(f"{base_url}/chat/completions", json={}, timeout=1)
            return mock, base_url
        except httpx.HTTPError:
            time.sleep(0.1)
    mock.kill()
    raise RuntimeError("the mock server did not start")


def make_items(n: int):  # type: ignore[no-untyped-def]
    from convoscope.items import Item

    answers = ["asdf", "More buses.", "I want trams at night and cheaper monthly passes.",
               "Trains are late; real-time screens at stops would help me plan."]
    return [Item(id=str(i), question="What would improve public transport for you?",
                 response=f"{answers[i % len(answers)]} (respondent {i})") for i in range(n)]


def criterion():  # type: ignore[no-untyped-def]
    from convoscope.criteria import load_suite

    return load_suite("survey").criteria[0]


async def plain(base_url: str, items: int, concurrency: int) -> dict[str, float]:
    """The floor: the same requests from a bare httpx loop, answers parsed, nothing kept."""
    from convoscope.judges import build_request

    chosen = criterion()
    bodies = []
    for item in make_items(items):
        request = build_request(chosen, item)
        bodies.append({"model": "mock", "messages": [m.model_dump() for m in request.messages or ()],
                       "max_tokens": request.max_tokens, "temperature": 0.0,
                       "response_format": {"type": "json_object", "schema": request.json_schema}})
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=base_url, timeout=60,
                                 limits=httpx.Limits(max_connections=None)) as client:
        queue = list(reversed(bodies))

        async def worker() -> None:
            while queue:
                body = queue.pop()
                response = await client.post("/chat/completions", json=body)
                json.loads(response.content)["choices"][0]["message"]["content"]

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {"seconds": time.perf_counter() - started, "calls": len(bodies)}


async def ours(base_url: str, items: int, concurrency: int, store: str, cache: str) -> dict[str, float]:
    from convoscope.runs import JudgeSpec, judge_async

    corpus, chosen = make_items(items), criterion()
    started = time.perf_counter()
    result = await judge_async(corpus, [chosen], [JudgeSpec(f"openai:mock@{base_url}")], store=store,
                               cache_path=cache, concurrency=concurrency)
    return {"seconds": time.perf_counter() - started, "calls": result.summary.model_calls,
            "verdicts": len(result.verdicts), "scored": result.summary.scored}


def phase(args: argparse.Namespace) -> None:
    """One measured phase in this process; prints its figures as JSON."""
    if args.phase == "plain":
        figures = asyncio.run(plain(args.base_url, args.items, args.concurrency))
    else:
        figures = asyncio.run(ours(args.base_url, args.items, args.concurrency, args.store, args.cache))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures["peak_rss_mb"] = usage.ru_maxrss / 1024
    figures["cpu_s"] = usage.ru_utime + usage.ru_stime  # whole process, imports included
    print(json.dumps(figures))


def run_phase(name: str, base_url: str, args: argparse.Namespace, store: str = "", cache: str = ""
              ) -> dict[str, float]:
    command = [sys.executable, __file__, "--phase", name, "--base-url", base_url, "--items",
               str(args.items), "--concurrency", str(args.concurrency), "--store", store, "--cache", cache]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(name: str, figures: dict[str, float], floor: dict[str, float]) -> None:
    rate = figures.get("verdicts", figures["calls"]) / figures["seconds"]
    floor_rate = floor["calls"] / floor["seconds"]
    ratio = f"  {rate / floor_rate:.2f} x plain req/s, wall {figures['seconds'] / floor['seconds']:.2f} x"
    print(f"{name:<22} {figures['seconds']:7.2f} s  {rate:8.0f} req/s  {figures['calls']:6.0f} calls  "
          f"CPU {figures['cpu_s']:6.1f} s  peak RSS {figures['peak_rss_mb']:5.0f} MB"
          + (ratio if name != "plain httpx" else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.0, help="the mock's latency in seconds")
    parser.add_argument("--postgres", help="also run on this PostgreSQL URL (a scratch database)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        phase(args)
        return
    mock, base_url = start_mock(args.delay)
    try:
        with tempfile.TemporaryDirectory() as folder:
            run_phase("plain", base_url, args)  # warm the mock and the page cache
            floor = run_phase("plain", base_url, args)
            print(f"items={args.items} concurrency={args.concurrency} mock delay={args.delay:g} s")
            report("plain httpx", floor, floor)
            sqlite = run_phase("ours", base_url, args, f"{folder}/s.db", f"{folder}/c.db")
            report("convoscope (SQLite)", sqlite, floor)
            cached = run_phase("ours", base_url, args, f"{folder}/s2.db", f"{folder}/c.db")
            report("cached re-run", cached, floor)
            print(f"{'':<22} (cached: {cached['verdicts']:.0f} verdicts, {cached['calls']:.0f} model calls)")
            if args.postgres:
                postgres = run_phase("ours", base_url, args, args.postgres, f"{folder}/c2.db")
                report("convoscope (Postgres)", postgres, floor)
    finally:
        mock.kill()


if __name__ == "__main__":
    main()
