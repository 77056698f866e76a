"""A running campaign: the spec, its batches, its annotators' tokens and the store of Verdicts."""

from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._answers import Submission, answer_key, next_task, task_key, to_verdict
from convoscope.campaigns._monitor import BatchAgreement, QualificationResult, qualify
from convoscope.campaigns._plan import Batch, Task, choose_batch, make_batches
from convoscope.campaigns._results import OptionCount, SystemResult, option_breakdown, system_results
from convoscope.campaigns._spec import CampaignError, CampaignSpec, load_campaign
from convoscope.campaigns._status import CampaignStatus, campaign_status
from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges import Verdict
from convoscope.store import Store

ANNOTATORS_FILE = "annotators.json"
_EXTERNAL_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


class Annotator(BaseModel):
    """A person invited to the campaign; ``external_id`` (e.g. Prolific's) never reaches reports."""

    model_config = ConfigDict(frozen=True)

    id: str
    token: str
    external_id: str | None = None


class Work(BaseModel):
    """Where an annotator stands: the batch, progress through it and the next task (None = done)."""

    model_config = ConfigDict(frozen=True)

    batch: Batch | None
    done: int
    total: int
    task: Task | None
    qualification: QualificationResult | None = None


class BatchFull(ValueError):
    """Another annotator took the last place in this batch first; the annotator gets another one."""


def invite(directory: str | Path, n: int, *, prefix: str = "a") -> list[Annotator]:
    """Add ``n`` annotators with fresh private tokens to ``annotators.json``; return the new ones."""
    known = read_annotators(directory)
    start = len(known) + 1
    added = [Annotator(id=f"{prefix}{start + index:03d}", token=secrets.token_urlsafe(18))
             for index in range(n)]
    _write_annotators(directory, [*known, *added])
    return added


def _write_annotators(directory: str | Path, people: list[Annotator]) -> None:
    path = Path(directory) / ANNOTATORS_FILE
    temporary = path.with_suffix(".json.tmp")
    # The file holds every private link: readable by its owner only.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(json.dumps([a.model_dump() for a in people], indent=2))
    os.replace(temporary, path)  # atomic: a reader never sees half a file


def read_annotators(directory: str | Path) -> list[Annotator]:
    path = Path(directory) / ANNOTATORS_FILE
    if not path.exists():
        return []
    return [Annotator.model_validate(entry) for entry in json.loads(path.read_text(encoding="utf-8"))]


