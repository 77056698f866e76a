"""Resume and growth cost at N verdicts done (issue 39): CPU to the first new request.

Used by ``run_scale.py --resume-cost 10000,100000``. For each N: a store holding N verdicts done
and a complete ``--out``, then three runs of the same ``convoscope judge`` command line, each
with 100 items never judged, timed by the child's own CPU (``/proc/PID/stat``, user + system)
from its start to the moment the instant mock answers its first request:

1. *growth*: 100 items appended to the same file;
2. *renamed*: the grown file copied to a new name, 100 more appended (a new run id);
3. *shifted*: 100 more items put at the top of that file (every old row moves).

Filling the store: up to ``--fill-direct-above`` verdicts the first run is a real run to its end;
above it, one real run judges the first chunk (for a real verdict to copy) and the remaining
verdicts, their run's task keys and finished chunks are written directly through the store API
(``Store.add_many``, ``register_tasks``, ``claim_chunk``/``finish_chunk``: what the engine writes),
with each item's real task key (its request rendered as the run renders it). A run of the same
command over the filled file then writes ``--out`` from the store, as a resumed run would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process (its threads included)."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def items_lines(start: int, count: int, answers: list[str]) -> str:
    return "".join(json.dumps({"id": f"r{i}", "question": "What would improve public transport?",
                               "response": f"{answers[i % 4]} (respondent {i})"}) + "\n"
                   for i in range(start, start + count))


def argv_for(items: Path, folder: Path, base_url: str, concurrency: int) -> list[str]:
    return [sys.executable, "-m", "convoscope", "judge", str(items), "--criterion", "survey/effort",
            "--judge", f"openai:mock@{base_url}", "--mode", "chat", "--concurrency", str(concurrency),
            "--store", str(folder / "run.db"), "--out", str(folder / "v.jsonl")]


def to_first_request(argv: list[str], mock: Any) -> tuple[float | None, float, int]:
    """(CPU seconds to the first request, or None when none was sent; the whole run's CPU; exit)."""
    before = mock.requests
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = None
    last = 0.0
    while process.poll() is None:
        try:
            last = cpu_of(process.pid)
        except (OSError, IndexError):
            break
        if first is None and mock.requests != before:
            first = last
        time.sleep(0.002)
    _out, err = process.communicate()
    if process.returncode not in (0,):
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    return first, last, process.returncode


def fill_directly(items: Path, folder: Path, base_url: str, done: int) -> None:
    """Verdicts for every item after the first chunk, written as the engine writes them."""
    from convoscope.criteria import select_criteria
    from convoscope.items._stream import ItemStream
    from convoscope.runs._here import run_judge_of
    from convoscope.runs._options import RunOptions
    from convoscope.runs._plan import plan_tasks, run_id_for
    from convoscope.store import Store
    from convoscope.store._chunks import claim_chunk, finish_chunk, register_tasks
    from convoscope.store._schema import SHARED

    criteria = select_criteria(names=("survey/effort",))
    options = RunOptions(mode="chat")
    judge, _models = run_judge_of(f"openai:mock@{base_url}", criteria, options, None,
                                  options.model_options(None))
    stream = ItemStream(items)
    run_id = run_id_for(judge, criteria, stream.name)
    store = Store(folder / "run.db")
    template = next(verdict for verdict in store.verdicts(run_id) if verdict.item_id == "r0")
    for raw in stream.chunks():
        if raw.index == 0:
            continue
        plan = plan_tasks(raw.items(), criteria, judge, chunk=raw.index)
        rows = [(task.key, template.model_copy(update={"item_id": task.item.id})) for task in plan.tasks]
        store.add_many(SHARED, rows)
        claim_chunk(store.engine, run_id, raw.index, raw.fingerprint, "filler:0:0", 60.0)
        with store.engine.begin() as connection:
            register_tasks(connection, run_id, raw.index,
                           [(task.key, task.position, False) for task in plan.tasks])
            finish_chunk(connection, run_id, raw.index, Counter(scored=len(plan.tasks)))
    store.close()
    assert sum(1 for _ in stream) == done


def measure(done: int, new: int, mock: Any, concurrency: int, direct_above: int,
            answers: list[str]) -> list[tuple[str, float | None, float, int, int]]:
    """Fill a store with ``done`` verdicts, then the growth, renamed and shifted runs."""
    import tempfile

    rows: list[tuple[str, float | None, float, int, int]] = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        items = folder / "items.jsonl"
        direct = done > direct_above
        items.write_text(items_lines(0, 256 if direct else done, answers))
        started = time.perf_counter()
        _first, cpu, code = to_first_request(argv_for(items, folder, mock.base_url, concurrency), mock)
        if direct:
            with items.open("a") as handle:
                handle.write(items_lines(256, done - 256, answers))
            fill_directly(items, folder, mock.base_url, done)
            first, cpu, code = to_first_request(argv_for(items, folder, mock.base_url, concurrency), mock)
            rows.append(("nothing new, --out written from the store", first, cpu, code,
                         _lines(folder / "v.jsonl")))
        print(f"  filled {done} in {time.perf_counter() - started:.0f} s (exit {code})", flush=True)
        with items.open("a") as handle:
            handle.write(items_lines(done, new, answers))
        rows.append(("growth: +100 at the end", *_run(items, folder, mock, concurrency)))
        renamed = folder / "renamed.jsonl"
        shutil.copy(items, renamed)
        with renamed.open("a") as handle:
            handle.write(items_lines(done + new, new, answers))
        rows.append(("renamed file, +100 at the end", *_run(renamed, folder, mock, concurrency)))
        old = renamed.read_text()
        renamed.write_text(items_lines(done + 2 * new, new, answers) + old)
        rows.append(("shifted rows: +100 at the top", *_run(renamed, folder, mock, concurrency)))
    return rows


def _run(items: Path, folder: Path, mock: Any, concurrency: int) -> tuple[float | None, float, int, int]:
    first, cpu, code = to_first_request(argv_for(items, folder, mock.base_url, concurrency), mock)
    return first, cpu, code, _lines(folder / "v.jsonl")


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
