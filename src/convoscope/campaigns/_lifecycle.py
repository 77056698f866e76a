"""How each person leaves a campaign, as crowd platforms expect (pure functions over the state).

Prolific pays a submission by its completion code and lets a study carry several codes, each with
its own action; its in-study screening pays a fixed screen-out reward. MTurk takes the assignment
back through the external-question form. So a platform participant leaves in one of three ways:

========================  ==========================================  ==========================
situation                 what happens                                 code
========================  ==========================================  ==========================
assigned work finished    thanked, sent back to the platform          ``completion_code``
screened out after work   told at once (failed qualification, failed   ``screen_out_code``
                          gold, blocked, eligibility question, no
                          place left after the qualification)
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
State = Literal["task", "not_open", "not_qualified", "blocked", "screened_out", "no_work", "done"]
Outcome = Literal["complete", "screen_out", "return", "thanks"]
Refusal = Literal["full", "not_open"]


class Exit(BaseModel):
    """How a person leaves: the outcome, the platform code to give (None: none) and where to send
    them (None: a page of ours; MTurk posts a form instead)."""

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    state: State
    code: str | None = None
    redirect: str | None = None


class Admission(BaseModel):
    """The study link's answer to an arrival: the participant, or why nobody was added."""

    model_config = ConfigDict(frozen=True)

    annotator: Annotator | None = None
    refused: Refusal | None = None


SCREENED: frozenset[State] = frozenset({"not_qualified", "blocked", "screened_out"})


def exit_for(state: State, *, paid: bool, worked: bool, platform: Platform) -> Exit:
    """The way out for a person in ``state``.

    ``paid``: a platform participant (not a reference annotator, not invited staff); ``worked``:
    they have given at least one answer. Nobody is screened out with a code before any work, and
    nobody who worked is asked to return without one.
    """
    if not paid:
        return Exit(outcome="thanks", state=state)
    if state == "done":
        return _coded("complete", state, platform.completion_code, platform)
    if state in SCREENED or (state == "no_work" and worked):
        return _coded("screen_out", state, platform.screen_out_code, platform)
    return Exit(outcome="return", state=state)


def _coded(outcome: Outcome, state: State, code: str, platform: Platform) -> Exit:
    return Exit(outcome=outcome, state=state, code=code or None,
                redirect=platform.redirect(code) if code and platform.kind != "mturk" else None)


def participant_limit(platform: Platform, main_places: int) -> int:
    """How many people the study link adds at most: the planned number (main places over batches
    per participant) plus a quarter for people screened out on the way, at least 2 more; or
    ``platform.max_participants`` when set."""
    if platform.max_participants is not None:
        return platform.max_participants
    planned = math.ceil(main_places / platform.batches_per_participant)
    return planned + max(2, math.ceil(planned / 4))
