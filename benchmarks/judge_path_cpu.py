"""CPU of convoscope's own code per call on the event loop, without HTTP (issue 39).

Runs the judge path of ``convoscope judge`` (response cache, OpenAI-compatible backend, rubric
judge, the engine's ``judge_task``) for N planned tasks against a fake sender that answers at once
with the mock's canned chat answer, so what is timed is everything a call costs the event loop
beside HTTP: the in-flight slot, the retry policy's deadline, the body, parsing the answer,
the ``Generation`` and ``Verdict`` models, the cache's hand-over. Thread CPU, so other processes'
load changes the figure less than wall time would (not nothing: caches, frequency).

    python benchmarks/judge_path_cpu.py --items 3000            # with this tree's src on PYTHONPATH
    PYTHONPATH=BEFORE/src python benchmarks/judge_path_cpu.py   # an earlier tree, to compare
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mock_openai import _CHAT  # noqa: E402  (the canned answer the mock sends)


class FakeSender:
    """A fake sender (benchmark only): every POST is answered at once with the canned answer."""

    async def post(self, path: str, body: object, content: bytes | None = None) -> object:
        from convoscope.models._http import Reply

        return Reply(200, _CHAT, [])

    async def aclose(self) -> None:
        pass


async def per_call_us(items: int, folder: Path) -> float:
    from convoscope.criteria import get_criterion
    from convoscope.items import Item
    from convoscope.judges import RubricJudge
    from convoscope.models import OpenAIModel, ResponseCache
    from convoscope.models._cache import CachedModel
    from convoscope.runs._engine import judge_task
    from convoscope.runs._plan import plan_tasks

    criterion = get_criterion("survey:effort")
    rows = [Item(id=str(n), question="What would improve public transport for you?",
                 response=f"More buses at night (respondent {n})") for n in range(items + 1)]
    model = OpenAIModel("mock", base_url="http://127.0.0.1:9/v1")
    model._sender = FakeSender()  # type: ignore[assignment]
    model._discovered = True  # no /props side request
    cache = ResponseCache(folder / "cache.db")
    judge = RubricJudge(CachedModel(model, cache))
    plan = plan_tasks(rows, [criterion], judge)
    await judge_task(plan.tasks[0])  # the capability probes, once
    judge.model.prefetch([task.requests[0] for task in plan.tasks[1:]])  # as the engine does, off the loop
    stamp = {"run_id": "r", "convoscope_version": "x"}
    started = time.thread_time()
    for task in plan.tasks[1:]:
        final, _ = await judge_task(task)
        final.model_copy(update=stamp)
    spent = time.thread_time() - started
    cache.close()
    return 1e6 * spent / items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        figure = asyncio.run(per_call_us(args.items, Path(name)))
    print(json.dumps({"items": args.items, "us_per_call": round(figure, 1)}))


if __name__ == "__main__":
    main()
