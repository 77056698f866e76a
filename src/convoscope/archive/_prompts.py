"""The prompt a run sent for one verdict, rebuilt and checked against its task key; and
``export-run --prompts``, which writes each final verdict's prompt into the archive.

A store keeps a hash of what was asked (the task key), not the prompt. A rubric judge's prompt is
a function of the criterion, the item and what its spec records (mode, persona, token limit), so
it can be rendered again without the model; it is used only when it hashes to the verdict's task
key, so what is shown or archived is exactly what was sent. This is the one place that rebuilds
prompts: ``export-run --prompts``, ``compare`` and ``view`` all read them through
:class:`PromptBook`, and ``compare`` (per flip) and ``view`` (per item) diff two runs' prompts
with :func:`prompt_between`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy as sa

# Said when a prompt is missing for want of files: how to have it next time.
WHERE_FROM = "export the run with --prompts, or give the items and criteria file it read"


def request_text(request: Any) -> str:
    """A rendered request as readable text: each message under its role, or the raw prompt."""
    if request.messages:
        return "\n".join(f"[{message.role}]\n{message.content}" for message in request.messages)
    return str(request.prompt or "")


def render(spec: Mapping[str, Any], item: Any, criterion: Any) -> tuple[str, str] | None:
    """The prompt a rubric judge recorded in ``spec`` sends for ``item`` on ``criterion``, and the
    task key it hashes to (as :meth:`RubricJudge.task_key`); None for judges that send none."""
    from convoscope.judges._judge import _digest
    from convoscope.judges._prompt import build_request

    identity = spec.get("judge") or {}
    if not isinstance(identity, Mapping) or identity.get("kind") != "rubric":
        return None
    try:
        request = build_request(criterion, item, mode=str(identity.get("mode", "chat")),
                                persona=identity.get("persona"),
                                max_tokens=int(identity.get("max_tokens", 400)))
    except ValueError:
        return None
    asked = hashlib.sha256(request.model_dump_json().encode()).hexdigest()
    key = _digest({"judge": dict(identity), "model": identity.get("model"), "request": asked,
                   "item_id": item.id, "criterion": criterion.name})
    return request_text(request), key


class PromptBook:
    """Where one run's prompts come from: prompts it carries (an archive exported with
    ``--prompts``, by task key), or items and criteria to render them again. Every criterion of
    a name is tried (two files may word it differently): the one that hashes to the key is it."""

    def __init__(self, spec: Mapping[str, Any], *, items: Mapping[str, Any] | None = None,
                 criteria: Iterable[Any] = (), archived: Mapping[str, str] | None = None):
        self.spec = spec
        self.items = items or {}
        self.archived = archived or {}
        self.criteria: dict[str, list[Any]] = {}
        for criterion in criteria:
            wordings = self.criteria.setdefault(criterion.name, [])
            if criterion not in wordings:
                wordings.append(criterion)

    def find(self, key: str | None, item_id: str, criterion: str) -> tuple[str | None, str]:
        """(the prompt sent for ``key``, "") or (None, why it is not known)."""
        if key is not None and key in self.archived:
            return self.archived[key], ""
        judge = self.spec.get("judge")
        if not isinstance(judge, Mapping):
            return None, "the run recorded no judge (a verdict file or an old run)"
        if judge.get("kind") != "rubric":
            return None, f"a {judge.get('kind') or 'custom'} judge sends no rubric prompt"
        if key is None:
            return None, "its task key is not known (a verdict file records none)"
        if item_id not in self.items:
            return None, f"item {item_id} is not at hand: {WHERE_FROM}"
        if criterion not in self.criteria:
            return None, f"criterion {criterion} is not at hand: {WHERE_FROM}"
        for candidate in self.criteria[criterion]:
            rendered = render(self.spec, self.items[item_id], candidate)
            if rendered is not None and rendered[1] == key:
                return rendered[0], ""
        return None, ("no prompt rendered from the items and criteria at hand hashes to its task key "
                      f"(they are not the ones the run read): {WHERE_FROM}")

    def text(self, key: str | None, item_id: str, criterion: str) -> str | None:
        return self.find(key, item_id, criterion)[0]


def prompt_diff(text_a: str, text_b: str) -> tuple[str, ...]:
    """The unified diff of two prompts, A → B (empty when they are the same)."""
    return tuple(difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), "A", "B", lineterm="", n=2))


class PromptDifference(NamedTuple):
    """How the prompts two runs sent for one item differ: ``lines``, a unified diff A → B of
    prompts checked against the task keys; ``same``, known to be the same (checked prompts, or one
    task key); ``note``, what is known when there is no diff."""

    lines: tuple[str, ...] = ()
    note: str = ""
    same: bool = False


def prompt_between(item_id: str, criterion: str, key_a: str | None, key_b: str | None,
                   book_a: PromptBook, book_b: PromptBook) -> PromptDifference:
    """The difference of the prompts runs A and B sent for ``item_id`` on ``criterion``: a diff
    only of prompts checked against the task keys ``key_a`` and ``key_b``, else why there is none."""
    text_a, why_a = book_a.find(key_a, item_id, criterion)
    text_b, why_b = book_b.find(key_b, item_id, criterion)
    if text_a is not None and text_b is not None:
        difference = prompt_diff(text_a, text_b)
        if difference:
            return PromptDifference(difference)
        return PromptDifference(note="the same prompt in both runs", same=True)
    missing = "; ".join(f"{side}: {why}" for side, text, why in (("A", text_a, why_a), ("B", text_b, why_b))
                        if text is None)
    if key_a and key_b:
        if key_a == key_b:
            return PromptDifference(note="the same task key in both runs: the same prompt to the same judge",
                                    same=True)
        return PromptDifference(note=f"prompts or judges differ (task keys A {key_a[:12]}, B {key_b[:12]}); "
                                f"the prompts themselves are not at hand ({missing})")
    return PromptDifference(note=f"the prompts are not known ({missing})")


def prompt_lines(store: Any, run_id: str, spec: dict[str, Any], items: Path, criteria_file: Path,
                 counts: list[int]) -> Iterator[str]:
    """One JSON line per final verdict whose prompt was rendered again: ``task_key``, ``prompt``.
    ``counts`` receives [written, not matched]."""
    from convoscope.criteria import load_criteria
    from convoscope.items import read_items
    from convoscope.store._schema import SHARED, run_tasks, verdicts

    book = PromptBook(spec, items={item.id: item for item in read_items(items)},
                      criteria=load_criteria(criteria_file))
    counts[:] = [0, 0]
    query = (sa.select(verdicts.c.task_key, verdicts.c.item_id, verdicts.c.criterion)
             .join(run_tasks, sa.and_(run_tasks.c.task_key == verdicts.c.task_key,
                                      verdicts.c.scope == SHARED))
             .where(run_tasks.c.run_id == run_id, ~run_tasks.c.member)
             .order_by(run_tasks.c.chunk, run_tasks.c.position))
    with store.engine.connect() as connection:
        for key, item_id, name in connection.execute(query.execution_options(yield_per=1000)):
            text = book.text(key, item_id, name)
            if text is None:
                counts[1] += 1
                continue
            counts[0] += 1
            yield json.dumps({"task_key": key, "prompt": text}, ensure_ascii=False) + "\n"
