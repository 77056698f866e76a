"""Prolific's API, optional: read submissions (a returned or timed-out one frees the place at
once), approve and pay bonuses from the ledger, pause and resume the study.

Nothing here runs unless asked (``convoscope campaign prolific``) with a token; the campaign
never needs it. Endpoints as Prolific documents them (https://docs.prolific.com/api-reference):
``GET /api/v1/studies/<id>/submissions/``, ``POST /api/v1/submissions/bulk-approve/``,
``POST /api/v1/submissions/bonus-payments/`` then ``POST /api/v1/bulk-bonus-payments/<id>/pay/``,
``POST /api/v1/studies/<id>/transition/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from convoscope.campaigns._ledger import LedgerRow, prolific_approve_ids, prolific_bonus_lines
from convoscope.errors import ConvoscopeError

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign

PROLIFIC_API = "https://api.prolific.com"
# A submission in one of these states will not come back: its place goes to someone else, and its
# answers stop counting (a rejected one was judged unusable by the researcher on Prolific).
GONE = frozenset({"RETURNED", "TIMED-OUT", "REJECTED"})


class ProlificError(ConvoscopeError, RuntimeError):
    """Prolific's API refused a request; the message gives its status and answer."""


class Prolific:
    """A small client of Prolific's API (``Authorization: Token <token>``)."""

    def __init__(self, token: str, *, base_url: str = PROLIFIC_API, timeout: float = 30.0):
        import httpx

        if not token:
            raise ProlificError("a Prolific API token is needed (set PROLIFIC_TOKEN)")
        self.http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout,
                                 headers={"Authorization": f"Token {token}"})

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import httpx

        try:
            answer = self.http.request(method, path, json=body)
        except httpx.HTTPError as error:
            raise ProlificError(f"Prolific {method} {path}: {error}") from None
        if answer.status_code >= 400:
            raise ProlificError(f"Prolific {method} {path}: {answer.status_code} {answer.text[:200]}")
        return answer.json() if answer.content else None

    def submissions(self, study: str) -> list[dict[str, Any]]:
        """Every submission of the study (following the pages Prolific returns)."""
        found: list[dict[str, Any]] = []
        path: str | None = f"/api/v1/studies/{study}/submissions/"
        while path:
            page = self._call("GET", path)
            found.extend(page.get("results", []))
            path = ((page.get("_links") or {}).get("next") or {}).get("href")
        return found

    def approve(self, study: str, participants: list[str]) -> None:
        if participants:
            self._call("POST", "/api/v1/submissions/bulk-approve/",
                       {"study_id": study, "participant_ids": participants})

    def pay_bonuses(self, study: str, lines: str) -> str | None:
        """Set up and pay ``participant_id,amount`` lines; the bulk payment's id (None: no line).
        Paying is not idempotent on Prolific's side: call once per ledger."""
        if not lines:
            return None
        created = self._call("POST", "/api/v1/submissions/bonus-payments/",
                             {"study_id": study, "csv_bonuses": lines})
        self._call("POST", f"/api/v1/bulk-bonus-payments/{created['id']}/pay/")
        return str(created["id"])

    def transition(self, study: str, action: Literal["PAUSE", "START"]) -> None:
        self._call("POST", f"/api/v1/studies/{study}/transition/", {"action": action})


def sync_submissions(campaign: Campaign, client: Prolific, study: str) -> list[str]:
    """Free the place of everyone whose submission was returned, timed out or rejected, and take
    their answers out of the results (kept in the store and the ledger); their ids."""
    by_pid = {p.external_id: p.id for p in campaign.people() if p.platform == "prolific"}
    freed = []
    for submission in client.submissions(study):
        person = by_pid.get(str(submission.get("participant_id")))
        if person is not None and submission.get("status") in GONE:
            campaign.mark_returned(person, str(submission["status"]))
            freed.append(person)
    return freed


def settle(client: Prolific, study: str, rows: list[LedgerRow], *, approve: bool,
           bonuses: bool) -> tuple[int, str | None]:
    """Approve and pay the ledger's recommendations: (people approved, bulk bonus id)."""
    ids = prolific_approve_ids(rows).split() if approve else []
    client.approve(study, ids)
    return len(ids), client.pay_bonuses(study, prolific_bonus_lines(rows)) if bonuses else None
