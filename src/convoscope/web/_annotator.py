"""The annotator's routes, reached only through a private token (or a platform's join link).

``GET /a/<token>``: the way out at once when the person is screened out or there is nothing for
them; else consent, the questionnaire before, the instructions, then the next task; after the
assigned work, the questionnaire after, then the way out (a completion redirect, a screen-out code,
a return request or thanks: see ``_exits``). ``POST /a/<token>`` saves one answer and redirects
(post/redirect/get); ``POST /a/<token>/questions/<part>`` saves a questionnaire.
``/a/<token>/edit/<n>`` changes the n-th answer of the current
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
from convoscope.campaigns._questionnaire import PARTS, Part
from convoscope.web._exits import leave_page, refusal_page
from convoscope.web._http import field, page, read_form, redirect
from convoscope.web._i18n import translations
from convoscope.web._markdown import markdown_html
from convoscope.web._views import task_context

LEAVE_AT_ONCE = frozenset({"not_open", "not_qualified", "blocked", "screened_out", "no_work", "declined",
                           "returned"})
PROBLEMS = {"required": N_("Please answer this question."),
            "not a choice": N_("Choose one of the answers offered."),
            "not a number": N_("Enter a number."), "too long": N_("This answer is too long.")}
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

    def page(self, template: str, *, csp_form: str | None = None, **context: Any) -> Response:
        # The last form is redirected to the platform's completion address: the form's CSP must
        # allow that origin (Chromium checks form-action along the redirect chain).
        if csp_form is None:
            target = urlsplit(self.campaign.spec.platform.redirect() or "")
            csp_form = f"{target.scheme}://{target.netloc}" if target.scheme in {"http", "https"} else ""
        return page(template, translations=self.t, lang=self.campaign.spec.language, csp_form=csp_form,
                    **context)

    def message(self, title: str, *paragraphs: str, status: int = 200, csp_form: str | None = None,
                **extra: Any) -> Response:
        context = {"code": None, "link": None, "form": None, "refresh": None, "code_label": None, **extra}
        return self.page("web/message.html", title=title, paragraphs=[p for p in paragraphs if p],
                         status=status, csp_form=csp_form, **context)

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
        work = self.campaign.work(annotator)
        if work.state in LEAVE_AT_ONCE:  # before any gate: nobody works (or reads) for nothing
            return self._leave(annotator, work)
        gate = self._gate(annotator, token)
        if gate is not None:
            return gate
        if work.task is None:
            if self.campaign.pending_questions(annotator, work.state) == "after":
                return self._questions(annotator, token, "after")
            return self._leave(annotator, work)
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
                             decline_action=f"/a/{token}/decline", decline_button=self._("I do not agree"),
                             decline=self._("If you do not agree, nothing of yours is recorded and your "
                                            "place goes to someone else."))
        if self.campaign.pending_questions(annotator, "task") == "before":
            return self._questions(annotator, token, "before")
        if spec.instructions and not self.campaign.has(annotator, "instructions"):
            return self.page("web/gate.html", title=self._("Instructions"), csrf=csrf,
                             body=self._guidelines(token), action=f"/a/{token}/start",
                             button=self._("I have read the instructions: start"), decline="")
        return None

    def _questions(self, annotator: str, token: str, part: Part, *, given: dict[str, list[str]] | None = None,
                   problems: dict[str, str] | None = None) -> Response:
        title = self._("A few questions first") if part == "before" else self._("One last thing")
        shown = {name: self._(PROBLEMS[problem]) for name, problem in (problems or {}).items()}
        return self.page("web/questions.html", status=422 if problems else 200, title=title,
                         questions=self.campaign.questions(part), given=given or {}, problems=shown,
                         csrf=csrf_value(self.secret, token), action=f"/a/{token}/questions/{part}",
                         max_note=self.campaign.spec.max_note_chars)

    def _guidelines(self, token: str) -> Any:
        path = self.campaign.directory / "guidelines.md"
        text = path.read_text(encoding="utf-8") if path.exists() else self._("No guidelines were written.")
        return markdown_html(text, media_base=f"/a/{token}")

    def _leave(self, annotator: str, work: Work) -> Response:
        person = self.campaign.person(annotator)
        platform = self.campaign.spec.platform
        return leave_page(self.message, self._, self.campaign.leave(annotator, work), person=person,
                          kind=platform.kind, worked=self.campaign.worked(annotator),
                          reference=annotator in self.campaign.spec.qualification.reference_annotators,
                          reward=platform.screen_out_reward, currency=platform.currency,
                          qualification=work.qualification.outcome if work.qualification else None)

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
        # Names in the message (a criterion, an option such as "other") are in the catalogue too.
        params = {k: self._(v) if isinstance(v, str) and v else v for k, v in error.params.items()}
        return self._(error.msgid).format(**params)

    async def consent(self, request: Request) -> Response:
        annotator, token, _ = await self._form(request)
        await run_in_threadpool(self.campaign.mark, annotator, "consent")
        return redirect(f"/a/{token}")

    async def decline(self, request: Request) -> Response:
        """Consent refused: the place is freed and the person is shown the way back."""
        annotator, token, _ = await self._form(request)
        if not await run_in_threadpool(self.campaign.has, annotator, "consent"):
            await run_in_threadpool(self.campaign.mark, annotator, "declined")
        return redirect(f"/a/{token}")

    async def start(self, request: Request) -> Response:
        annotator, token, _ = await self._form(request)
        await run_in_threadpool(self.campaign.mark, annotator, "instructions")
        return redirect(f"/a/{token}")

    async def questions(self, request: Request) -> Response:
        annotator, token, form = await self._form(request)
        part = request.path_params["part"]
        if part not in PARTS:
            raise HTTPException(404, N_("No such page."))
        return await run_in_threadpool(self._save_questions, annotator, token, part, form)

    def _save_questions(self, annotator: str, token: str, part: Part, form: dict[str, list[str]]) -> Response:
        if self.campaign.questionnaire(annotator, part) is None:
            problems = self.campaign.answer_questions(annotator, part, form)
            if problems:
                return self._questions(annotator, token, part, given=form, problems=dict(problems))
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
            platform = self.campaign.spec.platform
            participant, session = platform_session(platform.kind, query,
                                                    strict=platform.participant_ids == "platform")
        except PlatformError as error:
            return self.message(self._("Bad link"), str(error), status=400)
        admission = self.campaign.join(participant, session)
        if admission.annotator is None:
            return refusal_page(self.message, self._, admission.refused or "full",
                                self.campaign.spec.platform.kind)
        return redirect(f"/a/{admission.annotator.token}")
