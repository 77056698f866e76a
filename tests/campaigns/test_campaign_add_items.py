"""Issue 18: items routed from a judged run join a campaign with why they were chosen."""

from __future__ import annotations

from click.testing import CliRunner

from convoscope import Item, Turn, Verdict
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import read_items, write_jsonl

_register()


def _run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": "200"})


def _judged_run(tmp_path, n=20):
    items = [Item(id=f"r{i}", system="bot-x", context=(Turn(speaker="user", text=f"question {i}"),),
                  response=f"answer {i}") for i in range(n)]
    verdicts = []
    for item in items:
        number = int(item.id[1:])
        verdicts += [Verdict(item_id=item.id, criterion="appropriate", rater="model:a", value=1),
                     Verdict(item_id=item.id, criterion="appropriate", rater="model:b",
                             value=0 if number % 5 == 0 else 1)]  # disagreement on r0, r5, r10, r15
    items_path, verdict_path = tmp_path / "judged-items.jsonl", tmp_path / "judge.jsonl"
    write_jsonl(items, items_path)
    verdict_path.write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    return items_path, verdict_path


def test_add_items_appends_routed_items_with_their_reasons_and_keeps_the_old_order(tmp_path):
    study = tmp_path / "study"
    assert _run("campaign", "init", study).exit_code == 0
    before = [item.id for item in read_items(study / "items.jsonl")]
    items_path, verdict_path = _judged_run(tmp_path)
    result = _run("campaign", "add-items", study, "--from-run", verdict_path, "--items", items_path,
                  "--random", 6, "--seed", 1)
    assert result.exit_code == 0, result.output
    after = read_items(study / "items.jsonl")
    assert [item.id for item in after][: len(before)] == before  # appended, never reordered
    added = {item.id: item for item in after[len(before):]}
    assert sum(item.meta["random_sample"] for item in added.values()) == 6
    for item_id in ("r0", "r5", "r10", "r15"):
        assert "disagreement:appropriate" in added[item_id].meta["selected_because"]
    assert all(item.meta["selected_because"] for item in added.values())
    again = _run("campaign", "add-items", study, "--from-run", verdict_path, "--items", items_path,
                 "--random", 6, "--seed", 1)
    assert again.exit_code == 0 and "Added 0 items" in again.output
    assert len(read_items(study / "items.jsonl")) == len(after)


def test_add_items_refuses_a_random_sample_larger_than_the_run(tmp_path):
    study = tmp_path / "study"
    _run("campaign", "init", study)
    items_path, verdict_path = _judged_run(tmp_path, n=5)
    result = _run("campaign", "add-items", study, "--from-run", verdict_path, "--items", items_path,
                  "--random", 9)
    assert result.exit_code == 2 and "only 5 items" in result.output


def test_status_and_report_say_why_items_were_chosen(tmp_path):
    """Observed in stop 10: the dashboard and the report did not show meta.selected_because."""
    from convoscope.campaigns import Submission, invite, open_campaign, render_campaign_report

    study = tmp_path / "study"
    _run("campaign", "init", study)
    spec = study / "campaign.yaml"
    spec.write_text(spec.read_text().replace("  enabled: true", "  enabled: false"))
    items_path, verdict_path = _judged_run(tmp_path)
    assert _run("campaign", "add-items", study, "--from-run", verdict_path, "--items", items_path,
                "--random", 6, "--seed", 1).exit_code == 0
    campaign = open_campaign(study)
    person = invite(study, 1)[0].id
    task = next(t for b in campaign.batches for t in campaign.tasks(b) if t.candidate.item_id == "r5")
    campaign.submit(person, task, Submission(answer="1"))
    rows = {row.reason: row for row in campaign.status().selection}
    assert rows["disagreement:appropriate"].items == 4 and rows["disagreement:appropriate"].answered == 1
    assert rows["random"].items == 6
    assert campaign.status().chosen_items == len(campaign.chosen) >= 6
    shown = _run("campaign", "status", study)
    assert shown.exit_code == 0 and "disagreement:appropriate" in shown.output, shown.output
    html = render_campaign_report(campaign)
    assert "How items were chosen" in html and "disagreement:appropriate" in html
    assert "in a uniform random sample" in html
