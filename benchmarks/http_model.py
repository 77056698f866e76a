"""The HTTP backend alone against a plain httpx loop, on the instant mock (issue 11, observation 6).

Starts ``benchmarks/mock_openai.py`` in its own process (so the mock does not share this
process's CPU and GIL) and sends N chat requests at concurrency C three ways:

1. a plain ``httpx.AsyncClient`` loop (the floor: POST, decode JSON);
2. convoscope's ``OpenAIModel`` (probe, limits, retries, body checks, Generation);
3. ``OpenAIModel(max_concurrency=8)``: today's backend with the old fixed in-flight cap;
4. the backend as it was before issue 11 (``--before``, a git ref; its in-flight cap was 8
   whatever ``--concurrency`` said).

Then the response cache: N ``put`` calls as the cache wrote them before (one commit each at
SQLite's default ``synchronous=FULL``) and as it writes them now (grouped, by a writer thread),
timing what the caller (the event loop) waits for, and the time until everything is on disk.

Run by hand:  python benchmarks/http_model.py --requests 2000 --concurrency 32 [--delay 0.05] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from convoscope.models import GenerateRequest, Generation, Message, OpenAIModel, ResponseCache

CPU_SECONDS: list[float] = []  # client CPU time of the last pool() run
SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3, 4, 5]}}, "required": ["score"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_mock(delay: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    mock = subprocess.Popen([sys.executable, str(Path(__file__).with_name("mock_openai.py")),
                             "--port", str(port), "--delay", str(delay)], stdout=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(100):
        try:
            httpx.get(f"{base_url}/models", timeout=1)
            return mock, base_url
        except httpx.HTTPError:
            time.sleep(0.1)
    mock.kill()
    raise RuntimeError("the mock did not start")


def request_for(number: int) -> GenerateRequest:
    return GenerateRequest(messages=(Message(role="system", content="You rate answers from 1 to 5."),
                                     Message(role="user", content=f"Answer {number}: more buses at night.")),
                           json_schema=SCHEMA, max_tokens=64)


async def pool(concurrency: int, total: int, job) -> float:  # type: ignore[no-untyped-def]
    numbers = iter(range(total))

    async def worker() -> None:
        for number in numbers:
            await job(number)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    CPU_SECONDS.append(time.process_time() - cpu)  # this process only: the mock runs in its own
    return time.perf_counter() - started


async def plain_loop(base_url: str, total: int, concurrency: int) -> float:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:
        async def job(number: int) -> None:
            request = request_for(number)
            body = {"model": "mock", "messages": [m.model_dump() for m in request.messages or ()],
                    "max_tokens": 64, "temperature": 0.0, "response_format": {
                        "type": "json_schema", "json_schema": {"name": "j", "schema": SCHEMA}}}
            response = await client.post("/chat/completions", json=body)
            response.raise_for_status()
            response.json()["choices"][0]["message"]["content"]

        return await pool(concurrency, total, job)


def old_backend(ref: str) -> type:
    """OpenAIModel as it was at git ``ref`` (e.g. 57939f8, before issue 11), for the 'before' row."""
    import importlib.util

    source = subprocess.run(["git", "show", f"{ref}:src/convoscope/models/_openai.py"], check=True,
                            capture_output=True, text=True, cwd=Path(__file__).parent).stdout
    spec = importlib.util.spec_from_loader("convoscope_openai_before", loader=None)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    exec(compile(source, f"{ref}:_openai.py", "exec"), module.__dict__)  # noqa: S102 (our own history)
    return module.OpenAIModel  # type: ignore[no-any-return]


async def convoscope_model(base_url: str, total: int, concurrency: int, cap: int | None,
                           backend: type = OpenAIModel) -> float:
    model = backend("mock", base_url=base_url, **({} if cap is None else {"max_concurrency": cap}))
    await model.generate(request_for(-1))  # the one-off capability probe is not throughput

    async def job(number: int) -> None:
        await model.generate(request_for(number))

    try:
        return await pool(concurrency, total, job)
    finally:
        await model.aclose()


def cache_writes(total: int) -> dict[str, float]:
    generations = [Generation(text='{"score": 3}', model="mock", prompt_tokens=120) for _ in range(total)]
    with tempfile.TemporaryDirectory() as folder:
        old = sqlite3.connect(Path(folder) / "old.db")
        old.execute("pragma journal_mode=wal")
        old.execute("create table responses (key text primary key, model text, generation text)")
        started = time.perf_counter()
        for number, generation in enumerate(generations):  # what ResponseCache.put did before
            old.execute("insert or replace into responses values (?, ?, ?)",
                        (str(number), generation.model, generation.model_dump_json()))
            old.commit()
        before = time.perf_counter() - started
        cache = ResponseCache(Path(folder) / "new.db")
        started = time.perf_counter()
        for number, generation in enumerate(generations):
            cache.put(str(number), generation)
        caller = time.perf_counter() - started
        cache.flush()
        on_disk = time.perf_counter() - started
        commits = cache.commits
        cache.close()
    return {"before_s": before, "now_caller_s": caller, "now_on_disk_s": on_disk, "now_commits": commits}


async def main_async(args: argparse.Namespace) -> None:
    before = old_backend(args.before)
    mock, base_url = start_mock(args.delay)
    try:
        print(f"{args.requests} chat requests at concurrency {args.concurrency}, mock delay {args.delay} s, "
              f"best of {args.repeat} interleaved rounds")
        best: dict[str, tuple[float, float]] = {}
        ways = (("plain httpx loop", lambda: plain_loop(base_url, args.requests, args.concurrency)),
                ("convoscope OpenAIModel",
                 lambda: convoscope_model(base_url, args.requests, args.concurrency, None)),
                ("OpenAIModel, max_concurrency=8",
                 lambda: convoscope_model(base_url, args.requests, args.concurrency, 8)),
                (f"OpenAIModel as at {args.before} (before)",
                 lambda: convoscope_model(base_url, args.requests, args.concurrency, None, before)))
        for _ in range(args.repeat):  # interleaved, best of: a shared machine's noise only slows runs down
            for label, run in ways:
                seconds = await run()
                cpu = CPU_SECONDS[-1]
                old = best.get(label, (float("inf"), float("inf")))
                best[label] = (min(old[0], seconds), min(old[1], cpu))
    finally:
        mock.terminate()
        mock.wait()
    plain = best["plain httpx loop"]
    for label, (seconds, cpu) in best.items():
        print(f"  {label:34s} {seconds:6.2f} s  {args.requests / seconds:7.0f} requests/s  "
              f"{seconds / plain[0]:4.2f} x plain wall;  "
              f"client CPU {cpu * 1e6 / args.requests:5.0f} us/request ({cpu / plain[1]:4.2f} x plain)")
    writes = cache_writes(args.requests)
    print(f"response cache, {args.requests} puts: before (commit each, synchronous=FULL) "
          f"{writes['before_s']:.2f} s on the caller; now {writes['now_caller_s'] * 1000:.1f} ms on the "
          f"caller, {writes['now_on_disk_s']:.2f} s until on disk in {writes['now_commits']:.0f} commits")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.0, help="the mock's latency in seconds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best time of each way counts")
    parser.add_argument("--before", default="57939f8", help="git ref of the 'before' backend")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
