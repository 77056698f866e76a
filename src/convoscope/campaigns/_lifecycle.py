"""How each person leaves a campaign, as crowd platforms expect (pure functions over the state).

Prolific pays a submission by its completion code and lets a study carry several codes, each with
its own action; its in-study screening pays a small fixed screen-out reward, meant for people
screened out at the start. Work done before a screen-out is paid for what it is. So a platform
participant leaves in one of four ways:

========================  ==========================================  ==========================
situation                 what happens                                 code
========================  ==========================================  ==========================
assigned work finished    thanked, sent back to the platform          ``completion_code``
left after some tasks     told at once (failed qualification, blocked  ``partial_code`` (else
                          after tasks, no place left after the         ``screen_out_code``); the
                          qualification batch); the tasks done are     ledger gives the bonus
                          paid as a bonus (blocked: after review)      for the tasks done
screened out, no tasks    told at once (an eligibility question,      ``screen_out_code``
                          blocked before any answer)
nothing to do, no work    told at once, asked to return the study      none (a return request)
                          (study full, not open yet)
========================  ==========================================  ==========================

Reference annotators and invited staff (no platform id) are thanked and get no code.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._people import Annotator
from convoscope.campaigns._spec import Platform

# Why there is no task now. ``task``: there is one.
State = Literal["task", "not_open", "not_qualified", "blocked", "screened_out", "no_work", "done",
                "declined", "returned"]
Outcome = Literal["complete", "partial", "screen_out", "return", "thanks"]
Refusal = Literal["full", "not_open"]


class Exit(BaseModel):
    """How a person leaves: the outcome, the platform code to give (None: none) and where to send
    them (None: a page of ours; MTurk posts a form instead)."""

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    state: State
    code: str | None = None
    redirect: str | None = None
    tasks: int = 0  # answers given before leaving
    bonus: float | None = None  # what the tasks done are worth (``platform.pay_per_task``), if set


class Admission(BaseModel):
    """The study link's answer to an arrival: the participant, or why nobody was added."""

    model_config = ConfigDict(frozen=True)

    annotator: Annotator | None = None
    refused: Refusal | None = None


SCREENED: frozenset[State] = frozenset({"not_qualified", "blocked", "screened_out"})


def exit_for(state: State, *, paid: bool, tasks: int, platform: Platform) -> Exit:
    """The way out for a person in ``state``.

    ``paid``: a platform participant (not a reference annotator, not invited staff); ``tasks``:
    the answers they have given. Nobody is screened out with a code before any work, nobody who
    worked is asked to return without one, and work done before a screen-out is paid for.
    """
    if not paid:
        return Exit(outcome="thanks", state=state, tasks=tasks)
    if state == "done":
        return _coded("complete", state, platform.completion_code, platform, tasks)
    if tasks and (state in SCREENED or state == "no_work"):
        return _coded("partial", state, platform.partial_code or platform.screen_out_code, platform, tasks)
    if state in SCREENED:
        return _coded("screen_out", state, platform.screen_out_code, platform, tasks)
    return Exit(outcome="return", state=state, tasks=tasks)


def _coded(outcome: Outcome, state: State, code: str, platform: Platform, tasks: int) -> Exit:
    bonus = (round(tasks * platform.pay_per_task, 2)
             if outcome == "partial" and platform.pay_per_task is not None else None)
    return Exit(outcome=outcome, state=state, code=code or None, tasks=tasks, bonus=bonus,
                redirect=platform.redirect(code) if code and platform.kind != "mturk" else None)


def participant_limit(platform: Platform, main_places: int) -> int:
    """How many people the study link adds at most: the planned number (main places over batches
    per participant) plus a quarter for people screened out on the way, at least 2 more; or
    ``platform.max_participants`` when set."""
    if platform.max_participants is not None:
        return platform.max_participants
    planned = math.ceil(main_places / platform.batches_per_participant)
    return planned + max(2, math.ceil(planned / 4))
