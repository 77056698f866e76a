"""Load test of the campaign web app: N annotators answering at once over HTTP on 127.0.0.1.

Builds a campaign in a temporary folder (synthetic dialogues, 3 candidates per context, 4
criteria), starts ``convoscope campaign serve`` in its own process, lets every annotator work
through one batch in parallel (load the page, post the answer, follow the redirect, as a browser
does, and post every second form twice, as an impatient double click would), then checks that the
store holds exactly one row per answer, and restarts the server mid-way when --restart is given.

    python3 benchmarks/campaign_load.py                       # 30 annotators, SQLite
    python3 benchmarks/campaign_load.py --annotators 30 --contexts 10 --restart
    python3 benchmarks/campaign_load.py --db postgresql://postgres@127.0.0.1:5432/postgres

Prints answers per second and the latency of one answer (post + redirect + next page).
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from convoscope.campaigns import invite, open_campaign

CRITERIA = ["appropriateness", "contextualization", "listening", "correctness"]


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
    command = [sys.executable, "-m", "convoscope", "campaign", "serve", str(directory), "--port", str(port)]
    process = subprocess.Popen([*command, *(["--db", db] if db else [])], stdout=subprocess.DEVNULL)
    for _ in range(1200):  # up to a minute: imports are slow on a busy machine
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not start")


def field(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    return found.group(1) if found else ""


def annotate(base: str, token: str, answers: int, latencies: list[float]) -> None:
    """Answer ``answers`` tasks; every second form is posted twice (a double click)."""
    url = f"{base}/a/{token}"
    with httpx.Client(timeout=120) as client:
        page = client.get(url).text
        if f'action="/a/{token}/start"' in page:  # the instructions, shown once before the first task
            page = post_with_retry(client, f"{url}/start", {"csrf": field(page, "csrf")})
        for number in range(answers):
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


def post_with_retry(client: httpx.Client, url: str, data: dict[str, str]) -> str:
    """Post; while the server restarts, retry (the repeated form is ignored if it was stored)."""
    for _ in range(100):
        try:
            return client.post(url, data=data, follow_redirects=True).text
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not come back")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=30)
    parser.add_argument("--contexts", type=int, default=5, help="contexts per batch")
    parser.add_argument("--per-batch", type=int, default=7, help="annotators per batch")
    parser.add_argument("--db", help="a postgresql:// URL (default: SQLite in the temporary folder)")
    parser.add_argument("--restart", action="store_true", help="kill and restart the server half-way")
    parser.add_argument("--port", type=int, default=8099)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder) / "study"
        write_study(directory, annotators=args.annotators, contexts=args.contexts, per_batch=args.per_batch)
        tokens = [a.token for a in invite(directory, args.annotators)]
        answers = args.contexts * 3 * len(CRITERIA)  # one batch each: 2 systems + the reference
        server = serve(directory, args.port, args.db)
        base, latencies = f"http://127.0.0.1:{args.port}", []
        started = time.perf_counter()
        try:
            with ThreadPoolExecutor(len(tokens)) as pool:
                jobs = [pool.submit(annotate, base, token, answers, latencies) for token in tokens]
                if args.restart:
                    while len(latencies) < len(tokens) * answers // 2:
                        time.sleep(0.05)
                    server.kill()  # as hard as a crash: no shutdown handler runs
                    server.wait()
                    server = serve(directory, args.port, args.db)
                for job in jobs:
                    job.result()
            elapsed = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait()
        stored = open_campaign(directory, store=args.db).answers()
        distinct = len({(v.rater, v.item_id, v.criterion) for v in stored})
        expected = len(tokens) * answers
        ms = sorted(1000 * x for x in latencies)
        print(f"{len(tokens)} annotators x {answers} answers ({args.contexts} contexts per batch, "
              f"store: {args.db or 'SQLite'}{', restarted half-way' if args.restart else ''})")
        print(f"rows stored: {len(stored)} (distinct {distinct}), expected {expected}: "
              f"{'OK' if len(stored) == distinct == expected else 'MISMATCH'}")
        print(f"wall time {elapsed:.1f} s, {expected / elapsed:.1f} answers/s")
        print(f"latency per answer (post + redirect + next page): median {statistics.median(ms):.0f} ms, "
              f"p95 {ms[int(0.95 * (len(ms) - 1))]:.0f} ms, max {ms[-1]:.0f} ms")
        if len(stored) != expected or distinct != expected:
            campaign = open_campaign(directory, store=args.db)
            per_person: dict[str, list[str]] = {}
            for verdict in stored:
                per_person.setdefault(verdict.rater, []).append(campaign.owner[verdict.item_id].id)
            for rater, batches in sorted(per_person.items()):
                if len(batches) != answers:
                    print(f"  {rater}: {len(batches)} answers in {sorted(set(batches))}")
            raise SystemExit(1)


if __name__ == "__main__":
    main()
