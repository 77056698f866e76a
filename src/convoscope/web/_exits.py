"""The pages by which people leave: a completion redirect, a screen-out code, a return request, or
thanks (see :mod:`convoscope.campaigns._lifecycle` for who gets which)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import Response

from convoscope.campaigns import N_, Annotator, Exit
from convoscope.web._http import redirect

ALL_DONE, THANKS = N_("All done"), N_("Thank you")
FULL, NOT_OPEN = N_("This study is full"), N_("This study is not open yet")
TITLES = {"complete": ALL_DONE, "screen_out": THANKS, "thanks": THANKS}
# Why there is nothing (more) to do, as the person is told.
REASONS = {
    "done": N_("You have answered everything assigned to you. Thank you!"),
    "not_qualified": N_("Your answers in the qualification batch did not agree closely enough with the "
                        "reference answers, so this study has no further work for you."),
    "blocked": N_("Your participation has ended: this link no longer takes answers."),
    "screened_out": N_("From your answers, this study is not the right fit for you."),
    "no_work": N_("There is no work left in this study right now."),
    "no_work_after_trial": N_("Every place in the main batches was taken while you worked on the "
                              "qualification batch."),
    "not_open": N_("The study opens once its reference annotators have finished; nothing was recorded."),
    "full": N_("Every place in this study is taken; nothing was recorded."),
    "reference": N_("Your reference answers are saved. Thank you!"),
}
RETURN = {
    "prolific": N_("Please return your submission on Prolific (its “Return” button), so that your place "
                   "goes to someone else. Returning does not count against you."),
    "mturk": N_("Please return this HIT on MTurk, so that it goes to someone else. Returning does not "
                "count against you."),
}
SCREEN_OUT_PAID = N_("Your time is paid: use the code below on %(platform)s.")
PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "MTurk"}


def leave_page(message: Callable[..., Response], gettext: Callable[[str], str], leave: Exit, *,
               person: Annotator | None, kind: str, worked: bool, reference: bool) -> Response:
    """The response for a person leaving: ``message`` renders a page, ``gettext`` translates."""
    _ = gettext
    reason = _(_reason(leave, worked=worked, reference=reference))
    platform = PLATFORM_NAMES.get(kind, kind)
    session = person.session if person is not None else {}
    submit_to = session.get("turkSubmitTo", "").rstrip("/")
    if leave.outcome in ("complete", "screen_out") and kind == "mturk" and submit_to:
        return _mturk_form(message, _, leave, reason, submit_to, session.get("assignmentId", ""))
    if leave.outcome == "complete" and leave.redirect:
        return redirect(leave.redirect)
    if leave.outcome == "screen_out":
        paid = _(SCREEN_OUT_PAID) % {"platform": platform} if leave.code else ""
        link = ({"url": leave.redirect, "text": _("Return to %(platform)s") % {"platform": platform}}
                if leave.redirect else None)
        return message(_(THANKS), reason, paid, code=leave.code, link=link,
                       code_label=_("Your screen-out code:"))
    if leave.outcome == "return":
        title = NOT_OPEN if leave.state == "not_open" else FULL
        return message(_(title), reason, _(RETURN.get(kind, RETURN["prolific"])))
    title = ALL_DONE if leave.state == "done" else NOT_OPEN if leave.state == "not_open" else THANKS
    return message(_(title), reason)  # staff and references: no code


def refusal_page(message: Callable[..., Response], gettext: Callable[[str], str], refused: str,
                 kind: str) -> Response:
    """The study link's page for someone it did not add (nothing was recorded for them)."""
    _ = gettext
    title = FULL if refused == "full" else NOT_OPEN
    return message(_(title), _(REASONS[refused]), _(RETURN.get(kind, RETURN["prolific"])))


def _reason(leave: Exit, *, worked: bool, reference: bool) -> str:
    if reference and leave.state == "done":
        return REASONS["reference"]
    if leave.state == "no_work" and worked:
        return REASONS["no_work_after_trial"]
    return REASONS.get(leave.state, REASONS["done"])


def _mturk_form(message: Callable[..., Response], _: Callable[[str], str], leave: Exit, reason: str,
                submit_to: str, assignment: str) -> Response:
    """MTurk takes the assignment back through its external-submit form; the code says how it ended."""
    outcome = "completed" if leave.outcome == "complete" else "screened_out"
    form: dict[str, Any] = {"action": f"{submit_to}/mturk/externalSubmit",
                            "button": _("Submit the assignment"),
                            "fields": [("assignmentId", assignment), ("completion_code", leave.code or ""),
                                       ("outcome", outcome)]}
    return message(_(TITLES[leave.outcome]), reason, _("Submit the assignment to MTurk to finish."),
                   code=leave.code, form=form, csp_form=submit_to,
                   code_label=_("Your completion code:") if outcome == "completed"
                   else _("Your screen-out code:"))
