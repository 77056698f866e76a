"""A campaign's people: who holds a link, who arrives through the study link, who is blocked or
decided, how each one leaves, and their questionnaire answers (a part of :class:`Campaign`)."""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from convoscope.campaigns._access import LEFT_BECAUSE, Standing, blocked_from, left_from
from convoscope.campaigns._events import Event, EventLog
from convoscope.campaigns._lifecycle import Admission, Exit, State, exit_for
from convoscope.campaigns._monitor import QualificationResult
from convoscope.campaigns._people import (
    ANNOTATORS_FILE,
    EXTERNAL_ID,
    Annotator,
    join,
    read_annotators,
    write_annotators,
)
from convoscope.campaigns._questionnaire import (
    Part,
    Problem,
    Question,
    check_answers,
    load_questions,
    screened_by,
)
from convoscope.campaigns._spec import SPEC_FILE, CampaignError, CampaignSpec, field_line
from convoscope.errors import ConfigError


class People:
    """People, admission and ways out; mixed into :class:`Campaign`, which sets these attributes."""

    directory: Path
    spec: CampaignSpec
    events: EventLog
    _lock: threading.RLock
    _people_key: tuple[int, int, int] | None
    _people: list[Annotator]
    _events: list[Event]
    _events_read: float
    _events_written: int
    _events_refreshing: bool
    _standing: tuple[list[Event], tuple[int, int, int] | None, Standing] | None
    _questions: dict[str, list[Question]]

    def _load_people(self) -> None:
        self._people_key, self._people, self._standing = None, [], None
        self._questions = {part: load_questions(self.directory / name) for part, name in
                           self.spec.questionnaires.model_dump().items() if name}
        self._check_references()

    def _check_references(self) -> None:
        """Every reference annotator must be an annotator of the campaign (else nobody could ever
        be decided: the study would never open)."""
        if not self.spec.qualification.enabled:
            return
        known = {person.id for person in self.people()}
        for index, name in enumerate(self.spec.qualification.reference_annotators):
            if name not in known:
                loc = ("qualification", "reference_annotators", index)
                hint = f"annotators.json has {len(known)}" if known else "nobody is invited yet"
                raise CampaignError(self.directory / SPEC_FILE, f"reference annotator {name!r} is not an "
                                    f"annotator of this campaign ({hint}); invite the internal annotators "
                                    "first (`convoscope campaign invite`) and name their ids here",
                                    line=field_line(self.directory, loc), field=".".join(map(str, loc)))

    # -- who -------------------------------------------------------------------------------------

    def people(self) -> list[Annotator]:
        """Everyone in annotators.json (read again only when the file changed)."""
        return list(self._people_snapshot()[1])

    def _people_snapshot(self) -> tuple[tuple[int, int, int] | None, list[Annotator]]:
        path = self.directory / ANNOTATORS_FILE
        try:
            found = path.stat()
            key: tuple[int, int, int] | None = (found.st_mtime_ns, found.st_size, found.st_ino)
        except FileNotFoundError:
            key = None
        with self._lock:
            if key != self._people_key:
                self._people, self._people_key = read_annotators(self.directory), key
            return self._people_key, self._people

    def person(self, annotator: str) -> Annotator | None:
        return next((person for person in self.people() if person.id == annotator), None)

    def annotator(self, token: str) -> Annotator | None:
        """The annotator holding this token (constant-time comparison), or None."""
        found = None
        wanted = token.encode("utf-8", errors="surrogateescape")
        for annotator in self.people():
            if hmac.compare_digest(annotator.token.encode(), wanted):
                found = annotator
        return found

    def paid(self, annotator: str) -> bool:
        """A platform participant: the campaign runs on a platform and this person came with its id
        (through the study link, or on a private link), and is no reference annotator."""
        if self.spec.platform.kind == "none" or annotator in self.spec.qualification.reference_annotators:
            return False
        person = self.person(annotator)
        return person is not None and person.external_id is not None

    def join(self, external_id: str, session: dict[str, str]) -> Admission:
        """The study link: the participant found again by platform id, or added when the study is
        open and has room; otherwise nobody is added and the refusal says why."""
        with self._lock:
            known = next((p for p in self.people() if p.external_id == external_id), None)
            if known is None:
                refused = self._refusal()
                if refused is not None:
                    return Admission(refused=refused)
            person = join(self.directory, external_id, session, platform=self.spec.platform.kind)
            if known is None:
                self._hold(person.id)
            return Admission(annotator=person)

    if TYPE_CHECKING:  # provided by Assignment and Campaign
        def _refusal(self) -> Literal["full", "not_open"] | None: ...

        def _hold(self, annotator: str) -> None: ...

        def worked(self, annotator: str) -> bool: ...

        def tasks_done(self, annotator: str) -> int: ...

        def work(self, annotator: str) -> Any: ...

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

    # -- facts -------------------------------------------------------------------------------------

    def block(self, annotator: str, reason: str, *, unblock: bool = False) -> None:
        """Block an annotator (their answers leave the results, kept in the store), or lift it."""
        self._known(annotator)
        self._add_event("unblock" if unblock else "block", annotator, str(time.time_ns()),
                        {"reason": reason})

    def mark(self, annotator: str, kind: Literal["consent", "declined", "instructions"]) -> None:
        """Record that the annotator accepted (or declined) the consent text / read the instructions."""
        self._add_event(kind, annotator, kind, {})

    def has(self, annotator: str, kind: str) -> bool:
        return any(e.kind == kind and e.annotator == annotator for e in self._new_events())

    def mark_returned(self, annotator: str, status: str, *, by_hand: bool = False) -> None:
        """The person left (``status``: ``RETURNED``, ``TIMED-OUT``, ``REJECTED`` as the platform
        says, or ``WITHDRAWN``): the place is free and their answers stop counting (kept in the
        store). The platform's report is stored once per status; a researcher's note each time."""
        if status not in LEFT_BECAUSE:
            raise ConfigError(f"unknown way of leaving {status!r}: one of {', '.join(LEFT_BECAUSE)}")
        self._known(annotator)
        key = f"{status}:{time.time_ns()}" if by_hand else status
        self._add_event("returned", annotator, key, {"status": status})

    def mark_rejoined(self, annotator: str) -> None:
        """Undo :meth:`mark_returned` (recorded by mistake): the answers count again."""
        self._known(annotator)
        self._add_event("rejoined", annotator, str(time.time_ns()), {})

    def _known(self, annotator: str) -> None:
        if annotator not in {person.id for person in read_annotators(self.directory)}:
            raise CampaignError(self.directory / ANNOTATORS_FILE, f"no annotator {annotator!r}")

    def returned(self) -> frozenset[str]:
        """Everyone who left: returned, timed out, rejected, withdrew or declined consent (see
        :func:`~convoscope.campaigns._access.left_from`)."""
        return frozenset(self.standing().left)

    def declined(self, annotator: str) -> bool:
        """The person refused the consent text (and never accepted it): their place is free."""
        return (bool(self.spec.consent) and self.has(annotator, "declined")
                and not self.has(annotator, "consent"))

    def standing(self) -> Standing:
        """Who is invited, blocked, decided and a reference, now (computed again only when the
        events or annotators.json changed)."""
        events, (key, people) = self._new_events(), self._people_snapshot()
        cached = self._standing
        if cached is not None and cached[0] is events and cached[1] == key:
            return cached[2]
        decisions = {e.annotator: QualificationResult.model_validate(e.data)
                     for e in events if e.kind == "decision"}
        standing = Standing(invited=frozenset(p.id for p in people), blocked=blocked_from(events),
                            left=left_from(events), decisions=decisions,
                            references=frozenset(self.spec.qualification.reference_annotators))
        with self._lock:
            self._standing = (events, key, standing)
        return standing

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
        id seen" could miss a row committed late. One thread reads while the others go on with
        the last read: thirty requests arriving as the quarter ends no longer send thirty queries
        (on PostgreSQL, under load, that herd was a sixth of the server's time).
        """
        now = time.monotonic()
        with self._lock:
            if 0 <= now - self._events_read < 0.25:
                return self._events
            if self._events_refreshing and self._events_read >= 0:  # one reader at a time: the others
                return self._events  # take the last read (it misses no write of this process)
            self._events_refreshing = True
            written = self._events_written
        try:
            fresh = self.events.all()
        finally:
            with self._lock:
                self._events_refreshing = False
        with self._lock:
            self._events = fresh
            if written == self._events_written:  # no write of ours raced this read: trust it a while
                self._events_read = now
            return fresh

    # -- ways out ----------------------------------------------------------------------------------

    def exit(self, annotator: str, state: State | Any) -> Exit:
        """How this person leaves now (``state``: a :class:`Work` or its state)."""
        state = getattr(state, "state", state)
        return exit_for(state, paid=self.paid(annotator), tasks=self.tasks_done(annotator),
                        platform=self.spec.platform)

    def leave(self, annotator: str, state: State | Any) -> Exit:
        """:meth:`exit`, and keep what the person was shown (the ledger reads it): the first way
        out shown for each outcome is stored once."""
        shown = self.exit(annotator, state)
        if self.exits().get(annotator) != shown:  # a page shown again writes nothing
            self._add_event("exit", annotator, shown.outcome, shown.model_dump(mode="json"))
        return shown

    def exits(self) -> dict[str, Exit]:
        """Each person's last way out shown (by the time it was stored)."""
        return {e.annotator: Exit.model_validate(e.data) for e in self._new_events() if e.kind == "exit"}

    # -- questionnaires ----------------------------------------------------------------------------

    def questions(self, part: Part) -> list[Question]:
        """The questions asked ``before`` the first task or ``after`` the assigned work (may be none)."""
        return list(self._questions.get(part, []))

    def questionnaire(self, annotator: str, part: Part) -> dict[str, Any] | None:
        """The person's stored answers to one part, or None when they have not answered it."""
        found = next((e for e in self._new_events() if e.kind == "questionnaire" and e.annotator == annotator
                      and e.key == part), None)
        return dict(found.data["answers"]) if found is not None else None

    def answer_questions(self, annotator: str, part: Part,
                         given: Mapping[str, str | Sequence[str]]) -> dict[str, Problem]:
        """Check and store a person's answers to one part (once); returns what is wrong, if anything."""
        answers, problems = check_answers(self.questions(part), given, max_chars=self.spec.max_note_chars)
        if not problems:
            self._add_event("questionnaire", annotator, part, {"answers": answers})
        return problems

    def pending_questions(self, annotator: str, state: State | None = None) -> Part | None:
        """The questionnaire part to show this person now, if any: ``before`` until answered;
        ``after`` once the assigned work is done (``state``: the person's work state, else asked)."""
        reference = annotator in self.spec.qualification.reference_annotators
        if (self._questions.get("before") and not reference
                and self.questionnaire(annotator, "before") is None):
            return "before"  # references skip it: an eligibility "no" would keep the study shut
        if state is None and self._questions.get("after"):
            state = self.work(annotator).state
        if (state == "done" and self._questions.get("after")
                and self.questionnaire(annotator, "after") is None):
            return "after"
        return None

    def screened_by_questions(self, annotator: str) -> str | None:
        """The question whose answer screened this person out (``accept``), or None (never a reference)."""
        if annotator in self.spec.qualification.reference_annotators:
            return None
        answers = self.questionnaire(annotator, "before")
        return screened_by(self.questions("before"), answers) if answers is not None else None

    def questionnaire_rows(self) -> list[dict[str, Any]]:
        """Every stored questionnaire answer: one row per person, part and question."""
        rows: list[dict[str, Any]] = []
        for event in self._new_events():
            if event.kind == "questionnaire":
                rows.extend({"annotator": event.annotator, "part": event.key, "question": question,
                             "answer": answer, "answered_at": round(event.created_at, 3)}
                            for question, answer in event.data["answers"].items())
        return rows