class Campaign:
    """The campaign's behaviour over one store; the web app and the CLI call only this."""

    def __init__(self, directory: str | Path, items: Sequence[Item], store: Store):
        self.directory = Path(directory)
        self.spec: CampaignSpec = load_campaign(directory)
        self.criteria: dict[str, Criterion] = {c.name: c for c in self.spec.load_criteria(self.directory)}
        self.batches = make_batches(items, self.spec)
        if not any(batch.kind == "main" for batch in self.batches):
            contexts = sum(len(batch.contexts) for batch in self.batches)
            raise CampaignError(self.directory / "campaign.yaml", f"the items give {contexts} contexts and "
                                f"the qualification batch takes {self.spec.qualification.contexts}: nothing "
                                "is left for main batches; add items or lower qualification.contexts",
                                field="qualification.contexts")
        self.store = store
        self.run_id = f"campaign:{self.spec.name}"
        self.store.start_run(self.run_id, self.spec.model_dump(mode="json"))
        self._lock = threading.Lock()  # one server's threads: batch places and annotators.json
        self._claims: dict[str, tuple[str, float]] = {}  # annotator -> (batch shown, since when)
        self._tasks: dict[str, list[Task]] = {}
        self._owner = {item: batch.id for batch in self.batches for item in _ids(batch)}
        self._cached: list[Verdict] = []
        self._cached_keys: set[str] = set()

    def annotator(self, token: str) -> Annotator | None:
        """The annotator holding this token (constant-time comparison), or None."""
        found = None
        for annotator in read_annotators(self.directory):
            if hmac.compare_digest(annotator.token.encode(), token.encode()):
                found = annotator
        return found

    def tasks(self, batch: Batch) -> list[Task]:
        """The batch's tasks in the order they are asked (computed once per batch)."""
        if batch.id not in self._tasks:
            self._tasks[batch.id] = batch.tasks(list(self.criteria))
        return self._tasks[batch.id]

    def _snapshot(self) -> tuple[list[Verdict], set[str]]:
        """The campaign's verdicts and task keys, read again only when the store has changed.

        Verdicts are only ever added, so the set of task keys (one cheap column) tells whether the
        list read last time is still the whole truth; answers written by another process are seen.
        """
        done = self.store.done_keys(self.run_id)
        with self._lock:
            # A key read here but not cached was written elsewhere (another process): read again.
            # Cached keys not in ``done`` are this process's answers written since the read above.
            if not done <= self._cached_keys:
                self._cached = self.store.verdicts(self.run_id)
                self._cached_keys = {self._key(verdict) for verdict in self._cached}
            return list(self._cached), set(self._cached_keys)

    def _key(self, verdict: Verdict) -> str:
        return answer_key(verdict.rater.removeprefix("human:"), self._owner.get(verdict.item_id, ""),
                          verdict.item_id, verdict.criterion)

    def work(self, annotator: str) -> Work:
        """The annotator's current batch and next task: qualification first, then main batches."""
        verdicts, done = self._snapshot()
        qualification = next((b for b in self.batches if b.kind == "qualification"), None)
        result = None
        if qualification is not None:
            count, task = next_task(self.tasks(qualification), annotator, done)
            if task is not None:
                return Work(batch=qualification, done=count, total=len(self.tasks(qualification)), task=task)
            settings = self.spec.qualification
            trial_ids = _ids(qualification)
            trial = [v for v in verdicts if v.item_id in trial_ids]  # qualification answers only
            result = qualify(annotator, trial, settings.reference_annotators,
                             threshold=settings.kappa_threshold)
            if not result.qualified:
                return Work(batch=None, done=0, total=0, task=None, qualification=result)
        return self._main_work(annotator, verdicts, done, result)

    def _main_work(self, annotator: str, verdicts: list[Verdict], done: set[str],
                   result: QualificationResult | None) -> Work:
        workers = self._workers(verdicts)
        finished = {batch.id for batch in self.batches if annotator in workers[batch.id]
                    and next_task(self.tasks(batch), annotator, done)[1] is None}
        with self._lock:
            chosen = self._claim(annotator, workers, finished)
        if chosen is None:
            return Work(batch=None, done=0, total=0, task=None, qualification=result)
        count, task = next_task(self.tasks(chosen), annotator, done)
        return Work(batch=chosen, done=count, total=len(self.tasks(chosen)), task=task, qualification=result)

    def _workers(self, verdicts: Sequence[Verdict]) -> dict[str, set[str]]:
        """Batch id -> the annotators who answered in it."""
        workers: dict[str, set[str]] = {batch.id: set() for batch in self.batches}
        for verdict in verdicts:
            batch = self._owner.get(verdict.item_id)
            if batch is not None:
                workers[batch].add(verdict.rater.removeprefix("human:"))
        return workers

    def _claim(self, annotator: str, workers: dict[str, set[str]], finished: set[str]) -> Batch | None:
        """Choose the annotator's main batch and hold a place in it from the moment it is shown.

        Places are held in memory for ``max_minutes_per_batch`` (default 60) so that people who open
        their link at the same moment are spread over batches instead of all being shown the same
        one; after a restart, places come back from the stored answers. Call with the lock held.
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

    def submit(self, annotator: str, task: Task, submission: Submission) -> Verdict:
        """Validate and store one answer; a repeated submission of the same task is ignored.

        Raises BatchFull when the annotator's first answer would put one person too many on a
        main batch (two people were offered its last place at once); the web app then shows the
        annotator another batch. The check holds within one server process.
        """
        verdict = to_verdict(task, self.criteria[task.criterion], annotator, submission)
        key = task_key(annotator, task)
        self._snapshot()  # take in answers written by another process
        with self._lock:
            if self._batch(task.batch).kind == "main":
                workers = self._workers(self._cached)[task.batch]  # fresh: in-process writes hold the lock
                if annotator not in workers and len(workers) >= self.spec.annotators_per_batch:
                    raise BatchFull(f"{task.batch} already has {len(workers)} annotators")
            self.store.add(self.run_id, key, verdict)
            if key not in self._cached_keys:  # under the lock, as every reload: no double entry
                self._cached.append(verdict)
                self._cached_keys.add(key)
        return verdict

    def record_external_id(self, annotator: str, external_id: str) -> bool:
        """Keep a crowdsourcing platform's id (e.g. ``PROLIFIC_PID``) for an annotator, once.

        Returns True when stored now. The id stays in annotators.json only: verdicts, exports, the
        status and the report use the campaign's own annotator ids.
        """
        if not _EXTERNAL_ID.match(external_id):
            raise ValueError("a platform id may hold only letters, digits, '_' and '-' (at most 64)")
        with self._lock:
            people = read_annotators(self.directory)
            found = next((p for p in people if p.id == annotator), None)
            if found is None or found.external_id == external_id:
                return False
            if found.external_id is not None:
                raise ValueError("this link is already tied to another platform id")
            _write_annotators(self.directory, [
                p.model_copy(update={"external_id": external_id}) if p.id == annotator else p
                for p in people])
            return True

    def verdicts(self) -> list[Verdict]:
        """Every human Verdict of this campaign, in the order written."""
        return self._snapshot()[0]

    def status(self) -> CampaignStatus:
        """Progress, agreement, time and flags per batch and per annotator."""
        invited = [annotator.id for annotator in read_annotators(self.directory)]
        return campaign_status(self.spec, self.batches, list(self.criteria), self.verdicts(), invited)

    def results(self) -> tuple[list[SystemResult], list[OptionCount]]:
        """Per system and criterion: majority and all-votes percentages; negative answers' options.

        The ground-truth candidates appear as the system ``reference``; qualification answers are
        left out (they are a trial, and reference annotators answer them too).
        """
        trial = {item for batch in self.batches if batch.kind == "qualification" for item in _ids(batch)}
        main = [v for v in self.verdicts() if v.item_id not in trial]
        return system_results(main, self.criteria), option_breakdown(main, self.criteria)

    def agreement(self) -> list[BatchAgreement]:
        """Live agreement for every batch that has answers."""
        return [row.agreement for row in self.status().batches if row.agreement is not None]

    def _batch(self, batch_id: str) -> Batch:
        return next(batch for batch in self.batches if batch.id == batch_id)


def _ids(batch: Batch) -> set[str]:
    return {candidate.item_id for context in batch.contexts for candidate in context.candidates}


def open_campaign(directory: str | Path, *, items: str | Path | None = None,
                  store: str | Path | None = None) -> Campaign:
    """Load the campaign in ``directory`` with its items and store (arguments override the spec)."""
    from convoscope.items import read_items

    folder = Path(directory)
    spec = load_campaign(folder)
    items_path = items or (folder / spec.items if spec.items else None)
    if items_path is None:
        raise ValueError("no items: give --items or set 'items:' in campaign.yaml")
    target = store or (spec.store if "://" in spec.store else folder / spec.store)
    return Campaign(folder, list(read_items(items_path)), Store(target))
