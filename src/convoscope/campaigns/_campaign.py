"""A running campaign: the spec, its batches, its people and the store of Verdicts and events."""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._access import Standing, blocked_from, counted, gold_failures
from convoscope.campaigns._answers import Submission, answer_key, next_task, task_key, to_verdict
from convoscope.campaigns._events import Event, EventLog
from convoscope.campaigns._monitor import BatchAgreement, QualificationResult, qualify
from convoscope.campaigns._pair_results import PairResults, pair_results
from convoscope.campaigns._people import EXTERNAL_ID, Annotator, join, read_annotators, write_annotators
from convoscope.campaigns._plan import Batch, Task, choose_batch, make_batches
from convoscope.campaigns._results import OptionCount, SystemResult, option_breakdown, system_results
from convoscope.campaigns._spec import CampaignError, CampaignSpec, load_campaign
from convoscope.campaigns._status import CampaignStatus, campaign_status
from convoscope.criteria import Criterion
from convoscope.errors import ConfigError, ConvoscopeError
from convoscope.items import Item
from convoscope.judges import RaterKind, Verdict
from convoscope.store import Store

State = Literal["task", "waiting", "not_qualified", "blocked", "done"]


class Work(BaseModel):
    """Where an annotator stands: the batch, progress through it and the next task (None = none).

    ``state`` says why there is no task: ``waiting`` for the reference answers before the
    qualification decision, ``not_qualified``, ``blocked`` or ``done``.
    """

    model_config = ConfigDict(frozen=True)

    batch: Batch | None
    done: int
    total: int
    task: Task | None
    qualification: QualificationResult | None = None
    state: State = "task"


class BatchFull(ConvoscopeError, ValueError):
    """Another annotator took the last place in this batch first; the annotator gets another one."""


