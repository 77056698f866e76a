"""The people of a campaign: private links in annotators.json (readable by its owner only).

An annotator is either invited (``campaign invite`` prints one private link each) or arrives
through the campaign's join link from a crowdsourcing platform, which names them with its own
participant id (Prolific's ``PROLIFIC_PID``, MTurk's ``workerId``). Platform ids and session
parameters stay in annotators.json: verdicts, exports, the status and the report use the
campaign's own ids (``a001``, ``p001``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from convoscope.errors import ConvoscopeError

ANNOTATORS_FILE = "annotators.json"
EXTERNAL_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
# The parameters each platform appends to the study link. The first one names the participant.
PLATFORM_PARAMETERS = {
    "prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
    "mturk": ("workerId", "assignmentId", "hitId", "turkSubmitTo"),
}
# Each platform's own participant id: Prolific's are 24 hexadecimal digits; anything else is a
# made-up id (a made-up id takes a place in the study like a real one).
PLATFORM_IDS = {"prolific": (re.compile(r"^[0-9a-fA-F]{24}$"), "24 hexadecimal digits")}
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")


class Annotator(BaseModel):
    """A person of the campaign; ``external_id`` and ``session`` never reach reports."""

    model_config = ConfigDict(frozen=True)

    id: str
    token: str
    external_id: str | None = None
    session: dict[str, str] = {}
    platform: str | None = None  # the platform whose study link added them (None: invited)


def invite(directory: str | Path, n: int, *, prefix: str = "a") -> list[Annotator]:
    """Add ``n`` annotators with fresh private tokens to ``annotators.json``; return the new ones."""
    known = read_annotators(directory)
    start = sum(1 for person in known if person.id.startswith(prefix)) + 1
    taken = {person.id for person in known}
    added: list[Annotator] = []
    number = start
    while len(added) < n:
        name = f"{prefix}{number:03d}"
        if name not in taken:
            added.append(Annotator(id=name, token=secrets.token_urlsafe(18)))
        number += 1
    write_annotators(directory, [*known, *added])
    return added


def write_annotators(directory: str | Path, people: list[Annotator]) -> None:
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


class PlatformError(ConvoscopeError, ValueError):
    """A platform link that cannot be used (missing or malformed participant id)."""


def platform_session(kind: str, query: Mapping[str, str], *,
                     strict: bool = True) -> tuple[str, dict[str, str]]:
    """The participant id and the session parameters a platform put on the join link.

    ``strict``: the id must have the platform's own format (Prolific: 24 hexadecimal digits)."""
    names = PLATFORM_PARAMETERS.get(kind)
    if names is None:
        raise PlatformError("this campaign takes no platform link; use your private link")
    participant = query.get(names[0], "")
    if not EXTERNAL_ID.match(participant):
        raise PlatformError(f"the link needs {names[0]} (letters, digits, '_' and '-', at most 64)")
    pattern, described = PLATFORM_IDS.get(kind, (EXTERNAL_ID, ""))
    if strict and not pattern.match(participant):
        raise PlatformError(f"{names[0]} is not a {kind.capitalize()} id ({described})")
    session = {name: query[name] for name in names[1:] if name in query}
    for name, value in session.items():
        if len(value) > 512 or (name != "turkSubmitTo" and not EXTERNAL_ID.match(value)):
            raise PlatformError(f"{name} is not a valid value")
    submit_to = session.get("turkSubmitTo")
    if submit_to is not None and submit_to.rstrip("/") not in MTURK_HOSTS:
        raise PlatformError("turkSubmitTo must be MTurk's own address")
    return participant, session


def join(directory: str | Path, external_id: str, session: dict[str, str], *, platform: str) -> Annotator:
    """The annotator for a platform participant: found again by id, or added with prefix ``p``.

    Call with the campaign's lock held (it rewrites annotators.json).
    """
    people = read_annotators(directory)
    found = next((person for person in people if person.external_id == external_id), None)
    if found is not None:
        if session and session != found.session:
            found = found.model_copy(update={"session": {**found.session, **session}})
            write_annotators(directory, [found if p.id == found.id else p for p in people])
        return found
    number = sum(1 for person in people if person.id.startswith("p")) + 1
    added = Annotator(id=f"p{number:03d}", token=secrets.token_urlsafe(18), external_id=external_id,
                      session=session, platform=platform)
    write_annotators(directory, [*people, added])
    return added
