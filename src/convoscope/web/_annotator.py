"""The annotator's routes, reached only through a private token (or a platform's join link).

``GET /a/<token>``: consent, then instructions, then the next task, a waiting page, or the end
(with the completion code and the platform's redirect). ``POST /a/<token>`` saves one answer and
redirects (post/redirect/get). ``/a/<token>/edit/<n>`` changes the n-th answer of the current
batch (the first answer and every change are kept). Time on task is measured on the server,
from when the task was first shown to when its answer arrives.
"""

from __future__ import annotations

import hashlib
import hmac
import mimetypes
import re
from typing import Any
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from convoscope.campaigns import (
    MTURK_PREVIEW,
    N_,
    AnswerError,
    BatchFull,
    Campaign,
    CampaignError,
    PlatformError,
    Submission,
    Work,
    platform_session,
    task_key,
)
from convoscope.web._http import field, page, read_form, redirect
from convoscope.web._i18n import translations
from convoscope.web._markdown import markdown_html
from convoscope.web._views import task_context

_MEDIA = re.compile(r"^[A-Za-z0-9_\-]{1,80}\.(png|jpe?g|gif|webp|svg)$")


def csrf_value(secret: bytes, token: str) -> str:
    return hmac.new(secret, f"csrf:{token}".encode(), hashlib.sha256).hexdigest()


