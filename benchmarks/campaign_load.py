"""Load test of the campaign web app: N annotators answering at once over HTTP on 127.0.0.1.

Builds a campaign in a temporary folder (synthetic dialogues, 3 candidates per context, 4
criteria), starts ``convoscope campaign serve`` in its own process, lets every annotator work
through one batch in parallel (load the page, post the answer, follow the redirect, as a browser
does, and post every second form twice, as an impatient double click would), then checks that the
store holds exactly one row per answer, and restarts the server mid-way when --restart is given.

    python3 benchmarks/campaign_load.py                       # 30 annotators, SQLite
    python3 benchmarks/campaign_load.py --annotators 30 --contexts 10 --restart
    python3 benchmarks/campaign_load.py --db postgresql://postgres@127.0.0.1:5432/postgres
    python3 benchmarks/campaign_load.py --db sqlite --db postgresql://postgres@127.0.0.1:5432/postgres \
        --repeats 3                                           # interleaved, with the load average

Prints answers per second and the latency of one answer (post + redirect + next page), and the
machine's load average before each run (the figures mean little without it on a shared machine).
A page that is not the next task (an error, a refusal) is counted and named: none is expected.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from convoscope.campaigns import invite, open_campaign

CRITERIA = ["appropriateness", "contextualization", "listening", "correctness"]
RESTART_WAIT = 180.0  # seconds a restarted server may take to answer again on a loaded machine


def write_study(directory: Path, *, annotators: int, contexts: int, per_batch: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    batches = -(-annotators // per_batch)  # enough main batches for everyone to get one
    # A fresh name per run: a reused PostgreSQL database then holds each run's answers apart.
    spec = {"name": f"load-{secrets.token_hex(4)}",
            "criteria": [f"response-candidates:{c}" for c in CRITERIA],
            "contexts_per_batch": contexts, "annotators_per_batch": per_batch,
            "qualification": {"enabled": False}, "items": "items.jsonl", "store": "study.db"}
    (directory / "campaign.yaml").write_text(json.dumps(spec), encoding="utf-8")
    rows = []
    for number in range(batches * contexts):
        context = [{"speaker": "A", "text": f"Dialogue {number}: 어제 본 영화 어땠어?"},
                   {"speaker": "B", "text": "Pretty good, though the ending dragged on."}]
        for system in ("bot-x", "bot-y"):
            rows.append({"id": f"c{number}-{system}", "system": system, "context": context,
                         "response": f"{system} answers dialogue {number}", "reference": "I liked it too.",
                         "meta": {"context_id": f"c{number}"}})
    (directory / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows),
                                           encoding="utf-8")


def serve(directory: Path, port: int, db: str | None) -> subprocess.Popen[bytes]:
    # The load test's annotators answer far faster than people do: lift the per-link rate limit.
    command = [sys.executable, "-m", "convoscope", "campaign", "serve", str(directory), "--port",
               str(port), "--rate", "1000"]
    process = subprocess.Popen([*command, *(["--db", db] if db else [])], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + RESTART_WAIT
    while time.monotonic() < deadline:  # imports are slow on a busy machine
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the server did not start within {RESTART_WAIT:.0f} s")


def field(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    return found.group(1) if found else ""


def annotate(base: str, token: str, answers: int, latencies: list[float], odd: Counter[str]) -> None:
    """Answer ``answers`` tasks; every second form is posted twice (a double click)."""
    url = f"{base}/a/{token}"
    with httpx.Client(timeout=120) as client:
        page = get_with_retry(client, url)
        if f'action="/a/{token}/start"' in page:  # the instructions, shown once before the first task
            page = post_with_retry(client, f"{url}/start", {"csrf": field(page, "csrf")})
        number = 0
        while number < answers:
            if not field(page, "task"):  # not a task page: say what it was, then look again
                odd[re.search(r"<h1>([^<]*)", page).group(1) if "<h1>" in page else page[:60]] += 1
                page = get_with_retry(client, url)
                continue
            data = {"csrf": field(page, "csrf"), "task": field(page, "task"),
                    "answer": "1" if number % 3 else "0"}
            started = time.perf_counter()
            if number % 2:
                try:
                    client.post(url, data=data)
                except httpx.TransportError:
                    pass  # the server is restarting; the retried post below settles it
            page = post_with_retry(client, url, data)
            latencies.append(time.perf_counter() - started)
            number += 1


def get_with_retry(client: httpx.Client, url: str) -> str:
    return _retry(lambda: client.get(url).text)


def post_with_retry(client: httpx.Client, url: str, data: dict[str, str]) -> str:
    """Post; while the server restarts, retry (the repeated form is ignored if it was stored)."""
    return _retry(lambda: client.post(url, data=data, follow_redirects=True).text)


def _retry(call: object) -> str:
    deadline = time.monotonic() + RESTART_WAIT  # a restart under load took 10-12 s: wait far longer
    while True:
        try:
            return call()  # type: ignore[operator]
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not come back within {RESTART_WAIT:.0f} s") from None
            time.sleep(0.1)


def run(args: argparse.Namespace, db: str | None) -> dict[str, object]:
    """One run against one store; returns its figures."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder) / "study"
        write_study(directory, annotators=args.annotators, contexts=args.contexts, per_batch=args.per_batch)
        tokens = [a.token for a in invite(directory, args.annotators)]
        answers = args.contexts * 3 * len(CRITERIA)  # one batch each: 2 systems + the reference
        server = serve(directory, args.port, db)
        base, latencies, odd = f"http://127.0.0.1:{args.port}", [], Counter()
        started = time.perf_counter()
        try:
            with ThreadPoolExecutor(len(tokens)) as pool:
                jobs = [pool.submit(annotate, base, token, answers, latencies, odd) for token in tokens]
                if args.restart:
                    while len(latencies) < len(tokens) * answers // 2:
                        time.sleep(0.05)
                    server.kill()  # as hard as a crash: no shutdown handler runs
                    server.wait()
                    server = serve(directory, args.port, db)
                for job in jobs:
                    job.result()
            elapsed = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait()
        stored = open_campaign(directory, create=False).answers()
    distinct = len({(v.rater, v.item_id, v.criterion) for v in stored})
    ms = sorted(1000 * x for x in latencies)
    return {"store": "PostgreSQL" if db and "://" in db else "SQLite", "load": load,
            "expected": len(tokens) * answers, "stored": len(stored), "distinct": distinct,
            "rate": len(tokens) * answers / elapsed, "median": statistics.median(ms),
            "p95": ms[int(0.95 * (len(ms) - 1))], "max": ms[-1], "odd": dict(odd)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=30)
    parser.add_argument("--contexts", type=int, default=5, help="contexts per batch")
    parser.add_argument("--per-batch", type=int, default=7, help="annotators per batch")
    parser.add_argument("--db", action="append", help="'sqlite' or a postgresql:// URL; repeat to "
                        "interleave stores (default: SQLite in the temporary folder)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per store, interleaved")
    parser.add_argument("--restart", action="store_true", help="kill and restart the server half-way")
    parser.add_argument("--port", type=int, default=8099)
    args = parser.parse_args()
    stores = [None if not db or db == "sqlite" else db for db in (args.db or ["sqlite"])]
    print(f"{args.annotators} annotators x {args.contexts * 3 * len(CRITERIA)} answers "
          f"({args.contexts} contexts per batch{', restarted half-way' if args.restart else ''})")
    print("| run | store | load (1 min) | rows stored / expected | answers/s | median / p95 / max ms "
          "| odd pages |")
    print("|---|---|---|---|---|---|---|")
    failed = False
    for repeat in range(args.repeats):
        for db in stores:
            row = run(args, db)
            ok = row["stored"] == row["distinct"] == row["expected"]
            failed |= not ok
            print(f"| {repeat + 1} | {row['store']} | {row['load']:.1f} | {row['stored']} / "
                  f"{row['expected']}{'' if ok else ' MISMATCH'} | {row['rate']:.1f} | {row['median']:.0f} / "
                  f"{row['p95']:.0f} / {row['max']:.0f} | {row['odd'] or 'none'} |", flush=True)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
