"""How much does convoscope add on top of a bare client? (issue 2 acceptance)

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the embedded SmolLM2 weights,
then judges N items three ways with the same prompts and the same concurrency:

1. a bare asyncio loop of the ``openai`` client (the floor);
2. convoscope's judging run (RubricJudge + OpenAI-compatible backend + store + cache writes);
3. the same convoscope run again on the same cache (fully cached re-run: no model call).

Run by hand:  python benchmarks/judge_overhead.py --items 40 --concurrency 4
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from convoscope.criteria import load_suite
from convoscope.items import Item
from convoscope.judges import build_request
from convoscope.runs import JudgeSpec, judge_async
from convoscope.store import Store


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model_path: str, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "llama_cpp.server", "--model", model_path, "--host",
               "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--logits_all", "false"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.3)
    server.kill()
    raise RuntimeError("the llama.cpp server did not start")


def make_items(n: int) -> list[Item]:
    answers = ["asdf", "More buses.", "I want trams at night and cheaper monthly passes.",
               "Trains are late; real-time screens at stops would help me plan."]
    return [Item(id=str(i), question="What would improve public transport for you?",
                 response=f"{answers[i % len(answers)]} (respondent {i})") for i in range(n)]


async def bare_loop(base_url: str, items: list[Item], concurrency: int, max_tokens: int
                    ) -> tuple[float, int]:
    from openai import AsyncOpenAI

    criterion = load_suite("survey").criteria[0]
    client = AsyncOpenAI(base_url=base_url, api_key="none")
    limit = asyncio.Semaphore(concurrency)
    tokens = 0

    async def one(item: Item) -> None:
        nonlocal tokens
        request = build_request(criterion, item, max_tokens=max_tokens)
        async with limit:
            response = await client.chat.completions.create(
                model="local", messages=[m.model_dump() for m in request.messages or ()],
                max_tokens=max_tokens, temperature=0.0,
                response_format={"type": "json_object", "schema": request.json_schema})
            tokens += response.usage.completion_tokens if response.usage else 0

    started = time.perf_counter()
    await asyncio.gather(*(one(item) for item in items))
    await client.close()
    return time.perf_counter() - started, tokens


async def convoscope_run(base_url: str, items: list[Item], concurrency: int, store: Store,
                         cache: Path, max_tokens: int) -> tuple[float, int, int]:
    criterion = load_suite("survey").criteria[0]
    started = time.perf_counter()
    summary = await judge_async(items, [criterion], [JudgeSpec(f"openai:local@{base_url}")],
                                store=store, cache_path=cache, concurrency=concurrency,
                                max_tokens=max_tokens)
    return time.perf_counter() - started, summary.model_calls, summary.completion_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=400)
    args = parser.parse_args()
    from convoscope.models import embedded_model_path

    port = free_port()
    server = start_server(str(embedded_model_path("smollm2")), port)
    base_url = f"http://127.0.0.1:{port}/v1"
    items = make_items(args.items)
    try:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(bare_loop(base_url, items[:2], 2, args.max_tokens))  # warm the server
            bare, bare_tokens = asyncio.run(bare_loop(base_url, items, args.concurrency, args.max_tokens))
            store = Store(Path(folder) / "bench.db")
            cache = Path(folder) / "cache.db"
            ours, calls, our_tokens = asyncio.run(
                convoscope_run(base_url, items, args.concurrency, store, cache, args.max_tokens))
            store2 = Store(Path(folder) / "bench2.db")
            cached, cached_calls, _ = asyncio.run(
                convoscope_run(base_url, items, args.concurrency, store2, cache, args.max_tokens))
    finally:
        server.kill()
    print(f"items={args.items} concurrency={args.concurrency}")
    print(f"bare openai loop : {bare:8.2f} s  ({bare_tokens} completion tokens)")
    print(f"convoscope       : {ours:8.2f} s  ({calls} model calls, {our_tokens} completion tokens)  "
          f"ratio {ours / bare:.3f}")
    print(f"cached re-run    : {cached:8.2f} s  ({cached_calls} model calls)")


if __name__ == "__main__":
    main()
