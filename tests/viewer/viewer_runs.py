"""Two small runs of one judge with two wordings of a criterion, in a store and as run archives,
for the viewer's side-by-side page. Reasons and items carry script payloads: they must stay text."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from convoscope import Item, Turn, Verdict
from convoscope.archive import export_run
from convoscope.criteria import load_criteria
from convoscope.items import write_jsonl
from convoscope.judges import RubricJudge
from convoscope.store import Store

SCRIPT = "<script>window.__pwned = 1</script>"
IMAGE = '<img src=x onerror="window.__pwned = 2">'
SVG = '<svg onload="window.__pwned = 3"></svg>'

CRITERIA = """criteria:
  - name: overall
    question: "{question}"
    definition: How good the response is.
    scale: {{kind: range, minimum: 1, maximum: 4}}
  - name: polite
    question: Is the response polite?
    definition: Courteous wording.
    scale: {{kind: binary}}
"""
QUESTION_A = "How good is this response overall?"
QUESTION_B = "Be strict: is this response good?"

# item: system, language, (overall A, overall B), (polite A, polite B); None is unscored
PLAN = {
    "i1": ("bot-a", "en", (4, 2), (1, 1)),
    "i2": ("bot-a", "en", (3, 3), (1, 0)),
    "i3": ("bot-a", "ko", (2, 3), (0, 0)),
    "i4": ("bot-b", "en", (1, 1), (1, 1)),
    "i5": ("bot-b", "en", (None, 2), (1, 1)),
    "i6": ("bot-b", "ko", (3, 3), (0, 1)),
}
FLIPPED = {("i1", "overall"), ("i3", "overall"), ("i2", "polite"), ("i6", "polite")}
REASONS = {("A", "i1", "overall"): f"too long {SCRIPT}", ("B", "i1", "overall"): f"rambles {IMAGE}"}


class NamedModel:
    """Only a model's name (tests only): the judge's identity and task keys need it; nothing is asked."""

    name = "openai:judge-x"


@dataclass(frozen=True)
class TwoRuns:
    store: Path
    archive_a: Path
    archive_b: Path
    items: Path
    criteria_a: Path
    criteria_b: Path


def _verdict(side: str, item: str, criterion: str, value: int | None, run_id: str) -> Verdict:
    system, language = PLAN[item][:2]
    return Verdict(item_id=item, criterion=criterion, rater="model:judge-x", value=value, system=system,
                   language=language, unscored_reason="parse_failure" if value is None else None,
                   reason=REASONS.get((side, item, criterion), f"{side} on {item}"), run_id=run_id)


def make_two_runs(folder: Path) -> TwoRuns:
    """Runs ``run-a`` and ``run-b`` in ``folder/runs.db``, and exported to ``folder/archives/``."""
    items = folder / "items.jsonl"
    listed = [Item(id=item, system=system, language=language,
                   context=(Turn(speaker="user", text=f"hello from {item}"),),
                   response=f"reply {item} {SVG}" if item == "i1" else f"reply {item}")
              for item, (system, language, _, _) in PLAN.items()]
    write_jsonl(listed, items)
    # Each verdict is stored under the task key the judge gives its request, as a run stores it.
    judge = RubricJudge(NamedModel())  # type: ignore[arg-type]
    store = Store(folder / "runs.db")
    paths = {}
    for index, (side, question) in enumerate((("A", QUESTION_A), ("B", QUESTION_B))):
        run_id = f"run-{side.lower()}"
        criteria = folder / f"criteria-{side.lower()}.yaml"
        criteria.write_text(CRITERIA.format(question=question), encoding="utf-8")
        paths[side] = criteria
        store.start_run(run_id, {"judge": judge.identity(), "criteria": ["overall", "polite"],
                                 "source": "items.jsonl", "wording": side})
        by_name = {criterion.name: criterion for criterion in load_criteria(criteria)}
        store.add_many(run_id, [
            (judge.task_key(item, by_name[name]), _verdict(side, item.id, name, values[index], run_id))
            for item, (_, _, overall, polite) in zip(listed, PLAN.values(), strict=True)
            for name, values in (("overall", overall), ("polite", polite))])
    store.close()
    archives = folder / "archives"
    archives.mkdir()
    for side in "AB":
        export_run(f"run-{side.lower()}", folder / "runs.db", archives / f"{side.lower()}.cvs.zip",
                   items=items, criteria_file=paths[side])
    return TwoRuns(folder / "runs.db", archives / "a.cvs.zip", archives / "b.cvs.zip", items, paths["A"],
                   paths["B"])


def make_card(folder: Path) -> Path:
    """A judge card of a small study (six contexts, three people; a judge that knows the hidden
    quality and the length baseline), written as ``folder/card.json`` by ``convoscope card``'s writer."""
    import json

    from card.conftest import OVERALL, oracle, study

    import convoscope as cs

    items, humans = study(n_contexts=6)
    card = cs.judge_card([oracle, "baseline:length"], items, humans, criteria=[OVERALL],
                         store=folder / "card.db", n_resamples=50, cache_path=None)
    path = folder / "card.json"
    path.write_text(json.dumps(card.to_dict(), ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def task_key(item_id: str, criterion: str, criteria_file: Path, items: Path) -> str:
    """The task key the runs' judge gives ``item_id`` on ``criterion`` worded as in ``criteria_file``."""
    from convoscope.items import read_items

    item = next(item for item in read_items(items) if item.id == item_id)
    wording = next(c for c in load_criteria(criteria_file) if c.name == criterion)
    return RubricJudge(NamedModel()).task_key(item, wording)  # type: ignore[arg-type]