class Campaign:
    """The campaign's behaviour over one store; the web app and the CLI call only this."""

    def __init__(self, directory: str | Path, items: Sequence[Item], store: Store):
        self.directory = Path(directory)
        self.spec: CampaignSpec = load_campaign(directory)
        # Keyed by the name answers are stored under (``pairwise:<name>`` in a pairwise campaign).
        self.criteria: dict[str, Criterion] = {self.spec.task_criterion(c.name): c
                                               for c in self.spec.load_criteria(self.directory)}
        self.batches = make_batches(items, self.spec)
        # Items routed from a judged run (``campaign add-items``): why each was chosen.
        self.chosen: dict[str, tuple[str, ...]] = {
            item.id: tuple(str(r) for r in item.meta["selected_because"]) for item in items
            if isinstance(item.meta.get("selected_because"), list) and item.meta["selected_because"]}
        if not any(batch.kind == "main" for batch in self.batches):
            contexts = sum(len(batch.contexts) for batch in self.batches)
            raise CampaignError(self.directory / "campaign.yaml", f"the items give {contexts} contexts and "
                                f"the qualification batch takes {self.spec.qualification.contexts}: nothing "
                                "is left for main batches; add items or lower qualification.contexts",
                                field="qualification.contexts")
        self.store = store
        self.run_id = f"campaign:{self.spec.name}"
        self.store.start_run(self.run_id, self.spec.model_dump(mode="json"))
        self.events = EventLog(store, self.run_id)
        self._lock = threading.RLock()  # one server's threads: batch places, annotators.json, caches
        self._claims: dict[str, tuple[str, float]] = {}  # annotator -> (batch shown, since when)
        self._shown: dict[tuple[str, str], float] = {}  # (annotator, task key) -> first shown (server)
        self._tasks: dict[str, list[Task]] = {}
        self.owner: dict[str, Batch] = {c.item_id: b for b in self.batches for x in b.contexts
                                        for c in x.candidates}
        self._cached: list[Verdict] = []
        self._cached_keys: set[str] = set()
        self._events: list[Event] = []
        self._events_read = -1.0  # when the events were last read (monotonic); -1 = read again
        self._events_written = 0  # this process's event writes so far (a read started before one is stale)

    # -- people ---------------------------------------------------------------------------------

    def annotator(self, token: str) -> Annotator | None:
        """The annotator holding this token (constant-time comparison), or None."""
        found = None
        wanted = token.encode("utf-8", errors="surrogateescape")
        for annotator in read_annotators(self.directory):
            if hmac.compare_digest(annotator.token.encode(), wanted):
                found = annotator
        return found

    def join(self, external_id: str, session: dict[str, str]) -> Annotator:
        """The annotator for a crowdsourcing platform's participant (added on first arrival)."""
        with self._lock:
            return join(self.directory, external_id, session)

    def record_external_id(self, annotator: str, external_id: str) -> bool:
        """Keep a platform's id (e.g. ``PROLIFIC_PID``) for an invited annotator, once."""
        if not EXTERNAL_ID.match(external_id):
            raise ConfigError("a platform id may hold only letters, digits, '_' and '-' (at most 64)")
        with self._lock:
            people = read_annotators(self.directory)
            found = next((p for p in people if p.id == annotator), None)
            if found is None or found.external_id == external_id:
                return False
            if found.external_id is not None:
                raise ConfigError("this link is already tied to another platform id")
            write_annotators(self.directory, [p.model_copy(update={"external_id": external_id})
                                              if p.id == annotator else p for p in people])
            return True

    def block(self, annotator: str, reason: str, *, unblock: bool = False) -> None:
        """Block an annotator (their answers leave the results, kept in the store), or lift it."""
        if annotator not in {person.id for person in read_annotators(self.directory)}:
            raise CampaignError(self.directory / "annotators.json", f"no annotator {annotator!r}")
        self._add_event("unblock" if unblock else "block", annotator, str(time.time_ns()),
                        {"reason": reason})

    def mark(self, annotator: str, kind: Literal["consent", "instructions"]) -> None:
        """Record that the annotator accepted the consent text / read the instructions."""
        self._add_event(kind, annotator, kind, {})

    def has(self, annotator: str, kind: str) -> bool:
        return any(e.kind == kind and e.annotator == annotator for e in self._new_events())

    def standing(self) -> Standing:
        """Who is invited, blocked, decided and a reference, now."""
        events = self._new_events()
        decisions = {e.annotator: QualificationResult.model_validate(e.data)
                     for e in events if e.kind == "decision"}
        return Standing(invited=frozenset(p.id for p in read_annotators(self.directory)),
                        blocked=blocked_from(events), decisions=decisions,
                        references=frozenset(self.spec.qualification.reference_annotators))

    # -- reading --------------------------------------------------------------------------------

    def tasks(self, batch: Batch) -> list[Task]:
        """The batch's tasks in the order they are asked (computed once per batch)."""
        if batch.id not in self._tasks:
            self._tasks[batch.id] = batch.tasks(list(self.criteria))
        return self._tasks[batch.id]

    def _add_event(self, kind: str, annotator: str, key: str, data: dict[str, object]) -> bool:
        added = self.events.add(kind, annotator, key, data)
        with self._lock:
            self._events_written += 1
            self._events_read = -1.0  # this process's own writes are seen at once
        return added

    def _new_events(self) -> list[Event]:
        """Every event, read again at most every quarter of a second.

        Events written by another process (``campaign block`` from the command line) are seen
        within a quarter of a second; this process's own at once. The whole (small) table is read
        each time: on PostgreSQL, ids are not handed out in commit order, so "newer than the last
        id seen" could miss a row committed late.
        """
        now = time.monotonic()
        with self._lock:
            if 0 <= now - self._events_read < 0.25:
                return list(self._events)
            written = self._events_written
        fresh = self.events.all()
        with self._lock:
            self._events = fresh
            if written == self._events_written:  # no write of ours raced this read: trust it a while
                self._events_read = now
            return list(fresh)

    def _snapshot(self) -> tuple[list[Verdict], set[str]]:
        """The campaign's first answers and task keys, read again only when the store has changed.

        Verdicts are only ever added, so the set of task keys tells whether the list read last
        time is still the whole truth; answers written by another process are seen.
        """
        done = self.store.done_keys(self.run_id)
        with self._lock:
            if not done <= self._cached_keys:
                self._cached = self.store.verdicts(self.run_id)
                self._cached_keys = {self._key(verdict) for verdict in self._cached}
            return list(self._cached), set(self._cached_keys)

    def _key(self, verdict: Verdict) -> str:
        batch = self.owner.get(verdict.item_id)
        return answer_key(RaterKind.HUMAN.name_of(verdict.rater), batch.id if batch else "",
                          verdict.item_id, verdict.criterion)

    def answered_keys(self) -> set[str]:
        """The task keys of every first answer stored."""
        return self._snapshot()[1]

    def answers(self) -> list[Verdict]:
        """Every answer as it stands now (a changed answer replaces the first), whoever gave it."""
        first, _ = self._snapshot()
        latest = {e.key.rsplit(":", 1)[0]: Verdict.model_validate(e.data["verdict"])
                  for e in self._new_events() if e.kind == "revision"}
        return [latest.get(self._key(verdict), verdict) for verdict in first]

    def history(self, annotator: str) -> list[tuple[Verdict, float]]:
        """The annotator's changed answers, oldest first, with when each change was saved."""
        return [(Verdict.model_validate(e.data["verdict"]), e.created_at) for e in self._new_events()
                if e.kind == "revision" and e.annotator == annotator]

    def verdicts(self, *, everything: bool = False) -> list[Verdict]:
        """The answers that count (see ``_access``); ``everything=True``: every stored answer."""
        answers = self.answers()
        return answers if everything else counted(answers, self.owner, self.spec, self.standing())

    # -- qualification --------------------------------------------------------------------------

    def qualification_batch(self) -> Batch | None:
        return next((b for b in self.batches if b.kind == "qualification"), None)

    def decision(self, annotator: str) -> QualificationResult | None:
        """The stored decision; made (once) when the candidate and every reference have finished."""
        stored = self.standing().decisions.get(annotator)
        batch = self.qualification_batch()
        if stored is not None or batch is None:
            return stored
        _, done = self._snapshot()
        tasks = self.tasks(batch)
        references = [r for r in self.spec.qualification.reference_annotators if r != annotator]
        if any(next_task(tasks, person, done)[1] is not None for person in [annotator, *references]):
            return None  # the candidate, or a reference annotator, has not finished yet
        trial = [v for v in self.answers() if self.owner.get(v.item_id) is batch]
        settings = self.spec.qualification
        result = qualify(annotator, trial, references, threshold=settings.kappa_threshold)
        self._add_event("decision", annotator, "qualification", result.model_dump(mode="json"))
        return self.standing().decisions[annotator]  # the first decision written wins, ever

    def decide_pending(self) -> None:
        """Make every decision that is due (the status and report call this)."""
        if self.qualification_batch() is None:
            return
        references = set(self.spec.qualification.reference_annotators)
        for person in read_annotators(self.directory):
            if person.id not in references:
                self.decision(person.id)

    # -- work -----------------------------------------------------------------------------------

    def work(self, annotator: str) -> Work:
        """The annotator's current batch and next task: qualification first, then main batches."""
        if annotator in self.standing().blocked:
            return Work(batch=None, done=0, total=0, task=None, state="blocked")
        _, done = self._snapshot()
        trial, result = self.qualification_batch(), None
        if trial is not None:
            count, task = next_task(self.tasks(trial), annotator, done)
            if task is not None:
                return Work(batch=trial, done=count, total=len(self.tasks(trial)), task=task)
            if annotator in self.spec.qualification.reference_annotators:
                if not self.spec.qualification.references_in_main:
                    return Work(batch=None, done=0, total=0, task=None, state="done")
            else:
                result = self.decision(annotator)
                if result is None:
                    return Work(batch=None, done=0, total=0, task=None, state="waiting")
                if not result.qualified:
                    return Work(batch=None, done=0, total=0, task=None, qualification=result,
                                state="not_qualified")
        return self._main_work(annotator, done, result)

    def _main_work(self, annotator: str, done: set[str], result: QualificationResult | None) -> Work:
        workers = self._workers()
        finished = {batch.id for batch in self.batches if annotator in workers[batch.id]
                    and next_task(self.tasks(batch), annotator, done)[1] is None}
        with self._lock:
            chosen = self._claim(annotator, workers, finished)
        if chosen is None:
            return Work(batch=None, done=0, total=0, task=None, qualification=result, state="done")
        count, task = next_task(self.tasks(chosen), annotator, done)
        return Work(batch=chosen, done=count, total=len(self.tasks(chosen)), task=task, qualification=result)

    def _workers(self) -> dict[str, set[str]]:
        """Batch id -> the annotators whose answers count there (blocked people free their place)."""
        workers: dict[str, set[str]] = {batch.id: set() for batch in self.batches}
        standing = self.standing()
        with self._lock:
            first = list(self._cached)
        for verdict in first:
            batch = self.owner.get(verdict.item_id)
            person = RaterKind.HUMAN.name_of(verdict.rater)
            if batch is not None and person not in standing.blocked:
                workers[batch.id].add(person)
        return workers

    def _claim(self, annotator: str, workers: dict[str, set[str]], finished: set[str]) -> Batch | None:
        """Choose the annotator's main batch and hold a place in it from the moment it is shown.

        Places are held in memory for ``max_minutes_per_batch`` (default 60) so that people who
        open their link at the same moment are spread over batches; after a restart, places come
        back from the stored answers. Call with the lock held.
        """
        now = time.monotonic()
        limit = 60 * (self.spec.max_minutes_per_batch or 60)
        self._claims = {person: (batch, since) for person, (batch, since) in self._claims.items()
                        if now - since < limit}
        for person, (batch, _) in self._claims.items():
            workers.setdefault(batch, set()).add(person)
        chosen = choose_batch(annotator, self.batches, workers, finished,
                              per_batch=self.spec.annotators_per_batch)
        if chosen is not None and self._claims.get(annotator, ("", 0.0))[0] != chosen.id:
            self._claims[annotator] = (chosen.id, now)
        return chosen

    # -- answering ------------------------------------------------------------------------------

    def shown(self, annotator: str, task: Task) -> None:
        """Note, on the server's clock, when a task was first shown (time on task starts here)."""
        with self._lock:
            self._shown.setdefault((annotator, task_key(annotator, task)), time.monotonic())

    def elapsed(self, annotator: str, task: Task) -> float | None:
        """Seconds since the task was first shown, capped at the batch's time limit."""
        with self._lock:
            start = self._shown.pop((annotator, task_key(annotator, task)), None)
        limit = 60 * (self.spec.max_minutes_per_batch or 60)
        return None if start is None else min(time.monotonic() - start, limit)

    def submit(self, annotator: str, task: Task, submission: Submission) -> Verdict:
        """Validate and store one answer; a repeated submission of the same task is ignored.

        Raises BatchFull when the annotator's first answer would put one person too many on a
        main batch (two people were offered its last place at once). A gold answer that breaks
        the attention rule blocks the annotator (``attention.action: block``).
        """
        verdict = to_verdict(task, self.criteria[task.criterion], annotator, submission,
                             max_note_chars=self.spec.max_note_chars)
        key = task_key(annotator, task)
        self._snapshot()  # take in answers written by another process
        with self._lock:
            if self._batch(task.batch).kind == "main":
                workers = self._workers()[task.batch]
                if annotator not in workers and len(workers) >= self.spec.annotators_per_batch:
                    raise BatchFull(f"{task.batch} already has {len(workers)} annotators")
            self.store.add(self.run_id, key, verdict)
            if key not in self._cached_keys:
                self._cached.append(verdict)
                self._cached_keys.add(key)
        self._check_gold(annotator, task)
        return verdict

    def revise(self, annotator: str, index: int, submission: Submission) -> Verdict:
        """Change an earlier answer of the current batch; the first answer and every change are kept."""
        work = self.work(annotator)
        tasks = self.tasks(work.batch) if work.batch is not None else []
        if not 0 <= index < len(tasks) or task_key(annotator, tasks[index]) not in self._snapshot()[1]:
            raise CampaignError(self.directory, "only answered tasks of the current batch can be changed")
        task = tasks[index]
        verdict = to_verdict(task, self.criteria[task.criterion], annotator, submission,
                             max_note_chars=self.spec.max_note_chars)
        key = task_key(annotator, task)
        with self._lock:
            number = sum(1 for e in self._new_events() if e.kind == "revision" and e.key.startswith(key))
            self._add_event("revision", annotator, f"{key}:{number + 1}",
                            {"verdict": verdict.model_dump(mode="json")})
        self._check_gold(annotator, task)
        return verdict

    def _check_gold(self, annotator: str, task: Task) -> None:
        rule = self.spec.attention
        if task.candidate.item_id not in self._batch(task.batch).gold or rule.action != "block":
            return
        failed = gold_failures(annotator, self.answers(), self.owner, self.criteria)
        if len(failed) > rule.max_failures:
            self.block(annotator, f"failed {len(failed)} attention check(s)")

    def gold_failures(self, annotator: str) -> list[tuple[str, str]]:
        return gold_failures(annotator, self.answers(), self.owner, self.criteria)

    # -- results --------------------------------------------------------------------------------

    def status(self, *, everything: bool = False) -> CampaignStatus:
        """Progress, agreement, time, flags and notes per batch and per annotator."""
        self.decide_pending()
        answers = self.answers()
        standing = self.standing()
        kept = answers if everything else counted(answers, self.owner, self.spec, standing)
        failures = {p: len(gold_failures(p, answers, self.owner, self.criteria)) for p in standing.invited}
        return campaign_status(self.spec, self.batches, list(self.criteria), kept, answers, standing,
                               failures, self.chosen)

    def results(self, *, everything: bool = False) -> tuple[list[SystemResult], list[OptionCount]]:
        """Per system and criterion: majority and all-votes percentages; negative answers' options.

        Main batches only (qualification answers are a trial; gold items are checks). A pairwise
        campaign has none of these: see :meth:`pair_results`.
        """
        if self.spec.pairwise:
            return [], []
        main = self._main_answers(everything)
        return system_results(main, self.criteria), option_breakdown(main, self.criteria)

    def pair_results(self, *, everything: bool = False, n_resamples: int = 1000,
                     seed: int = 0) -> list[PairResults]:
        """A pairwise campaign's results per criterion: win rates by majority and by all votes,
        Bradley–Terry strengths and how often each person chose the response shown first."""
        if not self.spec.pairwise:
            return []
        return pair_results(self._main_answers(everything), list(self.criteria),
                            n_resamples=n_resamples, seed=seed)

    def _main_answers(self, everything: bool) -> list[Verdict]:
        return [v for v in self.verdicts(everything=everything)
                if self.owner.get(v.item_id) is not None and self.owner[v.item_id].kind == "main"
                and v.item_id not in self.owner[v.item_id].gold]

    def agreement(self) -> list[BatchAgreement]:
        """Live agreement for every batch that has answers that count."""
        return [row.agreement for row in self.status().batches if row.agreement is not None]

    def _batch(self, batch_id: str) -> Batch:
        return next(batch for batch in self.batches if batch.id == batch_id)
