"""Who does what next: the qualification batch, its decision, and places in main batches (a part
of :class:`Campaign`).

Qualification follows seed 003: the internal reference annotators answer the qualification batch
first (the pilot); a newcomer's agreement with them is decided the moment the newcomer finishes.
Until every reference has finished, the study is not open: newcomers are told so before any work,
so nobody is ever asked to wait after working.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._access import Standing
from convoscope.campaigns._answers import next_task
from convoscope.campaigns._lifecycle import State, participant_limit
from convoscope.campaigns._monitor import QualificationResult, qualify
from convoscope.campaigns._people import Annotator
from convoscope.campaigns._plan import Batch, Task, choose_batch
from convoscope.campaigns._spec import CampaignSpec
from convoscope.criteria import Criterion
from convoscope.judges import RaterKind, Verdict


class Work(BaseModel):
    """Where an annotator stands: the batch, progress through it and the next task (None = none).

    ``state`` says why there is no task (see :mod:`convoscope.campaigns._lifecycle`): the study is
    ``not_open`` yet, the person is ``not_qualified``, ``blocked`` or ``screened_out``, there is
    ``no_work`` left for them, or they are ``done`` with the work assigned to them.
    """

    model_config = ConfigDict(frozen=True)

    batch: Batch | None
    done: int
    total: int
    task: Task | None
    qualification: QualificationResult | None = None
    state: State = "task"


def _none(state: State, result: QualificationResult | None = None) -> Work:
    return Work(batch=None, done=0, total=0, task=None, qualification=result, state=state)


class Assignment:
    """Qualification and batch places; mixed into :class:`Campaign`, which sets these attributes."""

    spec: CampaignSpec
    batches: list[Batch]
    criteria: dict[str, Criterion]
    owner: dict[str, Batch]
    _lock: threading.RLock
    _claims: dict[str, tuple[str, float]]  # annotator -> (main batch shown, since when)
    _holds: dict[str, float]  # newcomer -> last seen (a place kept until they reach a main batch)
    _tasks: dict[str, list[Task]]
    _workers_memo: tuple[list[Verdict], frozenset[str], dict[str, set[str]]] | None

    if TYPE_CHECKING:  # provided by People and Campaign
        def standing(self) -> Standing: ...

        def people(self) -> list[Annotator]: ...

        def paid(self, annotator: str) -> bool: ...

        def screened_by_questions(self, annotator: str) -> str | None: ...

        def declined(self, annotator: str) -> bool: ...

        def returned(self) -> frozenset[str]: ...

        def answers(self) -> list[Verdict]: ...

        def _snapshot(self) -> tuple[list[Verdict], set[str]]: ...

        def _add_event(self, kind: str, annotator: str, key: str, data: dict[str, object]) -> bool: ...

    def tasks(self, batch: Batch) -> list[Task]:
        """The batch's tasks in the order they are asked (computed once per batch)."""
        if batch.id not in self._tasks:
            self._tasks[batch.id] = batch.tasks(list(self.criteria))
        return self._tasks[batch.id]

    # -- qualification ---------------------------------------------------------------------------

    def qualification_batch(self) -> Batch | None:
        return next((b for b in self.batches if b.kind == "qualification"), None)

    def references_ready(self) -> bool:
        """Every reference annotator has answered the whole qualification batch (or there is none)."""
        batch = self.qualification_batch()
        if batch is None:
            return True
        _, done = self._snapshot()
        tasks = self.tasks(batch)
        return all(next_task(tasks, person, done)[1] is None
                   for person in self.spec.qualification.reference_annotators)

    def decision(self, annotator: str) -> QualificationResult | None:
        """The stored decision; made (once) when the candidate has finished and the references too."""
        stored = self.standing().decisions.get(annotator)
        batch = self.qualification_batch()
        if stored is not None or batch is None:
            return stored
        _, done = self._snapshot()
        if next_task(self.tasks(batch), annotator, done)[1] is not None or not self.references_ready():
            return None
        references = [r for r in self.spec.qualification.reference_annotators if r != annotator]
        trial = [v for v in self.answers() if self.owner.get(v.item_id) is batch]
        settings = self.spec.qualification
        result = qualify(annotator, trial, references, threshold=settings.min_kappa,
                         min_accuracy=settings.min_accuracy, ordinal_labels=self._ordinal_labels(),
                         chance=self._chance_level(), max_chance_pass=settings.max_chance_pass,
                         admit_cannot_tell=settings.when_cannot_tell == "admit")
        self._add_event("decision", annotator, "qualification", result.model_dump(mode="json"))
        return self.standing().decisions[annotator]  # the first decision written wins, ever

    def _ordinal_labels(self) -> list[str] | None:
        """The scale in order when every criterion is the same numeric range (weighted kappa)."""
        criteria = list(self.criteria.values())
        scales = {tuple(c.scale.values()) for c in criteria}
        if self.spec.pairwise or any(c.scale.kind != "range" for c in criteria) or len(scales) != 1:
            return None
        return [str(value) for value in next(iter(scales))]

    def _chance_level(self) -> float:
        """The chance that a random answer equals the references' majority: one over the fewest
        answers a criterion offers (the largest chance, so the check errs toward caution; "I don't
        know" is not counted as an answer, which errs the same way)."""
        if self.spec.pairwise:
            return 0.5  # a coin flip between the two responses (a tie is rarely the majority)
        return 1 / max(2, min((len(c.scale.values()) for c in self.criteria.values()), default=2))

    def decide_pending(self) -> None:
        """Make every decision that is due (the status and report call this)."""
        if self.qualification_batch() is None:
            return
        references = set(self.spec.qualification.reference_annotators)
        for person in self.people():
            if person.id not in references:
                self.decision(person.id)

    # -- work ------------------------------------------------------------------------------------

    def work(self, annotator: str) -> Work:
        """The annotator's current batch and next task: qualification first, then main batches."""
        standing = self.standing()
        if annotator in standing.blocked:
            return self._left(annotator, "blocked")
        if self.declined(annotator):
            return self._left(annotator, "declined")
        if annotator in self.returned():
            return self._left(annotator, "returned")
        if self.screened_by_questions(annotator) is not None:
            return self._left(annotator, "screened_out")
        _, done = self._snapshot()
        trial, result = self.qualification_batch(), None
        if trial is not None:
            reference = annotator in self.spec.qualification.reference_annotators
            count, task = next_task(self.tasks(trial), annotator, done)
            if task is not None:
                if not reference and not self.references_ready():
                    return _none("not_open")
                self._hold(annotator)
                return Work(batch=trial, done=count, total=len(self.tasks(trial)), task=task)
            if reference and not self.spec.qualification.references_in_main:
                return _none("done")
            if not reference:
                result = self.decision(annotator)
                if result is None:  # cannot happen once the references are complete; said plainly
                    return _none("not_open")
                if not result.qualified:
                    return self._left(annotator, "not_qualified", result)
        return self._main_work(annotator, done, result)

    def _left(self, annotator: str, state: State, result: QualificationResult | None = None) -> Work:
        with self._lock:
            self._holds.pop(annotator, None)
            self._claims.pop(annotator, None)
        return _none(state, result)

    def _main_work(self, annotator: str, done: set[str], result: QualificationResult | None) -> Work:
        workers = self._workers()
        finished = {batch.id for batch in self.batches
                    if batch.kind == "main" and annotator in workers[batch.id]
                    and next_task(self.tasks(batch), annotator, done)[1] is None}
        quota = self.spec.platform.batches_per_participant if self.paid(annotator) else None
        if quota is not None and len(finished) >= quota:
            return self._left(annotator, "done", result)
        with self._lock:
            chosen = self._claim(annotator, workers, finished)
        if chosen is None:
            return self._left(annotator, "done" if finished else "no_work", result)
        count, task = next_task(self.tasks(chosen), annotator, done)
        return Work(batch=chosen, done=count, total=len(self.tasks(chosen)), task=task, qualification=result)

    def _workers(self) -> dict[str, set[str]]:
        """Batch id -> the annotators whose answers count there (blocked people, and people whose
        submission the platform reports returned, free their place).

        Computed again only when the answers, the blocks or the returns changed (a fresh copy each call)."""
        blocked = frozenset(self.standing().blocked) | self.returned()
        first, _ = self._snapshot()
        memo = self._workers_memo
        if memo is None or memo[0] is not first or memo[1] != blocked:
            workers: dict[str, set[str]] = {batch.id: set() for batch in self.batches}
            for verdict in first:
                batch = self.owner.get(verdict.item_id)
                person = RaterKind.HUMAN.name_of(verdict.rater)
                if batch is not None and person not in blocked:
                    workers[batch.id].add(person)
            memo = self._workers_memo = (first, blocked, workers)
        return {batch: set(people) for batch, people in memo[2].items()}

    def _claim(self, annotator: str, workers: dict[str, set[str]], finished: set[str]) -> Batch | None:
        """Choose the annotator's main batch and hold a place in it from the moment it is shown.

        Places are held in memory for ``max_minutes_per_batch`` (default 60) so that people who
        open their link at the same moment are spread over batches; after a restart, places come
        back from the stored answers. Call with the lock held.
        """
        now = time.monotonic()
        self._expire(now)
        for person, (batch, _) in self._claims.items():
            workers.setdefault(batch, set()).add(person)
        chosen = choose_batch(annotator, self.batches, workers, finished,
                              per_batch=self.spec.annotators_per_batch)
        if chosen is not None and self._claims.get(annotator, ("", 0.0))[0] != chosen.id:
            self._claims[annotator] = (chosen.id, now)
        if chosen is not None:
            self._holds.pop(annotator, None)
        return chosen

    def _expire(self, now: float) -> None:
        limit = 60 * (self.spec.max_minutes_per_batch or 60)
        self._claims = {p: (b, since) for p, (b, since) in self._claims.items() if now - since < limit}
        self._holds = {p: since for p, since in self._holds.items() if now - since < limit}

    # -- room for newcomers ----------------------------------------------------------------------

    def _hold(self, annotator: str) -> None:
        """Keep a main place for a newcomer until they reach a main batch (or leave, or the time
        limit passes): people arriving together are never promised the same last place."""
        if annotator in self.spec.qualification.reference_annotators:
            return
        with self._lock:
            if annotator not in self._claims:
                self._holds[annotator] = time.monotonic()

    def restore_holds(self) -> None:
        """After a restart, keep a place again for everyone between the qualification batch and a
        main batch (places are held in memory): a candidate who qualified while the server was
        down, or who had not reached a main batch, still finds one."""
        trial = self.qualification_batch()
        if trial is None:
            return
        standing, now = self.standing(), time.monotonic()
        first, _ = self._snapshot()
        started: set[str] = set()
        in_main: set[str] = set()
        for verdict in first:
            batch = self.owner.get(verdict.item_id)
            person = RaterKind.HUMAN.name_of(verdict.rater)
            (started if batch is trial else in_main).add(person)
        references = set(self.spec.qualification.reference_annotators)
        with self._lock:
            for person in started - in_main - references - set(standing.blocked):
                decision = standing.decisions.get(person)
                if decision is None or decision.qualified:
                    self._holds.setdefault(person, now)

    def open_places(self) -> int:
        """Main-batch places no one has taken, holds or is kept for."""
        workers = self._workers()
        with self._lock:
            self._expire(time.monotonic())
            for person, (batch, _) in self._claims.items():
                workers[batch].add(person)
            gone = self.returned()
            for person in gone:  # returned elsewhere (the platform): nothing is kept for them
                self._holds.pop(person, None)
                self._claims.pop(person, None)
            waiting = [p for p in self._holds if p not in self._claims]
        free = sum(max(0, self.spec.annotators_per_batch - len(workers[b.id]))
                   for b in self.batches if b.kind == "main")
        return free - len(waiting)

    def main_places(self) -> int:
        return self.spec.annotators_per_batch * sum(1 for b in self.batches if b.kind == "main")

    def _refusal(self) -> Literal["full", "not_open"] | None:
        """Why the study link would turn a newcomer away now (None: it would take them)."""
        if not self.references_ready():
            return "not_open"
        gone = self.returned()
        joined = sum(1 for person in self.people()
                     if person.platform and person.id not in gone and not self.declined(person.id))
        if joined >= participant_limit(self.spec.platform, self.main_places()) or self.open_places() <= 0:
            return "full"
        return None
