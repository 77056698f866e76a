"""``check_judge``: the judge contract in one call, for plug-in authors (as scikit-learn's
``check_estimator`` is for estimators).

It judges a few items (a response, a whole dialogue, unusual text, an empty response) on one
criterion of each scale kind (binary, range, labels with "I don't know") and checks what every
judge in convoscope promises: a Verdict for the item, criterion and rater asked; a value on the
scale or an unscored verdict with its reason, never an exception; the same JSON identity on every
call (resume keys are built from it); and one judge instance judging two items at once without
mixing them up (no per-call state kept on the instance).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item, Turn
from convoscope.judges import Verdict


class JudgeContractError(AssertionError):
    """What :func:`check_judge` found wrong, one problem per line."""


def _criterion(name: str, scale: dict[str, Any]) -> Criterion:
    return Criterion.model_validate({"name": name, "question": f"The {name} check question?",
                                     "definition": "Used by convoscope.testing.check_judge.", "scale": scale})


CHECK_CRITERIA = (
    _criterion("check-binary", {"kind": "binary"}),
    _criterion("check-range", {"kind": "range", "minimum": 1, "maximum": 5}),
    _criterion("check-labels", {"kind": "labels", "labels": ["low", "mid", "high"], "allow_idk": True}),
)
CHECK_ITEMS = (
    Item(id="check-response", question="How was the delivery?", response="Thanks, it came on time."),
    Item(id="check-dialogue", context=(Turn(speaker="user", text="Hi"), Turn(speaker="bot", text="Hello!"))),
    Item(id="check-unicode", response="잘 지냈어요 🙂 שלום\u200b — naïve “quotes”", language="ko"),
    Item(id="check-empty", response=""),
)


def check_judge(judge: Any, *, items: Sequence[Item] = CHECK_ITEMS,
                criteria: Sequence[Criterion] = CHECK_CRITERIA) -> list[Verdict]:
    """Check that ``judge`` keeps the judge contract; return its verdicts, or raise
    :class:`JudgeContractError` naming every problem found.

    ``judge`` is what ``convoscope.judge`` takes: a Python judge, a decorated function or class,
    or any object with ``rater``, ``identity()`` and an async ``__call__(item, criterion)``.

    >>> from convoscope.testing import check_judge
    >>> verdicts = check_judge(my_judge)  # doctest: +SKIP
    """
    from convoscope.judges._python import as_judge

    try:
        built = as_judge(judge, source="check_judge")
    except Exception as error:  # noqa: BLE001 - reported as a contract problem
        raise JudgeContractError(f"not a judge: {error}") from None
    outcome: dict[str, Any] = {}

    def run() -> None:
        outcome["found"] = asyncio.run(_check(built, list(items), list(criteria)))

    if _loop_running():  # called from async code (an async test): check in a thread of its own
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    else:
        run()
    problems, verdicts = outcome["found"]
    if problems:
        raise JudgeContractError(f"{getattr(built, 'rater', built)!s} breaks the judge contract:\n"
                                 + "\n".join(f"- {problem}" for problem in problems))
    return verdicts


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _check(judge: Any, items: list[Item], criteria: list[Criterion]) -> tuple[list[str], list[Verdict]]:
    problems = _identity_problems(judge)
    verdicts: list[Verdict] = []
    for criterion in criteria:
        for item in items:
            verdict, problem = await _judged(judge, item, criterion)
            problems += problem
            if verdict is not None:
                verdicts.append(verdict)
    problems += await _concurrency_problems(judge, items, criteria[0])
    return problems, verdicts


def _identity_problems(judge: Any) -> list[str]:
    rater = getattr(judge, "rater", None)
    if not isinstance(rater, str) or ":" not in rater:
        return [f"rater must be text of the form 'kind:name', not {rater!r}"]
    try:
        first, second = (json.dumps(judge.identity(), sort_keys=True) for _ in range(2))
    except (TypeError, ValueError) as error:
        return [f"identity() must be JSON (it is hashed into resume keys): {error}"]
    return [] if first == second else ["identity() differs between two calls: resume keys would never match"]


async def _judged(judge: Any, item: Item, criterion: Criterion) -> tuple[Verdict | None, list[str]]:
    where = f"item {item.id!r}, criterion {criterion.name!r}"
    try:
        verdict = await judge(item, criterion)
    except Exception as error:  # noqa: BLE001 - the problem reported
        return None, [f"{where}: raised {type(error).__name__}: {error} (a failure must be an unscored "
                      "verdict with a reason, not an exception)"]
    if not isinstance(verdict, Verdict):
        return None, [f"{where}: returned {type(verdict).__name__}, not a Verdict"]
    problems = [f"{where}: verdict's {field} is {got!r}, not {wanted!r}" for field, got, wanted in (
        ("item_id", verdict.item_id, item.id), ("criterion", verdict.criterion, criterion.name),
        ("rater", verdict.rater, judge.rater)) if got != wanted]
    if verdict.value is None and verdict.unscored_reason is None:
        problems.append(f"{where}: no value and no unscored_reason (say why it is unscored)")
    elif verdict.value is not None and verdict.value not in criterion.scale.values():
        problems.append(f"{where}: value {verdict.value!r} is not on the scale {criterion.scale.values()}")
    elif verdict.value is not None and verdict.unscored_reason is not None:
        problems.append(f"{where}: a value and an unscored_reason ({verdict.unscored_reason}) at once")
    return verdict, problems


async def _concurrency_problems(judge: Any, items: list[Item], criterion: Criterion) -> list[str]:
    """One instance, two items at once: each verdict must be its own item's, and a judge that
    answers the same twice in a row must answer the same when the calls overlap."""
    first, second = items[0], items[-1]
    try:
        alone = [await judge(item, criterion) for item in (first, second)]
        again = [await judge(item, criterion) for item in (first, second)]
        together = await asyncio.gather(judge(first, criterion), judge(second, criterion))
    except Exception as error:  # noqa: BLE001 - the problem reported
        return [f"judging two items at once raised {type(error).__name__}: {error}"]
    pairs = zip((first, second), together, strict=True)
    problems = [f"judging two items at once: the verdict for {item.id!r} names {verdict.item_id!r}"
                for item, verdict in pairs if verdict.item_id != item.id]

    def answers(verdicts: Sequence[Verdict]) -> list[Any]:
        return [(verdict.value, verdict.unscored_reason) for verdict in verdicts]

    if not problems and answers(alone) == answers(again) and answers(together) != answers(alone):
        problems.append(f"judging two items at once changed the answers: {answers(alone)} one at a time, "
                        f"{answers(together)} together (state kept on the judge between calls?)")
    return problems
