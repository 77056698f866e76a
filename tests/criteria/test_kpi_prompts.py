"""Seed 004's KPI prompts as the judge reads them (issue 26, observation 6): reference documents
named where they are read from, and ``criteria show`` with a persona and a domain."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from installed import package_dir

from convoscope.cli._criteria import criteria_group
from convoscope.criteria import load_suite
from convoscope.criteria._render import DOCUMENTS_LABEL
from convoscope.items import Item, Turn
from convoscope.judges import PERSONAS, build_request
from convoscope.judges._prompt import SITUATION_FIELDS

SUITES = package_dir() / "criteria" / "suites"
MANUAL = "Tyre pressure, front axle, cold tyres: 2.4 bar (35 psi)."
DOCUMENTED = [c for c in load_suite("kpi").criteria if c.evaluation == "llm+documents"]


def _item() -> Item:
    return Item(id="d1", context=(Turn(speaker="user", text="What pressure for my front tyres?"),),
                response="Inflate them to 2.4 bar when cold.", meta={"documents": [MANUAL]})


def test_the_kpi_suite_names_where_documents_are_read_from() -> None:
    # The suite said "the item's reference field"; documents are read from meta.documents.
    text = (SUITES / "kpi.yaml").read_text(encoding="utf-8")
    assert "reference field" not in text and "meta.documents" in text
    assert len(DOCUMENTED) == 4
    assert SITUATION_FIELDS["documents"] == DOCUMENTS_LABEL  # the rubric names the label shown


@pytest.mark.parametrize("criterion", DOCUMENTED, ids=lambda c: c.name)
def test_a_documents_kpi_points_the_judge_at_the_documents_it_is_shown(criterion) -> None:
    system, user = build_request(criterion, _item(), mode="chat").messages
    # The rubric (instruction part) names the field; the item (quoted data) holds it.
    assert '"Reference documents"' in system.content and "reference field" not in system.content
    assert '"Reference documents": [' in user.content and "2.4 bar" in user.content
    prompt = build_request(criterion, _item(), mode="completion").prompt
    assert re.search(r"^Reference documents: \[.*Tyre pressure", prompt, flags=re.MULTILINE)


def test_criteria_show_renders_the_prompt_with_a_persona_and_a_domain() -> None:
    runner = CliRunner()
    result = runner.invoke(criteria_group, [
        "show", "kpi:harmful-system-output", "--persona", "security-expert",
        "--domain", "the voice assistant of a delivery van"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Judge from this point of view: " + " ".join(PERSONAS["security-expert"].split()) in flat
    assert "Setting of the conversation: the voice assistant of a delivery van." in flat
    completion = runner.invoke(criteria_group, [
        "show", "kpi:harmful-system-output", "--mode", "completion",
        "--persona", "critic=You distrust everything."])
    assert completion.exit_code == 0 and "Rater: You distrust everything." in completion.output
    unknown = runner.invoke(criteria_group, ["show", "kpi:follow-up", "--persona", "pirate"])
    assert unknown.exit_code == 2 and "unknown persona 'pirate'" in unknown.output
