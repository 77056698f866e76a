"""Batch files at scale (issue 23): `convoscope batch export` of N items, then `convoscope batch
import` of a result for every request, each as a user runs it (its own process), with wall time,
CPU time and peak RSS, the files written (cut at 50,000 requests / 200 MB) and a second import of
the same results (exactly once: nothing changes).

The results are made here, one valid answer per request in the OpenAI batch output format that
vLLM's run_batch writes: this measures convoscope's side (render, ledger, files, verdicts), not a
model. Run by hand::

    python benchmarks/batch_files.py --items 60000
    python benchmarks/batch_files.py --items 60000 --export-only
    python benchmarks/batch_files.py --items 60000 --store postgresql://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_items(path: Path, count: int) -> None:
    question = "What would make our city's public transport better for you?"
    with path.open("w", encoding="utf-8") as out:
        for n in range(count):
            out.write(json.dumps({"id": f"i{n}", "question": question,
                                  "response": f"More buses on route {n}, every ten minutes."}) + "\n")


_MEASURE = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode; "
            "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(code, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)")


def timed(args: list[str]) -> tuple[int, float, float, float]:
    """Exit code, wall s, CPU s and peak RSS (MB) of one command, alone in its own process."""
    started = time.perf_counter()
    measured = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "convoscope", *args],
                              capture_output=True, text=True, check=True).stdout.split()
    wall = time.perf_counter() - started
    return int(measured[0]), wall, float(measured[1]), int(measured[2]) / 1024


def write_results(batches: Path, results: Path) -> int:
    results.mkdir()
    lines = 0
    for batch in sorted(batches.glob("*.jsonl")):
        with batch.open(encoding="utf-8") as requests, (results / batch.name).open("w") as out:
            for line in requests:
                custom_id = json.loads(line)["custom_id"]
                body = {"model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": '{"reasoning": "on topic", "score": 2}'}}],
                        "usage": {"prompt_tokens": 300, "completion_tokens": 12}}
                out.write(json.dumps({"id": f"vllm-{lines}", "custom_id": custom_id, "error": None,
                                      "response": {"status_code": 200, "request_id": str(lines),
                                                   "body": body}}) + "\n")
                lines += 1
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=60_000)
    parser.add_argument("--store", help="a PostgreSQL URL (default: a SQLite file)")
    parser.add_argument("--export-only", action="store_true", help="stop after the export")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        items = work / "items.jsonl"
        write_items(items, options.items)
        store = options.store or str(work / "run.db")
        common = [str(items), "--criterion", "survey/relevance", "--judge", "openai:m@http://127.0.0.1:9/v1",
                  "--store", store, "--progress-every", "600"]
        code, wall, cpu, rss = timed(["batch", "export", *common, "--to", str(work / "batches")])
        files = sorted((work / "batches").glob("*.jsonl"))
        sizes = [sum(1 for _ in path.open()) for path in files]
        megabytes = sum(path.stat().st_size for path in files) / 1e6
        print(f"items {options.items}, store {'postgresql' if options.store else 'sqlite'}")
        print(f"export : exit {code}, {wall:7.1f} s wall, {cpu:7.1f} s CPU, peak RSS {rss:6.0f} MB; "
              f"{len(files)} files of {sizes} requests, {megabytes:.1f} MB")
        if options.export_only:
            return
        lines = write_results(work / "batches", work / "results")
        rows = ["batch", "import", *common, "--results", str(work / "results"),
                "--out", str(work / "v.jsonl")]
        code, wall, cpu, rss = timed(rows)
        verdicts = sum(1 for _ in (work / "v.jsonl").open())
        print(f"import : exit {code}, {wall:7.1f} s wall, {cpu:7.1f} s CPU, peak RSS {rss:6.0f} MB; "
              f"{lines} results, {verdicts} verdicts ({1e3 * cpu / max(verdicts, 1):.2f} ms CPU per verdict)")
        code, wall, cpu, rss = timed(rows)
        print(f"again  : exit {code}, {wall:7.1f} s wall, {cpu:7.1f} s CPU (every answer kept once)")


if __name__ == "__main__":
    main()
