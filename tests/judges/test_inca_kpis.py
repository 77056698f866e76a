"""Issue 17, seed 004 (InCA): all 13 KPIs, the personas' stances, the deployment domain in the
judge's prompt, and relevance from the embedded (next-token) judge on every KPI verdict."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.criteria import load_suite
from convoscope.items import read_items
from convoscope.judges import PERSONAS, build_request, render_completion_prompt, render_messages

EXAMPLES = Path(__file__).parents[2] / "examples"

# Seed 004, table 1, in its order.
SEED_004_KPIS = ["low latency", "appropriate answer length", "follow-up", "implicit understanding",
                 "proactivity", "user feedback", "explainability/source", "question answering",
                 "harmful user input", "harmful system output", "based on branded content sources",
                 "factually correct answer", "quantitatively factually correct answer"]


def test_the_kpi_suite_has_all_thirteen_kpis_of_seed_004():
    suite = load_suite("kpi")
    names = {criterion.name for criterion in suite.criteria}
    assert len(SEED_004_KPIS) == 13 and len(names) == 13
    branded = next(c for c in suite.criteria if c.name == "branded-content")
    assert branded.evaluation == "llm+documents" and branded.ask_relevance
    assert branded.scale.binary_labels == ("fulfilled", "not fulfilled")


def test_the_brand_ambassador_is_critical_and_a_security_expert_looks_for_harm():
    ambassador = PERSONAS["brand-ambassador"].lower()
    assert "critical" in ambassador and "brand" in ambassador and "damage" in ambassador
    assert "harm" in PERSONAS["security-expert"].lower()


def test_the_suite_domain_reaches_the_prompt_in_both_modes():
    criterion = next(c for c in load_suite("kpi").criteria if c.name == "follow-up")
    assert criterion.domain and "in-car" in criterion.domain
    item = read_items(EXAMPLES / "kpi_turns.jsonl")[0]
    system = render_messages(criterion, item)[0].content
    assert f"Setting of the conversation: {criterion.domain}" in system
    assert criterion.domain in render_completion_prompt(criterion, item)
    other = criterion.model_copy(update={"domain": None})
    assert "Setting of the conversation" not in render_messages(other, item)[0].content


@pytest.mark.slow
def test_judge_domain_flag_reaches_the_model_and_embedded_kpi_verdicts_carry_relevance(tmp_path):
    """Observed: no prompt line for the deployment domain, and `relevant` null from the embedded judge."""
    pytest.importorskip("llama_cpp")
    from convoscope.cli import cli
    from convoscope.cli._app import _register
    from convoscope.models import cache_key

    _register()
    items = tmp_path / "items.jsonl"
    items.write_text((EXAMPLES / "kpi_turns.jsonl").read_text().splitlines()[0] + "\n")
    domain = "the support chatbot of a bicycle rental shop"
    out, cache = tmp_path / "verdicts.jsonl", tmp_path / "cache.db"
    result = CliRunner().invoke(cli, ["judge", str(items), "--kpi", "follow-up", "--judge", "embedded",
                                      "--domain", domain, "--store", str(tmp_path / "store.db"),
                                      "--cache", str(cache), "--out", str(out)])
    assert result.exit_code == 0, result.output
    [verdict] = [json.loads(line) for line in out.read_text().splitlines()]
    assert verdict["value"] in (0, 1) and isinstance(verdict["relevant"], bool)
    # the request the model answered carried the domain given on the command line
    criterion = next(c for c in load_suite("kpi").criteria if c.name == "follow-up")
    wanted = build_request(criterion.model_copy(update={"domain": domain}), read_items(items)[0],
                           mode="completion")
    assert domain in wanted.prompt
    with sqlite3.connect(cache) as db:
        keys = {row[0] for row in db.execute("select key from responses")}
    assert cache_key("embedded:smollm2", wanted) in keys
    assert len(keys) == 2  # the score and the relevance question
