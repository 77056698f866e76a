"""A small study in which people leave in every way: a reference annotator, one who qualifies and
is blocked later, one who qualifies and stays, one who fails the qualification and one screened
out by an eligibility question. Imported by name (pytest puts this folder on sys.path)."""

from __future__ import annotations

from pathlib import Path

from campaign_helpers import answer_all, write_campaign

from convoscope.campaigns import Campaign, invite, open_campaign

ELIGIBILITY = ("- id: first_language\n  text: Is English your first language?\n  kind: choice\n"
               "  choices: [yes, no]\n  accept: [yes]\n")
BLOCK_REASON = "failed 2 attention check(s)"


def right(task: object) -> str:
    """The reference annotator's rule: bot-y's turns are off, every other one is fine."""
    return "0" if task.candidate.system == "bot-y" else "1"  # type: ignore[attr-defined]


def study_with_leavers(directory: Path) -> tuple[Campaign, dict[str, str]]:
    """The campaign and who is who: reference, blocked, stays, failed, screened."""
    write_campaign(directory, references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "questionnaires:\n  before: before.yaml\n", encoding="utf-8")
    (directory / "before.yaml").write_text(ELIGIBILITY, encoding="utf-8")
    ids = [person.id for person in invite(directory, 5)]
    who = dict(zip(("reference", "blocked", "stays", "failed", "screened"), ids, strict=True))
    campaign = open_campaign(directory)
    for role in ("reference", "blocked", "stays", "failed"):
        assert campaign.answer_questions(who[role], "before", {"first_language": "yes"}) == {}
    assert campaign.answer_questions(who["screened"], "before", {"first_language": "no"}) == {}
    answer_all(campaign, who["reference"], right)
    answer_all(campaign, who["blocked"], right)
    answer_all(campaign, who["stays"], right)
    answer_all(campaign, who["failed"], lambda task: "1" if right(task) == "0" else "0")  # the opposite
    campaign.block(who["blocked"], BLOCK_REASON)
    return campaign, who