class AnnotatorPages:
    """Endpoints for one campaign; ``limit``/``timeout`` bound each form body."""

    def __init__(self, campaign: Campaign, secret: bytes, join_secret: str | None, *, limit: int,
                 timeout: float):
        self.campaign, self.secret, self.join_secret = campaign, secret, join_secret
        self.limit, self.timeout = limit, timeout
        self.t = translations(campaign.spec.language)
        self._ = self.t.gettext

    def page(self, template: str, **context: Any) -> Response:
        # The last answer's form is redirected to the platform's completion address: the form's
        # CSP must allow that origin (Chromium checks form-action along the redirect chain).
        target = urlsplit(self.campaign.spec.platform.redirect() or "")
        origin = f"{target.scheme}://{target.netloc}" if target.scheme in {"http", "https"} else ""
        return page(template, translations=self.t, lang=self.campaign.spec.language, csp_form=origin,
                    **context)

    def message(self, title: str, *paragraphs: str, status: int = 200, **extra: Any) -> Response:
        context = {"code": None, "link": None, "form": None, "refresh": None, **extra}
        return self.page("web/message.html", title=title, paragraphs=paragraphs, status=status, **context)

    def _person(self, request: Request) -> tuple[str, str]:
        token = request.path_params["token"]
        person = self.campaign.annotator(token)
        if person is None:
            raise HTTPException(404, N_("This link is not valid."))
        return person.id, token

    # -- pages ------------------------------------------------------------------------------------

    def show(self, request: Request) -> Response:
        annotator, token = self._person(request)
        problem = self._platform_id(annotator, request)
        if problem:
            return self.message(self._("Bad link"), problem, status=400)
        gate = self._gate(annotator, token)
        if gate is not None:
            return gate
        work = self.campaign.work(annotator)
        if work.task is None:
            return self._finished(annotator, work)
        self.campaign.shown(annotator, work.task)
        return self.page("web/task.html", **task_context(self.campaign, work, work.task, annotator=annotator,
                                                          token=token, csrf=csrf_value(self.secret, token)))

    def _platform_id(self, annotator: str, request: Request) -> str | None:
        for name in ("PROLIFIC_PID", "workerId", "participant"):
            value = request.query_params.get(name)
            if value:
                try:
                    self.campaign.record_external_id(annotator, value)
                except ValueError as error:
                    return f"{name}: {error}"
        return None

    def _gate(self, annotator: str, token: str) -> Response | None:
        spec, csrf = self.campaign.spec, csrf_value(self.secret, token)
        if spec.consent and not self.campaign.has(annotator, "consent"):
            text = (self.campaign.directory / spec.consent).read_text(encoding="utf-8")
            return self.page("web/gate.html", title=self._("Consent"), csrf=csrf,
                             body=markdown_html(text, media_base=f"/a/{token}"),
                             action=f"/a/{token}/consent", button=self._("I agree and want to take part"),
                             decline=self._("If you do not agree, close this page; nothing is recorded."))
        if spec.instructions and not self.campaign.has(annotator, "instructions"):
            return self.page("web/gate.html", title=self._("Instructions"), csrf=csrf,
                             body=self._guidelines(token), action=f"/a/{token}/start",
                             button=self._("I have read the instructions: start"), decline="")
        return None

    def _guidelines(self, token: str) -> Any:
        path = self.campaign.directory / "guidelines.md"
        text = path.read_text(encoding="utf-8") if path.exists() else self._("No guidelines were written.")
        return markdown_html(text, media_base=f"/a/{token}")

    def _finished(self, annotator: str, work: Work) -> Response:
        _ = self._
        if work.state == "waiting":
            return self.message(_("Please wait"), _("Your qualification answers are saved. They are compared "
                                "with the reference answers once those are complete; come back to this "
                                "link later to continue."), refresh=60)  # the page checks again each minute
        if work.state == "blocked":
            return self.message(_("Your participation has ended"), _("Thank you for your time. This link "
                                "no longer takes answers."))
        if work.state == "not_qualified":
            return self.message(_("Thank you"), _("You finished the qualification batch. This study has no "
                                "further batches for you; thank you for your time."))
        return self._complete(annotator)

    def _complete(self, annotator: str) -> Response:
        platform, _ = self.campaign.spec.platform, self._
        person = next(p for p in self.campaign_people() if p.id == annotator)
        code = platform.completion_code or None
        if platform.kind == "mturk" and person.session.get("turkSubmitTo"):
            target = person.session["turkSubmitTo"].rstrip("/")
            form = {"action": f"{target}/mturk/externalSubmit", "button": _("Submit the assignment"),
                    "fields": [("assignmentId", person.session.get("assignmentId", "")),
                               ("completion_code", code or "")]}
            return page("web/message.html", translations=self.t, lang=self.campaign.spec.language,
                        title=_("All done"), paragraphs=[_("Submit the assignment to MTurk to finish.")],
                        code=code, link=None, form=form, refresh=None, csp_form=target)
        target_url = platform.redirect()
        if target_url:
            return redirect(target_url)
        return self.message(_("All done"), _("You have answered everything assigned to you. Thank you!"),
                            code=code)

    def campaign_people(self) -> list[Any]:
        from convoscope.campaigns import read_annotators

        return read_annotators(self.campaign.directory)

    def guidelines(self, request: Request) -> Response:
        _, token = self._person(request)
        return self.page("web/guidelines.html", title=self._("Guidelines"), body=self._guidelines(token))

    def media(self, request: Request) -> Response:
        self._person(request)
        name = request.path_params["name"]
        path = self.campaign.directory / "media" / name
        if not _MEDIA.match(name) or not path.is_file():
            raise HTTPException(404, N_("No such file."))
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return FileResponse(path, media_type=kind, headers={"content-security-policy": "default-src 'none'"})

    def edit(self, request: Request) -> Response:
        annotator, token = self._person(request)
        work = self.campaign.work(annotator)
        index = int(request.path_params["index"])
        task = self._answered(annotator, work, index)
        current = next((v for v in self.campaign.answers() if v.rater == f"human:{annotator}"
                        and v.item_id == task.candidate.item_id and v.criterion == task.criterion), None)
        self.campaign.shown(annotator, task)
        return self.page("web/task.html", **task_context(self.campaign, work, task, annotator=annotator,
                                                          token=token, index=index, current=current,
                                                          csrf=csrf_value(self.secret, token)))

    def _answered(self, annotator: str, work: Work, index: int) -> Any:
        tasks = self.campaign.tasks(work.batch) if work.batch is not None else []
        answered = {task_key(annotator, t) for t in tasks} & self.campaign.answered_keys()
        if not 0 <= index < len(tasks) or task_key(annotator, tasks[index]) not in answered:
            raise HTTPException(404, N_("There is no answer to change here."))
        return tasks[index]

    # -- forms ------------------------------------------------------------------------------------

    async def _form(self, request: Request) -> tuple[str, str, dict[str, list[str]]]:
        annotator, token = await run_in_threadpool(self._person, request)
        form = await read_form(request, limit=self.limit, timeout=self.timeout)
        if not hmac.compare_digest(field(form, "csrf").encode(), csrf_value(self.secret, token).encode()):
            raise HTTPException(403, N_("The form has expired; reload the page."))
        return annotator, token, form

    async def answer(self, request: Request) -> Response:
        annotator, token, form = await self._form(request)
        return await run_in_threadpool(self._answer, annotator, token, form)

    def _answer(self, annotator: str, token: str, form: dict[str, list[str]]) -> Response:
        work = self.campaign.work(annotator)
        if work.task is None or field(form, "task") != task_key("", work.task):
            return redirect(f"/a/{token}")  # stale or repeated form: show the current task
        submission = self._submission(form, self.campaign.elapsed(annotator, work.task))
        try:
            self.campaign.submit(annotator, work.task, submission)
        except AnswerError as error:
            self.campaign.shown(annotator, work.task)
            context = task_context(self.campaign, work, work.task, annotator=annotator, token=token,
                                   form=form, csrf=csrf_value(self.secret, token),
                                   error=self._translate(error))
            return self.page("web/task.html", status=422, **context)
        except BatchFull:
            pass  # someone else took the last place; the redirect shows this annotator another batch
        return redirect(f"/a/{token}")

    async def change(self, request: Request) -> Response:
        annotator, token, form = await self._form(request)
        index = int(request.path_params["index"])
        return await run_in_threadpool(self._change, annotator, token, form, index)

    def _change(self, annotator: str, token: str, form: dict[str, list[str]], index: int) -> Response:
        work = self.campaign.work(annotator)
        task = self._answered(annotator, work, index)
        submission = self._submission(form, self.campaign.elapsed(annotator, task))
        try:
            self.campaign.revise(annotator, index, submission)
        except AnswerError as error:
            context = task_context(self.campaign, work, task, annotator=annotator, token=token, form=form,
                                   index=index, csrf=csrf_value(self.secret, token),
                                   error=self._translate(error))
            return self.page("web/task.html", status=422, **context)
        except CampaignError:
            raise HTTPException(404, N_("There is no answer to change here.")) from None
        return redirect(f"/a/{token}")

    def _submission(self, form: dict[str, list[str]], seconds: float | None) -> Submission:
        options = tuple(dict.fromkeys(form.get("options", [])))  # a repeated box counts once
        return Submission(answer=field(form, "answer"), options=options, reason=field(form, "reason"),
                          seconds=seconds)

    def _translate(self, error: AnswerError) -> str:
        return self._(error.msgid).format(**error.params)

    async def consent(self, request: Request) -> Response:
        annotator, token, _ = await self._form(request)
        await run_in_threadpool(self.campaign.mark, annotator, "consent")
        return redirect(f"/a/{token}")

    async def start(self, request: Request) -> Response:
        annotator, token, _ = await self._form(request)
        await run_in_threadpool(self.campaign.mark, annotator, "instructions")
        return redirect(f"/a/{token}")

    # -- platforms --------------------------------------------------------------------------------

    def join(self, request: Request) -> Response:
        """The study link given to a platform: finds or adds the participant, then their own link."""
        secret = request.path_params["secret"]
        if not self.join_secret or not hmac.compare_digest(secret.encode("utf-8", "surrogateescape"),
                                                           self.join_secret.encode()):
            raise HTTPException(404, N_("This link is not valid."))
        query = dict(request.query_params)
        if query.get("assignmentId") == MTURK_PREVIEW:
            return self.message(self._("Preview"), self._("Accept the HIT to start; your answers are saved "
                                                          "as you go."))
        try:
            participant, session = platform_session(self.campaign.spec.platform.kind, query)
        except PlatformError as error:
            return self.message(self._("Bad link"), str(error), status=400)
        person = self.campaign.join(participant, session)
        return redirect(f"/a/{person.token}")

