"""The pages by which people leave: a completion redirect, a code for work done before leaving early,
a screen-out code, a return request, or thanks (see :mod:`convoscope.campaigns._lifecycle` for who
gets which). Each page says what the person will be paid, and nothing more than the study pays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import Response

from convoscope.campaigns import N_, Annotator, Exit
from convoscope.web._http import redirect

ALL_DONE, THANKS = N_("All done"), N_("Thank you")
FULL, NOT_OPEN = N_("This study is full"), N_("This study is not open yet")
TITLES = {"complete": ALL_DONE, "partial": THANKS, "screen_out": THANKS, "thanks": THANKS}
# Why there is nothing (more) to do, as the person is told.
REASONS = {
    "done": N_("You have answered everything assigned to you. Thank you!"),
    "not_qualified": N_("Your answers in the qualification batch did not agree closely enough with the "
                        "reference answers, so this study has no further work for you."),
    # A refused "cannot tell" (qualify's chance check): the batch was too short to judge, not the person.
    "cannot_tell": N_("Your answers in the qualification batch met the agreement needed, but the batch "
                      "was too short to tell them apart from guessing, so this study has no further work "
                      "for you."),
    "blocked": N_("Your participation has ended: this link no longer takes answers."),
    "screened_out": N_("From your answers, this study is not the right fit for you."),
    "no_work": N_("There is no work left in this study right now."),
    "no_work_after_trial": N_("Every place in the main batches was taken while you worked on the "
                              "qualification batch."),
    "not_open": N_("The study opens once its reference annotators have finished; nothing was recorded."),
    "full": N_("Every place in this study is taken; nothing was recorded."),
    "reference": N_("Your reference answers are saved. Thank you!"),
    "declined": N_("You chose not to take part. Nothing else of yours is recorded."),
    "returned": N_("This submission was returned, timed out or rejected on the platform, or you withdrew "
                   "from the study, so this link no longer takes answers."),
}
RETURN = {
    "prolific": N_("Please return your submission on Prolific (its “Return” button), so that your place "
                   "goes to someone else. Returning does not count against you."),
    "mturk": N_("Please return this HIT on MTurk, so that it goes to someone else. Returning does not "
                "count against you."),
}
# What the person will be paid, as the study pays it (never more).
SCREEN_OUT_PAID = N_("Use the code below on %(platform)s: it pays this study's fixed screen-out reward.")
SCREEN_OUT_AMOUNT = N_("Use the code below on %(platform)s: it pays this study's fixed screen-out reward "
                       "of %(amount)s.")
PARTIAL_PAID = N_("You gave %(tasks)d answers. Use the code below on %(platform)s; the researchers pay "
                  "for these answers as a bonus once they have checked the submissions.")
PARTIAL_AMOUNT = N_("You gave %(tasks)d answers. Use the code below on %(platform)s; the researchers pay "
                    "%(amount)s for them as a bonus once they have checked the submissions.")
BLOCKED_PAID = N_("You gave %(tasks)d answers. Use the code below on %(platform)s; the researchers "
                  "review your answers before deciding on payment.")
PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "MTurk"}


def leave_page(message: Callable[..., Response], gettext: Callable[[str], str], leave: Exit, *,
               person: Annotator | None, kind: str, worked: bool, reference: bool,
               reward: float | None = None, currency: str = "GBP",
               qualification: str | None = None) -> Response:
    """The response for a person leaving: ``message`` renders a page, ``gettext`` translates;
    ``reward``: the study's fixed screen-out reward, when campaign.yaml gives it; ``qualification``:
    the outcome of the person's qualification decision, if any."""
    _ = gettext
    reason = _(_reason(leave, worked=worked, reference=reference, qualification=qualification))
    platform = PLATFORM_NAMES.get(kind, kind)
    session = person.session if person is not None else {}
    submit_to = session.get("turkSubmitTo", "").rstrip("/")
    if leave.outcome in ("complete", "partial", "screen_out") and kind == "mturk" and submit_to:
        return _mturk_form(message, _, leave, reason, submit_to, session.get("assignmentId", ""))
    if leave.outcome == "complete" and leave.redirect:
        return redirect(leave.redirect)
    if leave.outcome in ("partial", "screen_out"):
        paid = pay_text(_, leave, platform, reward, currency) if leave.code else ""
        link = ({"url": leave.redirect, "text": _("Return to %(platform)s") % {"platform": platform}}
                if leave.redirect else None)
        label = _("Your code:") if leave.outcome == "partial" else _("Your screen-out code:")
        return message(_(THANKS), reason, paid, code=leave.code, link=link, code_label=label)
    if leave.outcome == "return":
        title = {"not_open": NOT_OPEN, "declined": THANKS, "returned": THANKS}.get(leave.state, FULL)
        return message(_(title), reason, _(RETURN.get(kind, RETURN["prolific"])))
    title = ALL_DONE if leave.state == "done" else NOT_OPEN if leave.state == "not_open" else THANKS
    return message(_(title), reason)  # staff and references: no code


def refusal_page(message: Callable[..., Response], gettext: Callable[[str], str], refused: str,
                 kind: str) -> Response:
    """The study link's page for someone it did not add (nothing was recorded for them)."""
    _ = gettext
    title = FULL if refused == "full" else NOT_OPEN
    return message(_(title), _(REASONS[refused]), _(RETURN.get(kind, RETURN["prolific"])))


def money(amount: float | None, currency: str) -> str | None:
    return None if amount is None else f"{currency} {amount:.2f}"


def pay_text(_: Callable[[str], str], leave: Exit, platform: str, reward: float | None,
             currency: str) -> str:
    """What the person will be paid, said as the study pays it."""
    if leave.outcome == "screen_out":
        return (_(SCREEN_OUT_AMOUNT) % {"platform": platform, "amount": money(reward, currency)}
                if reward is not None else _(SCREEN_OUT_PAID) % {"platform": platform})
    values = {"platform": platform, "tasks": leave.tasks, "amount": money(leave.bonus, currency)}
    if leave.state == "blocked":
        return _(BLOCKED_PAID) % values
    return _(PARTIAL_AMOUNT if leave.bonus is not None else PARTIAL_PAID) % values


def _reason(leave: Exit, *, worked: bool, reference: bool, qualification: str | None) -> str:
    if leave.state == "not_qualified" and qualification == "cannot_tell":
        return REASONS["cannot_tell"]
    if reference and leave.state == "done":
        return REASONS["reference"]
    if leave.state == "no_work" and worked:
        return REASONS["no_work_after_trial"]
    return REASONS.get(leave.state, REASONS["done"])


def _mturk_form(message: Callable[..., Response], _: Callable[[str], str], leave: Exit, reason: str,
                submit_to: str, assignment: str) -> Response:
    """MTurk takes the assignment back through its external-submit form; the code says how it ended."""
    outcome = {"complete": "completed", "partial": "partial"}.get(leave.outcome, "screened_out")
    form: dict[str, Any] = {"action": f"{submit_to}/mturk/externalSubmit",
                            "button": _("Submit the assignment"),
                            "fields": [("assignmentId", assignment), ("completion_code", leave.code or ""),
                                       ("outcome", outcome)]}
    return message(_(TITLES[leave.outcome]), reason, _("Submit the assignment to MTurk to finish."),
                   code=leave.code, form=form, csp_form=submit_to,
                   code_label=_("Your completion code:") if outcome == "completed"
                   else _("Your screen-out code:"))
