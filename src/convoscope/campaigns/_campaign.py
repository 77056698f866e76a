"""A running campaign: the spec, its batches, its people and the store of Verdicts and events."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from convoscope.campaigns._access import Standing, counted, gold_failures
from convoscope.campaigns._answers import Submission, answer_key, task_key, to_verdict
from convoscope.campaigns._assign import Assignment, Work
from convoscope.campaigns._events import Event, EventLog
from convoscope.campaigns._monitor import BatchAgreement
from convoscope.campaigns._pair_results import PairResults, pair_results, side_biased
from convoscope.campaigns._persons import People
from convoscope.campaigns._plan import Batch, Task, make_batches
from convoscope.campaigns._results import OptionCount, SystemResult, option_breakdown, system_results
from convoscope.campaigns._spec import CampaignError, CampaignSpec, load_campaign
from convoscope.campaigns._status import CampaignStatus, campaign_status
from convoscope.campaigns._writer import AnswerWriter
from convoscope.criteria import Criterion
from convoscope.errors import ConvoscopeError
from convoscope.items import Item
from convoscope.judges import RaterKind, Verdict
from convoscope.store import Store

__all__ = ["BatchFull", "Campaign", "Work"]


class BatchFull(ConvoscopeError, ValueError):
    """Another annotator took the last place in this batch first; the annotator gets another one."""


class Campaign(Assignment, People):
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
        self._lock = threading.RLock()  # one server's threads: batch places, annotators.json, caches
        self._load_people()  # questionnaires, and every reference annotator must exist
        self.store = store
        self.run_id = f"campaign:{self.spec.name}"
        self.store.start_run(self.run_id, self.spec.model_dump(mode="json"))
        self.events = EventLog(store, self.run_id)
        self._writer = AnswerWriter(store, self.run_id)
        self._claims: dict[str, tuple[str, float]] = {}
        self._holds: dict[str, float] = {}
        self._shown: dict[tuple[str, str], float] = {}  # (annotator, task key) -> first shown (server)
        self._tasks: dict[str, list[Task]] = {}
        self._workers_memo = None
        self.owner: dict[str, Batch] = {c.item_id: b for b in self.batches for x in b.contexts
                                        for c in x.candidates}
        self._cached: list[Verdict] = []
        self._cached_keys: set[str] = set()
        self._cached_read = -1.0  # when the store was last read (monotonic); -1 = read again
        self._writing: set[str] = set()  # keys being committed by this process now
        self._cached_refreshing = self._events_refreshing = False  # one thread reads the store at a time
        self._events: list[Event] = []
        self._events_read = -1.0
        self._events_written = 0  # this process's event writes so far (a read started before one is stale)
        self.restore_holds()  # places held before a restart are held again

    # -- reading --------------------------------------------------------------------------------

    def _snapshot(self) -> tuple[list[Verdict], set[str]]:
        """The campaign's first answers and task keys.

        This process's own answers are added as they are committed; the store is asked at most
        every quarter of a second which keys it holds, and only answers this process has not seen
        (written by ``campaign import``) are then read. Reading the key column on every request,
        and every answer again whenever one was in flight, was what made PostgreSQL slower than
        SQLite under load.
        """
        now = time.monotonic()
        with self._lock:
            if 0 <= now - self._cached_read < 0.25 or (self._cached_refreshing and self._cached_read >= 0):
                return self._cached, self._cached_keys  # fresh enough, or another thread is reading
            self._cached_refreshing = True
            writing = set(self._writing)
        try:
            self._take_in(self.store.done_keys(self.run_id), writing)
        finally:
            with self._lock:
                self._cached_refreshing = False
        with self._lock:
            self._cached_read = now
            return self._cached, self._cached_keys

    def _take_in(self, done: set[str], writing: set[str]) -> None:
        """Add the stored answers this process has not seen (all of them, the first time)."""
        with self._lock:
            unknown = done - self._cached_keys - writing
            empty = not self._cached_keys
        if not unknown:
            return
        found = (self.store.verdicts(self.run_id) if empty
                 else list(self.store.verdicts_by_key(sorted(unknown), scope=self.run_id).values()))
        with self._lock:
            fresh = [v for v in found if self._key(v) not in self._cached_keys]
            self._cached = [*self._cached, *fresh]
            self._cached_keys = self._cached_keys | {self._key(v) for v in fresh}

    def _key(self, verdict: Verdict) -> str:
        batch = self.owner.get(verdict.item_id)
        return answer_key(RaterKind.HUMAN.name_of(verdict.rater), batch.id if batch else "",
                          verdict.item_id, verdict.criterion)

    def worked(self, annotator: str) -> bool:
        """Whether the person has given any answer (someone who worked is never sent away without
        a code)."""
        rater = f"human:{annotator}"
        return any(verdict.rater == rater for verdict in self._snapshot()[0])

    def tasks_done(self, annotator: str) -> int:
        """How many answers the person has given (gold checks included: they are work too)."""
        rater = f"human:{annotator}"
        return sum(1 for verdict in self._snapshot()[0] if verdict.rater == rater)

    def answered_keys(self) -> set[str]:
        """The task keys of every first answer stored."""
        return set(self._snapshot()[1])

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
        main = self._batch(task.batch).kind == "main"
        workers = self._workers()[task.batch] if main else set()
        if main and annotator not in workers:  # a person's first answer here: the place is checked
            with self._lock:  # and taken under the lock (once per person and batch)
                workers = self._workers()[task.batch]
                if annotator not in workers and len(workers) >= self.spec.annotators_per_batch:
                    raise BatchFull(f"{task.batch} already has {len(workers)} annotators")
                self._store(key, verdict)
        else:  # every other answer is written without holding up the other annotators
            self._store(key, verdict)
        self._check_gold(annotator, task)
        return verdict

    def _store(self, key: str, verdict: Verdict) -> None:
        self.add_answers([(key, verdict)])

    def add_answers(self, rows: list[tuple[str, Verdict]]) -> None:
        """Store checked answers under their task keys (committed before this returns, grouped
        with answers arriving at the same time); a key already stored keeps its first answer.
        They are seen by this process at once."""
        keys = {key for key, _ in rows}
        with self._lock:
            self._writing |= keys  # in flight: a poll meanwhile must not take them for strangers'
        try:
            self._writer.write(rows)
            with self._lock:  # copy on write: snapshots handed out earlier never change under a reader
                new = [(key, verdict) for key, verdict in dict(rows).items() if key not in self._cached_keys]
                self._cached = [*self._cached, *(verdict for _, verdict in new)]
                self._cached_keys = self._cached_keys | {key for key, _ in new}
        finally:
            with self._lock:
                self._writing -= keys

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
        if everything:
            checks = [v for v in answers if self._is_check(v)]
            kept = [v for v in answers if not self._is_check(v)]
        else:
            kept = counted(answers, self.owner, self.spec, standing)
            checks = counted(answers, self.owner, self.spec, standing, checks=True)
        failures = {p: len(gold_failures(p, answers, self.owner, self.criteria)) for p in standing.invited}
        return campaign_status(self.spec, self.batches, list(self.criteria), kept, answers, standing,
                               failures, self.chosen, checks=checks, left=self._left_why(standing))

    def _left_why(self, standing: Standing) -> dict[str, str]:
        """People who left (returned, timed out, ...) or whom an eligibility question screened out
        (blocks and decisions say the rest)."""
        screened = {person: f"screened out (eligibility question {question!r})" for person in standing.invited
                    if (question := self.screened_by_questions(person)) is not None}
        return {**screened, **standing.left}

    def results(self, *, everything: bool = False) -> tuple[list[SystemResult], list[OptionCount]]:
        """Per system and criterion: majority and all-votes percentages; negative answers' options.

        Main batches only (qualification answers are a trial; gold items are checks). A pairwise
        campaign has none of these: see :meth:`pair_results`.
        """
        if self.spec.pairwise:
            return [], []
        main = self._main_answers(everything)
        return system_results(main, self.criteria), option_breakdown(main, self.criteria)

    def pair_results(self, *, everything: bool = False, n_resamples: int = 1000, seed: int = 0,
                     exclude_side_biased: bool | None = None) -> list[PairResults]:
        """A pairwise campaign's results per criterion: win rates by majority and by all votes,
        Bradley–Terry strengths and how often each person chose the response shown first.

        ``exclude_side_biased`` (default: the spec's) leaves out the answers of people whose
        choice of the response shown first departs from one half (see :func:`side_biased`)."""
        if not self.spec.pairwise:
            return []
        exclude = self.spec.exclude_side_biased if exclude_side_biased is None else exclude_side_biased
        return pair_results(self._main_answers(everything), list(self.criteria), n_resamples=n_resamples,
                            seed=seed, exclude_side_biased=exclude)

    def side_biased(self, *, everything: bool = False) -> dict[str, float]:
        """People whose side preference is significant (Holm-adjusted p < 0.05), with that p."""
        return side_biased(self._main_answers(everything)) if self.spec.pairwise else {}

    def _main_answers(self, everything: bool) -> list[Verdict]:
        return [v for v in self.verdicts(everything=everything)
                if self.owner.get(v.item_id) is not None and self.owner[v.item_id].kind == "main"
                and v.item_id not in self.owner[v.item_id].gold]

    def _is_check(self, verdict: Verdict) -> bool:
        batch = self.owner.get(verdict.item_id)
        return batch is not None and verdict.item_id in batch.gold

    def agreement(self) -> list[BatchAgreement]:
        """Live agreement for every batch that has answers that count."""
        return [row.agreement for row in self.status().batches if row.agreement is not None]

    def _batch(self, batch_id: str) -> Batch:
        return next(batch for batch in self.batches if batch.id == batch_id)
